package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// oneDC is a CassKop cluster of one datacenter, two racks of two nodes, RF 2.
func oneDC(t *testing.T) *world.World {
	return world.New(t, world.Opts{Racks: []string{"rack1", "rack2"}, Topology: true, Nodes: 2, RF: 2, Operator: true})
}

func addDC(extra ...string) []string {
	return append([]string{"add-dc", "demo", "-n", "cassandra", "--dc", "dc2", "--nodes", "1", "--rebuild-from", "dc1", "--yes", "--poll-interval", "10ms"}, extra...)
}

// rebuildsOf counts each pod's `nodetool rebuild` in the exec log, and the keyspaces
// altered.
func rebuildsOf(w *world.World) (rebuilds, alters map[string]int) {
	rebuilds, alters = map[string]int{}, map[string]int{}
	for _, e := range w.ExecLog() {
		f := strings.Fields(e)
		switch {
		case strings.Contains(e, "ALTER KEYSPACE"):
			alters[f[4]]++
		case strings.Contains(e, " rebuild -- "):
			rebuilds[f[0]]++
		}
	}
	return rebuilds, alters
}

// The refusals that need no plan: no source on CassKop, no --nodes, -f with --dc.
func TestAddDCRefusals(t *testing.T) {
	w := oneDC(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"add-dc", "demo", "-n", "cassandra", "--dc", "dc2", "--nodes", "1"}, "--rebuild-from"},
		{[]string{"add-dc", "demo", "-n", "cassandra", "--dc", "dc2", "--rebuild-from", "dc1"}, "--nodes"},
		{[]string{"add-dc", "demo", "-n", "cassandra", "--dc", "dc2", "--nodes", "1", "-f", "x.yaml"}, "either -f"},
		{[]string{"add-dc", "demo", "-n", "cassandra", "--dc", "dc2", "--nodes", "1", "--rebuild-from", "dc9"}, "no such datacenter"},
	} {
		if _, stderr, code, _ := run(w, 0, c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 naming %q\n%s", c.args, code, c.want, stderr)
		}
	}
	if n := w.SideEffects(); n != 0 {
		t.Fatalf("%d side effects on refusals", n)
	}
}

