package steps

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// recorder keeps the warnings a step gave and shows onWait each waiting line.
type recorder struct {
	nopReporter
	mu     sync.Mutex
	warns  []string
	waits  []string
	onWait func(what string)
}

func (r *recorder) Warn(_, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warns = append(r.warns, msg)
}

func (r *recorder) Waiting(_, what string, _ time.Duration) {
	r.mu.Lock()
	r.waits = append(r.waits, what)
	fn := r.onWait
	r.mu.Unlock()
	if fn != nil {
		fn(what)
	}
}

func (r *recorder) warnings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.warns...)
}

// leavingButFailed starts a decommission of n's node whose 5.0 mode then reads
// DECOMMISSION_FAILED while it goes on (CASSANDRA-21493/21583): peers see it UL, and
// held (a short decommission) it streams out too.
func leavingButFailed(t *testing.T, streaming bool) (*fakeworld.World, *World, record.Node) {
	t.Helper()
	opts := fakeworld.Opts{Nodes: 3, Version: "5.0", DecommissionTime: time.Hour}
	if streaming {
		opts.DecommissionTime = 30 * time.Millisecond
	}
	w, sw, n := setupWith(t, opts)
	if err := w.Cass.SetFault(n.Pod, sim.Fault{HoldStreaming: streaming}); err != nil {
		t.Fatal(err)
	}
	w.StartDecommission(n.Pod)
	if err := w.Cass.UpdateFault(n.Pod, func(f *sim.Fault) { f.FailedWhileLeaving = true }); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		nv, _ := w.Cass.Node(n.Pod)
		if nv.Mode == sim.ModeDecommissionFailed && nv.PeerCode == "UL" && nv.Streaming == streaming {
			return w, sw, n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node: %+v", nv)
		}
		<-time.After(time.Millisecond) // the held decommission reaches its streaming phase
	}
}

// TestDecommissionFailedWhileLeaving: a node whose mode reads DECOMMISSION_FAILED while
// it streams out or its peers see it UL is leaving, not failed: the decommission step is
// done (its Wait asks for nothing again), verify-left waits and says why, and no second
// decommission is called.
func TestDecommissionFailedWhileLeaving(t *testing.T) {
	for _, tc := range []struct {
		name      string
		streaming bool
		why       string
	}{
		{"peers see it UL", false, "fake-demo-dc1-rack1-0 sees it UL (leaving)"},
		{"streaming out", true, "its netstats list an Unbootstrap stream it sends"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, sw, n := leavingButFailed(t, tc.streaming)
			dec := &decommission{node: node{sw, n}}
			mustDone(t, dec, true)
			if err := dec.Wait(context.Background()); err != nil {
				t.Fatalf("decommission Wait: %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			want := "node " + n.Pod + " reports DECOMMISSION_FAILED but is still leaving: " + tc.why
			rec := &recorder{onWait: func(what string) {
				if strings.HasPrefix(what, want) {
					cancel() // it waits, saying why: enough
				}
			}}
			sw.Reporter = rec
			if err := (&verifyLeft{node: node{sw, n}}).Wait(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("verify-left Wait: %v, want it waiting (%q); said %q", err, want, rec.waits)
			}
			if started, calls := w.Decommissions(n.Pod); started != 1 || calls != 1 {
				t.Fatalf("%d decommissions started, %d calls; want 1, 1", started, calls)
			}
		})
	}
}

// TestDecommissionFailedAfterRefusal: 5.0's DECOMMISSION_FAILED after its replication
// check refused, with no stream out and peers seeing the node UN, is a failure: the
// steps ask for the decommission again. With the ring unreadable it is unknown, never
// failed.
func TestDecommissionFailedAfterRefusal(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "5.0")
	_ = w.Cass.SetFault(n.Pod, sim.Fault{RefuseRF: true})
	dec := &decommission{node: node{sw, n}}
	var notStarted *engine.NotStarted
	if err := dec.Do(ctx); !errors.As(err, &notStarted) {
		t.Fatalf("Do: %v, want a refusal", err)
	}
	if nv, _ := w.Cass.Node(n.Pod); nv.Mode != sim.ModeDecommissionFailed || nv.PeerCode != "UN" {
		t.Fatalf("node: %+v", nv)
	}
	mustDone(t, dec, false)
	var redo *engine.Redo
	if err := dec.Wait(ctx); !errors.As(err, &redo) || !strings.Contains(redo.Reason, "the ring shows it not leaving") {
		t.Fatalf("decommission Wait: %v, want a redo", err)
	}
	if err := (&verifyLeft{node: node{sw, n}}).Wait(ctx); !errors.As(err, &redo) || redo.StepID != "decommission/"+n.Pod {
		t.Fatalf("verify-left Wait: %v, want a redo", err)
	}

	w, sw, n = leavingButFailed(t, false)
	for _, p := range []string{w.Pod("rack1", 0), w.Pod("rack1", 1)} {
		_ = w.Cass.SetFault(p, sim.Fault{EmptyRing: true})
	}
	if done, err := (&decommission{node: node{sw, n}}).Done(ctx); done || err == nil {
		t.Fatalf("ring unreadable: done=%v err=%v, want unknown", done, err)
	}
}

