package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// Issue 23, "the world is the truth": a 3 -> 1 scale-down whose record was wiped once
// the StatefulSet was at 1 leaves the cluster resource asking 3, the claims of the
// removed pods, and the operator paused for an operation that is gone. The same scale
// run again settles that world instead of answering "nothing to do".

const (
	leftover1 = "data-demo-dc1-rack1-1"
	leftover2 = "data-demo-dc1-rack1-2"
)

// unsettledWorld is that world: nodes 2 and 1 decommissioned (by hand here: not the
// plugin's side effects), the StatefulSet at 1 (their pods gone, their claims left),
// nodesPerRacks still 3, the operator at 0 held by the gone operation.
func unsettledWorld(t *testing.T) *world.World {
	t.Helper()
	w := world.New(t, world.Opts{Nodes: 3, Operator: true})
	for _, pod := range []string{"demo-dc1-rack1-2", "demo-dc1-rack1-1"} {
		w.Cass.Run(context.Background(), pod, []string{"decommission"}, io.Discard, io.Discard)
		if nv, _ := w.Cass.Node(pod); !nv.Left {
			t.Fatalf("setup: node %s did not leave: %+v", pod, nv)
		}
	}
	w.SetReplicas("rack1", 1)
	w.PauseDeployment("casskop", []record.PauseHolder{{OperationID: "scale-gone", Namespace: w.NS, Cluster: w.Name, Replicas: 1}})
	return w
}

// settleHistory is what settling that world must do, however often it crashed: each
// left-over claim deleted once, nodesPerRacks written once, no StatefulSet written, no
// decommission, and the operator written twice: the stale pause taken over (its holder
// list, still at 0), then restored (0 -> 1).
func settleHistory() world.Expect {
	return world.Expect{
		Execs: map[string]int{}, ExecKinds: []string{"decommission", "drain", "cleanup"},
		PVCDeletes: []string{leftover2, leftover1},
		Operator:   map[string][]int32{"casskop": {0, 0, 1}},
		SpecWrites: 1,
	}
}

// assertSettled checks the end of the settling: the world as a 3 -> 1 scale-down leaves
// it, the operator running and held by nobody, its replicas 0 -> 1 (op) and the
// history settleHistory.
func assertSettled(t *testing.T, w *world.World, op *world.ReplicaHistory, label string) {
	t.Helper()
	w.AssertConverged(1, label)
	assertHistory(t, op, label, 0, 1)
	assertNoHolders(t, w, label)
	w.AssertHistory(settleHistory(), label)
}

// TestSettleAfterWipedRemoval: scale --nodes 1 plans the settling (which claims go and
// why), deletes both claims, sets nodesPerRacks to 1 and restores the operator.
func TestSettleAfterWipedRemoval(t *testing.T) {
	w := unsettledWorld(t)
	op := w.RecordReplicas("casskop")
	stdout, stderr, code, _ := run(w, 0, scaleTo(1)...)
	if code != 0 {
		t.Fatalf("settle: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"delete left-over PVC " + leftover2 + " of removed pod demo-dc1-rack1-2 (left over by a removal whose record is gone; no pod and no ring member uses it)",
		"delete left-over PVC " + leftover1 + " of removed pod demo-dc1-rack1-1",
		"nodesPerRacks of datacenter dc1 asks 3 while the StatefulSets have 1: setting it to 1",
		"settled at 1 nodes (0 removed, 2 left-over PVCs deleted)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output does not say %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "nothing to do") {
		t.Errorf("settle answered nothing to do:\n%s", stdout)
	}
	assertSettled(t, w, op, "settled")
	if lo := w.LastOperation(); lo == nil || !strings.Contains(lo.Summary, "settled at 1 nodes (0 removed, 2 left-over PVCs deleted)") {
		t.Errorf("last operation: %+v", lo)
	}
}

// TestSettleRefusesUnaccountedMember: node 1 never left the ring (its pod was removed
// while it was down): a DN member at an address no pod has may be the node whose data
// is on data-demo-dc1-rack1-1. Refused, naming it; nothing changed.
func TestSettleRefusesUnaccountedMember(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Operator: true})
	w.Cass.Run(context.Background(), "demo-dc1-rack1-2", []string{"decommission"}, io.Discard, io.Discard)
	addr := w.PodIP("demo-dc1-rack1-1")
	w.SetDown("demo-dc1-rack1-1", true)
	w.SetReplicas("rack1", 1)
	w.PauseDeployment("casskop", []record.PauseHolder{{OperationID: "scale-gone", Namespace: w.NS, Cluster: w.Name, Replicas: 1}})
	before := snapshot(t, w)
	_, stderr, code, _ := run(w, 0, scaleTo(1)...)
	want := "ring members of datacenter dc1 run where no pod is: " + addr
	if code != operation.ExitRefused || !strings.Contains(stderr, want) || !strings.Contains(stderr, "DN") || !strings.Contains(stderr, leftover1) ||
		!strings.Contains(stderr, "nothing changed") {
		t.Fatalf("exit %d, want 3 saying %q\n%s", code, want, stderr)
	}
	if snapshot(t, w) != before || w.DeploymentReplicas("casskop") != 0 || len(w.History()) != 0 {
		t.Fatalf("the refused settle changed something: %v", w.History())
	}
}

