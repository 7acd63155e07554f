package fakeadapter

import (
	"context"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Object returns the checkpoint carrier of a cluster: its annotations.
func (a *Adapter) Object(ns, name string) record.Object {
	return &annotated{a: a, ns: ns, name: name}
}

// annotated reads and patches the annotations of one FakeCassandra (record.Object).
type annotated struct {
	a        *Adapter
	ns, name string
	// deleting: the last read or write showed a deletionTimestamp.
	deleting atomic.Bool
}

// Deleting reports whether the last read or write showed the resource being deleted.
func (o *annotated) Deleting() bool { return o.deleting.Load() }

// ReadAnnotations returns the annotations, UID and resourceVersion.
func (o *annotated) ReadAnnotations(ctx context.Context) (map[string]string, string, string, error) {
	c, err := o.a.client(o.ns)
	if err != nil {
		return nil, "", "", err
	}
	u, err := c.Get(ctx, o.name, metav1.GetOptions{})
	if err != nil {
		return nil, "", "", err
	}
	o.deleting.Store(u.GetDeletionTimestamp() != nil)
	return u.GetAnnotations(), string(u.GetUID()), u.GetResourceVersion(), nil
}

// PatchAnnotations changes only metadata.annotations, with a merge patch carrying the
// resourceVersion (409 when the object changed meanwhile).
func (o *annotated) PatchAnnotations(ctx context.Context, rv string, set map[string]*string) (string, error) {
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
