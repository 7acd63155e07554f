package lifecycle

import (
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/kinds"
)

// TestKindsByInterface: the lifecycle finds the kind that grows racks back and the
// kinds that write the start script through optional interfaces, not by name: in the
// build's table, scale-up grows (its request asks every rack of the DC for the size)
// and replace-node alone reaps start-script blocks.
func TestKindsByInterface(t *testing.T) {
	l := New(Deps{Kinds: kinds.Registry()})
	k, g := l.grower()
	if g == nil || k.Info().Name != "scale-up" {
		t.Fatalf("grower: %v", k)
	}
	if req := g.GrowRequest("dc1", 3); req.DC != "dc1" || req.Nodes != 3 {
		t.Errorf("grow-back request %+v", req)
	}
	var reapers []string
	for _, k := range l.Kinds.All() {
		if _, ok := k.(scriptReaper); ok {
			reapers = append(reapers, k.Info().Name)
		}
	}
	if len(reapers) != 1 || reapers[0] != "replace-node" {
		t.Errorf("start-script reapers %v, want replace-node", reapers)
	}
	if _, g := New(Deps{Kinds: operation.NewRegistry()}).grower(); g != nil {
		t.Error("a table without scale-up grows nothing")
	}
}
