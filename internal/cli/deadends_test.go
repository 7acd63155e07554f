package cli

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// Issue 15, "nothing stuck": every state has a way forward (resume once the world is
// back, or abort to a consistent cluster with the operator restored).

var abortDemo = []string{"abort", "demo", "-n", "cassandra", "--yes"}

func scaleTo(n int, extra ...string) []string {
	return append([]string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", fmt.Sprint(n), "--yes"}, extra...)
}

func stepOf(t *testing.T, cp *record.Checkpoint, id string) record.Step {
	t.Helper()
	for _, s := range cp.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no step %s in the checkpoint", id)
	return record.Step{}
}

func assertDecommissions(t *testing.T, w *world.World, label string, want map[string][2]int) {
	t.Helper()
	for pod, sc := range want {
		if started, calls := w.Decommissions(pod); started != sc[0] || calls != sc[1] {
			t.Errorf("%s: %s: %d decommissions started, %d calls; want %d, %d", label, pod, started, calls, sc[0], sc[1])
		}
	}
}

func assertHistory(t *testing.T, h *world.ReplicaHistory, label string, want ...int32) {
	t.Helper()
	if got := h.History(); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: operator replica history %s, want %v", label, h, want)
	}
}

// TestAttemptsCappedPerRun: ten stream failures use up one run's attempts; the message
// names the last real error; a later resume, the fault gone, tries again and finishes.
func TestAttemptsCappedPerRun(t *testing.T) {
	for _, v := range []string{"5.0", "4.1"} {
		t.Run(v, func(t *testing.T) {
			// Three nodes: on 5.0 a node whose decommission failed still counts as
			// leaving, and with two nodes Cassandra refuses the retry (E5).
			w := world.New(t, world.Opts{Nodes: 3, Version: v})
			const pod = "demo-dc1-rack1-2"
			_ = w.Cass.SetFault(pod, sim.Fault{StreamFailures: 10})
			// 4.x stays LEAVING after a failed stream: a new run learns it failed only by
			// the missing stream (--stall-after).
			_, stderr, code, _ := run(w, 0, scaleTo(2, "--stall-after", "5ms")...)
			want := "step decommission/" + pod + " failed 10 times in this run (last error: decommission of " + pod + " failed: "
			if code != exit.Error || !strings.Contains(stderr, want) || strings.Contains(stderr, "last error: )") {
				t.Fatalf("exit %d, want 1 and %q\n%s", code, want, stderr)
			}
			cp := loadCP(t, w)
			if st := stepOf(t, cp, "decommission/"+pod); st.Attempts != 10 || st.LastError == "" {
				t.Fatalf("checkpoint step: %+v", st)
			}
			assertDecommissions(t, w, "after ten failures", map[string][2]int{pod: {10, 10}})
			_, stderr, code, _ = run(w, 0, append(resume, "--stall-after", "5ms")...)
			if code != 0 {
				t.Fatalf("resume, the fault gone: exit %d\n%s", code, stderr)
			}
			started, _ := w.Decommissions(pod)
			if started != 11 {
				t.Fatalf("decommissions started %d, want 11 (ten failed, one in the resume)", started)
			}
			if n, _ := w.Cass.Node(pod); !n.Left {
				t.Fatalf("node did not leave: %+v", n)
			}
		})
	}
}

