package cassoperator

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Object returns the checkpoint carrier of one CassandraDatacenter: its annotations.
// The status is a subresource in cass-operator's CRD, and the patch leaves the spec out,
// so the webhook's checks of spec changes have nothing to refuse.
func (a *Adapter) Object(ns, name string) record.Object {
	return &record.Annotations{
		Client:       func() (dynamic.ResourceInterface, error) { return a.client(ns) },
		Get:          func(ctx context.Context) (*unstructured.Unstructured, error) { return a.get(ctx, ns, name) },
		Name:         name,
		FieldManager: FieldManager,
	}
}
