package operator

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// ClustersOf is the clusters a list of an operator's resources describes, each read by
// from (the adapter's FromObject), in the list's order; one that cannot be read fails
// the list. Every adapter's List maps its resources so.
func ClustersOf(items []unstructured.Unstructured, from func(*unstructured.Unstructured) (topology.Cluster, error)) ([]topology.Cluster, error) {
	var out []topology.Cluster
	for i := range items {
		cl, err := from(&items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, cl)
	}
	return out, nil
}