// TestRefusalThenAbort: Cassandra refuses the second decommission; the run stops with
// exit 3 and the ways forward, the step is pending with its error; abort ends
// consistent at what exists, the operator 1 -> 0 -> 1, one decommission in all.
func TestRefusalThenAbort(t *testing.T) {
	for _, v := range []string{"4.1", "5.0"} {
		t.Run(v, func(t *testing.T) {
			w := world.New(t, world.Opts{Nodes: 3, Version: v, Operator: true})
			op := w.RecordReplicas("casskop")
			_ = w.Cass.SetFault("demo-dc1-rack1-1", sim.Fault{RefuseRF: true})
			_, stderr, code, _ := run(w, 0, scaleTo(1)...)
			for _, want := range []string{"cassandra refused to decommission demo-dc1-rack1-1: ", "Not enough live nodes to maintain replication factor",
				"which is pending again", "then run: kubectl cassandra resume -n cassandra demo",
				"kubectl cassandra scale -n cassandra demo --dc dc1 --rack rack1 --nodes 1 --force --yes", "kubectl cassandra abort -n cassandra demo"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("refusal does not say %q", want)
				}
			}
			if code != operation.ExitRefused {
				t.Fatalf("exit %d, want 3\n%s", code, stderr)
			}
			cp := loadCP(t, w)
			if st := stepOf(t, cp, "decommission/demo-dc1-rack1-1"); st.State != record.StatePending || !strings.Contains(st.LastError, "Not enough live nodes") || st.StartedAt != nil {
				t.Fatalf("refused step: %+v", st)
			}
			stdout, stderr, code, _ := run(w, 0, abortDemo...)
			if code != 0 || !strings.Contains(stdout, "aborted after removing 1 of 2 nodes") || !strings.Contains(stderr, "nodesPerRacks of datacenter dc1 will be set to 2 (now 3)") {
				t.Fatalf("abort: exit %d\n%s\n%s", code, stdout, stderr)
			}
			w.AssertConsistentAt(2, "refusal then abort")
			if lo := w.LastOperation(); lo.Result != "aborted" || lo.Summary != "aborted after removing 1 of 2 nodes" {
				t.Fatalf("last operation: %+v", lo)
			}
			assertHistory(t, op, "refusal then abort", 1, 0, 1)
			assertDecommissions(t, w, "refusal then abort", map[string][2]int{"demo-dc1-rack1-2": {1, 1}, "demo-dc1-rack1-1": {0, 1}, "demo-dc1-rack1-0": {0, 0}})
		})
	}
}

// TestScaleForceAfterRefusalReplans: the same scale with --force after a refusal makes
// the plan again with --force (the old one would decommission without it) and finishes;
// the old pause of the operator carries over (1 -> 0 -> 1).
func TestScaleForceAfterRefusalReplans(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Operator: true})
	op := w.RecordReplicas("casskop")
	_ = w.Cass.SetFault("demo-dc1-rack1-2", sim.Fault{RefuseRF: true})
	if _, stderr, code, _ := run(w, 0, scaleTo(1)...); code != operation.ExitRefused {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	old := loadCP(t, w).OperationID
	stdout, stderr, code, _ := run(w, 0, scaleTo(1, "--force")...)
	if code != 0 || !strings.Contains(stderr, "was planned without --force and no node of it is leaving: making the plan again with --force (same operation ID)") || w.LastOperation().OperationID != old ||
		!strings.Contains(stdout, "nodetool decommission --force") {
		t.Fatalf("scale --force: exit %d\n%s\n%s", code, stdout, stderr)
	}
	w.AssertConverged(1, "re-planned with --force")
	assertHistory(t, op, "re-planned with --force", 1, 0, 1)
	assertDecommissions(t, w, "re-planned", map[string][2]int{"demo-dc1-rack1-2": {1, 2}, "demo-dc1-rack1-1": {1, 1}})

	// A node of the old plan is leaving: a different --force is refused, saying so. (The
	// run died once the decommission was recorded started; the exec reached the node.)
	w = world.New(t, world.Opts{Nodes: 3, DecommissionTime: time.Hour})
	if _, _, _, crashed := run(w, 2, scaleTo(1)...); !crashed {
		t.Fatal("no crash")
	}
	if st := stepOf(t, loadCP(t, w), "decommission/demo-dc1-rack1-2"); st.State != record.StateStarted {
		t.Fatalf("crash point: %+v", st)
	}
	w.StartDecommission("demo-dc1-rack1-2")
	before := snapshot(t, w)
	_, stderr, code, _ = run(w, 0, scaleTo(1, "--force")...)
	if code != operation.ExitRefused || !strings.Contains(stderr, "was planned without --force; it cannot be made again with --force while a node of it is being removed") ||
		!strings.Contains(stderr, "kubectl cassandra resume -n cassandra demo") {
		t.Fatalf("different --force while leaving: exit %d\n%s", code, stderr)
	}
	if snapshot(t, w) != before {
		t.Fatal("the refused re-plan changed something")
	}
}

