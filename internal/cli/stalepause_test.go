package cli

import (
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// Issue 23: the record and the world part ways; every state keeps a way forward and
// no operator stays paused for an operation that is gone.

var resumeDemo = []string{"resume", "demo", "-n", "cassandra", "--yes"}

func assertNoHolders(t *testing.T, w *world.World, label string) {
	t.Helper()
	if hs := w.PausedBy("casskop"); len(hs) != 0 {
		t.Errorf("%s: operator still held paused by %v", label, hs)
	}
}

// TestWipedRecordMidRun (finding 1): the checkpoint is removed while a 4 -> 1
// scale-down runs, once node 3 is removed in full. The run stops before its next
// action, saying the record was removed (nobody holds it); abort and resume find no
// operation, keep the operator paused for the unsettled cluster and say how to settle
// it; the same scale run again takes the stale pause over, goes on to 1 node and
// restores the operator: one decommission per node, the operator 1 -> 0 -> 1.
func TestWipedRecordMidRun(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 4, Operator: true})
	op := w.RecordReplicas("casskop")
	_, stderr, code := runOnStderr(w, []string{"[..] decommission demo-dc1-rack1-2"}, w.WipeCheckpoint, scaleTo(1)...)
	if code != exit.Interrupted || !strings.Contains(stderr, "was removed from CassandraCluster cassandra/demo while this run held it") ||
		!strings.Contains(stderr, "nobody holds it now") || strings.Contains(stderr, "Another run holds") {
		t.Fatalf("run whose record was wiped: exit %d\n%s", code, stderr)
	}
	if len(w.PausedBy("casskop")) != 1 || w.DeploymentReplicas("casskop") != 0 {
		t.Fatalf("the operator should still be paused by the gone operation: %v", w.PausedBy("casskop"))
	}
	for _, args := range [][]string{abortDemo, resumeDemo} {
		_, stderr, code, _ := run(w, 0, args...)
		if code != 0 || !strings.Contains(stderr, "stays paused for operations that are gone but left their cluster unsettled") ||
			!strings.Contains(stderr, "kubectl cassandra scale -n cassandra demo") {
			t.Fatalf("%s: exit %d\n%s", args[0], code, stderr)
		}
	}
	if w.DeploymentReplicas("casskop") != 0 {
		t.Fatal("the operator was restored while the racks differ from the cluster resource")
	}
	_, stderr, code, _ = run(w, 0, scaleTo(1)...)
	if code != 0 {
		t.Fatalf("scale again: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(1, "scale again after the wipe")
	assertHistory(t, op, "scale again after the wipe", 1, 0, 1)
	assertNoHolders(t, w, "scale again after the wipe")
	assertDecommissions(t, w, "scale again after the wipe", map[string][2]int{"demo-dc1-rack1-3": {1, 1}, "demo-dc1-rack1-2": {1, 1}, "demo-dc1-rack1-1": {1, 1}})
}

// TestStalePauseOfSettledClusterReleased: the record of an operation that paused the
// operator is wiped while the cluster agrees with its StatefulSets (nothing removed
// yet): the next command that acts (here resume, which finds no operation) removes the
// stale hold and restores the operator.
func TestStalePauseOfSettledClusterReleased(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Operator: true})
	op := w.RecordReplicas("casskop")
	_, stderr, code := runOnStderr(w, []string{"[OK] pause operator Deployment"}, w.WipeCheckpoint, scaleTo(2)...)
	if code != exit.Interrupted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	_, stderr, code, _ = run(w, 0, resumeDemo...)
	if code != 0 || !strings.Contains(stderr, "was paused for operations that are gone: removed their hold") || !strings.Contains(stderr, "restored it to 1 replicas") {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	assertHistory(t, op, "stale hold released", 1, 0, 1)
	assertNoHolders(t, w, "stale hold released")
}

