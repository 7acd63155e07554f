package operator

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestAPIVersionForget: only an assumed version, answered NotFound, is dropped (to be
// asked of discovery); one the server answered, or one found by discovery, stays.
func TestAPIVersionForget(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "g", Resource: "r"}, "x")
	var v APIVersion
	v.Assume("v2")
	if was, ok := v.Forget(errors.New("timeout")); ok || was != "" || v.Get() != "v2" {
		t.Fatalf("Forget(timeout) = %q, %v; version %q: want nothing dropped", was, ok, v.Get())
	}
	if was, ok := v.Forget(notFound); !ok || was != "v2" || v.Get() != "" {
		t.Fatalf("Forget(NotFound) of an assumed version = %q, %v; version %q: want v2 dropped", was, ok, v.Get())
	}
	v.Assume("v2")
	v.Served()
	if _, ok := v.Forget(notFound); ok || v.Get() != "v2" {
		t.Fatalf("a served version was dropped on NotFound (an object's, then)")
	}
	var f APIVersion
	f.Found("v1alpha1")
	f.Assume("v2")
	if _, ok := f.Forget(notFound); ok || f.Get() != "v1alpha1" {
		t.Fatalf("a found version was replaced by Assume or dropped on NotFound: %q", f.Get())
	}
}
