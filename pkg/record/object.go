// Package record is the plugin's records as adapters and operation kinds see them: the
// object that carries the checkpoint (its annotations), who holds an operator paused,
// and the checkpoint itself (Checkpoint, its steps, nodes and target, the Schema a kind
// declares and the step kinds of the plugin's library a kind plans). Its encoding,
// validation and lock are the plugin's (internal/checkpoint): a kind fills and reads it,
// an adapter only stores it.
package record

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// Object is where a cluster's checkpoint lives: the annotations of its resource.
type Object interface {
	// ReadAnnotations returns the annotations, UID and resourceVersion of the object.
	ReadAnnotations(ctx context.Context) (annotations map[string]string, uid, resourceVersion string, err error)
	// PatchAnnotations sets (non-nil) or removes (nil) annotations, and nothing else,
	// only if the object is still at resourceVersion (a 409 Conflict otherwise).
	PatchAnnotations(ctx context.Context, resourceVersion string, set map[string]*string) (newResourceVersion string, err error)
}

// ContentFenced is an Object that can also write its annotations fenced by content
// rather than by resourceVersion: the write applies, atomically, only while the object's
// UID is uid and its annotation key holds exactly want, whatever else was written to the
// object meanwhile (the operator's status), so such a write does not conflict with it.
// Any other state is refused with ErrContentChanged and nothing is written.
type ContentFenced interface {
	PatchAnnotationsIf(ctx context.Context, uid, key, want string, set map[string]*string) (newResourceVersion string, err error)
}

// ErrContentChanged: a ContentFenced write found the object or the annotation it was
// fenced on not as expected (or the server took no such patch); nothing was written.
var ErrContentChanged = errors.New("the annotation is not what the write was fenced on")

// FencedAnnotationsPatch is the JSON patch a ContentFenced write sends: "test"s of the
// UID and of key's value (the API server applies the patch to the object as it is when
// it writes, and refuses all of it with 422 if a test fails: RFC 6902 §4.6, §5), then
// only metadata.annotations: each set key added or replaced, each nil one removed.
func FencedAnnotationsPatch(uid, key, want string, set map[string]*string) []byte {
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": uid},
		{"op": "test", "path": annotationPath(key), "value": want},
	}
	for k, v := range set {
		if v == nil {
			ops = append(ops, map[string]any{"op": "remove", "path": annotationPath(k)})
		} else {
			ops = append(ops, map[string]any{"op": "add", "path": annotationPath(k), "value": *v})
		}
	}
	body, _ := json.Marshal(ops)
	return body
}

// annotationPath is the JSON pointer to an annotation (RFC 6901 §3: "~" and "/" escaped).
func annotationPath(key string) string {
	return "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// AnnotationsPatch is the merge patch an Object's PatchAnnotations sends: only
// metadata.annotations (a nil value removes one), with the resourceVersion rv when
// given, so the API server refuses it (409) if the object changed meanwhile. A full
// Update is never used: a stale one would clobber what the operator wrote.
func AnnotationsPatch(rv string, set map[string]*string) []byte {
	ann := map[string]any{}
	for k, v := range set {
		if v == nil {
			ann[k] = nil
		} else {
			ann[k] = *v
		}
	}
	meta := map[string]any{"annotations": ann}
	if rv != "" {
		meta["resourceVersion"] = rv
	}
	body, _ := json.Marshal(map[string]any{"metadata": meta})
	return body
}
