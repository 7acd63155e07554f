package cassoperator

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestObject: the checkpoint lives in the datacenter's annotations; a patch sets and
// removes them and nothing else.
func TestObject(t *testing.T) {
	ctx := context.Background()
	a, _, _ := fakeAdapter([]runtime.Object{sample(t, "db")})
	o := a.Object("db", "dc1")
	ann, uid, rv, err := o.ReadAnnotations(ctx)
	if err != nil || uid != "uid-1" || rv == "" || len(ann) != 0 {
		t.Fatalf("read %v %q %q %v", ann, uid, rv, err)
	}
	v := "x"
	if _, err := o.PatchAnnotations(ctx, rv, map[string]*string{"a": &v, "b": nil}); err != nil {
		t.Fatal(err)
	}
	ann, _, _, _ = o.ReadAnnotations(ctx)
	if ann["a"] != "x" || len(ann) != 1 {
		t.Errorf("annotations %v", ann)
	}
	if n, _ := size(t, a, "dc1"); n != 3 {
		t.Errorf("size %d after an annotation patch", n)
	}
	if o.(*record.Annotations).Deleting() {
		t.Errorf("deleting")
	}
}
