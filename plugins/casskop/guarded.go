package casskop

import "context"

// SetRackNodesAt writes dc's nodesPerRacks only if the CassandraCluster is still at
// resourceVersion rv (the version whose count and StatefulSets the caller judged): a
// JSON patch whose first operation tests metadata.resourceVersion, so any change since
// fails it with 422 and nothing is written. abort uses it (internal/cli/abort.go).
func (a *Adapter) SetRackNodesAt(ctx context.Context, ns, name, dc string, racks map[string]int, rv string) error {
	n, err := oneCount(dc, racks)
	if err != nil {
		return err
	}
	return a.patchNodesPerRack(ctx, ns, name, dc, n, rv)
}
