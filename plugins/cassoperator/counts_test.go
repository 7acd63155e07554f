package cassoperator

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// TestCheckRackNodes: only counts that are SplitRacks of their sum can be asked, and
// the refusal says which ones can.
func TestCheckRackNodes(t *testing.T) {
	a := &Adapter{API: operator.APIVersion{Version: Version}}
	if _, err := a.FromObject(dc("db", "dc1", map[string]any{"clusterName": "c", "size": int64(5), "racks": racks("r1", "r2", "r3")})); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		racks map[string]int
		want  string // "" = accepted
	}{
		{map[string]int{"r1": 2, "r2": 2, "r3": 1}, ""},
		{map[string]int{"r1": 1, "r2": 1, "r3": 1}, ""},
		{map[string]int{"r1": 2, "r2": 1, "r3": 1}, ""},
		{map[string]int{"r1": 1, "r2": 2, "r3": 2}, "cass-operator splits size 5 over racks r1,r2,r3 as r1=2, r2=2, r3=1; rack counts r1=1, r2=2, r3=2 cannot be asked"},
		{map[string]int{"r1": 3, "r2": 1, "r3": 1}, "cass-operator splits size 5 over racks r1,r2,r3 as r1=2, r2=2, r3=1; rack counts r1=3, r2=1, r3=1 cannot be asked"},
		{map[string]int{"r1": 1, "r2": 1, "r3": 0}, "cass-operator needs at least one node per rack: size 2 over racks r1,r2,r3 is too small"},
		{map[string]int{"r1": 1, "r2": 1}, "a count is needed for every rack, r3 missing"},
		{map[string]int{"r1": 1, "r2": 1, "r3": 1, "r9": 1}, "datacenter dc1 has no rack r9"},
	} {
		err := a.CheckRackNodes("dc1", tc.racks)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v refused: %v", tc.racks, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.racks, err, tc.want)
		}
	}
	// A datacenter never read: only equal racks hold in any order.
	if err := a.CheckRackNodes("other", map[string]int{"a": 2, "b": 2}); err != nil {
		t.Errorf("equal racks of an unread dc refused: %v", err)
	}
	if err := a.CheckRackNodes("other", map[string]int{"a": 2, "b": 1}); err == nil || !strings.Contains(err.Error(), "spec order, which is not known") {
		t.Errorf("unequal racks of an unread dc: %v", err)
	}
}

func size(t *testing.T, a *Adapter, name string) (int64, *unstructured.Unstructured) {
	t.Helper()
	_, u, err := a.Get(context.Background(), "db", name)
	if err != nil {
		t.Fatal(err)
	}
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "size")
	return n, u
}

// TestSetRackNodes: the counts become spec.size when they are its split; otherwise
// nothing is written. SetRackNodesAt also needs the resourceVersion read.
func TestSetRackNodes(t *testing.T) {
	ctx := context.Background()
	a, _, _ := fakeAdapter([]runtime.Object{sample(t, "db")})
	spec := a.DCSpec("db", "dc1", "dc1")
	got, err := spec.RackNodes(ctx)
	if err != nil || got["rack1"] != 1 || got["rack2"] != 1 || got["rack3"] != 1 {
		t.Fatalf("rack nodes %v, %v", got, err)
	}
	if err := spec.SetRackNodes(ctx, map[string]int{"rack1": 2, "rack2": 2, "rack3": 1}); err != nil {
		t.Fatal(err)
	}
	if n, _ := size(t, a, "dc1"); n != 5 {
		t.Errorf("size %d, want 5", n)
	}
	if err := spec.SetRackNodes(ctx, map[string]int{"rack1": 1, "rack2": 2, "rack3": 2}); err == nil || !strings.Contains(err.Error(), "as rack1=2, rack2=2, rack3=1") {
		t.Errorf("unsplit counts: %v", err)
	}
	if n, _ := size(t, a, "dc1"); n != 5 {
		t.Errorf("size %d after a refusal, want 5", n)
	}
	if err := a.DCSpec("db", "dc1", "dc9").SetRackNodes(ctx, map[string]int{"rack1": 1}); err == nil || !strings.Contains(err.Error(), "not dc9") {
		t.Errorf("wrong dc: %v", err)
	}

	_, u := size(t, a, "dc1")
	if err := a.SetRackNodesAt(ctx, "db", "dc1", "dc1", map[string]int{"rack1": 1, "rack2": 1, "rack3": 1}, "0"); err == nil || !strings.Contains(err.Error(), "changed since it was read") {
		t.Errorf("stale resourceVersion: %v", err)
	}
	if err := a.SetRackNodesAt(ctx, "db", "dc1", "dc1", map[string]int{"rack1": 1, "rack2": 1, "rack3": 1}, u.GetResourceVersion()); err != nil {
		t.Fatal(err)
	}
	if n, _ := size(t, a, "dc1"); n != 3 {
		t.Errorf("size %d, want 3", n)
	}
}
