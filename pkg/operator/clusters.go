package operator

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

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

// ListResources lists an operator's resources in ns ("" = every namespace) through the
// adapter's client for ns, whose error (its API version not resolved) it returns as it
// is; the adapter judges a list's error (an assumed version answered NotFound) itself.
func ListResources(ctx context.Context, client func(ns string) (dynamic.ResourceInterface, error), ns string) (*unstructured.UnstructuredList, error) {
	c, err := client(ns)
	if err != nil {
		return nil, err
	}
	return c.List(ctx, metav1.ListOptions{})
}