// TestReplanInterruptedThenAbort (finding 3): Cassandra refuses a decommission, the
// same scale with --force writes the new plan and dies; abort restores the operator
// (the new plan's pause step is pending, but the operation's hold is on the
// Deployment), leaves no holder, and a later operation does not join a dead pause.
func TestReplanInterruptedThenAbort(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Operator: true})
	op := w.RecordReplicas("casskop")
	_ = w.Cass.SetFault("demo-dc1-rack1-2", sim.Fault{RefuseRF: true})
	if _, stderr, code, _ := run(w, 0, scaleTo(1)...); code != operation.ExitRefused {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	id := loadCP(t, w).OperationID
	// Side effect 1 takes the operation over, 2 writes the new plan.
	if _, stderr, _, crashed := run(w, 2, scaleTo(1, "--force")...); !crashed {
		t.Fatalf("the re-plan did not crash\n%s", stderr)
	}
	cp := loadCP(t, w)
	if !cp.Force || cp.OperationID != id || cp.Started(record.StepPauseOperator) {
		t.Fatalf("no crash right after the new plan was written: %+v", cp.Steps)
	}
	_, stderr, code, _ := run(w, 0, abortDemo...)
	if code != 0 {
		t.Fatalf("abort: exit %d\n%s", code, stderr)
	}
	w.AssertConsistentAt(3, "re-plan interrupted then abort")
	assertHistory(t, op, "re-plan interrupted then abort", 1, 0, 1)
	assertNoHolders(t, w, "re-plan interrupted then abort")
	// A later scale with --pause-operator=false meets a running operator, not a dead pause.
	_, stderr, _, _ = run(w, 0, scaleTo(1, "--pause-operator=false")...)
	if strings.Contains(stderr, id) {
		t.Fatalf("a later operation still meets the aborted operation %s:\n%s", id, stderr)
	}
}

// TestClusterDeletedHoldingPause (finding 4): the cluster resource is deleted (no
// finalizer) while its operation holds the operator paused; resume and abort answer
// that it is not found and release the pause the operation took with it.
func TestClusterDeletedHoldingPause(t *testing.T) {
	for _, cmd := range [][]string{resumeDemo, abortDemo} {
		t.Run(cmd[0], func(t *testing.T) {
			w := world.New(t, world.Opts{Nodes: 3, Operator: true})
			op := w.RecordReplicas("casskop")
			if _, stderr, code := runUntilStderr(w, "[..] decommission demo-dc1-rack1-2", scaleTo(2)...); code != exit.Interrupted {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			w.DeleteCluster()
			_, stderr, code, _ := run(w, 0, cmd...)
			if code != exit.Usage || !strings.Contains(stderr, "not found") || !strings.Contains(stderr, "CassandraCluster cassandra/demo is gone") ||
				!strings.Contains(stderr, "restored it to 1 replicas") {
				t.Fatalf("%s: exit %d\n%s", cmd[0], code, stderr)
			}
			assertHistory(t, op, "cluster deleted", 1, 0, 1)
			assertNoHolders(t, w, "cluster deleted")
		})
	}
}

// TestAbortWhileDeleting (finding 4): with a finalizer, the cluster resource is being
// deleted while a node is still leaving: abort changes no count and restores the
// operator (which removes the finalizer), clearing the checkpoint.
func TestAbortWhileDeleting(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Operator: true})
	op := w.RecordReplicas("casskop")
	if err := w.Cass.SetFault("demo-dc1-rack1-2", sim.Fault{HoldStreaming: true}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Cass.UpdateFault("demo-dc1-rack1-2", func(f *sim.Fault) { f.HoldStreaming = false }) }()
	if _, stderr, code := runUntilStderr(w, "[..] decommission demo-dc1-rack1-2", scaleTo(2)...); code != exit.Interrupted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	w.MarkDeleting()
	stdout, stderr, code, _ := run(w, 0, abortDemo...)
	if code != 0 || !strings.Contains(stderr, "is being deleted: abort changes no count and releases the operator") ||
		!strings.Contains(stdout, "aborted while the cluster resource was being deleted") {
		t.Fatalf("abort while deleting: exit %d\n%s\n%s", code, stdout, stderr)
	}
	assertHistory(t, op, "abort while deleting", 1, 0, 1)
	assertNoHolders(t, w, "abort while deleting")
}

// TestOperatorRecreatedMidRemoval (finding 5): the operator's Deployment is re-created
// (a reinstall) while a 4 -> 2 scale-down is interrupted, and scaled to 0 by hand;
// resume recognises the operator by what it is, pauses the new Deployment, finishes
// and restores it.
func TestOperatorRecreatedMidRemoval(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 4, Operator: true})
	if _, stderr, code := runUntilStderr(w, "[..] decommission demo-dc1-rack1-2", scaleTo(2)...); code != exit.Interrupted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	w.RecreateDeployment("casskop", 0)
	op := w.RecordReplicas("casskop")
	_, stderr, code, _ := run(w, 0, resumeDemo...)
	if code != 0 || !strings.Contains(stderr, "was re-created") {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(2, "operator re-created")
	assertHistory(t, op, "operator re-created", 0, 1)
	assertNoHolders(t, w, "operator re-created")
}

