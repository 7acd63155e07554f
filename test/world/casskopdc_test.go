package world

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
)

// TestCassKopAddsDC: a DC appended to the topology of a running CassKop (through the
// adapter, on a cluster with CassKop's implicit dc1) gets one StatefulSet per rack and
// its pods, whose nodes join UN in dc2 owning nothing of app, which does not replicate
// there, and holding no data; once app replicates to dc2, `nodetool rebuild -- dc1` on
// a dc2 node streams its share, and is a side effect. A rack added to dc1 then is a
// violation (CassKop refuses it).
func TestCassKopAddsDC(t *testing.T) {
	ctx := context.Background()
	w := New(t, Opts{Version: "4.1", Nodes: 2, Operator: true})
	a := &casskop.Adapter{Clients: operator.Clients{Dynamic: w.Dyn, Kube: w.Kube}, API: operator.APIVersion{Version: "v2"}}
	want := operator.NewDatacenter{Name: "dc2", Racks: []string{"r1", "r2"}, NodesPerRack: 1}
	if err := a.AddDatacenter(ctx, w.NS, w.Name, string(w.CR().GetUID()), "op-1", want); err != nil {
		t.Fatal(err)
	}
	if v := w.Violations(); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
	for _, r := range want.Racks {
		obj, err := w.Kube.Tracker().Get(stsGVR, w.NS, "demo-dc2-"+r)
		if err != nil {
			t.Fatalf("rack %s: %v", r, err)
		}
		s := obj.(*appsv1.StatefulSet)
		if *s.Spec.Replicas != 1 || s.Labels[casskop.LabelDC] != "dc2" || s.Labels[casskop.LabelRack] != r || s.Spec.Selector.MatchLabels[casskop.LabelDCRack] != "dc2-"+r {
			t.Errorf("StatefulSet %s: replicas %d, labels %v, selector %v", s.Name, *s.Spec.Replicas, s.Labels, s.Spec.Selector.MatchLabels)
		}
		p, err := w.Kube.Tracker().Get(podsGVR, w.NS, "demo-dc2-"+r+"-0")
		if err != nil {
			t.Fatalf("pod of rack %s: %v", r, err)
		}
		if pod := p.(*corev1.Pod); pod.Labels[casskop.LabelDC] != "dc2" || pod.Status.Conditions[0].Status != corev1.ConditionTrue {
			t.Errorf("pod %s: labels %v, status %+v", pod.Name, pod.Labels, pod.Status)
		}
		n, err := w.Cass.Node("demo-dc2-" + r + "-0")
		if err != nil || n.DC != "dc2" || n.Rack != r || n.Load != emptyNodeLoad {
			t.Errorf("node of rack %s: %+v %v", r, n, err)
		}
	}
	out, _, err := w.Exec(ctx, "demo-dc1-rack1-0", []string{"nodetool", "status", "app"})
	if err != nil {
		t.Fatal(err)
	}
	dc2 := out[strings.Index(out, "Datacenter: dc2"):]
	if got := strings.Count(dc2, "\nUN "); got != 2 || !strings.Contains(dc2, "0.0%") {
		t.Errorf("dc2 in the ring from dc1:\n%s", out)
	}

	// app replicates to dc2: a rebuild from dc1 streams the node's share.
	alter := "ALTER KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '1', 'dc2': '1'}"
	if _, stderr, err := w.Exec(ctx, "demo-dc1-rack1-0", []string{"cqlsh", "-e", alter}); err != nil {
		t.Fatalf("alter: %v %s", err, stderr)
	}
	if _, stderr, err := w.Exec(ctx, "demo-dc2-r1-0", []string{"nodetool", "rebuild", "--", "dc1"}); err != nil {
		t.Fatalf("rebuild: %v %s", err, stderr)
	}
	if n, _ := w.Cass.Node("demo-dc2-r1-0"); n.Load == emptyNodeLoad {
		t.Errorf("rebuilt node holds %s", n.Load)
	}
	if got := w.ExecLog(); !slices.Contains(got, "demo-dc2-r1-0 rebuild -- dc1") {
		t.Errorf("exec log %v: the rebuild is missing", got)
	}

	// A rack added to dc1, which has StatefulSets: CassKop refuses it.
	patch := `[{"op":"add","path":"/spec/topology/dc/0/rack/-","value":{"name":"rack2"}}]`
	if _, err := w.Dyn.Resource(CCGVR).Namespace(w.NS).Patch(ctx, w.Name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := w.Violations(); len(v) != 1 || !strings.Contains(v[0], "rack rack2 added to the topology of datacenter dc1") {
		t.Errorf("violations %v", v)
	}
	if _, err := w.Kube.Tracker().Get(stsGVR, w.NS, "demo-dc1-rack2"); err == nil {
		t.Errorf("CassKop created a rack in an existing DC")
	}
}