// TestSettleRefusesUnreadableRing: with claims left over, a ring no pod of the racks can
// read is unknown, never "no member uses them": refused, nothing changed.
func TestSettleRefusesUnreadableRing(t *testing.T) {
	w := unsettledWorld(t)
	w.SetDown("demo-dc1-rack1-0", true)
	before := snapshot(t, w)
	_, stderr, code, _ := run(w, 0, scaleTo(1)...)
	if code != operation.ExitRefused || !strings.Contains(stderr, "cannot read the ring") || !strings.Contains(stderr, "nothing changed") {
		t.Fatalf("exit %d, want 3\n%s", code, stderr)
	}
	if snapshot(t, w) != before || len(w.History()) != 0 {
		t.Fatalf("the refused settle changed something: %v", w.History())
	}
}

// TestSettleCountOnly: no claim is left, only nodesPerRacks differs: the settling sets
// it, with the running operator paused and restored around it.
func TestSettleCountOnly(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 1, Operator: true})
	w.SetNodesPerRack(3)
	stdout, stderr, code, _ := run(w, 0, scaleTo(1)...)
	if code != 0 || !strings.Contains(stdout, "nodesPerRacks of datacenter dc1 asks 3") || strings.Contains(stdout, "left-over PVC d") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	w.AssertConverged(1, "count settled")
	w.AssertHistory(world.Expect{Execs: map[string]int{}, ExecKinds: []string{"decommission"},
		Operator: map[string][]int32{"casskop": {1, 0, 1}}, SpecWrites: 1}, "count settled")
	// Settled now: the same scale has nothing to do, and changes nothing.
	n := len(w.History())
	stdout, _, code, _ = run(w, 0, scaleTo(1)...)
	if code != 0 || !strings.Contains(stdout, "nothing to do") || len(w.History()) != n {
		t.Fatalf("settled world: exit %d\n%s", code, stdout)
	}
}

