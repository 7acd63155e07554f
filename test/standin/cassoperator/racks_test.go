package cassoperator

import (
	"context"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// createDC creates a CassandraDatacenter of the test cluster as a user does: no status,
// no finalizer.
func (e *env) createDC(name string, size int, racks ...string) {
	e.t.Helper()
	var rl []any
	for _, r := range racks {
		rl = append(rl, map[string]any{"name": r})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cassandra.datastax.com/v1beta1", "kind": "CassandraDatacenter",
		"metadata": map[string]any{"name": name, "namespace": testNS, "uid": name + "-uid", "generation": int64(1)},
		"spec":     map[string]any{"clusterName": testCluster, "size": int64(size), "racks": rl, "serverVersion": "4.1.2"},
	}}
	if _, err := e.dyn.Resource(DatacenterGVR).Namespace(testNS).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// TestNewDatacenterJoins: a second CassandraDatacenter of the cluster, created once the
// first is settled (add-dc), is reconciled by its own reconcile of the operator: the
// finalizer, progress Updating, each rack's StatefulSet created (CheckRackCreation),
// then its nodes started one at a time (startOneNodePerRack, then the others) into
// the existing ring as nodes of the new datacenter, owning no replica (no keyspace
// replicates to it: they bootstrap nothing and hold only their system tables); then
// Ready. The first datacenter's reconcile has nothing to do throughout.
func TestNewDatacenterJoins(t *testing.T) {
	only1 := map[string]int{testDC: 3}
	e := newEnvWith(t, []string{"r1"}, 3, sim.Options{Version: sim.V41, RF: 3, Keyspaces: []string{"app"},
		Replication: map[string]map[string]int{"app": only1, "system_auth": only1, "system_distributed": only1, "system_traces": only1}})
	e.createDC("dc2", 3, "a", "b")
	cfg := e.cfg()
	cfg.Name = "dc2"
	got := e.run(New(cfg))
	want := []Action{ActAddFinalizer, ProgressAction(ProgressUpdating), ActCreateStatefulSet, ActCreateStatefulSet,
		ActStartNode, ActLabelStarted, ActUpdateNodeStatuses, ActStartNode, ActLabelStarted, ActUpdateNodeStatuses,
		ActStartNode, ActLabelStarted, ActUpdateNodeStatuses,
		CondAction(CondStopped, "False"), CondAction(CondReplacingNodes, "False"), CondAction(CondUpdating, "False"),
		CondAction(CondRollingRestart, "False"), CondAction(CondResuming, "False"), CondAction(CondScalingDown, "False"),
		CondAction(CondValid, "True"), CondAction(CondInitialized, "True"), CondAction(CondReady, "True"),
		ProgressAction(ProgressReady), ActSetObservedGeneration, CondAction(CondRequiresUpdate, "False")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("actions\n got %q\nwant %q", got, want)
	}
	// The StatefulSets as cass-operator makes them: SplitRacks(3, 2) = 2, 1, owned by dc2.
	for r, n := range map[string]int32{"a": 2, "b": 1} {
		s, err := e.kube.AppsV1().StatefulSets(testNS).Get(context.Background(), StatefulSetName(testCluster, "dc2", r), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *s.Spec.Replicas != n || s.Spec.Template.Labels[LabelNodeState] != StateReadyToStart || len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Name != "dc2" {
			t.Fatalf("StatefulSet %s: replicas %d, template %v, owners %v", s.Name, *s.Spec.Replicas, s.Spec.Template.Labels, s.OwnerReferences)
		}
	}
	for _, p := range []string{PodName(testCluster, "dc2", "a", 0), PodName(testCluster, "dc2", "a", 1), PodName(testCluster, "dc2", "b", 0)} {
		v, err := e.node(p)
		if err != nil || !v.Running || v.PeerCode != "UN" || v.DC != "dc2" || v.Load != sim.EmptyNodeLoad {
			t.Fatalf("node %s: %+v %v, want UN in dc2 with load %s", p, v, err, sim.EmptyNodeLoad)
		}
		if pp := e.pod(p); pp == nil || pp.Labels[LabelNodeState] != StateStarted {
			t.Fatalf("pod %s: %v", p, pp)
		}
	}
	dc2, err := e.dyn.Resource(DatacenterGVR).Namespace(testNS).Get(context.Background(), "dc2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p, _, _ := unstructured.NestedString(dc2.Object, "status", "cassandraOperatorProgress"); p != ProgressReady {
		t.Fatalf("dc2 progress %q", p)
	}
	if ns, _, _ := unstructured.NestedMap(dc2.Object, "status", "nodeStatuses"); len(ns) != 3 {
		t.Fatalf("dc2 nodeStatuses %v", ns)
	}
	if got := e.run(New(e.cfg())); len(got) != 0 {
		t.Fatalf("dc1's reconcile: %q", got)
	}
	for _, r := range []string{"r1"} {
		for k := 0; k < 3; k++ {
			if v, _ := e.node(PodName(testCluster, testDC, r, k)); v.Load == sim.EmptyNodeLoad || !strings.HasSuffix(v.Load, "GiB") {
				t.Fatalf("dc1 node %d load %s", k, v.Load)
			}
		}
	}
}