// TestDecommissionFailedStreamRetried: 5.0 after a stream failure (docs/how-it-works/nodetool.md §7 S3x)
// reads DECOMMISSION_FAILED while its peers keep seeing it UL until a retry: the same
// view as a decommission still running (CASSANDRA-21493/21583) but for the stream, which
// never comes back. A run that saw the call fail redoes it at once; a later run waits for
// a stream for StallAfter, then issues the decommission again.
func TestDecommissionFailedStreamRetried(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "5.0")
	_ = w.Cass.SetFault(n.Pod, sim.Fault{StreamFailures: 1})
	dec := &decommission{node: node{sw, n}}
	var retry *operation.Retryable
	if err := dec.Do(ctx); !errors.As(err, &retry) {
		t.Fatalf("Do: %v, want a retryable failure", err)
	}
	if nv, _ := w.Cass.Node(n.Pod); nv.Mode != sim.ModeDecommissionFailed || nv.PeerCode != "UL" || nv.Streaming {
		t.Fatalf("node: %+v", nv)
	}
	mustDone(t, dec, true) // in the leaving set: verify-left judges it
	var redo *engine.Redo
	if err := (&verifyLeft{node: node{sw, n}}).Wait(ctx); !errors.As(err, &redo) || !strings.Contains(redo.Reason, "Stream failed") {
		t.Fatalf("the run that saw the failure: %v, want a redo", err)
	}
	sw.failed = guarded[string, string]{} // a later run
	sw.StallAfter = time.Nanosecond
	if err := (&verifyLeft{node: node{sw, n}}).Wait(ctx); !errors.As(err, &redo) || !strings.Contains(redo.Reason, "has been DECOMMISSION_FAILED with no stream for") {
		t.Fatalf("a later run: %v, want a redo after the stall", err)
	}
}

// withSteps gives the plan n's decommission and verify-left records.
func withSteps(sw *World, n record.Node) {
	sw.CP.Steps = []record.Step{
		{ID: record.StepID(record.StepDecommission, n.Pod), Kind: record.StepDecommission, Pod: n.Pod, State: record.StatePending},
		{ID: record.StepID(record.StepVerifyLeft, n.Pod), Kind: record.StepVerifyLeft, Pod: n.Pod, State: record.StatePending},
	}
}

