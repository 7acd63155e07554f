package casskop

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// SetRackNodesAt writes dc's nodesPerRacks only if the CassandraCluster is still at
// resourceVersion rv (the version whose count and StatefulSets the caller judged): a
// JSON patch whose first operation tests metadata.resourceVersion, so any change since
// fails it with 422 and nothing is written. abort uses it (internal/cli/abort.go).
func (a *Adapter) SetRackNodesAt(ctx context.Context, ns, name, dc string, racks map[string]int, rv string) error {
	n, err := oneCount(dc, racks)
	if err != nil {
		return err
	}
	c, err := a.client(ns)
	if err != nil {
		return err
	}
	u, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if u.GetResourceVersion() != rv {
		return fmt.Errorf("cluster %s changed since it was read (resourceVersion %s, read at %s)", name, u.GetResourceVersion(), rv)
	}
	dcOps, err := nodesPerRackPatch(u, name, dc, n)
	if err != nil {
		return err
	}
	ops := append([]map[string]any{{"op": "test", "path": "/metadata/resourceVersion", "value": rv}}, dcOps...)
	body, _ := json.Marshal(ops)
	_, err = c.Patch(ctx, name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: "kubectl-cassandra"})
	return err
}
