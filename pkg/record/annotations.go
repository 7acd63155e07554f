package record

import (
	"context"
	"fmt"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Annotations is the Object every adapter's cluster resource is: its annotations, read
// with a Get and written with AnnotationsPatch (only metadata.annotations, tested
// against the resourceVersion). The status may be a subresource or not and the spec may
// be guarded by a webhook: the patch touches neither.
type Annotations struct {
	// Client is the resource's namespaced client (the adapter resolves its API version).
	Client func() (dynamic.ResourceInterface, error)
	// Get, when set, reads the resource instead of Client().Get (an adapter that
	// re-discovers its API when a read misses).
	Get                func(ctx context.Context) (*unstructured.Unstructured, error)
	Name, FieldManager string
	// deleting: the last read or write of the object showed a deletionTimestamp.
	deleting atomic.Bool
}

// Deleting reports whether the last read or write of the checkpoint showed the resource
// being deleted (metadata.deletionTimestamp): every checkpoint write returns the
// object, so the engine learns it before its next action at no cost.
func (o *Annotations) Deleting() bool { return o.deleting.Load() }

// ReadAnnotations implements Object.
func (o *Annotations) ReadAnnotations(ctx context.Context) (map[string]string, string, string, error) {
	u, err := o.read(ctx)
	if err != nil {
		return nil, "", "", err
	}
	o.deleting.Store(u.GetDeletionTimestamp() != nil)
	return u.GetAnnotations(), string(u.GetUID()), u.GetResourceVersion(), nil
}

func (o *Annotations) read(ctx context.Context) (*unstructured.Unstructured, error) {
	if o.Get != nil {
		return o.Get(ctx)
	}
	c, err := o.Client()
	if err != nil {
		return nil, err
	}
	return c.Get(ctx, o.Name, metav1.GetOptions{})
}

// PatchAnnotations implements Object. A full Update is never used: a stale one would
// clobber what the operator wrote (a CRD without a status subresource).
func (o *Annotations) PatchAnnotations(ctx context.Context, rv string, set map[string]*string) (string, error) {
	c, err := o.Client()
	if err != nil {
		return "", err
	}
	u, err := c.Patch(ctx, o.Name, types.MergePatchType, AnnotationsPatch(rv, set), metav1.PatchOptions{FieldManager: o.FieldManager})
	if err != nil {
		return "", err
	}
	o.deleting.Store(u.GetDeletionTimestamp() != nil)
	return u.GetResourceVersion(), nil
}

// PatchAnnotationsIf implements ContentFenced with FencedAnnotationsPatch. The API
// server answers a failed test (or a remove of a missing annotation) with 422; a server
// that takes no JSON patch for the resource answers 415: both are ErrContentChanged,
// and the caller falls back to its resourceVersion-fenced write.
func (o *Annotations) PatchAnnotationsIf(ctx context.Context, uid, key, want string, set map[string]*string) (string, error) {
	c, err := o.Client()
	if err != nil {
		return "", err
	}
	u, err := c.Patch(ctx, o.Name, types.JSONPatchType, FencedAnnotationsPatch(uid, key, want, set), metav1.PatchOptions{FieldManager: o.FieldManager})
	if apierrors.IsInvalid(err) || apierrors.IsUnsupportedMediaType(err) {
		return "", fmt.Errorf("%w: %v", ErrContentChanged, err)
	}
	if err != nil {
		return "", err
	}
	o.deleting.Store(u.GetDeletionTimestamp() != nil)
	return u.GetResourceVersion(), nil
}