// TestDecommissionResumedAfterRestart (CASSANDRA-16290): the node was seen leaving,
// restarted (NORMAL again), and the step issues the decommission again. Safe records
// the resumption in the step's record before the call; once the node left, verify-left
// says to repair the keyspaces of its datacenter, once per run, and a later run told by
// the record says it again. A node never seen leaving gets no such word.
func TestDecommissionResumedAfterRestart(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	withSteps(sw, n)
	rec := &recorder{}
	sw.Reporter = rec
	_ = w.Cass.SetFault(n.Pod, sim.Fault{HoldStreaming: true})
	w.StartDecommission(n.Pod) // the first call, its client gone
	dec := &decommission{node: node{sw, n}}
	mustDone(t, dec, true) // seen leaving
	if err := w.Cass.Restart(n.Pod); err != nil {
		t.Fatal(err)
	}
	_ = w.Cass.SetFault(n.Pod, sim.Fault{})
	mustDone(t, dec, false) // NORMAL again
	if err := dec.Safe(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := sw.CP.Step("decommission/" + n.Pod); !st.ResumedAfterRestart {
		t.Fatalf("the record does not say the decommission resumes: %+v", st)
	}
	if err := dec.Do(ctx); err != nil {
		t.Fatal(err)
	}
	vl := &verifyLeft{node: node{sw, n}}
	mustDone(t, vl, true)
	mustDone(t, vl, true)
	want := "node fake-demo-dc1-rack1-2 was removed, but its decommission was issued again after the node restarted in the middle of it: " +
		"a resumed decommission skips the ranges it had already streamed, and writes to them since may be missing on their new replicas (CASSANDRA-16290). " +
		"Run `nodetool repair -pr <keyspace>` for each of system_auth, system_distributed, system_traces, app on every remaining node of datacenter dc1 " +
		"(e.g. kubectl cassandra nodetool -n cassandra fake-demo-dc1-rack1-0 -- repair -pr system_auth)"
	if got := rec.warnings(); len(got) != 1 || got[0] != want {
		t.Fatalf("warnings %q, want once %q", got, want)
	}
	if got := sw.Warnings(); len(got) != 1 || got[0] != want {
		t.Fatalf("Warnings() = %q", got)
	}
	if started, calls := w.Decommissions(n.Pod); started != 2 || calls != 2 {
		t.Fatalf("%d decommissions started, %d calls; want 2, 2", started, calls)
	}

	// A later run knows it from the record alone.
	sw.left, sw.advice, sw.underway = guarded[string, bool]{}, guarded[string, string]{}, guarded[string, bool]{}
	rec2 := &recorder{}
	sw.Reporter = rec2
	mustDone(t, vl, true)
	if got := rec2.warnings(); len(got) != 1 || got[0] != want {
		t.Fatalf("later run: warnings %q", got)
	}

	// Never seen leaving: a plain first decommission says nothing.
	w, sw, n = setup(t, "4.1")
	withSteps(sw, n)
	rec = &recorder{}
	sw.Reporter = rec
	dec = &decommission{node: node{sw, n}}
	mustDone(t, dec, false)
	if err := dec.Safe(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dec.Do(ctx); err != nil {
		t.Fatal(err)
	}
	mustDone(t, &verifyLeft{node: node{sw, n}}, true)
	if st, _ := sw.CP.Step("decommission/" + n.Pod); st.ResumedAfterRestart || len(rec.warnings()) != 0 || sw.Warnings() != nil {
		t.Fatalf("a first decommission: record %+v, warnings %q", st, rec.warnings())
	}
}

// TestWasUnderway: what the checkpoint records of an earlier run counts as the node seen
// leaving: its decommission done, or streaming progress kept for it.
func TestWasUnderway(t *testing.T) {
	_, sw, n := setup(t, "4.1")
	withSteps(sw, n)
	if sw.wasUnderway(n.Pod) {
		t.Fatal("pending, no progress: not under way")
	}
	sw.CP.Steps[1].Progress = &record.Progress{Operation: "decommission", Pod: n.Pod}
	if !sw.wasUnderway(n.Pod) {
		t.Fatal("verify-left kept streaming progress")
	}
	sw.CP.Steps[1].Progress = nil
	sw.CP.Steps[0].State = record.StateDone
	if !sw.wasUnderway(n.Pod) {
		t.Fatal("decommission recorded done")
	}
}

// TestRepairAdvice: with the keyspaces unknown (3.11 prints none), every keyspace.
func TestRepairAdvice(t *testing.T) {
	got := repairAdvice("p-2", "dc1", "ns", "", nil)
	for _, want := range []string{"node p-2 was removed", "CASSANDRA-16290", "Run `nodetool repair -pr` (every keyspace) on every remaining node of datacenter dc1", "kubectl cassandra nodetool -n ns POD -- repair -pr)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}