// TestAbortAfterRemovingOne: a 4 -> 1 scale-down interrupted once the first node is
// removed in full is aborted: nodesPerRacks = 3 (the StatefulSet's replicas), operator
// restored, last operation "aborted after removing 1 of 3 nodes".
func TestAbortAfterRemovingOne(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 4, Operator: true})
	op := w.RecordReplicas("casskop")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.OnSideEffect = func(int) {
		if !strings.Contains(" "+strings.Join(w.PVCNames(), " ")+" ", " data-demo-dc1-rack1-3 ") {
			cancel() // Ctrl-C right after the first node's claim was deleted
		}
	}
	_, stderr, code, _ := runCtx(ctx, w, 0, scaleTo(1)...)
	w.OnSideEffect = nil
	if code != exit.Interrupted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	stdout, stderr, code, _ := run(w, 0, abortDemo...)
	if code != 0 || !strings.Contains(stdout, "aborted after removing 1 of 3 nodes") || !strings.Contains(stderr, "1 of 3 nodes removed so far") {
		t.Fatalf("abort: exit %d\n%s\n%s", code, stdout, stderr)
	}
	w.AssertConsistentAt(3, "abort after one node")
	if lo := w.LastOperation(); lo.Summary != "aborted after removing 1 of 3 nodes" {
		t.Fatalf("last operation: %+v", lo)
	}
	assertHistory(t, op, "abort after one node", 1, 0, 1)
	assertDecommissions(t, w, "abort after one node", map[string][2]int{"demo-dc1-rack1-3": {1, 1}, "demo-dc1-rack1-2": {0, 0}, "demo-dc1-rack1-1": {0, 0}})
}

// TestAbortScaleUpMidway: a 1 -> 3 scale-up interrupted once the first node was added
// is aborted at 2 nodes per rack.
func TestAbortScaleUpMidway(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 1, Operator: true})
	op := w.RecordReplicas("casskop")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.OnSideEffect = func(int) {
		if w.Replicas("rack1") == 2 {
			cancel()
		}
	}
	_, stderr, code, _ := runCtx(ctx, w, 0, scaleUp3...)
	w.OnSideEffect = nil
	if code != exit.Interrupted || w.Replicas("rack1") != 2 {
		t.Fatalf("exit %d, replicas %d\n%s", code, w.Replicas("rack1"), stderr)
	}
	stdout, stderr, code, _ := run(w, 0, abortDemo...)
	if code != 0 || !strings.Contains(stdout, "aborted after adding 1 of 2 nodes") {
		t.Fatalf("abort: exit %d\n%s\n%s", code, stdout, stderr)
	}
	w.AssertConsistentAt(2, "scale-up aborted")
	assertHistory(t, op, "scale-up aborted", 1, 0, 1)
	if n := w.Incarnations("pod", "demo-dc1-rack1-1"); n != 1 {
		t.Fatalf("pod demo-dc1-rack1-1 created %d times", n)
	}
}

// TestAbortRestartMidway: a restart interrupted once its first pod is back is aborted;
// the other pods are not restarted, the operator is restored.
func TestAbortRestartMidway(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Operator: true})
	op := w.RecordReplicas("casskop")
	before := podUIDs(w, rack1Pods)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.OnSideEffect = func(int) {
		if uid := w.PodUID("demo-dc1-rack1-2"); uid != "" && uid != before["demo-dc1-rack1-2"] {
			cancel()
		}
	}
	_, stderr, code, _ := runCtx(ctx, w, 0, restartR1...)
	w.OnSideEffect = nil
	if code != exit.Interrupted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	stdout, stderr, code, _ := run(w, 0, abortDemo...)
	if code != 0 || !strings.Contains(stdout, "aborted after restarting 1 of 3 pods") {
		t.Fatalf("abort: exit %d\n%s\n%s", code, stdout, stderr)
	}
	w.AssertConsistentAt(3, "restart aborted")
	assertHistory(t, op, "restart aborted", 1, 0, 1)
	for _, p := range []string{"demo-dc1-rack1-0", "demo-dc1-rack1-1"} {
		if w.PodUID(p) != before[p] {
			t.Errorf("pod %s was restarted", p)
		}
	}
	if n, _ := w.Cass.Node("demo-dc1-rack1-2"); n.Drains != 1 {
		t.Errorf("node 2 drained %d times", n.Drains)
	}
}

