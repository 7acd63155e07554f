package casskop_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// stuckStatus is CassKop's status in its seed-bug state (#370): a ScaleDown ToDo whose
// decommission is Ongoing on pod, which is already gone.
func stuckStatus(pod string) map[string]any {
	return map[string]any{"lastClusterAction": "ScaleDown", "lastClusterActionStatus": "ToDo", "cassandraRackStatus": map[string]any{"dc1-rack1": map[string]any{
		"cassandraLastAction": map[string]any{"name": "ScaleDown", "status": "ToDo"},
		"podLastOperation":    map[string]any{"name": "decommission", "status": "Ongoing", "pods": []any{pod}, "podsOK": []any{}},
	}}}
}

// TestOperatorStatusRepairsStuckDecommission: CassKop's status of the seed-bug state
// reads as stuck on the planned pod; the repair marks it finished as CassKop itself
// does (podLastOperation Done with the pod in podsOK, cassandraLastAction Done,
// lastClusterActionStatus Done), through /status when the CRD serves it and in the main
// resource when not; once CassKop moved on to another pod, it is not stuck on the
// planned one any more. The repair step that writes it is tested with the repair
// (plugins/casskop/repair TestOperatorStatusStep).
func TestOperatorStatusRepairsStuckDecommission(t *testing.T) {
	ctx := context.Background()
	const pod = "demo-dc1-rack1-2"
	for _, sub := range []bool{true, false} {
		w := world.New(t, world.Opts{Nodes: 3, StatusSubresource: sub})
		w.SetCRStatus(stuckStatus(pod))
		a := &casskop.Adapter{Clients: operator.Clients{Dynamic: w.Dyn, Kube: w.Kube, Discovery: w.Kube.Discovery()}, API: operator.APIVersion{Version: "v2"}}
		st := a.OperatorStatus(w.NS, w.Name, nil)
		if err := st.StuckOn(ctx, "dc1", "rack1", pod); err != nil {
			t.Fatalf("subresource %v: StuckOn: %v", sub, err)
		}
		if done, err := st.OperationDone(ctx, "dc1", "rack1", pod); done || err != nil {
			t.Fatalf("subresource %v: done before the mark: %v %v", sub, done, err)
		}
		if err := st.MarkOperationDone(ctx, "dc1", "rack1", pod); err != nil {
			t.Fatalf("subresource %v: MarkOperationDone: %v", sub, err)
		}
		status := w.CR().Object["status"].(map[string]any)
		po := status["cassandraRackStatus"].(map[string]any)["dc1-rack1"].(map[string]any)["podLastOperation"].(map[string]any)
		if po["status"] != "Done" || fmt.Sprint(po["podsOK"]) != "["+pod+"]" || status["lastClusterActionStatus"] != "Done" {
			t.Fatalf("subresource %v: status %v", sub, status)
		}
		if done, err := st.OperationDone(ctx, "dc1", "rack1", pod); !done || err != nil {
			t.Fatalf("subresource %v: not done after the mark: %v %v", sub, done, err)
		}
	}
	// CassKop moved on to another pod since the plan.
	w := world.New(t, world.Opts{Nodes: 3})
	w.SetCRStatus(stuckStatus("demo-dc1-rack1-1"))
	st := (&casskop.Adapter{Clients: operator.Clients{Dynamic: w.Dyn, Kube: w.Kube, Discovery: w.Kube.Discovery()}, API: operator.APIVersion{Version: "v2"}}).OperatorStatus(w.NS, w.Name, nil)
	if err := st.StuckOn(ctx, "dc1", "rack1", pod); err == nil || !strings.Contains(err.Error(), "changed since the plan") {
		t.Fatalf("moved on: %v", err)
	}
}
