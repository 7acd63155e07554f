package casskop

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// cassandraCluster is CassandraCluster c (UID uid-1, resourceVersion 5) of spec.
func cassandraCluster(spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": Group + "/v2", "kind": Kind,
		"metadata": map[string]any{"name": "c", "namespace": "ns", "uid": "uid-1", "resourceVersion": "5"},
		"spec":     spec,
	}}
	return u
}

// fakeAdapter serves u through a fake dynamic client; the patches it receives are
// counted in *patches.
func fakeAdapter(u *unstructured.Unstructured) (*Adapter, *dynamicfake.FakeDynamicClient, *int) {
	gvr := schema.GroupVersionResource{Group: Group, Version: "v2", Resource: Resource}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: Kind + "List"}, u)
	patches := 0
	dyn.PrependReactor("patch", Resource, func(k8stesting.Action) (bool, runtime.Object, error) {
		patches++
		return false, nil, nil
	})
	return &Adapter{Clients: operator.Clients{Dynamic: dyn}, API: operator.APIVersion{Version: "v2"}}, dyn, &patches
}

func dc2() operator.NewDatacenter {
	return operator.NewDatacenter{Name: "dc2", Racks: []string{"r1", "r2"}, NodesPerRack: 2}
}

// TestAddDatacenter: the new DC is planned as CassKop will make it, appended once to
// spec.topology.dc with its racks and count, and asked again it is left as it is.
func TestAddDatacenter(t *testing.T) {
	ctx := context.Background()
	a, dyn, patches := fakeAdapter(cassandraCluster(map[string]any{"nodesPerRacks": int64(3), "topology": map[string]any{"dc": []any{
		map[string]any{"name": "dc1", "rack": []any{map[string]any{"name": "r1"}}},
	}}}))
	name, racks, err := a.PlanDatacenter(ctx, "ns", "c", dc2())
	if err != nil || name != "dc2" || len(racks) != 2 {
		t.Fatalf("plan: %q %v %v", name, racks, err)
	}
	r2 := racks[1]
	if r2.DC != "dc2" || r2.Name != "r2" || r2.StatefulSet != "c-dc2-r2" || r2.Nodes != 2 ||
		r2.LabelSelector() != "app=cassandracluster,cassandracluster=c,cassandraclusters.db.orange.com.dc=dc2,cassandraclusters.db.orange.com.rack=r2,dc-rack=dc2-r2" {
		t.Errorf("rack r2 planned as %+v", r2)
	}
	if ok, err := a.AdditionRequested(ctx, "ns", "c", dc2()); ok || err != nil {
		t.Fatalf("requested before the addition: %v %v", ok, err)
	}
	for range 2 {
		if err := a.AddDatacenter(ctx, "ns", "c", "uid-1", "op-1", dc2()); err != nil {
			t.Fatal(err)
		}
	}
	if *patches != 1 {
		t.Errorf("%d patches, want 1 (the second call finds dc2 asked)", *patches)
	}
	if ok, err := a.AdditionRequested(ctx, "ns", "c", dc2()); !ok || err != nil {
		t.Errorf("not requested after the addition: %v %v", ok, err)
	}
	u, _ := dyn.Resource(a.GVR()).Namespace("ns").Get(ctx, "c", metav1.GetOptions{})
	cl, err := a.FromObject(u)
	if err != nil || len(cl.DCs) != 2 {
		t.Fatalf("read back: %+v %v", cl.DCs, err)
	}
	if d := cl.DCs[1]; d.Name != "dc2" || len(d.Racks) != 2 || d.Racks[0].Nodes != 2 || d.Racks[1].StatefulSet != "c-dc2-r2" {
		t.Errorf("dc2 read back as %+v", d)
	}
	if d := cl.DCs[0]; d.Name != "dc1" || len(d.Racks) != 1 || d.Racks[0].Nodes != 3 {
		t.Errorf("dc1 changed: %+v", d)
	}
	if _, _, err := a.PlanDatacenter(ctx, "ns", "c", dc2()); err != nil {
		t.Errorf("planned again once asked: %v", err)
	}
}