// With --alter-keyspaces the plugin adds dc2 to the topology, waits until CassKop made
// its nodes and they are UN, gives dc2 its replicas in every keyspace of dc1 (once
// each), and rebuilds each dc2 node from dc1 exactly once.
func TestAddDCCassKop(t *testing.T) {
	w := oneDC(t)
	_, stderr, code, _ := run(w, 0, addDC("--alter-keyspaces")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	rebuilds, alters := rebuildsOf(w)
	if len(alters) != 4 {
		t.Errorf("keyspaces altered: %v (want the 4 of dc1, once each)", alters)
	}
	for ks, n := range alters {
		if n != 1 {
			t.Errorf("keyspace %s altered %d times", ks, n)
		}
	}
	if len(rebuilds) != 2 {
		t.Errorf("rebuilds: %v (want each of dc2's 2 nodes once)", rebuilds)
	}
	for pod, n := range rebuilds {
		if !strings.Contains(pod, "dc2") || n != 1 {
			t.Errorf("rebuild of %s: %d times", pod, n)
		}
	}
	if got := topologyDCs(w); len(got) != 2 || got[1] != "dc2" {
		t.Errorf("topology: %v", got)
	}
	dc2 := 0
	for _, n := range ringOf(t, w, "demo-dc1-rack1-0") {
		if strings.HasPrefix(n, "dc2/") {
			dc2++
			if !strings.HasSuffix(n, "/UN") {
				t.Errorf("dc2 node %s", n)
			}
		}
	}
	if dc2 != 2 {
		t.Errorf("dc1's ring lists %d nodes of dc2, want 2", dc2)
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
	if w.HasCheckpoint() {
		t.Error("checkpoint left")
	}
}

// Without --alter-keyspaces the run stops once dc2 joined (exit 3, the checkpoint
// kept), naming each statement; once they ran, resume rebuilds the nodes.
func TestAddDCStopsForKeyspaces(t *testing.T) {
	w := oneDC(t)
	_, stderr, code, _ := run(w, 0, addDC()...)
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s", code, stderr)
	}
	want := "ALTER KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '2', 'dc2': '2'};"
	if !strings.Contains(stderr, want) || !w.HasCheckpoint() {
		t.Fatalf("stop lacks %q (or the checkpoint)\n%s", want, stderr)
	}
	if rebuilds, _ := rebuildsOf(w); len(rebuilds) != 0 {
		t.Fatalf("rebuilt before the keyspaces: %v", rebuilds)
	}
	for _, ks := range []string{"system_auth", "system_distributed", "system_traces", "app"} {
		stmt := "ALTER KEYSPACE " + ks + " WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '2', 'dc2': '2'}"
		if _, errOut, err := w.Exec(context.Background(), "demo-dc1-rack1-0", []string{"cqlsh", "-e", stmt}); err != nil {
			t.Fatalf("%s: %v %s", stmt, err, errOut)
		}
	}
	_, stderr, code, _ = run(w, 0, "resume", "demo", "-n", "cassandra", "--yes", "--poll-interval", "10ms")
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	if rebuilds, _ := rebuildsOf(w); len(rebuilds) != 2 {
		t.Errorf("rebuilds after resume: %v", rebuilds)
	}
}

// dc2YAML is a CassandraDatacenter dc2 of the cluster demo: one rack of two nodes.
const dc2YAML = `apiVersion: cassandra.datastax.com/v1beta1
kind: CassandraDatacenter
metadata:
  name: dc2
spec:
  clusterName: demo
  serverType: cassandra
  serverVersion: "4.1.5"
  size: 2
  racks:
  - name: rack1
`

// dc2Manifest writes dc2YAML once per test binary and returns its path.
var dc2Manifest = sync.OnceValue(func() string {
	f := filepath.Join(os.TempDir(), fmt.Sprintf("kcass-dc2-%d.yaml", os.Getpid()))
	if err := os.WriteFile(f, []byte(dc2YAML), 0o600); err != nil {
		panic(err)
	}
	return f
})

// On cass-operator the new CassandraDatacenter comes from -f; each of its pods is
// rebuilt by exactly one rebuild task naming it.
func TestAddDCCassOperator(t *testing.T) {
	w := world.New(t, world.Opts{CassOperator: true, Nodes: 2, RF: 2})
	file := dc2Manifest()
	_, stderr, code, _ := drun(w, 0, "add-dc", "dc1", "-n", "cassandra", "-f", file, "--alter-keyspaces", "--yes", "--poll-interval", "10ms")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if _, ok := w.Datacenter("dc2"); !ok {
		t.Fatal("no CassandraDatacenter dc2")
	}
	dc2 := 0
	for _, n := range ringOf(t, w, "demo-dc1-rack1-sts-0") {
		if strings.HasPrefix(n, "dc2/") {
			dc2++
		}
	}
	if dc2 != 2 {
		t.Errorf("dc1's ring lists %d nodes of dc2, want 2", dc2)
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
}

// Abort of an add-dc stopped before its rebuilds ends it: the datacenter and its nodes
// stay, the abort names the nodes left to rebuild, nothing is rebuilt or removed.
func TestAddDCAbortKeepsWhatJoined(t *testing.T) {
	w := oneDC(t)
	if _, stderr, code, _ := run(w, 0, addDC()...); code != 3 {
		t.Fatalf("exit %d, want 3\n%s", code, stderr)
	}
	_, stderr, code, _ := run(w, 0, "abort", "demo", "-n", "cassandra", "--yes")
	if code != 0 {
		t.Fatalf("abort: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "not rebuilt yet: demo-dc2-rack1-0, demo-dc2-rack2-0") {
		t.Errorf("abort does not name the nodes left to rebuild:\n%s", stderr)
	}
	if rebuilds, _ := rebuildsOf(w); len(rebuilds) != 0 {
		t.Errorf("rebuilt: %v", rebuilds)
	}
	if got := topologyDCs(w); len(got) != 2 {
		t.Errorf("topology after abort: %v (dc2 stays)", got)
	}
	if w.HasCheckpoint() {
		t.Error("checkpoint left")
	}
	if r := w.DeploymentReplicas("casskop"); r != 1 {
		t.Errorf("CassKop at %d replicas", r)
	}
}
