package cli

import (
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

func podUIDs(w *world.World, pods []string) map[string]string {
	m := map[string]string{}
	for _, p := range pods {
		m[p] = w.PodUID(p)
	}
	return m
}

var rack1Pods = []string{"demo-dc1-rack1-0", "demo-dc1-rack1-1", "demo-dc1-rack1-2"}

func TestRestartRuns(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Operator: true, StartTime: 10 * time.Millisecond})
	before := podUIDs(w, rack1Pods)
	stdout, stderr, code, _ := run(w, 0, "restart", "demo", "-n", "cassandra", "--rack", "rack1", "--yes")
	t.Logf("%s\n%s", stdout, stderr)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	w.AssertRestarted(rack1Pods, before, "restart")
}
