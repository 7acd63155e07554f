package cassoperator

import (
	"context"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Object returns the checkpoint carrier of one CassandraDatacenter: its annotations.
func (a *Adapter) Object(ns, name string) record.Object {
	return &Annotated{a: a, ns: ns, name: name}
}

// Annotated reads and patches the annotations of one CassandraDatacenter
// (record.Object).
type Annotated struct {
	a        *Adapter
	ns, name string
	// deleting: the last read or write of the object showed a deletionTimestamp.
	deleting atomic.Bool
}

// Deleting reports whether the last read or write of the checkpoint showed the
// datacenter being deleted (metadata.deletionTimestamp): every checkpoint write returns
// the object, so the engine learns it before its next action at no cost.
func (o *Annotated) Deleting() bool { return o.deleting.Load() }

// ReadAnnotations returns the annotations, UID and resourceVersion.
func (o *Annotated) ReadAnnotations(ctx context.Context) (map[string]string, string, string, error) {
	u, err := o.a.get(ctx, o.ns, o.name)
	if err != nil {
		return nil, "", "", err
	}
	o.deleting.Store(u.GetDeletionTimestamp() != nil)
	return u.GetAnnotations(), string(u.GetUID()), u.GetResourceVersion(), nil
}

// PatchAnnotations changes only metadata.annotations with a merge patch that carries the
// resourceVersion, so the API server refuses it (409) if the object changed meanwhile.
// The status is a subresource in cass-operator's CRD, so the patch cannot touch it; the
// spec is left out, so the webhook's checks of spec changes have nothing to refuse.
func (o *Annotated) PatchAnnotations(ctx context.Context, rv string, set map[string]*string) (string, error) {
	c, err := o.a.client(o.ns)
	if err != nil {
		return "", err
	}
	u, err := c.Patch(ctx, o.name, types.MergePatchType, record.AnnotationsPatch(rv, set), metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return "", err
	}
	o.deleting.Store(u.GetDeletionTimestamp() != nil)
	return u.GetResourceVersion(), nil
}
