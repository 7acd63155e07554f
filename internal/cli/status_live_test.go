package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// syncBuffer is a bytes.Buffer safe for the command's goroutines and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runAt is run with a clock (status --wait judges leases by it) and streams the test
// can read while the command runs.
func runAt(ctx context.Context, w *world.World, now func() time.Time, out, errOut *syncBuffer, args ...string) int {
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, repair.Operator{Plugin: casskop.Plugin{}})
	o.Clients = &kube.Clients{Kube: w.Kube, Dynamic: w.Dyn, Discovery: w.Kube.Discovery(), Namespace: w.NS}
	o.Execer = w
	o.Now = now
	pid := w.StartProcess()
	defer w.EndProcess(pid)
	o.Identity = func() record.Holder {
		return record.Holder{Host: "test-host", PID: pid, Session: fmt.Sprintf("s%d", pid), LeaseSeconds: 60}
	}
	o.Alive = w.ProcessAlive
	return o.Execute(ctx, args)
}

// editCheckpoint rewrites the cluster's checkpoint (what another run would have left).
func editCheckpoint(t *testing.T, w *world.World, edit func(cp *record.Checkpoint)) {
	t.Helper()
	cp, err := checkpoint.Decode(w.CR().GetAnnotations()[checkpoint.Annotation], "", testKinds())
	if err != nil {
		t.Fatal(err)
	}
	edit(cp)
	v, err := checkpoint.Encode(cp, testKinds())
	if err != nil {
		t.Fatal(err)
	}
	setAnnotation(t, w, checkpoint.Annotation, v)
}

// TestStatusWaitExitCodes: `status --wait` exits with the result of the operation in
// flight, judged from the checkpoint and the last-operation record (status_live.go,
// judge): each result of the fake world.
func TestStatusWaitExitCodes(t *testing.T) {
	base := time.Now()
	tests := []struct {
		name  string
		setup func(t *testing.T, w *world.World)
		now   time.Time
		code  int
		want  string
	}{
		{"nothing ever ran", func(*testing.T, *world.World) {}, base, 0, "done: no operation in flight"},
		{"finished", finishScale, base, 0, "done: "},
		{"failed", func(t *testing.T, w *world.World) {
			crashScale(t, w)
			editCheckpoint(t, w, func(cp *record.Checkpoint) {
				at := time.Now().UTC()
				cp.Holder.ReleasedAt = &at
				cp.Steps[cp.Current()].LastError = "cassandra refused to decommission"
				cp.Steps[cp.Current()].Attempts = 1
			})
		}, base, 1, "failed: the run stopped at step"},
		{"interrupted", func(t *testing.T, w *world.World) {
			crashScale(t, w)
			editCheckpoint(t, w, func(cp *record.Checkpoint) {
				at := time.Now().UTC()
				cp.Holder.ReleasedAt = &at
			})
		}, base, 4, "interrupted: "},
		{"stuck, attempts used up", func(t *testing.T, w *world.World) {
			crashScale(t, w)
			editCheckpoint(t, w, func(cp *record.Checkpoint) {
				at := time.Now().UTC()
				cp.Holder.ReleasedAt = &at
				cp.Steps[cp.Current()].LastError = "boom"
				cp.Steps[cp.Current()].Attempts = maxStepAttempts
			})
		}, base, 3, "stuck: step "},
		{"stuck, holder crashed on this machine and nobody took over", crashScale, base, 3, "process 1001 on test-host is gone"},
		{"stuck, checkpoint unusable", func(t *testing.T, w *world.World) {
			setAnnotation(t, w, checkpoint.Annotation, "{not json")
		}, base, 3, "stuck: the checkpoint is unusable"},
		{"timed out while the holder lives", func(t *testing.T, w *world.World) {
			crashScale(t, w)
			editCheckpoint(t, w, func(cp *record.Checkpoint) { cp.Holder = laptop(time.Hour) })
		}, base, 4, "timed-out: still running after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := world.New(t, world.Opts{Nodes: 4})
			readyStatefulSets(t, w)
			tt.setup(t, w)
			var out, errOut syncBuffer
			now := tt.now
			code := runAt(context.Background(), w, func() time.Time { return now }, &out, &errOut,
				"status", "demo", "-n", "cassandra", "--wait", "--timeout", "200ms", "--nodetool-interval", "20ms")
			if code != tt.code || !strings.Contains(out.String(), tt.want) {
				t.Fatalf("exit %d (want %d), stdout:\n%s\nstderr:\n%s", code, tt.code, out.String(), errOut.String())
			}
		})
	}
}

