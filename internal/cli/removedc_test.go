package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// twoDCs is a CassKop cluster of two datacenters, two racks of two nodes each, every
// keyspace replicating to both (RF 2 in each).
func twoDCs(t *testing.T) *world.World {
	return world.New(t, world.Opts{DCs: []string{"dc1", "dc2"}, Racks: []string{"rack1", "rack2"}, Nodes: 2, RF: 2, Operator: true})
}

func removeDC(extra ...string) []string {
	return append([]string{"remove-dc", "demo", "-n", "cassandra", "--dc", "dc2", "--yes"}, extra...)
}

// ringOf reads the ring from pod through the simulated Cassandra.
func ringOf(t *testing.T, w *world.World, pod string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := w.Cass.RunInput(context.Background(), pod, []string{"status"}, nil, &out, &errb); code != 0 {
		t.Fatalf("status from %s: exit %d %s", pod, code, errb.String())
	}
	r, err := nodetool.ParseStatus(out.String())
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, n := range r.Nodes {
		nodes = append(nodes, n.DC+"/"+n.Address+"/"+n.Code())
	}
	return nodes
}

func topologyDCs(w *world.World) []string {
	dcs, _, _ := unstructured.NestedSlice(w.CR().Object, "spec", "topology", "dc")
	var out []string
	for _, d := range dcs {
		out = append(out, fmt.Sprint(d.(map[string]any)["name"]))
	}
	return out
}

// Without --alter-keyspaces, keyspaces that replicate to the datacenter refuse the
// removal, naming each with the exact statement; nothing changes.
func TestRemoveDCRefusesKeyspaces(t *testing.T) {
	w := twoDCs(t)
	_, stderr, code, _ := run(w, 0, removeDC()...)
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s", code, stderr)
	}
	for _, ks := range []string{"system_auth", "system_distributed", "system_traces", "app"} {
		if want := "ALTER KEYSPACE " + ks + " WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '2'};"; !strings.Contains(stderr, want) {
			t.Errorf("refusal lacks %q:\n%s", want, stderr)
		}
	}
	if n := w.SideEffects(); n != 0 {
		t.Fatalf("%d side effects on a refusal", n)
	}
}

// The refusals that need no world: a rack, no datacenter named, the only datacenter.
func TestRemoveDCRefusals(t *testing.T) {
	w := twoDCs(t)
	if _, stderr, code, _ := run(w, 0, "remove-dc", "demo", "-n", "cassandra", "--dc", "dc2", "--rack", "rack1"); code != 2 || !strings.Contains(stderr, "migrate through a new datacenter") {
		t.Fatalf("--rack: exit %d\n%s", code, stderr)
	}
	if _, stderr, code, _ := run(w, 0, "remove-dc", "demo", "-n", "cassandra"); code != 2 || !strings.Contains(stderr, "--dc") {
		t.Fatalf("no --dc: exit %d\n%s", code, stderr)
	}
	one := world.New(t, world.Opts{DCs: []string{"dc1"}, Topology: true, Racks: []string{"rack1"}, Nodes: 2, Operator: true})
	if _, stderr, code, _ := run(one, 0, "remove-dc", "demo", "-n", "cassandra", "--dc", "dc1", "--yes"); code != 3 || !strings.Contains(stderr, "only datacenter") {
		t.Fatalf("only DC: exit %d\n%s", code, stderr)
	}
	if w.SideEffects()+one.SideEffects() != 0 {
		t.Fatal("a refusal changed the world")
	}
}

