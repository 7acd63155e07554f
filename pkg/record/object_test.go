package record

import (
	"encoding/json"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// The content-fenced patch, applied as the API server applies it (RFC 6902, the library
// the API server uses): it writes only while the UID and the fenced annotation are as
// expected, touches nothing but the annotations, and escapes the keys' "/".
func TestFencedAnnotationsPatch(t *testing.T) {
	const key, last = "kubectl-cassandra.io/checkpoint", "kubectl-cassandra.io/last-operation"
	obj := func(uid, cp string) []byte {
		b, _ := json.Marshal(map[string]any{
			"metadata": map[string]any{"uid": uid, "resourceVersion": "7", "annotations": map[string]any{key: cp, "other": "x"}},
			"status":   map[string]any{"progress": "Ready"},
		})
		return b
	}
	v := "done"
	patch := FencedAnnotationsPatch("u1", key, "seq3", map[string]*string{key: nil, last: &v})
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(obj("u1", "seq3"))
	if err != nil {
		t.Fatalf("on the expected object: %v", err)
	}
	var got struct {
		Metadata struct {
			Annotations     map[string]string `json:"annotations"`
			ResourceVersion string            `json:"resourceVersion"`
		} `json:"metadata"`
		Status map[string]string `json:"status"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if a := got.Metadata.Annotations; len(a) != 2 || a[last] != "done" || a["other"] != "x" || got.Status["progress"] != "Ready" || got.Metadata.ResourceVersion != "7" {
		t.Fatalf("patched: %s", out)
	}
	for name, doc := range map[string][]byte{
		"another checkpoint":     obj("u1", "seq4"),
		"a re-created resource":  obj("u2", "seq3"),
		"no checkpoint any more": []byte(`{"metadata":{"uid":"u1","annotations":{"other":"x"}}}`),
	} {
		if _, err := p.Apply(doc); err == nil {
			t.Errorf("%s: the patch applied", name)
		}
	}
}
