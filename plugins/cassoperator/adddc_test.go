package cassoperator

import (
	"context"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// source is datacenter dc1 (UID uid-1) of cluster c, racks r1 r2, size 2.
func source() *unstructured.Unstructured {
	u := dc("db", "dc1", map[string]any{"clusterName": "c", "size": int64(2), "racks": racks("r1", "r2")})
	u.SetUID("uid-1")
	return u
}

// dc2YAML is the user's manifest of dc2: three racks, size 5.
const dc2YAML = `apiVersion: cassandra.datastax.com/v1beta1
kind: CassandraDatacenter
metadata:
  name: dc2
spec:
  clusterName: c
  serverVersion: "4.1.5"
  size: 5
  racks:
  - name: a
  - name: b
  - name: c
`

func want(manifest string) operator.NewDatacenter {
	return operator.NewDatacenter{Manifest: []byte(manifest)}
}

// TestPlanDatacenter: the name and racks as cass-operator makes them (SplitRacks in
// spec order, the StatefulSet names, the rack selectors); JSON reads as YAML; one
// default rack when the spec names none.
func TestPlanDatacenter(t *testing.T) {
	ctx := context.Background()
	a, _, _ := fakeAdapter([]runtime.Object{source()})
	name, rs, err := a.PlanDatacenter(ctx, "db", "dc1", want(dc2YAML))
	if err != nil {
		t.Fatal(err)
	}
	wantRacks := []topology.Rack{
		{DC: "dc2", Name: "a", StatefulSet: "c-dc2-a-sts", Nodes: 2, Labels: RackLabels("c", "dc2", "a")},
		{DC: "dc2", Name: "b", StatefulSet: "c-dc2-b-sts", Nodes: 2, Labels: RackLabels("c", "dc2", "b")},
		{DC: "dc2", Name: "c", StatefulSet: "c-dc2-c-sts", Nodes: 1, Labels: RackLabels("c", "dc2", "c")},
	}
	if name != "dc2" || !reflect.DeepEqual(rs, wantRacks) {
		t.Fatalf("plan %s %+v\nwant dc2 %+v", name, rs, wantRacks)
	}
	if sel := rs[0].LabelSelector(); sel != "cassandra.datastax.com/cluster=c,cassandra.datastax.com/datacenter=dc2,cassandra.datastax.com/rack=a" {
		t.Fatalf("rack a's selector %q", sel)
	}
	json := `{"apiVersion":"cassandra.datastax.com/v1beta1","kind":"CassandraDatacenter","metadata":{"name":"west","namespace":"db"},"spec":{"clusterName":"c","size":3}}`
	name, rs, err = a.PlanDatacenter(ctx, "db", "dc1", want(json))
	if err != nil {
		t.Fatal(err)
	}
	if name != "west" || len(rs) != 1 || rs[0].Name != DefaultRack || rs[0].Nodes != 3 || rs[0].StatefulSet != "c-west-default-sts" || rs[0].DC != "west" {
		t.Fatalf("plan %s %+v, want west: one default rack of 3 in c-west-default-sts", name, rs)
	}
}

// TestPlanDatacenterRefusals: each manifest that cannot join the source's cluster is
// refused with its reason.
func TestPlanDatacenterRefusals(t *testing.T) {
	ctx := context.Background()
	other := dc("db", "dc3", map[string]any{"clusterName": "c", "datacenterName": "dc2", "size": int64(1)})
	otherCluster := dc("db", "x", map[string]any{"clusterName": "other", "datacenterName": "dc9", "size": int64(1)})
	users := dc("db", "dc4", map[string]any{"clusterName": "c", "size": int64(1)})
	deleting := source()
	deleting.SetName("gone")
	now := metav1.Now()
	deleting.SetDeletionTimestamp(&now)
	a, _, _ := fakeAdapter([]runtime.Object{source(), other, otherCluster, users, deleting})
	repl := func(old, new string) string { return strings.Replace(dc2YAML, old, new, 1) }
	for _, c := range []struct{ name, src, manifest, want string }{
		{"empty", "dc1", "", "is empty"},
		{"not yaml", "dc1", "{", "cannot read"},
		{"kind", "dc1", repl("kind: CassandraDatacenter", "kind: CassandraCluster"), "not a CassandraDatacenter"},
		{"group", "dc1", repl("cassandra.datastax.com/v1beta1", "db.orange.com/v2"), "not a CassandraDatacenter"},
		{"namespace", "dc1", repl("name: dc2", "name: dc2\n  namespace: other"), "namespace other, not db"},
		{"cluster", "dc1", repl("clusterName: c", "clusterName: d"), `spec.clusterName "d"`},
		{"size", "dc1", repl("size: 5", "size: 2"), "at least one node per rack"},
		{"stopped", "dc1", repl("size: 5", "size: 5\n  stopped: true"), "spec.stopped"},
		{"itself", "dc1", repl("name: dc2", "name: dc1"), "is dc1 itself"},
		{"datacenterName", "dc1", repl("size: 5", "size: 5\n  datacenterName: west"), "sets spec.datacenterName west"},
		{"same dc name as another", "dc1", dc2YAML, "datacenter dc2 exists already in cluster c (CassandraDatacenter dc3)"},
		{"user's resource", "dc1", repl("name: dc2", "name: dc4"), "add-dc did not create it"},
		{"source deleted", "gone", repl("name: dc2", "name: dc5"), "being deleted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := a.PlanDatacenter(ctx, "db", c.src, want(c.manifest))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
	// Another cluster's datacenter of the same name is no conflict.
	if _, _, err := a.PlanDatacenter(ctx, "db", "dc1", want(repl("name: dc2", "name: dc9"))); err != nil {
		t.Fatalf("dc9 of another cluster: %v", err)
	}
}

// TestAddDatacenter: the resource is created once, from the manifest, in ns, with op's
// mark; asked again it does nothing; the plan then accepts it (asked already).
func TestAddDatacenter(t *testing.T) {
	ctx := context.Background()
	a, dyn, _ := fakeAdapter([]runtime.Object{source()})
	w := want(dc2YAML)
	if _, _, err := a.PlanDatacenter(ctx, "db", "dc1", w); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.AdditionRequested(ctx, "db", "dc1", w); ok || err != nil {
		t.Fatalf("requested before: %v %v", ok, err)
	}
	for i := 0; i < 2; i++ {
		if err := a.AddDatacenter(ctx, "db", "dc1", "uid-1", "add-dc-1", w); err != nil {
			t.Fatalf("add #%d: %v", i+1, err)
		}
	}
	creates := 0
	for _, ac := range dyn.Actions() {
		if ac.GetVerb() == "create" {
			creates++
		}
	}
	if creates != 1 {
		t.Fatalf("%d creates, want 1", creates)
	}
	u, err := dyn.Resource(gvr).Namespace("db").Get(ctx, "dc2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := u.GetAnnotations()[AddDCMarkAnnotation]; m != `{"operationID":"add-dc-1"}` {
		t.Fatalf("mark %q", m)
	}
	if s, _, _ := unstructured.NestedInt64(u.Object, "spec", "size"); s != 5 {
		t.Fatalf("spec.size %d, want the manifest's 5", s)
	}
	if ok, err := a.AdditionRequested(ctx, "db", "dc1", w); !ok || err != nil {
		t.Fatalf("requested after: %v %v", ok, err)
	}
	if name, rs, err := a.PlanDatacenter(ctx, "db", "dc1", w); err != nil || name != "dc2" || len(rs) != 3 {
		t.Fatalf("plan once created: %s %v %v", name, rs, err)
	}
	if err := a.AddDatacenter(ctx, "db", "dc1", "uid-1", "add-dc-2", w); err == nil || !strings.Contains(err.Error(), "created by operation add-dc-1") {
		t.Fatalf("another operation: %v", err)
	}
	now := metav1.Now()
	u.SetDeletionTimestamp(&now)
	if err := dyn.Tracker().Update(gvr, u, "db"); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.AdditionRequested(ctx, "db", "dc1", w); ok || err != nil {
		t.Fatalf("requested while deleted: %v %v", ok, err)
	}
}

// TestAddDatacenterRefusals: a source re-created since the plan, and a resource of the
// name that add-dc did not create, are never touched.
func TestAddDatacenterRefusals(t *testing.T) {
	ctx := context.Background()
	users := dc("db", "dc2", map[string]any{"clusterName": "c", "size": int64(3)})
	a, dyn, _ := fakeAdapter([]runtime.Object{source(), users})
	if err := a.AddDatacenter(ctx, "db", "dc1", "uid-0", "op", want(strings.Replace(dc2YAML, "name: dc2", "name: dc5", 1))); err == nil || !strings.Contains(err.Error(), "re-created") {
		t.Fatalf("re-created source: %v", err)
	}
	if err := a.AddDatacenter(ctx, "db", "dc1", "uid-1", "op", want(dc2YAML)); err == nil || !strings.Contains(err.Error(), "not ours") {
		t.Fatalf("user's resource: %v", err)
	}
	for _, ac := range dyn.Actions() {
		if ac.GetVerb() != "get" && ac.GetVerb() != "list" {
			t.Fatalf("a write: %v", ac)
		}
	}
}

// TestAddDatacenterRace: a resource of the name created between the read and the
// create (AlreadyExists) is judged again from a new read: not ours, refused.
func TestAddDatacenterRace(t *testing.T) {
	ctx := context.Background()
	a, dyn, _ := fakeAdapter([]runtime.Object{source()})
	dyn.PrependReactor("create", Resource, func(k8stesting.Action) (bool, runtime.Object, error) {
		u := dc("db", "dc2", map[string]any{"clusterName": "c", "size": int64(3)})
		if err := dyn.Tracker().Add(u); err != nil {
			return true, nil, err
		}
		return false, nil, nil // the tracker answers AlreadyExists
	})
	if err := a.AddDatacenter(ctx, "db", "dc1", "uid-1", "op", want(dc2YAML)); err == nil || !strings.Contains(err.Error(), "not ours") {
		t.Fatalf("raced: %v", err)
	}
}
