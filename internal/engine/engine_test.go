package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// fakeStore is a Saver whose checkpoint another run can take over (lost).
type fakeStore struct {
	mu     sync.Mutex
	lost   bool
	log    []string
	onSave func(n int) // called before each Save with its number
	saves  int
}

func (f *fakeStore) err() error {
	if f.lost {
		return fmt.Errorf("%w (now held by host-b (pid 2))", checkpoint.ErrLost)
	}
	return nil
}

func (f *fakeStore) Save(_ context.Context, cp *record.Checkpoint) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saves++
	if f.onSave != nil {
		f.onSave(f.saves)
	}
	f.log = append(f.log, "save")
	return f.err()
}

func (f *fakeStore) Fence(context.Context, *record.Checkpoint) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, "fence")
	return f.err()
}

func (f *fakeStore) takeOver() {
	f.mu.Lock()
	f.lost = true
	f.mu.Unlock()
}

// step is a fake step; act records each Do in the shared log.
type step struct {
	id      string
	log     *[]string
	mu      *sync.Mutex
	done    bool
	evident bool
	passive bool
	do      func()
}

func (s *step) Done(context.Context) (bool, error) { return s.done, nil }
func (s *step) Safe(context.Context) error         { return nil }
func (s *step) Do(context.Context) error {
	s.mu.Lock()
	*s.log = append(*s.log, "do "+s.id)
	s.mu.Unlock()
	if s.do != nil {
		s.do()
	}
	s.done = true
	return nil
}

type evidentStep struct{ *step }

func (evidentStep) Evident() {}

type passiveStep struct{ evidentStep }

func (passiveStep) Passive() {}

type nopReporter struct{}

func (nopReporter) StepStarted(string, string, int)       {}
func (nopReporter) StepDone(string, string, bool)         {}
func (nopReporter) StepFailed(string, string, error)      {}
func (nopReporter) Waiting(string, string, time.Duration) {}
func (nopReporter) Warn(string, string)                   {}

func newEngine(st *fakeStore, kinds ...string) (*Engine, *[]string) {
	cp := &record.Checkpoint{OperationID: "op"}
	steps := map[string]operation.Step{}
	log := &st.log
	for i, k := range kinds {
		id := fmt.Sprintf("%s%d", k, i)
		cp.Steps = append(cp.Steps, record.Step{ID: id, State: record.StatePending})
		s := &step{id: id, log: log, mu: &st.mu}
		switch k {
		case "evident":
			steps[id] = evidentStep{s}
		case "passive":
			steps[id] = passiveStep{evidentStep{s}}
		default:
			steps[id] = s
		}
	}
	return &Engine{CP: cp, Steps: steps, Store: st, Reporter: nopReporter{}, Poll: time.Millisecond}, log
}

// TestEveryActionFenced: a written step's Do follows its "started" write, an evident
// step's Do a fresh Fence read, a passive step's Do neither.
func TestEveryActionFenced(t *testing.T) {
	st := &fakeStore{}
	e, log := newEngine(st, "written", "evident", "passive", "evident")
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "save,do written0,fence,do evident1,do passive2,fence,do evident3"
	if got := strings.Join(*log, ","); got != want {
		t.Fatalf("history %s\nwant    %s", got, want)
	}
}

// TestLostLockStopsBeforeNextAction: once another run holds the checkpoint, neither a
// written nor an evident step acts; the run stops with exit code 4 and ErrLost.
func TestLostLockStopsBeforeNextAction(t *testing.T) {
	for _, next := range []string{"written", "evident"} {
		st := &fakeStore{}
		e, log := newEngine(st, "evident", next)
		first := e.Steps["evident0"].(evidentStep)
		first.do = st.takeOver // host B takes over while this run acts
		err := e.Run(context.Background())
		var fatal *operation.Fatal
		if !errors.As(err, &fatal) || fatal.Code != 4 || !errors.Is(err, checkpoint.ErrLost) || !strings.Contains(err.Error(), "host-b") {
			t.Fatalf("%s: %v, want a code 4 Fatal naming host-b", next, err)
		}
		for _, l := range *log {
			if l == "do "+next+"1" {
				t.Fatalf("%s: the step acted after the lock was lost: %v", next, *log)
			}
		}
	}
}

// blockingStep waits (as a decommission's wait does) until its context ends.
type blockingStep struct {
	*step
	waiting chan struct{}
}

func (b blockingStep) Wait(ctx context.Context) error {
	close(b.waiting)
	<-ctx.Done()
	return ctx.Err()
}

// TestFailedRenewalStops: a lease renewal that finds the checkpoint lost ends the
// step's wait and stops the run before the next action.
func TestFailedRenewalStops(t *testing.T) {
	st := &fakeStore{}
	e, log := newEngine(st, "written", "evident")
	b := blockingStep{step: e.Steps["written0"].(*step), waiting: make(chan struct{})}
	e.Steps["written0"] = b
	e.Lease = 3 * time.Millisecond
	st.onSave = func(n int) {
		if n == 1 {
			go func() { <-b.waiting; st.takeOver() }() // lost while this run waits
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := e.Run(ctx)
	var fatal *operation.Fatal
	if !errors.As(err, &fatal) || fatal.Code != 4 || !errors.Is(err, checkpoint.ErrLost) {
		t.Fatalf("%v, want a code 4 Fatal with ErrLost", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the run waited until its deadline: the failed renewal did not stop it")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, l := range *log {
		if l == "do evident1" {
			t.Fatalf("acted after a failed renewal: %v", *log)
		}
	}
}

// TestRenewerJoinedBeforeRunReturns: when Run returns (done, or interrupted), the lease
// renewer has stopped: the caller's last write (Finish clearing the checkpoint, or
// Release) can never be followed by a renewal writing the checkpoint back. The renewer
// fires every millisecond and the run returns right after renewals, many times over.
func TestRenewerJoinedBeforeRunReturns(t *testing.T) {
	for _, interrupt := range []bool{false, true} {
		for i := range 30 {
			st := &fakeStore{}
			e, _ := newEngine(st, "written")
			e.Lease = 3 * time.Millisecond
			renewed := make(chan struct{})
			st.onSave = func(n int) {
				if n == 3 { // the step's "started" write, then two renewals
					close(renewed)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			s := e.Steps["written0"].(*step)
			s.do = func() {
				<-renewed
				if interrupt {
					cancel()
				}
			}
			err := e.Run(ctx)
			cancel()
			if interrupt != (err != nil) {
				t.Fatalf("interrupt=%v run %d: %v", interrupt, i, err)
			}
			st.mu.Lock()
			saves := st.saves
			st.mu.Unlock()
			if g := renewers(); g != "" {
				t.Fatalf("interrupt=%v run %d: Run returned after %d saves with the renewer still running:\n%s", interrupt, i, saves, g)
			}
		}
	}
}

// renewers are the stacks of the goroutines running a lease renewer ("" if none).
func renewers() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "engine.(*Engine).renew(") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
