package casskop

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
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
	cl, err := (&Adapter{API: operator.APIVersion{Version: "v2"}}).FromObject(u)
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

// TestEncryptionFromSpec: internode encryption is read from spec.config's
// cassandra-yaml, a datacenter's config overriding the cluster's; a ConfigMap's
// cassandra.yaml cannot be read.
func TestEncryptionFromSpec(t *testing.T) {
	enc := func(mode string) map[string]any {
		return map[string]any{"cassandra-yaml": map[string]any{"server_encryption_options": map[string]any{"internode_encryption": mode}}}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "db.orange.com/v2", "kind": "CassandraCluster",
		"metadata": map[string]any{"name": "c", "namespace": "ns"},
		"spec": map[string]any{"config": enc("all"), "topology": map[string]any{"dc": []any{
			map[string]any{"name": "dc1"},
			map[string]any{"name": "dc2", "config": enc("none")},
		}}},
	}}
	cl, err := (&Adapter{API: operator.APIVersion{Version: "v2"}}).FromObject(u)
	if err != nil {
		t.Fatal(err)
	}
	if e := cl.DCs[0].Encryption; e.Internode != "all" || e.Unknown != "" {
		t.Errorf("dc1 %+v", e)
	}
	if e := cl.DCs[1].Encryption; e.Internode != "none" {
		t.Errorf("dc2 %+v", e)
	}
	u.Object["spec"] = map[string]any{"configMapName": "yaml"}
	cl, err = (&Adapter{API: operator.APIVersion{Version: "v2"}}).FromObject(u)
	if err != nil {
		t.Fatal(err)
	}
	if e := cl.DCs[0].Encryption; !strings.Contains(e.Unknown, "spec.configMapName yaml") {
		t.Errorf("configMapName: %+v", e)
	}
}