// TestSettleCrashMatrix kills the settling run right after each of its side effects,
// then kills a resume at another point and resumes again: every case converges, each
// claim deleted once, the operator restored, nothing decommissioned.
func TestSettleCrashMatrix(t *testing.T) {
	ref := unsettledWorld(t)
	refOp := ref.RecordReplicas("casskop")
	if _, stderr, code, _ := run(ref, 0, scaleTo(1)...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	assertSettled(t, ref, refOp, "reference")
	points := ref.SideEffects()
	if points < 5 {
		t.Fatalf("only %d side effects in the reference run", points)
	}
	for k := 1; k <= points; k++ {
		w := unsettledWorld(t)
		op := w.RecordReplicas("casskop")
		if _, stderr, _, crashed := run(w, k, scaleTo(1)...); !crashed {
			t.Fatalf("crash point %d/%d was not reached\n%s", k, points, stderr)
		}
		second := 1 + (k*7)%4
		if _, stderr, code, crashed := run(w, second, resumeDemo...); !crashed && code != 0 {
			t.Fatalf("crash %d: resume (second crash at %d) exited %d\n%s", k, second, code, stderr)
		}
		if _, stderr, code, crashed := run(w, 0, resumeDemo...); crashed || code != 0 {
			t.Fatalf("crash %d/%d: final resume exited %d\n%s", k, second, code, stderr)
		}
		assertSettled(t, w, op, fmt.Sprintf("crash after side effect %d (then %d)", k, second))
	}
	fmt.Printf("settle crash matrix: %d crash points covered, all converged, each left-over claim deleted once\n", points)
}

// TestSettleAbortThenScaleAgain: a settling interrupted once its first claim is deleted
// can be aborted (it removes no node): abort sets nodesPerRacks to the StatefulSet's 1
// and restores the operator, the other claim stays; the same scale, run again, deletes
// it. Each claim deleted once in all.
func TestSettleAbortThenScaleAgain(t *testing.T) {
	w := unsettledWorld(t)
	op := w.RecordReplicas("casskop")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.OnSideEffect = func(int) {
		if !strings.Contains(" "+strings.Join(w.PVCNames(), " ")+" ", " "+leftover2+" ") {
			cancel() // Ctrl-C right after the first claim was deleted
		}
	}
	_, stderr, code, _ := runCtx(ctx, w, 0, scaleTo(1)...)
	w.OnSideEffect = nil
	if code != exit.Interrupted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	stdout, stderr, code, _ := run(w, 0, abortDemo...)
	if code != 0 || !strings.Contains(stderr, "the left-over PVCs this operation has not deleted yet stay") {
		t.Fatalf("abort: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(" "+strings.Join(w.PVCNames(), " ")+" ", " "+leftover1+" ") || w.DeploymentReplicas("casskop") != 1 {
		t.Fatalf("after abort: claims %v, operator at %d", w.PVCNames(), w.DeploymentReplicas("casskop"))
	}
	if _, stderr, code, _ = run(w, 0, scaleTo(1)...); code != 0 {
		t.Fatalf("scale again: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(1, "settled after the abort")
	assertHistory(t, op, "settled after the abort", 0, 1, 0, 1)
	assertNoHolders(t, w, "settled after the abort")
	w.AssertHistory(world.Expect{Execs: map[string]int{}, ExecKinds: []string{"decommission"},
		PVCDeletes: []string{leftover2, leftover1}, Operator: map[string][]int32{"casskop": {0, 0, 1, 0, 1}}, SpecWrites: 1}, "settled after the abort")
}

// TestSettleRechecksBeforeDeleting: what the plan saw is asked again right before each
// deletion. A pod that mounts the claim meanwhile, or a ring member that appears where
// no pod is, stops the run (exit 3) with nothing deleted.
func TestSettleRechecksBeforeDeleting(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(w *world.World)
		want   string
	}{
		{"claim mounted", func(w *world.World) { w.MountClaim("demo-dc1-rack1-0", leftover2) }, "PVC " + leftover2 + " is used by pod demo-dc1-rack1-0"},
		{"member without pod", func(w *world.World) { w.AddJoiningNode("stray-0", "dc1") }, "ring members of datacenter dc1 run where no pod is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := unsettledWorld(t)
			_, stderr, code := runOnStderr(w, []string{"[OK] pause operator Deployment"}, func() { tc.change(w) }, scaleTo(1)...)
			if code != operation.ExitRefused || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "nothing deleted") {
				t.Fatalf("exit %d, want 3 saying %q\n%s", code, tc.want, stderr)
			}
			w.AssertHistory(world.Expect{Execs: map[string]int{}, ExecKinds: []string{"decommission"},
				Operator: map[string][]int32{"casskop": {0, 0}}}, tc.name)
			if st := stepOf(t, loadCP(t, w), "delete-leftover-pvcs/demo-dc1-rack1-2"); st.State != record.StatePending {
				t.Fatalf("the refused step is %s, want pending", st.State)
			}
		})
	}
}
