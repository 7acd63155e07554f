package world

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	cassop "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
)

// TestCassOperatorDCCreatedLater: a CassandraDatacenter of the cluster created through
// the API while dc1 runs (as add-dc does) is reconciled by the same operator: its
// StatefulSets created, its pods made by the StatefulSet controller, its nodes started
// one at a time into dc1's ring as nodes of dc2, owning no replica (small Load). Once a
// keyspace replicates to dc2 (cqlsh), a rebuild task naming one pod of dc2 with source
// dc1 rebuilds that node only: the task completes, the node's Load grows, the other
// node of dc2 is untouched.
func TestCassOperatorDCCreatedLater(t *testing.T) {
	ctx := context.Background()
	w := New(t, Opts{CassOperator: true, Nodes: 3, RF: 3})
	if got := w.SettleOperator(50); len(got) != 0 {
		t.Fatalf("the settled world is not idle: %q", got)
	}
	dc2 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": DCGVR.GroupVersion().String(), "kind": cassop.Kind,
		"metadata": map[string]any{"name": "dc2", "namespace": w.NS},
		"spec": map[string]any{"clusterName": w.Name, "size": int64(2), "serverVersion": "4.1.0",
			"racks": []any{map[string]any{"name": "r1"}, map[string]any{"name": "r2"}}},
	}}
	if _, err := w.Dyn.Resource(DCGVR).Namespace(w.NS).Create(ctx, dc2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.SettleOperator(300)
	acts := w.DCOperatorActions("dc2")
	if count(acts, standin.ActCreateStatefulSet) != 2 || count(acts, standin.ActStartNode) != 2 {
		t.Fatalf("dc2's reconcile: %q (waits: %s)", acts, w.DCOperatorWaiting("dc2"))
	}
	if a := w.OperatorActions(); len(a) != 0 {
		t.Fatalf("dc1's reconcile acted: %q", a)
	}
	if p, _, _ := unstructured.NestedString(dc2Obj(t, w).Object, "status", "cassandraOperatorProgress"); p != "Ready" {
		t.Fatalf("dc2 progress %q (waits: %s)", p, w.DCOperatorWaiting("dc2"))
	}
	pods := dc2Pods(w)
	out, _, err := w.Exec(ctx, dc1Pods(w)[0], []string{"nodetool", "status"})
	if err != nil || !strings.Contains(out, "Datacenter: dc2") {
		t.Fatalf("dc1's ring shows no dc2 (%v):\n%s", err, out)
	}
	for _, p := range pods {
		n, err := w.Cass.Node(p)
		if err != nil || n.DC != "dc2" || n.PeerCode != "UN" || n.Load != sim.EmptyNodeLoad {
			t.Fatalf("node %s: %+v %v, want UN in dc2 owning nothing", p, n, err)
		}
		if !strings.Contains(out, "UN  "+n.Address) {
			t.Fatalf("dc1's ring has no UN row for %s (%s):\n%s", p, n.Address, out)
		}
	}

	alter := "ALTER KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3', 'dc2': '2'}"
	if _, stderr, err := w.Exec(ctx, dc1Pods(w)[0], []string{"cqlsh", "-e", alter}); err != nil {
		t.Fatalf("alter: %v %s", err, stderr)
	}
	task := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": standin.TaskGVR.GroupVersion().String(), "kind": "CassandraTask",
		"metadata": map[string]any{"name": "rebuild-" + pods[1], "namespace": w.NS},
		"spec": map[string]any{"datacenter": map[string]any{"name": "dc2", "namespace": w.NS}, "concurrencyPolicy": "Forbid",
			"jobs": []any{map[string]any{"name": "rebuild", "command": "rebuild",
				"args": map[string]any{"pod_name": pods[1], "source_datacenter": "dc1"}}}},
	}}
	if _, err := w.Dyn.Resource(standin.TaskGVR).Namespace(w.NS).Create(ctx, task, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.SettleOperator(100)
	got, err := w.Dyn.Resource(standin.TaskGVR).Namespace(w.NS).Get(ctx, task.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ps, _, _ := unstructured.NestedMap(got.Object, "status", "podStatuses")
	done, _, _ := unstructured.NestedString(got.Object, "status", "completionTime")
	if done == "" || len(ps) != 1 || fmt.Sprint(ps[pods[1]].(map[string]any)["status"]) != "COMPLETED" {
		t.Fatalf("task status %v (waits: %s)", got.Object["status"], w.DCOperatorWaiting("dc2"))
	}
	rebuilt, _ := w.Cass.Node(pods[1])
	other, _ := w.Cass.Node(pods[0])
	if rebuilt.Load == sim.EmptyNodeLoad || !strings.HasSuffix(rebuilt.Load, "GiB") {
		t.Errorf("rebuilt node %s: Load %s, want dc1's share", pods[1], rebuilt.Load)
	}
	if other.Load != sim.EmptyNodeLoad {
		t.Errorf("node %s, not in the task: Load %s", pods[0], other.Load)
	}
	if e := w.OperatorErrors(); len(e) > 0 {
		t.Errorf("operator errors: %v", e)
	}
}

// dc2Obj is CassandraDatacenter dc2 as stored.
func dc2Obj(t *testing.T, w *World) *unstructured.Unstructured {
	t.Helper()
	u, ok := w.Datacenter("dc2")
	if !ok {
		t.Fatal("no CassandraDatacenter dc2")
	}
	return u
}
