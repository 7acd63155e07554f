package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

func TestScaleUpRuns(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 1, JoinTime: 20 * time.Millisecond, Operator: true})
	stdout, stderr, code, _ := run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "3", "--cleanup", "--yes")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("%s\n%s", stdout, stderr)
	w.AssertScaledUp(3, "scale-up")
	if n, _ := w.Cass.Node("demo-dc1-rack1-0"); n.Cleanups != 1 {
		t.Fatalf("cleanups on the pre-existing node: %d", n.Cleanups)
	}
	if !strings.Contains(stdout, "Done: datacenter dc1 racks rack1 scaled to 3 nodes (2 added), nodetool cleanup on 1 nodes") {
		t.Fatalf("stdout:\n%s", stdout)
	}
}