// With --alter-keyspaces the plugin drops dc2 from every keyspace (once each), waits
// for schema agreement, decommissions every node of dc2 once, sets its count to 0,
// restores CassKop, takes dc2 out of the topology and sees CassKop delete its
// StatefulSets; the ring of dc1 lists no node of dc2.
func TestRemoveDCCassKop(t *testing.T) {
	w := twoDCs(t)
	_, stderr, code, _ := run(w, 0, removeDC("--alter-keyspaces")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	alters, decommissions := map[string]int{}, map[string]int{}
	for _, e := range w.ExecLog() {
		f := strings.Fields(e)
		switch {
		case strings.Contains(e, "ALTER KEYSPACE"):
			alters[f[4]]++
		case len(f) > 1 && f[len(f)-1] == "decommission":
			decommissions[f[0]]++
		}
	}
	if len(alters) != 4 {
		t.Errorf("keyspaces altered: %v (want the 4 that replicated to dc2, once each)", alters)
	}
	for ks, n := range alters {
		if n != 1 {
			t.Errorf("keyspace %s altered %d times", ks, n)
		}
	}
	if len(decommissions) != 4 {
		t.Errorf("decommissions: %v (want each of dc2's 4 nodes once)", decommissions)
	}
	for pod, n := range decommissions {
		if !strings.Contains(pod, "dc2") || n != 1 {
			t.Errorf("decommission of %s: %d times", pod, n)
		}
	}
	if got := topologyDCs(w); len(got) != 1 || got[0] != "dc1" {
		t.Errorf("topology: %v", got)
	}
	for _, n := range ringOf(t, w, "demo-dc1-rack1-0") {
		if strings.HasPrefix(n, "dc2/") {
			t.Errorf("dc1's ring still lists %s", n)
		}
	}
	for _, p := range append(w.PodNames(), w.PVCNames()...) {
		if strings.Contains(p, "dc2") {
			t.Errorf("%s left", p)
		}
	}
	if r := w.DeploymentReplicas("casskop"); r != 1 {
		t.Errorf("CassKop at %d replicas", r)
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
	if w.HasCheckpoint() {
		t.Error("checkpoint left")
	}
}

// On Cassandra 5.0 system_auth must name every datacenter with nodes: remove-dc drops
// dc2 from the other keyspaces first, keeps it in system_auth while dc2's nodes leave
// (the decommissions the replication check would refuse for system_auth alone run
// with --force), and drops it from system_auth once no node of dc2 is in the ring.
// Each keyspace is altered once, system_auth after every decommission; each node is
// decommissioned once.
func TestRemoveDCCassKop50(t *testing.T) {
	w := world.New(t, world.Opts{DCs: []string{"dc1", "dc2"}, Racks: []string{"rack1", "rack2"}, Nodes: 2, RF: 2, Operator: true, Version: "5.0"})
	_, stderr, code, _ := run(w, 0, removeDC("--alter-keyspaces")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	alters, decommissions := map[string]int{}, map[string]int{}
	authAt, lastDecommission := -1, -1
	var forced []bool
	for i, e := range w.ExecLog() {
		f := strings.Fields(e)
		switch {
		case strings.Contains(e, "ALTER KEYSPACE"):
			alters[f[4]]++
			if f[4] == "system_auth" {
				authAt = i
			}
		case len(f) > 1 && f[1] == "decommission":
			decommissions[f[0]]++
			lastDecommission = i
			forced = append(forced, f[len(f)-1] == "--force")
		}
	}
	// RF 2 in dc2: the check refuses from N = 2 on, the last two decommissions.
	if fmt.Sprint(forced) != "[false false true true]" {
		t.Errorf("--force per decommission: %v, want the last two only:\n%s", forced, strings.Join(w.ExecLog(), "\n"))
	}
	if len(alters) != 4 {
		t.Errorf("keyspaces altered: %v (want the 4 that replicated to dc2, once each)", alters)
	}
	for ks, n := range alters {
		if n != 1 {
			t.Errorf("keyspace %s altered %d times", ks, n)
		}
	}
	if authAt < lastDecommission {
		t.Errorf("system_auth altered at %d, before the last decommission (%d):\n%s", authAt, lastDecommission, strings.Join(w.ExecLog(), "\n"))
	}
	if len(decommissions) != 4 {
		t.Errorf("decommissions: %v (want each of dc2's 4 nodes once)", decommissions)
	}
	for pod, n := range decommissions {
		if !strings.Contains(pod, "dc2") || n != 1 {
			t.Errorf("decommission of %s: %d times", pod, n)
		}
	}
	if got := topologyDCs(w); len(got) != 1 || got[0] != "dc1" {
		t.Errorf("topology: %v", got)
	}
	for _, n := range ringOf(t, w, "demo-dc1-rack1-0") {
		if strings.HasPrefix(n, "dc2/") {
			t.Errorf("dc1's ring still lists %s", n)
		}
	}
	if r := w.DeploymentReplicas("casskop"); r != 1 {
		t.Errorf("CassKop at %d replicas", r)
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
	if w.HasCheckpoint() {
		t.Error("checkpoint left")
	}
}

// On 5.0, a run killed at every side effect in turn, then resumed: each keyspace is
// altered once (system_auth after every decommission), each node decommissioned once.
func TestRemoveDCResume50(t *testing.T) {
	for k := 1; ; k++ {
		w := world.New(t, world.Opts{DCs: []string{"dc1", "dc2"}, Racks: []string{"rack1", "rack2"}, Nodes: 2, RF: 2, Operator: true, Version: "5.0"})
		if _, _, _, crashed := run(w, k, removeDC("--alter-keyspaces")...); !crashed {
			if k < 8 {
				t.Fatalf("the run ended at side effect %d", k)
			}
			return
		}
		if _, stderr, code, _ := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 {
			t.Fatalf("killed at side effect %d, resume: exit %d\n%s", k, code, stderr)
		}
		alters, decommissions := map[string]int{}, map[string]int{}
		authAt, lastDecommission := -1, -1
		for i, e := range w.ExecLog() {
			f := strings.Fields(e)
			switch {
			case strings.Contains(e, "ALTER KEYSPACE"):
				alters[f[4]]++
				if f[4] == "system_auth" {
					authAt = i
				}
			case len(f) > 1 && f[1] == "decommission":
				decommissions[f[0]]++
				lastDecommission = i
			}
		}
		if len(alters) != 4 || len(decommissions) != 4 || authAt < lastDecommission {
			t.Fatalf("killed at side effect %d: alters %v, decommissions %v, system_auth at %d, last decommission at %d", k, alters, decommissions, authAt, lastDecommission)
		}
		for what, n := range sumCounts(alters, decommissions) {
			if n != 1 {
				t.Errorf("killed at side effect %d: %s %d times:\n%s", k, what, n, strings.Join(w.ExecLog(), "\n"))
			}
		}
		if got := topologyDCs(w); len(got) != 1 || w.HasCheckpoint() || w.DeploymentReplicas("casskop") != 1 {
			t.Fatalf("killed at side effect %d: topology %v, checkpoint %v", k, got, w.HasCheckpoint())
		}
	}
}

// sumCounts adds two tallies (keys apart: keyspaces and pods).
func sumCounts(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range a {
		out[k] += v
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}

// On 5.0 without --alter-keyspaces, system_auth cannot be changed by hand while dc2
// has nodes: the refusal says so and names --alter-keyspaces; nothing changes.
func TestRemoveDCRefusesAuth50(t *testing.T) {
	w := world.New(t, world.Opts{DCs: []string{"dc1", "dc2"}, Racks: []string{"rack1", "rack2"}, Nodes: 2, RF: 2, Operator: true, Version: "5.0"})
	_, stderr, code, _ := run(w, 0, removeDC()...)
	if code != 3 || !strings.Contains(stderr, "Cassandra 5.0 refuses") || !strings.Contains(stderr, "--alter-keyspaces") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if n := w.SideEffects(); n != 0 {
		t.Fatalf("%d side effects on a refusal", n)
	}
}

// On cass-operator the plugin never pauses the operator: it drops dc2 from the
// keyspaces, annotates dc2's CassandraDatacenter decommission-on-delete, deletes it,
// and verifies each node leave the ring of dc1, then the resource and its claims gone.
func TestRemoveDCCassOperator(t *testing.T) {
	w := world.New(t, world.Opts{CassOperator: true, Nodes: 2, RF: 2, OtherDC: "dc2"})
	_, stderr, code, _ := drun(w, 0, "remove-dc", "dc2", "-n", "cassandra", "--dc", "dc2", "--alter-keyspaces", "--yes", "--poll-interval", "10ms")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if _, ok := w.Datacenter("dc2"); ok {
		t.Error("CassandraDatacenter dc2 left")
	}
	decommissions := 0
	for _, a := range w.OtherOperatorActions() {
		if a == standin.ActDecommission {
			decommissions++
		}
	}
	if decommissions != 2 {
		t.Errorf("the operator decommissioned %d nodes of dc2, want 2 (once each)", decommissions)
	}
	for _, n := range ringOf(t, w, "demo-dc1-rack1-sts-0") {
		if strings.HasPrefix(n, "dc2/") {
			t.Errorf("dc1's ring still lists %s", n)
		}
	}
	for _, p := range append(w.PodNames(), w.PVCNames()...) {
		if strings.Contains(p, "dc2") {
			t.Errorf("%s left", p)
		}
	}
	if _, ok := w.Datacenter("dc1"); !ok {
		t.Error("dc1 went too")
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
}

// On 5.0 cass-operator removes dc2's nodes only after the deletion of its resource,
// the operation's carrier: remove-dc refuses while system_auth replicates to dc2, and
// names the removal by hand (the statements, the deletion, system_auth's last).
func TestRemoveDCCassOperatorRefusesAuth50(t *testing.T) {
	w := world.New(t, world.Opts{CassOperator: true, Nodes: 2, RF: 2, OtherDC: "dc2", Version: "5.0"})
	_, stderr, code, _ := drun(w, 0, "remove-dc", "dc2", "-n", "cassandra", "--dc", "dc2", "--alter-keyspaces", "--yes", "--poll-interval", "10ms")
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s", code, stderr)
	}
	for _, want := range []string{"Cassandra 5.0 refuses", "ALTER KEYSPACE app WITH", "decommission-on-delete", "ALTER KEYSPACE system_auth WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '2'};"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("refusal lacks %q:\n%s", want, stderr)
		}
	}
	if n := w.SideEffects(); n != 0 {
		t.Fatalf("%d side effects on a refusal", n)
	}
}

// Interrupted after the keyspaces' change and before any node left: status shows the
// operation, abort ends it with the operator running and the datacenter whole, and
// says the keyspaces' change is kept.
func TestRemoveDCAbortBeforeDecommission(t *testing.T) {
	w := twoDCs(t)
	if _, stderr, _, crashed := run(w, 1, removeDC("--alter-keyspaces")...); !crashed {
		t.Fatalf("not interrupted at the first side effect\n%s", stderr)
	}
	stdout, stderr, code, _ := run(w, 0, "status", "demo", "-n", "cassandra")
	if code != 0 || !strings.Contains(stdout+stderr, "remove-dc") || !strings.Contains(stdout+stderr, "dc2") {
		t.Fatalf("status: exit %d\n%s%s", code, stdout, stderr)
	}
	_, stderr, code, _ = run(w, 0, "abort", "demo", "-n", "cassandra", "--yes")
	if code != 0 {
		t.Fatalf("abort: exit %d\n%s", code, stderr)
	}
	if w.HasCheckpoint() || w.DeploymentReplicas("casskop") != 1 {
		t.Fatalf("abort left a checkpoint or the operator paused\n%s", stderr)
	}
	if got := topologyDCs(w); len(got) != 2 {
		t.Fatalf("topology after abort: %v", got)
	}
	dc2 := 0
	for _, n := range ringOf(t, w, "demo-dc1-rack1-0") {
		if strings.HasPrefix(n, "dc2/") && strings.HasSuffix(n, "/UN") {
			dc2++
		}
	}
	if dc2 != 4 {
		t.Fatalf("dc2 nodes UN after abort: %d, want 4", dc2)
	}
	for _, e := range w.ExecLog() {
		if strings.HasSuffix(e, "decommission") {
			t.Fatalf("a node was decommissioned: %s", e)
		}
	}
}

// After a node started leaving, abort is refused (a datacenter half decommissioned
// cannot be given back) and resume finishes the removal.
func TestRemoveDCResumeAfterDecommission(t *testing.T) {
	w := twoDCs(t)
	var at int
	for k := 1; ; k++ {
		probe := twoDCs(t)
		if _, _, _, crashed := run(probe, k, removeDC("--alter-keyspaces")...); !crashed {
			t.Fatal("no decommission reached")
		}
		if log := probe.ExecLog(); len(log) > 0 && strings.HasSuffix(log[len(log)-1], "decommission") {
			at = k
			break
		}
	}
	if _, _, _, crashed := run(w, at, removeDC("--alter-keyspaces")...); !crashed {
		t.Fatal("not interrupted")
	}
	if _, stderr, code, _ := run(w, 0, "abort", "demo", "-n", "cassandra", "--yes"); code != 3 || !strings.Contains(stderr, "resume") {
		t.Fatalf("abort after a decommission: exit %d\n%s", code, stderr)
	}
	if _, stderr, code, _ := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	if got := topologyDCs(w); len(got) != 1 || w.HasCheckpoint() || w.DeploymentReplicas("casskop") != 1 {
		t.Fatalf("after resume: topology %v, checkpoint %v", got, w.HasCheckpoint())
	}
	decommissions := map[string]int{}
	for _, e := range w.ExecLog() {
		if f := strings.Fields(e); strings.HasSuffix(e, "decommission") {
			decommissions[f[0]]++
		}
	}
	for pod, n := range decommissions {
		if n != 1 {
			t.Errorf("%s decommissioned %d times", pod, n)
		}
	}
	if len(decommissions) != 4 {
		t.Errorf("decommissions: %v", decommissions)
	}
}
