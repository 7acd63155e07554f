package e2e

import (
	"context"
	"fmt"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// addDCScenarios are add-dc's cases on CassKop: dc1 running, dc2 added; CassKop played
// by the chart's Deployment and fixture.CassKopDCAdder (it creates a datacenter's
// StatefulSets once the datacenter is in spec.topology), new nodes started by the
// fixture.SimController. Registered in suite_test.go.
func addDCScenarios() []scenario {
	return []scenario{
		{name: "add-dc-standin", run: testAddDCStandIn},
		{name: "add-dc", run: testAddDC},
		{name: "add-dc-stop-for-keyspaces", run: testAddDCStopForKeyspaces},
		{name: "add-dc-sigkill-rebuild", run: testAddDCKillRebuild},
	}
}

// addDCArgs are add-dc's arguments for dc2 (one node per rack, the racks dc1's, rebuilt
// from dc1), with the suite's run flags.
func addDCArgs(cl *fixture.Cluster, extra ...string) []string {
	return append(append([]string{"add-dc", cl.Name, "--dc", "dc2", "--nodes", "1", "--rebuild-from", "dc1"}, extra...), runFlags...)
}

// newDC2Pods are the pods dc2 gets: one per rack of dc1.
func newDC2Pods(cl *fixture.Cluster) []fixture.Pod {
	var out []fixture.Pod
	for _, r := range cl.Opts.DCs[0].Racks {
		out = append(out, fixture.Pod{Name: fixture.PodName(cl.Name, "dc2", r, 0), DC: "dc2", Rack: r})
	}
	return out
}

// addDCStatement is the ALTER KEYSPACE giving ks one replica in dc2 next to dc1's one.
func addDCStatement(ks string) string {
	return "ALTER KEYSPACE " + ks + " WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '1', 'dc2': '1'}"
}

// dcAddition is one cluster of one datacenter with CassKop running and the pods the
// StatefulSet controller creates started as Cassandra nodes.
type dcAddition struct {
	cl      *fixture.Cluster
	op      string
	casskop *fixture.CassKopDCAdder
	sc      *fixture.SimController
}

func newDCAddition(t *testing.T, crd *fixture.CRDInfo, o fixture.SimOptions) *dcAddition {
	t.Helper()
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{
		DCs: []fixture.DC{{Name: "dc1", Racks: []string{"rack1", "rack2"}, Nodes: 1}},
		Sim: o,
	})
	op := startOperator(t, ns, crd)
	sc := startSimController(t, cl)
	ck := cl.StartCassKopDCAdder(op.Name)
	t.Cleanup(ck.Stop)
	return &dcAddition{cl: cl, op: op.Name, casskop: ck, sc: sc}
}