// TestAddDatacenterImplicitTopology: a cluster without topology runs CassKop's dc1 /
// rack1; the addition writes it out first, keeping its StatefulSet and count.
func TestAddDatacenterImplicitTopology(t *testing.T) {
	ctx := context.Background()
	for _, spec := range []map[string]any{
		{"nodesPerRacks": int64(3)},
		{"nodesPerRacks": int64(3), "topology": map[string]any{}},
		{"nodesPerRacks": int64(3), "topology": map[string]any{"dc": []any{}}},
	} {
		a, dyn, _ := fakeAdapter(cassandraCluster(spec))
		before, _, _ := a.Get(ctx, "ns", "c")
		if err := a.AddDatacenter(ctx, "ns", "c", "uid-1", "op-1", dc2()); err != nil {
			t.Fatalf("%v: %v", spec, err)
		}
		u, _ := dyn.Resource(a.GVR()).Namespace("ns").Get(ctx, "c", metav1.GetOptions{})
		cl, _ := a.FromObject(u)
		if len(cl.DCs) != 2 || cl.DCs[1].Name != "dc2" {
			t.Fatalf("%v: read back %+v", spec, cl.DCs)
		}
		if b, d := before.DCs[0], cl.DCs[0]; d.Name != b.Name || d.Racks[0].StatefulSet != b.Racks[0].StatefulSet || d.Racks[0].Nodes != 3 || len(d.Racks) != 1 {
			t.Errorf("%v: the implicit DC %+v became %+v", spec, b, d)
		}
		if ok, _ := a.AdditionRequested(ctx, "ns", "c", dc2()); !ok {
			t.Errorf("%v: not requested after the addition", spec)
		}
	}
}

// TestAddDatacenterRefusals: a DC already there with other racks or count, CassKop's
// implicit dc1, a name CassKop cannot make a StatefulSet of, a re-created cluster and a
// cluster changed since it was read are refused, and nothing is written.
func TestAddDatacenterRefusals(t *testing.T) {
	ctx := context.Background()
	explicit := map[string]any{"topology": map[string]any{"dc": []any{
		map[string]any{"name": "dc1"},
		map[string]any{"name": "dc2", "nodesPerRacks": int64(2), "rack": []any{map[string]any{"name": "r1"}}},
	}}}
	cases := []struct {
		name string
		spec map[string]any
		want operator.NewDatacenter
		uid  string
		err  string
	}{
		{"other racks", explicit, dc2(), "uid-1", "already in the topology"},
		{"other count", explicit, operator.NewDatacenter{Name: "dc2", Racks: []string{"r1"}, NodesPerRack: 3}, "uid-1", "already in the topology"},
		{"implicit dc1", map[string]any{}, operator.NewDatacenter{Name: "dc1", Racks: []string{"rack1"}, NodesPerRack: 1}, "uid-1", "CassKop's default"},
		{"bad name", explicit, operator.NewDatacenter{Name: "DC3", Racks: []string{"r1"}, NodesPerRack: 1}, "uid-1", "lower case"},
		{"rack twice", explicit, operator.NewDatacenter{Name: "dc3", Racks: []string{"r1", "r1"}, NodesPerRack: 1}, "uid-1", "named twice"},
		{"no count", explicit, operator.NewDatacenter{Name: "dc3", Racks: []string{"r1"}}, "uid-1", "above 0"},
		{"re-created", explicit, operator.NewDatacenter{Name: "dc3", Racks: []string{"r1"}, NodesPerRack: 1}, "uid-0", "re-created"},
	}
	for _, tc := range cases {
		a, _, patches := fakeAdapter(cassandraCluster(tc.spec))
		err := a.AddDatacenter(ctx, "ns", "c", tc.uid, "op-1", tc.want)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
		if *patches != 0 {
			t.Errorf("%s: %d patches", tc.name, *patches)
		}
		if tc.uid == "uid-1" {
			if _, _, err := a.PlanDatacenter(ctx, "ns", "c", tc.want); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: plan %v, want %q", tc.name, err, tc.err)
			}
		}
	}

	// Changed since read: the patch's resourceVersion test fails, the topology stays.
	a, dyn, _ := fakeAdapter(cassandraCluster(explicit))
	dyn.PrependReactor("get", Resource, func(k8stesting.Action) (bool, runtime.Object, error) {
		stale := cassandraCluster(explicit)
		stale.SetResourceVersion("4")
		return true, stale, nil
	})
	if err := a.AddDatacenter(ctx, "ns", "c", "uid-1", "op-1", operator.NewDatacenter{Name: "dc3", Racks: []string{"r1"}, NodesPerRack: 1}); err == nil {
		t.Errorf("a stale read was written over")
	}
	u, _ := dyn.Tracker().Get(a.GVR(), "ns", "c")
	if dcs, _, _ := unstructured.NestedSlice(u.(*unstructured.Unstructured).Object, "spec", "topology", "dc"); len(dcs) != 2 {
		t.Errorf("topology changed: %v", dcs)
	}
}
