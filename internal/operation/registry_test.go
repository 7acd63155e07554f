package operation

import (
	"strings"
	"testing"

	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// fakeKind is a kind with only a name.
type fakeKind struct {
	pub.Kind
	name string
}

func (k fakeKind) Info() pub.Info { return pub.Info{Name: k.name} }

func TestRegistry(t *testing.T) {
	r := NewRegistry(fakeKind{name: "b"}, fakeKind{name: "a"})
	if got := strings.Join(r.Names(), ","); got != "a,b" {
		t.Fatalf("names %s, want a,b", got)
	}
	if k, ok := r.Kind("a"); !ok || k.Info().Name != "a" {
		t.Fatalf("kind a not found")
	}
	if _, ok := r.Kind("c"); ok {
		t.Fatalf("kind c found")
	}
	// A checkpoint of a kind this build does not know (a newer plugin wrote it): the
	// error says what and what to do, nothing is run.
	_, err := r.Of(&record.Checkpoint{OperationID: "op-1", Kind: "replace-node"})
	if err == nil || !strings.Contains(err.Error(), `"replace-node"`) || !strings.Contains(err.Error(), "upgrade the plugin") {
		t.Fatalf("unknown kind: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatalf("MustKind of an unregistered kind did not panic")
		}
	}()
	r.MustKind("c")
}
