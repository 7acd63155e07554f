package repair

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// nop is a reporter that says nothing.
type nop struct{}

func (nop) StepStarted(string, string, int)       {}
func (nop) StepDone(string, string, bool)         {}
func (nop) StepFailed(string, string, error)      {}
func (nop) Waiting(string, string, time.Duration) {}
func (nop) Warn(string, string)                   {}

// repairWorld is the plugin's World of a repair of n (its claims deleted, then the
// status marked) on the simulated CassKop cluster w, and the repair's steps.
func repairWorld(t *testing.T, w *world.World, n record.Node) (*steps.World, map[string]operation.Step) {
	t.Helper()
	a := &casskop.Adapter{Clients: operator.Clients{Dynamic: w.Dyn, Kube: w.Kube, Discovery: w.Kube.Discovery()}, API: operator.APIVersion{Version: "v2"}}
	cp := &record.Checkpoint{Kind: Name, Namespace: w.NS, Cluster: w.Name, Target: record.Target{DC: "dc1", Racks: []string{"rack1"}, Nodes: 3},
		Nodes: []record.Node{n}, Steps: []record.Step{record.PendingStep(record.StepDeletePVCs, n.Pod), record.PendingStep(StepOperatorStatus, n.Pod)}}
	sw := &steps.World{Kube: w.Kube, Nodetool: nodetool.Client{Exec: w}, Namespace: w.NS, ClusterSelector: casskop.LabelCluster + "=demo",
		Racks: []topology.Rack{{DC: "dc1", Name: "rack1", StatefulSet: "demo-dc1-rack1"}}, CountWords: "nodesPerRacks", Container: "cassandra", CP: cp,
		Reporter: nop{}, Poll: time.Millisecond, StallAfter: 30 * time.Millisecond, ServerVersion: "4.1.0", ResourceKind: "CassandraCluster",
		Spec:     a.DCSpec(w.NS, w.Name, "dc1"),
		Operator: casskop.OperatorStatus{A: a, NS: w.NS, Name: w.Name}}
	impl, err := Kind{}.BuildSteps(sw.ForKind())
	if err != nil {
		t.Fatal(err)
	}
	return sw, impl
}

// node2 is pod 2 of the initial world, as a repair plans it (no pod UID: it is gone).
func node2(w *world.World) record.Node {
	pod := "demo-dc1-rack1-2"
	nv, _ := w.Cass.Node(pod)
	return record.Node{Pod: pod, Ordinal: 2, DC: "dc1", Rack: "rack1", StatefulSet: "demo-dc1-rack1",
		HostID: nv.HostID, Address: nv.Address, PVCs: []record.PVC{{Name: "data-" + pod, UID: "pvc-data-" + pod}}}
}

// stuck370 is CassKop's seed-bug state: pod 2 decommissioned and gone (StatefulSet
// shrunk), its PVC left, status decommission Ongoing on it.
func stuck370(t *testing.T, statusSubresource bool) (*world.World, *steps.World, operation.Step, operation.Step) {
	t.Helper()
	w := world.New(t, world.Opts{Nodes: 3, StatusSubresource: statusSubresource})
	n := node2(w)
	var out, errb strings.Builder
	w.Cass.Run(context.Background(), n.Pod, []string{"decommission"}, &out, &errb)
	w.SetReplicas("rack1", 2)
	w.SetCRStatus(map[string]any{"lastClusterAction": "ScaleDown", "lastClusterActionStatus": "ToDo", "cassandraRackStatus": map[string]any{"dc1-rack1": map[string]any{
		"cassandraLastAction": map[string]any{"name": "ScaleDown", "status": "ToDo"},
		"podLastOperation":    map[string]any{"name": "decommission", "status": "Ongoing", "pods": []any{n.Pod}, "podsOK": []any{}},
	}}})
	sw, impl := repairWorld(t, w, n)
	return w, sw, impl[record.StepID(record.StepDeletePVCs, n.Pod)], impl[record.StepID(StepOperatorStatus, n.Pod)]
}

func TestOperatorStatusStep(t *testing.T) {
	ctx := context.Background()
	for _, sub := range []bool{true, false} {
		w, sw, del, st := stuck370(t, sub)
		if _, ok := st.(*operatorStatus); !ok {
			t.Fatalf("operator-status is built as %T", st)
		}
		mustDone(t, st, false)
		mustUnsafe(t, st, "PVC data-demo-dc1-rack1-2 of pod demo-dc1-rack1-2 still exists")
		if err := del.Safe(ctx); err != nil {
			t.Fatalf("delete-pvcs: %v", err)
		}
		mustDo(t, sw, del)
		if err := st.Safe(ctx); err != nil {
			t.Fatalf("once the claims are gone: %v", err)
		}
		mustDo(t, sw, st)
		mustDone(t, st, true)
		st0 := w.CR().Object["status"].(map[string]any)
		po := st0["cassandraRackStatus"].(map[string]any)["dc1-rack1"].(map[string]any)["podLastOperation"].(map[string]any)
		if po["status"] != "Done" || fmt.Sprint(po["podsOK"]) != "[demo-dc1-rack1-2]" || st0["lastClusterActionStatus"] != "Done" {
			t.Fatalf("subresource %v: status %v", sub, st0)
		}
		// Recorded done, it stays done whatever the operator writes next.
		sw.CP.Steps[1].State = record.StateDone
		w.SetCRStatus(map[string]any{"cassandraRackStatus": map[string]any{"dc1-rack1": map[string]any{
			"podLastOperation": map[string]any{"name": "decommission", "status": "ToDo"}}}})
		mustDone(t, st, true)
	}
	// The operator moved on to another pod since the plan: nothing written.
	w, sw, del, st := stuck370(t, false)
	mustDo(t, sw, del)
	w.SetCRStatus(map[string]any{"cassandraRackStatus": map[string]any{"dc1-rack1": map[string]any{
		"podLastOperation": map[string]any{"name": "decommission", "status": "Ongoing", "pods": []any{"demo-dc1-rack1-1"}}}}})
	mustUnsafe(t, st, "changed since the plan")
	// A node still in the ring: not safe.
	w2 := world.New(t, world.Opts{Nodes: 3})
	n2 := node2(w2)
	n2.PodUID = w2.PodUID(n2.Pod)
	w2.SetReplicas("rack1", 2)
	_, impl := repairWorld(t, w2, n2)
	mustUnsafe(t, impl[record.StepID(StepOperatorStatus, n2.Pod)], "is still in the ring")
}

func mustDone(t *testing.T, st operation.Step, want bool) {
	t.Helper()
	if got, err := st.Done(context.Background()); err != nil || got != want {
		t.Fatalf("%T.Done = %v, %v; want %v", st, got, err, want)
	}
}

func mustUnsafe(t *testing.T, st operation.Step, want string) {
	t.Helper()
	if err := st.Safe(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%T.Safe = %v, want an error saying %q", st, err, want)
	}
}

// mustDo acts, then forgets the run's reads, as the engine does after an action.
func mustDo(t *testing.T, sw *steps.World, st operation.Step) {
	t.Helper()
	if err := st.Do(context.Background()); err != nil {
		t.Fatalf("%T.Do: %v", st, err)
	}
	sw.Forget()
}
