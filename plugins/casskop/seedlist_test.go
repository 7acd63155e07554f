package casskop

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSeedPods: status.seedlist entries as CassKop writes them (<pod>.<cluster>.<ns>,
// docs/how-it-works/casskop.md §1.3), with a port or as addresses.
func TestSeedPods(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"seedlist": []any{
		"cassandra-demo-dc1-rack1-0.cassandra-demo.cassandra",
		"cassandra-demo-dc1-rack1-1.cassandra-demo.cassandra:7000",
		"cassandra-demo-dc1-rack2-0",
		"10.244.1.7", "fd00:10:244::5", "",
	}}}}
	got := SeedPods(u)
	want := []string{"cassandra-demo-dc1-rack1-0", "cassandra-demo-dc1-rack1-1", "cassandra-demo-dc1-rack2-0"}
	if len(got) != len(want) {
		t.Fatalf("SeedPods = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("SeedPods = %v, want %v", got, want)
		}
	}
	if SeedPods(&unstructured.Unstructured{Object: map[string]any{}}) != nil {
		t.Fatal("no status: no seeds")
	}
}