// testAddDCStandIn checks the stand-in the add-dc scenarios stand on: dc2 (racks r1 r2,
// one node each) appended to the topology by the CassKop adapter's AddDatacenter, on
// the real API server, gets one StatefulSet per rack, created once, whose pods turn
// Ready, whose racks' status goes Initializing then Running, and whose nodes join the
// ring UN in dc2 holding no data (no keyspace replicates to dc2).
func testAddDCStandIn(t *testing.T, crd *fixture.CRDInfo) {
	x := newDCAddition(t, crd, fixture.SimOptions{})
	cl, ns := x.cl, x.cl.Namespace
	ctx := context.Background()
	a := &casskop.Adapter{Clients: operator.Clients{Dynamic: suite.clients.Dyn, Kube: suite.clients.Kube}, API: operator.APIVersion{Version: "v2"}}
	want := operator.NewDatacenter{Name: "dc2", Racks: []string{"r1", "r2"}, NodesPerRack: 1}
	require.NoError(t, a.AddDatacenter(ctx, ns, cl.Name, string(cl.UID), "op-e2e", want))
	ok, err := a.AdditionRequested(ctx, ns, cl.Name, want)
	require.NoError(t, err)
	require.True(t, ok, "dc2 in the topology")

	kc := suite.clients.Kube
	var pods []string
	for _, r := range want.Racks {
		name := fixture.StatefulSetName(cl.Name, "dc2", r)
		pods = append(pods, name+"-0")
		waitFor(t, "StatefulSet "+name+" ready", 2*time.Minute, func(ctx context.Context) (bool, error) {
			s, err := kc.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return s.Status.ReadyReplicas == 1, fmt.Errorf("%d ready", s.Status.ReadyReplicas)
		})
	}
	waitFor(t, "dc2's racks Running", time.Minute, func(context.Context) (bool, error) {
		i := x.casskop.Initializing()
		return len(i) == 0, fmt.Errorf("initializing: %v", i)
	})
	waitFor(t, "dc2's nodes started", time.Minute, func(context.Context) (bool, error) {
		for _, p := range pods {
			if _, err := cl.Sim.Node(p); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	assert.Empty(t, casskop.Busy(cr), "CassKop idle once dc2's racks run")
	assert.ElementsMatch(t, []string{"StatefulSet " + cl.Name + "-dc2-r1", "StatefulSet " + cl.Name + "-dc2-r2"}, x.casskop.Created(), "each rack's StatefulSet created once")
	assert.Empty(t, x.casskop.Violations())
	assert.NoError(t, x.casskop.Err())

	r := cassandra(t, ns, time.Minute, "nodetool", podsOf(cl, "dc1")[0].Name, "--", "status")
	require.Equal(t, exitOK, r.Code, "%s", r)
	require.Contains(t, r.Stdout, "Datacenter: dc2", "%s", r.Stdout)
	for i, p := range pods {
		pod, err := kc.CoreV1().Pods(ns).Get(ctx, p, metav1.GetOptions{})
		require.NoError(t, err)
		assert.True(t, podReady(pod), "pod %s Ready", p)
		v, err := cl.Sim.Node(p)
		require.NoError(t, err)
		assert.Equal(t, "dc2", v.DC, "%s", p)
		assert.Equal(t, want.Racks[i], v.Rack, "%s", p)
		assert.Equal(t, fixture.EmptyNodeLoad, v.Load, "%s joined holding no data", p)
		assert.Regexp(t, `UN\s+`+regexp.QuoteMeta(pod.Status.PodIP)+`\s`, r.Stdout, "%s UN in the ring", p)
	}
	summary.markConverged(t)
}

// testAddDC: --dry-run prints the plan and changes nothing; the run then appends dc2 to
// the topology, CassKop (running throughout) makes its StatefulSets, its nodes join, every
// keyspace of dc1 gets a replica in dc2 once, each dc2 node is rebuilt from dc1 once.
func testAddDC(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "add-dc")
	x := newDCAddition(t, crd, fixture.SimOptions{})
	cl, ns := x.cl, x.cl.Namespace

	r := cassandra(t, ns, opTimeout, addDCArgs(cl, "--alter-keyspaces", "--dry-run")...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	out := r.Stdout + r.Stderr
	for _, p := range newDC2Pods(cl) {
		assert.Contains(t, out, p.Name, "the plan names %s:\n%s", p.Name, out)
	}
	cr, err := cl.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"dc1"}, topologyOf(cr), "--dry-run leaves the topology")
	_, hasCP := cr.GetAnnotations()[annCheckpoint]
	assert.False(t, hasCP, "--dry-run writes no checkpoint")
	assertSchemaVersion(t, cl, 0)
	assert.Empty(t, x.casskop.Created(), "CassKop made nothing")

	rr := recordReplicas(t, ns, x.op)
	r = cassandra(t, ns, opTimeout, addDCArgs(cl, "--alter-keyspaces")...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	t.Logf("add-dc (2 racks x 1 node) took %s", r.Duration.Round(time.Millisecond))
	assertDCAdded(t, x)
	for _, v := range rr.Values() {
		assert.NotZero(t, v, "CassKop never paused: it makes the new datacenter (replicas seen %v)", rr.Values())
	}
	summary.markConverged(t)
}

// testAddDCStopForKeyspaces: without --alter-keyspaces the run stops once dc2 joined
// (exit 3, the checkpoint kept), naming every statement, before any rebuild; once they
// ran (cqlsh in a pod of dc1), resume rebuilds each node: the same end as with
// --alter-keyspaces.
func testAddDCStopForKeyspaces(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "add-dc")
	requireCommand(t, "resume")
	x := newDCAddition(t, crd, fixture.SimOptions{})
	cl, ns := x.cl, x.cl.Namespace

	r := cassandra(t, ns, opTimeout, addDCArgs(cl)...)
	require.Equal(t, exitRefused, r.Code, "%s", r)
	for _, ks := range replicatedKeyspaces {
		assert.Contains(t, r.Stdout+r.Stderr, addDCStatement(ks)+";", "the stop names the statement for %s:\n%s", ks, r)
	}
	_, ok := readCheckpoint(t, cl)
	require.True(t, ok, "checkpoint kept by the stop")
	for _, p := range newDC2Pods(cl) {
		v, err := cl.Sim.Node(p.Name)
		require.NoError(t, err, "%s joined before the stop", p.Name)
		assert.Equal(t, 0, v.RebuildsStarted, "no rebuild of %s before the keyspaces", p.Name)
	}
	assertSchemaVersion(t, cl, 0)

	src := podsOf(cl, "dc1")[0].Name
	for _, ks := range replicatedKeyspaces {
		r := kubectl(t, 30*time.Second, "-n", ns, "exec", src, "-c", "cassandra", "--", "cqlsh", "-e", addDCStatement(ks))
		require.Equal(t, exitOK, r.Code, "%s", r)
	}
	r = resume(t, cl)
	t.Logf("resume took %s", r.Duration.Round(time.Millisecond))
	assertDCAdded(t, x)
	summary.markConverged(t)
}

// testAddDCKillRebuild: the plugin is SIGKILLed while a dc2 node really rebuilds (the
// checkpoint says its rebuild started and the simulated node streams); resume finds it
// rebuilding or rebuilt and does not ask again: each node rebuilt once, the same end as
// an uninterrupted run.
func testAddDCKillRebuild(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "add-dc")
	requireCommand(t, "resume")
	x := newDCAddition(t, crd, fixture.SimOptions{RebuildTime: 3 * time.Second})
	cl := x.cl
	p := startCassandra(t, cl.Namespace, addDCArgs(cl, "--alter-keyspaces")...)
	var step Step
	found := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = watchCR(ctx, cl, opTimeout, func(cr *unstructured.Unstructured) bool {
			cp, ok, _ := parseCheckpoint(cr)
			if !ok {
				return false
			}
			for _, s := range cp.Steps {
				if startedKind("rebuild", "")(s) {
					step = s
					close(found)
					return true
				}
			}
			return false
		})
	}()
	select {
	case <-found:
	case <-p.Done():
		t.Fatalf("the plugin ended before a rebuild started:\n%s", p.Wait(t, opTimeout))
	case <-time.After(opTimeout):
		t.Fatalf("no rebuild started within %s:\n%s", opTimeout, p.Stderr())
	}
	waitFor(t, step.Pod+" rebuilding", opTimeout, func(context.Context) (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("plugin exited: %s", p.Stderr())
		}
		v, err := cl.Sim.Node(step.Pod)
		if err != nil {
			return false, err
		}
		return v.Rebuilding, fmt.Errorf("%s not rebuilding (%d started)", step.Pod, v.RebuildsStarted)
	})
	r := p.Kill(t)
	require.Equal(t, 128+int(syscall.SIGKILL), r.Code, "killed: %s", r)
	summary.crash("add-dc rebuild")
	_, ok := readCheckpoint(t, cl)
	require.True(t, ok, "checkpoint kept by the crash")
	r = resume(t, cl)
	t.Logf("resume took %s", r.Duration.Round(time.Millisecond))
	assertDCAdded(t, x)
	summary.markConverged(t)
}

