package casskop

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRackCounts: CassKop's one nodesPerRacks per datacenter becomes every rack's count
// in the neutral model, and only equal rack counts can be written back.
func TestRackCounts(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "db.orange.com/v2", "kind": "CassandraCluster",
		"metadata": map[string]any{"name": "c", "namespace": "ns"},
		"spec": map[string]any{"nodesPerRacks": int64(3), "topology": map[string]any{"dc": []any{
			map[string]any{"name": "dc1", "rack": []any{map[string]any{"name": "r1"}, map[string]any{"name": "r2"}}},
			map[string]any{"name": "dc2", "nodesPerRacks": int64(2)},
		}}},
	}}
	cl, err := (&Adapter{Version: "v2"}).FromObject(u)
	if err != nil {
		t.Fatal(err)
	}
	if got := cl.DCs[0].RackNodes(); got["r1"] != 3 || got["r2"] != 3 || len(got) != 2 {
		t.Errorf("dc1 racks %v", got)
	}
	if got := cl.DCs[1].RackNodes(); got["rack1"] != 2 || len(got) != 1 {
		t.Errorf("dc2 racks %v", got)
	}
	if cl.DCs[0].Spec != "nodesPerRacks 3" {
		t.Errorf("dc1 spec words %q", cl.DCs[0].Spec)
	}
	if n, err := oneCount("dc1", map[string]int{"r1": 2, "r2": 2}); err != nil || n != 2 {
		t.Errorf("equal racks: %d, %v", n, err)
	}
	if _, err := oneCount("dc1", map[string]int{"r1": 3, "r2": 2}); err == nil || !strings.Contains(err.Error(), "one nodesPerRacks per datacenter") {
		t.Errorf("racks that differ: %v", err)
	}
}
