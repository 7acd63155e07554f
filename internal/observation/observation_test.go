package observation

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

const podKind Kind[*string] = "pod"

// counter is a read that counts its calls and answers what it is told, optionally
// held until its gate opens.
type counter struct {
	mu     sync.Mutex
	n      int
	answer *string
	err    error
	gate   chan struct{}
}

func (c *counter) read(ctx context.Context) (*string, error) {
	c.mu.Lock()
	c.n++
	gate, answer, err := c.gate, c.answer, c.err
	c.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return answer, err
}

func (c *counter) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func ptr(s string) *string { return &s }

func mustGet(t *testing.T, c *Cache, r *counter) *string {
	t.Helper()
	v, err := Get(context.Background(), c, podKind, "p", r.read)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// An answer serves every question until Forget (or Drop); then the next one reads.
func TestKeptUntilForgotten(t *testing.T) {
	var c Cache
	r := &counter{answer: ptr("a")}
	if v := mustGet(t, &c, r); *v != "a" || r.calls() != 1 {
		t.Fatalf("first: %v after %d reads", v, r.calls())
	}
	mustGet(t, &c, r)
	if r.calls() != 1 {
		t.Fatalf("%d reads, want the kept answer", r.calls())
	}
	c.Forget()
	mustGet(t, &c, r)
	if r.calls() != 2 {
		t.Fatalf("%d reads after Forget, want 2", r.calls())
	}
	Drop(&c, podKind, "p")
	mustGet(t, &c, r)
	if r.calls() != 3 {
		t.Fatalf("%d reads after Drop, want 3", r.calls())
	}
}

// A failed read is never kept: unknown stays unknown, and the next question reads.
// "Not found" (a nil answer) is an answer, and is kept.
func TestErrorsNotKept(t *testing.T) {
	var c Cache
	r := &counter{err: errors.New("boom")}
	for range 2 {
		if _, err := Get(context.Background(), &c, podKind, "p", r.read); err == nil {
			t.Fatal("no error")
		}
	}
	if r.calls() != 2 {
		t.Fatalf("%d reads, want 2 (an error is not kept)", r.calls())
	}
	if _, ok := Kept(&c, podKind, "p"); ok {
		t.Fatal("an error was kept")
	}
	r.err = nil
	if v := mustGet(t, &c, r); v != nil {
		t.Fatalf("got %v, want nil", v)
	}
	if v, ok := Kept(&c, podKind, "p"); !ok || v != nil {
		t.Fatalf("kept %v, %v; want nil, true", v, ok)
	}
	// Kinds and keys are apart.
	if _, ok := Kept(&c, Kind[*string]("other"), "p"); ok {
		t.Fatal("another kind found the answer")
	}
	if _, ok := Kept(&c, podKind, "q"); ok {
		t.Fatal("another key found the answer")
	}
}

// A read under way serves whoever asks meanwhile instead of being repeated.
func TestReadUnderWayIsJoined(t *testing.T) {
	var c Cache
	r := &counter{answer: ptr("a"), gate: make(chan struct{})}
	var wg sync.WaitGroup
	got := make([]*string, 3)
	for i := range got {
		wg.Go(func() { got[i], _ = Get(context.Background(), &c, podKind, "p", r.read) })
	}
	waitFor(t, func() bool { return r.calls() > 0 })
	close(r.gate)
	wg.Wait()
	if r.calls() != 1 {
		t.Fatalf("%d reads, want 1", r.calls())
	}
	for _, v := range got {
		if v == nil || *v != "a" {
			t.Fatalf("answers %v, want a each", got)
		}
	}
}

// A read under way when the run forgets is not kept: it began before the pause, and the
// next question reads again.
func TestReadStraddlingForgetNotKept(t *testing.T) {
	var c Cache
	r := &counter{answer: ptr("old"), gate: make(chan struct{})}
	done := make(chan struct{})
	go func() { defer close(done); _, _ = Get(context.Background(), &c, podKind, "p", r.read) }()
	waitFor(t, func() bool { return r.calls() > 0 })
	c.Forget()
	close(r.gate)
	<-done
	r.answer = ptr("new")
	if v := mustGet(t, &c, r); *v != "new" || r.calls() != 2 {
		t.Fatalf("%s after %d reads, want new after 2 (the read that straddled a Forget is not used)", *v, r.calls())
	}
}

// A read registered ahead is under way from the moment Ahead returns, before it runs:
// whoever asks meanwhile waits for it instead of reading, and once its answer is kept
// nothing reads again.
func TestAheadRegisteredAtOnce(t *testing.T) {
	var c Cache
	r := &counter{answer: ptr("a")}
	read := Ahead(&c, podKind, "p", r.read)
	if read == nil {
		t.Fatal("nothing kept or under way, yet no read ahead")
	}
	// Asked before the read ahead ran: it waits (here until its context ends), no read.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Get(ctx, &c, podKind, "p", r.read); !errors.Is(err, context.Canceled) || r.calls() != 0 {
		t.Fatalf("asked while a read was registered ahead: err %v, %d reads; want to wait for it and 0 reads", err, r.calls())
	}
	read(context.Background())
	if v := mustGet(t, &c, r); *v != "a" || r.calls() != 1 {
		t.Fatalf("after the read ahead: %v, %d reads; want its answer and 1 read", v, r.calls())
	}
	if Ahead(&c, podKind, "p", r.read) != nil {
		t.Fatal("a kept answer was read ahead again")
	}
}

// Reads ahead run in the background and are not cut short when the caller's context
// ends; their answers serve the next question.
func TestReadAheadOutlivesCaller(t *testing.T) {
	var c Cache
	r := &counter{answer: ptr("a"), gate: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	ReadAhead(ctx, Ahead(&c, podKind, "p", r.read), nil)
	cancel()
	waitFor(t, func() bool { return r.calls() > 0 })
	close(r.gate)
	if v := mustGet(t, &c, r); v == nil || *v != "a" || r.calls() != 1 {
		t.Fatalf("%v after %d reads, want the read ahead's a after 1", v, r.calls())
	}
}

// Uncached, every question reads and nothing is found kept or read ahead.
func TestUncached(t *testing.T) {
	var c Cache
	c.SetUncached(true)
	r := &counter{answer: ptr("a")}
	mustGet(t, &c, r)
	mustGet(t, &c, r)
	if r.calls() != 2 {
		t.Fatalf("%d reads, want 2", r.calls())
	}
	Keep(&c, podKind, "p", ptr("b"))
	if _, ok := Kept(&c, podKind, "p"); ok {
		t.Fatal("found kept while uncached")
	}
	if Ahead(&c, podKind, "p", r.read) != nil {
		t.Fatal("read ahead while uncached")
	}
	if !c.Uncached() {
		t.Fatal("Uncached() = false")
	}
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
