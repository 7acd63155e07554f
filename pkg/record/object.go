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
)

// Object is where a cluster's checkpoint lives: the annotations of its resource.
type Object interface {
	// ReadAnnotations returns the annotations, UID and resourceVersion of the object.
	ReadAnnotations(ctx context.Context) (annotations map[string]string, uid, resourceVersion string, err error)
	// PatchAnnotations sets (non-nil) or removes (nil) annotations, and nothing else,
	// only if the object is still at resourceVersion (a 409 Conflict otherwise).
	PatchAnnotations(ctx context.Context, resourceVersion string, set map[string]*string) (newResourceVersion string, err error)
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