// laptop is a holder on another machine whose clock is behind ours by skew, with a lease
// of 90 s (it renews every 30 s).
func laptop(skew time.Duration) record.Holder {
	at := time.Now().UTC().Add(-skew)
	return record.Holder{User: "alice", Host: "laptop", PID: 7, Session: "alice-laptop", LeaseSeconds: 90, RenewedAt: &at}
}

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// renewAt is the holder's renewal at its clock's at: a new seq, its renewal time and
// the progress its write carries (the decommission a little further).
func renewAt(t *testing.T, w *world.World, at time.Time, done int64) {
	t.Helper()
	editCheckpoint(t, w, func(cp *record.Checkpoint) {
		cp.Seq++
		cp.Holder.RenewedAt = &at
		cp.Steps[cp.Current()].Progress = &record.Progress{Operation: "decommission", Pod: "demo-dc1-rack1-3", DoneBytes: done << 20, TotalBytes: 100 << 20, At: at}
	})
}

// waitCount waits until b holds n occurrences of want.
func waitCount(t *testing.T, b *syncBuffer, want string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); strings.Count(b.String(), want) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d %q in:\n%s", n, want, b.String())
		}
		<-time.After(time.Millisecond) // a condition, polled: not a settle sleep
	}
}

// TestStatusWaitJudgesLeaseByOurClock: the holder of the operation runs on another
// machine whose clock is 5 minutes behind ours (its renewals look 5 minutes old here).
// `status --wait` judges it as the lock does (checkpoint.Judge), by how long its record
// stays unchanged on our clock: while it renews every 30 s, --wait follows it for 5
// minutes of our clock (over 3 leases) and then sees it end (exit 0). Once it stops
// renewing, --wait still judges it alive 89 s after the last change it saw, and stuck
// (exit 3, resume next) at 90 s, a whole lease of our clock.
func TestStatusWaitJudgesLeaseByOurClock(t *testing.T) {
	for _, ends := range []string{"finishes", "stops renewing"} {
		t.Run(ends, func(t *testing.T) {
			w := world.New(t, world.Opts{Nodes: 4})
			readyStatefulSets(t, w)
			crashScale(t, w)
			ours := time.Now().UTC().Truncate(time.Second)
			theirs := func(at time.Time) time.Time { return at.Add(-5 * time.Minute) }
			editCheckpoint(t, w, func(cp *record.Checkpoint) { cp.Holder = laptop(5 * time.Minute) })
			renewAt(t, w, theirs(ours), 0)
			clock := &testClock{t: ours}
			var out, errOut syncBuffer
			code := make(chan int, 1)
			go func() {
				code <- runAt(context.Background(), w, clock.now, &out, &errOut, "status", "demo", "-n", "cassandra", "--wait", "--timeout", "20s", "--nodetool-interval", "5ms")
			}()
			// Each renewal's progress is printed once --wait read it: the sign that it saw
			// the new record, at the time the clock shows then.
			const seen = "[..] decommission demo-dc1-rack1-3: "
			waitCount(t, &errOut, seen, 1)
			at := ours
			for i := 1; i <= 10; i++ {
				at = at.Add(30 * time.Second)
				clock.set(at)
				renewAt(t, w, theirs(at), int64(i))
				waitCount(t, &errOut, seen, i+1)
			}
			if strings.Contains(errOut.String(), "has not written") {
				t.Fatalf("a holder renewing every 30 s was called quiet:\n%s", errOut.String())
			}
			if ends == "finishes" {
				cp := loadCP(t, w)
				lo, _ := json.Marshal(checkpoint.LastOperation{OperationID: cp.OperationID, Kind: cp.Kind, Result: "succeeded", Summary: "rack1 scaled to 2", FinishedAt: theirs(at)})
				finishCheckpoint(t, w, string(lo))
				if c := <-code; c != 0 || !strings.Contains(out.String(), "done: rack1 scaled to 2") {
					t.Fatalf("exit %d, want 0 (done)\nstdout:\n%s\nstderr:\n%s", c, out.String(), errOut.String())
				}
				return
			}
			clock.set(at.Add(89 * time.Second))
			waitOutput(t, &errOut, "alice@laptop (pid 7) has not written its checkpoint for 1m29s of this machine's clock")
			select {
			case c := <-code:
				t.Fatalf("--wait ended (exit %d) before a whole lease passed on our clock\nstdout:\n%s", c, out.String())
			default:
			}
			clock.set(at.Add(90 * time.Second))
			c := <-code
			want := "stuck: its holder alice@laptop (pid 7) stopped without releasing it (the lease of alice@laptop (pid 7) expired: its checkpoint did not change for 1m30s of this machine's clock)"
			if c != 3 || !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "Next: kubectl cassandra resume -n cassandra demo") {
				t.Fatalf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", c, out.String(), errOut.String())
			}
		})
	}
}

