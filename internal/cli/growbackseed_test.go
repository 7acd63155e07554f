package cli

import (
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// TestAbortGrowBackSeed: the node a two-rack scale-down removed was a seed, which
// CassKop keeps in status.seedlist; grown back, its pod would start as a seed and skip
// bootstrap, so grow-back refuses it. abort's offer of --grow-back says so and how to
// clear it (found by the e2e: the fixture's seeds are ordinals 0 and 1); once the entry
// is removed, abort --grow-back ends consistent with the operator restored.
func TestAbortGrowBackSeed(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2, Racks: []string{"rack1", "rack2"}, Topology: true, Operator: true})
	w.SetSeedlist("demo-dc1-rack1-0", "demo-dc1-rack1-1", "demo-dc1-rack2-0")
	op := w.RecordReplicas("casskop")
	_ = w.Cass.SetFault("demo-dc1-rack2-1", sim.Fault{RefuseRF: true})
	scaleDC := []string{"scale", "demo", "-n", "cassandra", "--dc", "dc1", "--nodes", "1", "--yes"}
	if _, stderr, code, _ := run(w, 0, scaleDC...); code != operation.ExitRefused {
		t.Fatalf("scale: exit %d\n%s", code, stderr)
	}
	_, stderr, code, _ := run(w, 0, abortDemo...)
	if code != operation.ExitRefused || !strings.Contains(stderr, "--grow-back (first: pod demo-dc1-rack1-1 is listed as a seed") {
		t.Fatalf("abort: exit %d\n%s", code, stderr)
	}
	before := len(w.History())
	growBack := append(append([]string{}, abortDemo...), "--grow-back")
	if _, stderr, code, _ = run(w, 0, growBack...); code != operation.ExitRefused || !strings.Contains(stderr, "is listed as a seed") {
		t.Fatalf("abort --grow-back with the seed listed: exit %d\n%s", code, stderr)
	}
	if got := w.History()[before:]; len(got) != 0 {
		t.Fatalf("the refused grow-back changed %v", got)
	}
	w.SetSeedlist("demo-dc1-rack1-0", "demo-dc1-rack2-0")
	if _, stderr, code, _ = run(w, 0, growBack...); code != 0 {
		t.Fatalf("abort --grow-back once the entry is gone: exit %d\n%s", code, stderr)
	}
	w.AssertConsistentAt(2, "grown back")
	assertHistory(t, op, "grown back", 1, 0, 1)
	assertNoHolders(t, w, "grown back")
}
