package cli

import (
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// TestScaleOneRackOfSeveralRefused: CassKop keeps one count per datacenter, so scaling
// one rack of a two-rack datacenter is refused before anything is written, naming the
// count and the command that scales the whole datacenter; the whole datacenter is
// planned.
func TestScaleOneRackOfSeveralRefused(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Racks: []string{"rack1", "rack2"}, Topology: true})
	_, stderr, code, _ := run(w, 0, "scale", "demo", "-n", "cassandra", "--dc", "dc1", "--rack", "rack1", "--nodes", "2", "--yes")
	for _, want := range []string{"one nodesPerRacks per datacenter", "would leave the racks unequal", "kubectl cassandra scale demo --dc dc1 --nodes 2", "nothing"} {
		if code != 3 || !strings.Contains(stderr, want) {
			t.Fatalf("exit %d, want 3 and %q in:\n%s", code, want, stderr)
		}
	}
	if n := w.SideEffects(); n != 0 {
		t.Fatalf("%d side effects for a refused scale", n)
	}
	stdout, stderr, code, _ := run(w, 0, "scale", "demo", "-n", "cassandra", "--dc", "dc1", "--nodes", "2", "--dry-run")
	if code != 0 || !strings.Contains(stdout, "rack rack1: 3 -> 2 nodes") || !strings.Contains(stdout, "rack rack2: 3 -> 2 nodes") {
		t.Fatalf("whole datacenter: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