// TestAbortFinishesLeavingNode: a decommission cannot be cancelled, so abort, meeting a
// node LEAVING — by the checkpoint (decommission started) or by the world (the step
// pending, the node leaving anyway) — finishes removing that node first (waits until it
// left, shrinks the StatefulSet, deletes its claims), never sending a decommission of
// its own, then stops there: the cluster consistent at the size reached, the operator
// restored once, the next planned node untouched.
func TestAbortFinishesLeavingNode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		crashAt int
	}{
		{"decommission started", 4},
		{"node leaving, step pending", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := world.New(t, world.Opts{Nodes: 3, Operator: true, DecommissionTime: 50 * time.Millisecond})
			op := w.RecordReplicas("casskop")
			if _, _, _, crashed := run(w, tc.crashAt, scaleTo(1)...); !crashed {
				t.Fatal("no crash")
			}
			if w.DeploymentReplicas("casskop") != 0 {
				t.Fatal("the operator is not paused at the crash point")
			}
			if _, calls := w.Decommissions("demo-dc1-rack1-2"); calls != 0 {
				t.Fatalf("crash point %d: the decommission was already sent", tc.crashAt)
			}
			w.StartDecommission("demo-dc1-rack1-2")
			stdout, stderr, code, _ := run(w, 0, abortDemo...)
			if code != 0 || !strings.Contains(stderr, "node demo-dc1-rack1-2 is half removed") || !strings.Contains(stderr, "abort first finishes removing it") ||
				!strings.Contains(stdout, "aborted after removing 1 of 2 nodes") {
				t.Fatalf("abort while leaving: exit %d\n%s\n%s", code, stdout, stderr)
			}
			w.AssertConsistentAt(2, "abort finishing a leaving node")
			if nv, _ := w.Cass.Node("demo-dc1-rack1-1"); nv.Mode != sim.ModeNormal || nv.Left {
				t.Fatalf("the next planned node was touched: %+v", nv)
			}
			assertDecommissions(t, w, "abort finishing a leaving node", map[string][2]int{"demo-dc1-rack1-2": {1, 1}, "demo-dc1-rack1-1": {0, 0}})
			assertHistory(t, op, "abort finishing a leaving node", 1, 0, 1)
			if cp := loadCP(t, w); cp != nil {
				t.Fatalf("checkpoint left: %+v", cp)
			}
		})
	}
}

// TestAbortRefusedUnequalRacks: a --dc scale-down stopped between its racks cannot be
// aborted (CassKop keeps one count per datacenter): abort names the rack to finish and
// changes nothing; resume finishes.
func TestAbortRefusedUnequalRacks(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Racks: []string{"rack1", "rack2"}, Topology: true, Operator: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.OnSideEffect = func(int) {
		if !strings.Contains(" "+strings.Join(w.PVCNames(), " ")+" ", " data-demo-dc1-rack1-2 ") {
			cancel()
		}
	}
	dcScale := []string{"scale", "demo", "-n", "cassandra", "--dc", "dc1", "--nodes", "2", "--yes"}
	_, stderr, code, _ := runCtx(ctx, w, 0, dcScale...)
	w.OnSideEffect = nil
	if code != exit.Interrupted || w.Replicas("rack1") != 2 || w.Replicas("rack2") != 3 {
		t.Fatalf("exit %d, replicas %d/%d\n%s", code, w.Replicas("rack1"), w.Replicas("rack2"), stderr)
	}
	before := snapshot(t, w)
	_, stderr, code, _ = run(w, 0, abortDemo...)
	if code != operation.ExitRefused || !strings.Contains(stderr, "have different sizes (rack1 2, rack2 3)") || !strings.Contains(stderr, "Finish rack rack2 first: run kubectl cassandra resume -n cassandra demo") {
		t.Fatalf("abort with unequal racks: exit %d\n%s", code, stderr)
	}
	if snapshot(t, w) != before || w.DeploymentReplicas("casskop") != 0 {
		t.Fatal("the refused abort changed something")
	}
	if _, stderr, code, _ := run(w, 0, resume...); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(2, "resumed after the refused abort")
}