// finishCheckpoint is what a run's Finish writes: the checkpoint removed and the last
// operation recorded, in one write.
func finishCheckpoint(t *testing.T, w *world.World, last string) {
	t.Helper()
	cr := w.CR().DeepCopy()
	ann := cr.GetAnnotations()
	delete(ann, checkpoint.Annotation)
	ann[checkpoint.LastOperationAnnotation] = last
	cr.SetAnnotations(ann)
	if err := w.Dyn.Tracker().Update(world.CCGVR, cr, w.NS); err != nil {
		t.Fatal(err)
	}
}

// TestStatusWaitFollowsAnotherProcess: a scale-down runs in another process; --wait,
// started once its checkpoint exists, follows it to its end and exits 0.
func TestStatusWaitFollowsAnotherProcess(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 4})
	readyStatefulSets(t, w)
	// The decommission is held streaming until --wait follows the operation, so the
	// scale cannot end before --wait starts.
	leaving := "demo-dc1-rack1-3"
	if err := w.Cass.SetFault(leaving, sim.Fault{HoldStreaming: true}); err != nil {
		t.Fatal(err)
	}
	release := func() { _ = w.Cass.UpdateFault(leaving, func(f *sim.Fault) { f.HoldStreaming = false }) }
	defer release()
	done := make(chan int, 1)
	go func() {
		_, _, code, _ := run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "3", "--yes")
		done <- code
	}()
	for deadline := time.Now().Add(10 * time.Second); w.CR().GetAnnotations()[checkpoint.Annotation] == ""; {
		if time.Now().After(deadline) {
			t.Fatal("the scale never wrote its checkpoint")
		}
		select {
		case c := <-done:
			t.Fatalf("the scale ended (exit %d) before --wait could follow it", c)
		case <-time.After(time.Millisecond): // a condition, polled: not a settle sleep
		}
	}
	var out, errOut syncBuffer
	waited := make(chan int, 1)
	go func() {
		waited <- runAt(context.Background(), w, time.Now, &out, &errOut, "status", "demo", "-n", "cassandra", "--wait", "--timeout", "20s", "--nodetool-interval", "20ms")
	}()
	waitOutput(t, &errOut, "waiting for scale-down")
	release()
	code := <-waited
	if code != 0 || !strings.Contains(out.String(), "done: ") || !strings.Contains(errOut.String(), "waiting for scale-down") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	if c := <-done; c != 0 {
		t.Fatalf("scale exit %d", c)
	}
}

// TestStatusWatchPlainLines: without a terminal, --watch prints the whole status once,
// then only what changed, one timestamped line each; Ctrl-C (context cancel) exits 0.
func TestStatusWatchPlainLines(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2})
	readyStatefulSets(t, w)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	clock := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	code := make(chan int, 1)
	go func() {
		code <- runAt(ctx, w, func() time.Time { return clock }, &out, &errOut, "status", "demo", "-n", "cassandra", "--watch", "--nodetool-interval", "1h")
	}()
	waitOutput(t, &out, "pvc data-demo-dc1-rack1-1: ")
	// A change the PVC watch sees: the claim of pod 1 goes.
	if err := w.Kube.CoreV1().PersistentVolumeClaims(w.NS).Delete(ctx, "data-demo-dc1-rack1-1", metav1DeleteOptions()); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, &out, "gone: pvc data-demo-dc1-rack1-1")
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d after Ctrl-C\n%s", c, errOut.String())
	}
	compareGoldenFile(t, filepath.Join("testdata", "watch", "plain-pvc-gone.golden"), normalise(out.String()))
}