// assertDCAdded checks the end of dc2's addition: in the topology after dc1, no
// checkpoint, last-operation succeeded, CassKop running and seen making each of dc2's
// StatefulSets once (no topology change it would refuse), every keyspace altered once
// and replicating once to dc2, each dc2 node Ready, UN in the ring read from dc1 and
// rebuilt exactly once, holding data, and dc1's nodes untouched.
func assertDCAdded(t *testing.T, x *dcAddition) {
	t.Helper()
	ctx := context.Background()
	cl, kc, ns := x.cl, suite.clients.Kube, x.cl.Namespace

	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"dc1", "dc2"}, topologyOf(cr), "dc2 appended to spec.topology")
	_, hasCP := cr.GetAnnotations()[annCheckpoint]
	assert.False(t, hasCP, "checkpoint removed at the end")
	if lo := lastOperation(t, cr); assert.NotNil(t, lo, "%s written at the end", annLastOperation) {
		assert.Equal(t, "succeeded", lo["result"], "last-operation result")
	}
	assertOperatorRestored(t, ns, x.op)
	var want []string
	for _, p := range newDC2Pods(cl) {
		want = append(want, "StatefulSet "+fixture.StatefulSetName(cl.Name, "dc2", p.Rack))
	}
	assert.ElementsMatch(t, want, x.casskop.Created(), "CassKop made each StatefulSet of dc2 once, and nothing else")
	assert.Empty(t, x.casskop.Violations(), "no topology change CassKop would refuse")
	assert.NoError(t, x.casskop.Err())

	assertSchemaVersion(t, cl, len(replicatedKeyspaces))
	sc, err := cl.ReadSimSchema()
	require.NoError(t, err)
	for _, ks := range replicatedKeyspaces {
		assert.Equal(t, map[string]int{"dc1": 1, "dc2": 1}, sc.Keyspaces[ks], "keyspace %s", ks)
	}

	r := cassandra(t, ns, time.Minute, "nodetool", podsOf(cl, "dc1")[0].Name, "--", "status")
	require.Equal(t, exitOK, r.Code, "%s", r)
	for _, p := range newDC2Pods(cl) {
		pod, err := kc.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.True(t, podReady(pod), "pod %s Ready", p.Name)
		assert.Regexp(t, `UN\s+`+regexp.QuoteMeta(pod.Status.PodIP)+`\s`, r.Stdout, "%s UN in the ring", p.Name)
		v, err := cl.Sim.Node(p.Name)
		require.NoError(t, err)
		assert.Equal(t, p.Rack, v.Rack, "%s", p.Name)
		assert.Equal(t, 1, v.RebuildsStarted, "rebuilds started on %s", p.Name)
		assert.False(t, v.Rebuilding, "%s done rebuilding", p.Name)
		assert.NotEqual(t, fixture.EmptyNodeLoad, v.Load, "%s holds its share once rebuilt", p.Name)
	}
	for _, p := range podsOf(cl, "dc1") {
		v, err := cl.Sim.Node(p.Name)
		require.NoError(t, err)
		assert.Equal(t, 0, v.RebuildsStarted, "dc1 node %s never rebuilt", p.Name)
		assert.Equal(t, 0, v.DecommissionsStarted, "dc1 node %s never decommissioned", p.Name)
		assert.Equal(t, sim.ModeNormal, v.Mode, "%s", p.Name)
	}
}

// podReady: the pod's Ready condition is true.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