// TestStaleHolderOfGoneClusterReaped: an operator left paused by an operation whose
// cluster no longer exists is restored by the next command that meets it, even one
// with nothing to do (resume with no operation in flight), and says so.
func TestStaleHolderOfGoneClusterReaped(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Operator: true})
	w.PauseDeployment("casskop", []record.PauseHolder{{OperationID: "scale-gone", Namespace: "payments", Cluster: "ledger", Replicas: 2}})
	op := w.RecordReplicas("casskop")
	// status shows it and changes nothing.
	stdout, _, code, _ := run(w, 0, "status", "demo", "-n", "cassandra", "--nodetool=false")
	if code != 0 || !strings.Contains(stdout, "cassandra/casskop is held paused for operations that are gone: scale-gone on payments/ledger (CassandraCluster payments/ledger is gone)") {
		t.Fatalf("status: exit %d\n%s", code, stdout)
	}
	if len(w.PausedBy("casskop")) != 1 {
		t.Fatal("status changed the holders")
	}
	_, stderr, code, _ := run(w, 0, resumeDemo...)
	if code != 0 || !strings.Contains(stderr, "scale-gone on payments/ledger (CassandraCluster payments/ledger is gone)") || !strings.Contains(stderr, "restored it to 2 replicas") {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	assertHistory(t, op, "stale holder reaped", 0, 2)
	assertNoHolders(t, w, "stale holder reaped")
}

// TestAbortGrowBack (finding 6): a two-rack scale-down (--dc) removed rack1's node and
// Cassandra refuses rack2's; the racks now differ, which CassKop's one nodesPerRacks
// cannot keep. abort refuses and offers both ways forward; abort --grow-back grows
// rack1 back under the same operation, and ends consistent with the operator restored:
// one decommission in all, none on rack2.
func TestAbortGrowBack(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2, Racks: []string{"rack1", "rack2"}, Topology: true, Operator: true})
	op := w.RecordReplicas("casskop")
	_ = w.Cass.SetFault("demo-dc1-rack2-1", sim.Fault{RefuseRF: true})
	scaleDC := []string{"scale", "demo", "-n", "cassandra", "--dc", "dc1", "--nodes", "1", "--yes"}
	if _, stderr, code, _ := run(w, 0, scaleDC...); code != operation.ExitRefused {
		t.Fatalf("scale: exit %d\n%s", code, stderr)
	}
	id := loadCP(t, w).OperationID
	_, stderr, code, _ := run(w, 0, abortDemo...)
	if code != operation.ExitRefused || !strings.Contains(stderr, "kubectl cassandra abort -n cassandra demo --grow-back") || !strings.Contains(stderr, "Finish rack rack2 first") {
		t.Fatalf("abort: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code, _ := run(w, 0, append(abortDemo, "--grow-back")...)
	if code != 0 || !strings.Contains(stderr, "growing the smaller racks of datacenter dc1 back to 2 nodes") {
		t.Fatalf("abort --grow-back: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if lo := w.LastOperation(); lo.OperationID != id {
		t.Fatalf("last operation %+v, want operation %s", lo, id)
	}
	w.AssertConsistentAt(2, "grown back")
	assertHistory(t, op, "grown back", 1, 0, 1)
	assertNoHolders(t, w, "grown back")
	// The exec log outlives the node that rack1's regrown pod replaced.
	count := map[string]int{}
	for _, e := range w.ExecLog() {
		if f := strings.Fields(e); len(f) > 1 && strings.Contains(e, "decommission") {
			count[f[0]]++
		}
	}
	if count["demo-dc1-rack1-1"] != 1 || count["demo-dc1-rack2-1"] != 1 || len(count) != 2 {
		t.Fatalf("decommission calls %v, want rack1-1 once (done) and rack2-1 once (refused)", count)
	}
	assertDecommissions(t, w, "grown back", map[string][2]int{"demo-dc1-rack2-1": {0, 1}})
}