func waitOutput(t *testing.T, b *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(b.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in:\n%s", want, b.String())
		}
		<-time.After(time.Millisecond) // a condition, polled: not a settle sleep
	}
}

func metav1DeleteOptions() metav1.DeleteOptions { return metav1.DeleteOptions{} }

// TestProgressInCheckpoint: a decommission's progress is kept for the checkpoint and
// written by the writes that happen anyway (here the release of an interrupted run);
// `status` on another machine then shows it, in text and JSON.
func TestProgressInCheckpoint(t *testing.T) {
	// The run is interrupted at its first progress line. The simulated node may show
	// its first stream only as the decommission ends (seen under the race detector on
	// two loaded cores): the interrupt then finds nothing in flight, and the scenario is
	// played again on a fresh world, up to three times.
	for try := 1; ; try++ {
		w, cp, errOut := interruptAtFirstProgress(t)
		if cp.Steps[cp.Current()].Kind != record.StepDecommission && try < 3 {
			t.Logf("try %d: the decommission ended before the interrupt; again", try)
			continue
		}
		p := cp.Steps[cp.Current()].Progress
		if p == nil || p.Operation != "decommission" || p.Pod != "demo-dc1-rack1-3" || p.TotalBytes <= 0 {
			t.Fatalf("step record progress: %+v\ncurrent %d steps %+v\nstderr:\n%s", p, cp.Current(), cp.Steps, errOut)
		}
		stdout, _, code, _ := run(w, 0, "status", "demo", "-n", "cassandra")
		if code != 0 || !strings.Contains(stdout, "progress decommission demo-dc1-rack1-3: ") {
			t.Fatalf("status exit %d:\n%s", code, stdout)
		}
		stdout, _, _, _ = run(w, 0, "status", "demo", "-n", "cassandra", "-o", "json")
		if !strings.Contains(stdout, `"progress": {`) || !strings.Contains(stdout, `"totalBytes": `) {
			t.Fatalf("status -o json has no progress:\n%s", stdout)
		}
		return
	}
}

// interruptAtFirstProgress scales a 4-node rack down, interrupts the run at its first
// plain progress line (as a user's Ctrl-C would), and returns the checkpoint left.
func interruptAtFirstProgress(t *testing.T) (*world.World, *record.Checkpoint, string) {
	t.Helper()
	w := world.New(t, world.Opts{Nodes: 4, DecommissionTime: 3 * time.Second})
	readyStatefulSets(t, w)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	errOut := &cancelOn{want: "[..] decommission demo-dc1-rack1-3: ", cancel: cancel}
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: errOut}, repair.Operator{Plugin: casskop.Plugin{}})
	o.Clients = &kube.Clients{Kube: w.Kube, Dynamic: w.Dyn, Discovery: w.Kube.Discovery(), Namespace: w.NS}
	o.Execer = w
	o.SampleEvery, o.ProgressEvery = 20*time.Millisecond, time.Hour
	pid := w.StartProcess()
	o.Identity = func() record.Holder {
		return record.Holder{Host: "test-host", PID: pid, Session: fmt.Sprintf("s%d", pid), LeaseSeconds: 60}
	}
	o.Alive = w.ProcessAlive
	code := o.Execute(ctx, []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "3", "--yes", "--poll-interval", "1ms", "--progress", "plain"})
	w.EndProcess(pid)
	if code != 4 {
		t.Fatalf("exit %d, want 4 (interrupted)\n%s", code, errOut.String())
	}
	if n := strings.Count(errOut.String(), "[..] decommission demo-dc1-rack1-3: "); n != 1 {
		t.Errorf("%d plain progress lines within one interval, want 1:\n%s", n, errOut.String())
	}
	cp, err := checkpoint.Decode(w.CR().GetAnnotations()[checkpoint.Annotation], "", testKinds())
	if err != nil {
		t.Fatal(err)
	}
	return w, cp, errOut.String()
}

// cancelOn cancels once what it was written contains want (the user's Ctrl-C on
// seeing the line).
type cancelOn struct {
	syncBuffer
	want   string
	cancel func()
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.syncBuffer.Write(p)
	if strings.Contains(c.syncBuffer.String(), c.want) {
		c.cancel()
	}
	return n, err
}
