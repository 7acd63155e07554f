package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// removeDCScenarios are remove-dc's cases on CassKop: two datacenters, every keyspace
// replicating to both, dc2 removed; CassKop played by the chart's Deployment (paused and
// restored by the plugin) and fixture.CassKopDCRemover (it deletes a datacenter's
// StatefulSets and Services once the datacenter is out of spec.topology).
func removeDCScenarios() []scenario {
	return []scenario{
		{name: "remove-dc", run: testRemoveDC},
		{name: "remove-dc-sigkill-resume", run: testRemoveDCKillResume},
		{name: "remove-dc-abort-before-nodes", run: testRemoveDCAbort},
	}
}

// replicatedKeyspaces are the simulated cluster's NetworkTopologyStrategy keyspaces
// (test/sim keyspaces.go: the three system ones and the default user keyspace).
var replicatedKeyspaces = []string{"system_auth", "system_distributed", "system_traces", "app"}

// removeDCArgs are remove-dc's arguments for dc, with the suite's run flags.
func removeDCArgs(cl *fixture.Cluster, dc string, extra ...string) []string {
	return append(append([]string{"remove-dc", cl.Name, "--dc", dc}, extra...), runFlags...)
}

// dcRemoval is one cluster of two datacenters with CassKop running.
type dcRemoval struct {
	cl      *fixture.Cluster
	op      *appsv1.Deployment
	casskop *fixture.CassKopDCRemover
	g       *pvcGuard
}

func newDCRemoval(t *testing.T, crd *fixture.CRDInfo, dc2Racks []string, o fixture.SimOptions) *dcRemoval {
	t.Helper()
	requireCommand(t, "remove-dc")
	requireCommand(t, "resume")
	requireCommand(t, "abort")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{
		DCs: []fixture.DC{{Name: "dc1", Racks: []string{"rack1"}, Nodes: 2}, {Name: "dc2", Racks: dc2Racks, Nodes: 2}},
		Sim: o,
	})
	op := startOperator(t, ns, crd)
	ck := cl.StartCassKopDCRemover(op.Name)
	t.Cleanup(ck.Stop)
	return &dcRemoval{cl: cl, op: op, casskop: ck, g: newPVCGuard(t, ns)}
}

// testRemoveDC: without --alter-keyspaces the removal is refused naming each ALTER and
// nothing changes; --dry-run prints the plan and changes nothing; the run then drops dc2
// from every keyspace once, decommissions each of dc2's nodes once, and ends with dc2
// out of the topology, CassKop restored and seen deleting dc2's StatefulSets.
func testRemoveDC(t *testing.T, crd *fixture.CRDInfo) {
	x := newDCRemoval(t, crd, []string{"rack1", "rack2"}, fixture.SimOptions{})
	cl, ns := x.cl, x.cl.Namespace
	before := takeSnapshot(t, cl)

	r := cassandra(t, ns, opTimeout, removeDCArgs(cl, "dc2")...)
	require.Equal(t, exitRefused, r.Code, "%s", r)
	for _, ks := range replicatedKeyspaces {
		assert.Contains(t, r.Stderr, "ALTER KEYSPACE "+ks+" WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '1'};", "the refusal names the statement for %s:\n%s", ks, r)
	}
	assert.Contains(t, r.Stderr, "--alter-keyspaces", "the refusal names the way forward:\n%s", r)
	assertUnchanged(t, cl, before, true)
	assertSchemaVersion(t, cl, 0)
	assertOperatorRestored(t, ns, x.op.Name)

	r = cassandra(t, ns, opTimeout, removeDCArgs(cl, "dc2", "--alter-keyspaces", "--dry-run")...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	out := r.Stdout + r.Stderr
	for _, ks := range replicatedKeyspaces {
		assert.Contains(t, out, "keyspace "+ks+": drop datacenter dc2 from its replication", "%s", r)
	}
	for _, rack := range []string{"rack1", "rack2"} {
		assert.Contains(t, out, "rack "+rack+": 2 → 0 nodes", "%s", r)
	}
	assertUnchanged(t, cl, before, true)
	assertSchemaVersion(t, cl, 0)
	assertOperatorRestored(t, ns, x.op.Name)
	assert.Empty(t, x.casskop.Deleted(), "CassKop deleted nothing before the run")

	rr := recordReplicas(t, ns, x.op.Name)
	r = cassandra(t, ns, opTimeout, removeDCArgs(cl, "dc2", "--alter-keyspaces")...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	t.Logf("remove-dc (2 racks x 2 nodes) took %s", r.Duration.Round(time.Millisecond))
	assertDCRemoved(t, x, "dc2")
	waitFor(t, "the replica watch to see the restore", 10*time.Second, func(context.Context) (bool, error) {
		v := rr.Values()
		return len(v) > 0 && v[len(v)-1] == 1, fmt.Errorf("replicas seen: %v", v)
	})
	assert.Equal(t, []int32{1, 0, 1}, rr.Values(), "CassKop paused once for the nodes' removal, then restored")
	summary.markConverged(t)
}

// testRemoveDCKillResume: the plugin is SIGKILLed while dc2's first node is really
// leaving (the checkpoint says its decommission started and the simulated node is
// decommissioning); resume finds the node leaving, waits for it rather than asking
// again, and finishes: the same end as an uninterrupted run.
func testRemoveDCKillResume(t *testing.T, crd *fixture.CRDInfo) {
	x := newDCRemoval(t, crd, []string{"rack1"}, fixture.SimOptions{DecommissionTime: 3 * time.Second})
	cl := x.cl
	p := startCassandra(t, cl.Namespace, removeDCArgs(cl, "dc2", "--alter-keyspaces")...)
	s, killed := killInDecommission(t, p, cl, "")
	if !killed {
		t.Fatalf("the plugin ended before a decommission started:\n%s", p.Wait(t, opTimeout))
	}
	summary.crash("remove-dc decommission")
	require.True(t, strings.Contains(s.Pod, "-dc2-"), "the first decommission is of dc2: %s", s.Pod)
	v, err := cl.Sim.Node(s.Pod)
	require.NoError(t, err)
	t.Logf("SIGKILL during the decommission of %s (node %s)", s.Pod, v.Mode)
	_, ok := readCheckpoint(t, cl)
	require.True(t, ok, "checkpoint kept by the crash")
	r := resume(t, cl)
	t.Logf("resume took %s", r.Duration.Round(time.Millisecond))
	assertDCRemoved(t, x, "dc2")
	summary.markConverged(t)
}

// testRemoveDCAbort: the plugin is SIGKILLed with CassKop paused and no node of dc2
// leaving yet (every nodetool on dc2's pods answers after 45 s, the simulator's Slow
// fault, so the first decommission cannot start before the kill); abort restores
// CassKop, removes the checkpoint and leaves dc2 as it was (its keyspaces' change is
// kept, and said).
func testRemoveDCAbort(t *testing.T, crd *fixture.CRDInfo) {
	x := newDCRemoval(t, crd, []string{"rack1"}, fixture.SimOptions{})
	cl, ns := x.cl, x.cl.Namespace
	dc2 := podsOf(cl, "dc2")
	for _, pod := range dc2 {
		require.NoError(t, cl.Sim.UpdateFault(pod.Name, func(f *sim.Fault) { f.Slow = 45 * time.Second }))
	}
	before := cassandraObjects(t, cl)
	p := startCassandra(t, ns, removeDCArgs(cl, "dc2", "--alter-keyspaces")...)
	deps := suite.clients.Kube.AppsV1().Deployments(ns)
	waitFor(t, "CassKop paused by remove-dc", opTimeout, func(ctx context.Context) (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("plugin exited: %s", p.Stderr())
		}
		d, err := deps.Get(ctx, x.op.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return *d.Spec.Replicas == 0, fmt.Errorf("operator at %d replicas", *d.Spec.Replicas)
	})
	r := p.Kill(t)
	require.Equal(t, 128+int(syscall.SIGKILL), r.Code, "killed: %s", r)
	summary.crash("remove-dc paused")
	for _, pod := range dc2 {
		require.NoError(t, cl.Sim.UpdateFault(pod.Name, func(f *sim.Fault) { f.Slow = 0 }))
	}
	cp, ok := readCheckpoint(t, cl)
	require.True(t, ok, "checkpoint kept by the crash")
	for _, s := range cp.Steps {
		require.False(t, s.Kind == "decommission" && s.State != "pending", "decommission of %s %s at the kill: the crash point missed", s.Pod, s.State)
	}

	r = cassandra(t, ns, time.Minute, "abort", cl.Name, "--yes")
	require.Equal(t, exitOK, r.Code, "abort: %s", r)
	assert.Contains(t, r.Stdout+r.Stderr, "may no longer replicate to dc2", "abort says the keyspaces' change is kept:\n%s", r)
	assertOperatorRestored(t, ns, x.op.Name)
	cr, err := cl.Get(context.Background())
	require.NoError(t, err)
	_, hasCP := cr.GetAnnotations()[annCheckpoint]
	assert.False(t, hasCP, "checkpoint gone after abort")
	if lo := lastOperation(t, cr); assert.NotNil(t, lo, "last-operation written by abort") {
		assert.Equal(t, "aborted", lo["result"], "last-operation result")
	}
	assert.Equal(t, []string{"dc1", "dc2"}, topologyOf(cr), "dc2 still in the topology")
	n, err := fixture.NodesPerRacks(cr, "dc2")
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "dc2's nodesPerRacks unchanged")
	assert.Equal(t, before, cassandraObjects(t, cl), "no pod, PVC or StatefulSet size changed")
	// The keyspaces were changed before the pause, once each, and abort keeps that.
	assertSchemaVersion(t, cl, len(replicatedKeyspaces))
	for _, pod := range cl.Pods {
		v, err := cl.Sim.Node(pod.Name)
		require.NoError(t, err)
		assert.Equal(t, 0, v.DecommissionsStarted, "no decommission on %s", pod.Name)
		assert.Equal(t, sim.ModeNormal, v.Mode, "%s", pod.Name)
	}
	// CassKop, running again, has nothing to delete: dc2 is in its topology.
	assert.Empty(t, x.casskop.Deleted(), "CassKop deleted nothing")
	assert.Empty(t, x.casskop.Violations())
	assert.NoError(t, x.casskop.Err())
	assert.Empty(t, x.g.Deleted(), "no PVC deleted")
	x.g.Check(t, cl)
	summary.markConverged(t)
}

// assertDCRemoved checks the end of a removal of dc: out of the topology, no checkpoint,
// last-operation succeeded, CassKop restored and seen deleting each of dc's StatefulSets
// once (no removal it would refuse), dc's pods and claims gone and the others' intact,
// each node of dc decommissioned exactly once and the others untouched, every keyspace
// altered once and none replicating to dc, and the ring read from a node that stays
// (kubectl cassandra nodetool … status) listing no node of dc.
func assertDCRemoved(t *testing.T, x *dcRemoval, dc string) {
	t.Helper()
	ctx := context.Background()
	cl, kc, ns := x.cl, suite.clients.Kube, x.cl.Namespace

	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	assert.NotContains(t, topologyOf(cr), dc, "%s out of spec.topology", dc)
	_, hasCP := cr.GetAnnotations()[annCheckpoint]
	assert.False(t, hasCP, "checkpoint removed at the end")
	if lo := lastOperation(t, cr); assert.NotNil(t, lo, "%s written at the end", annLastOperation) {
		assert.Equal(t, "succeeded", lo["result"], "last-operation result")
	}
	assertOperatorRestored(t, ns, x.op.Name)

	var wantDeleted []string
	for _, d := range cl.Opts.DCs {
		for _, rack := range d.Racks {
			name := fixture.StatefulSetName(cl.Name, d.Name, rack)
			sts, err := kc.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
			if d.Name == dc {
				wantDeleted = append(wantDeleted, "StatefulSet "+name)
				assert.True(t, apierrors.IsNotFound(err), "StatefulSet %s deleted (err=%v)", name, err)
				continue
			}
			if assert.NoError(t, err, "StatefulSet %s kept", name) {
				assert.Equal(t, int32(d.Nodes), *sts.Spec.Replicas, "StatefulSet %s untouched", name)
			}
		}
	}
	assert.ElementsMatch(t, wantDeleted, x.casskop.Deleted(), "CassKop deleted each StatefulSet of %s once, and nothing else", dc)
	assert.Empty(t, x.casskop.Violations(), "no removal CassKop would refuse")
	assert.NoError(t, x.casskop.Err())

	for _, p := range cl.Pods {
		for _, name := range p.PVCs {
			if p.DC == dc {
				// Claims go asynchronously (pvc-protection): wait for the objects to go.
				waitFor(t, "PVC "+name+" deleted", 30*time.Second, func(ctx context.Context) (bool, error) {
					_, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
					return apierrors.IsNotFound(err), fmt.Errorf("PVC %s still there (err=%v)", name, err)
				})
				continue
			}
			pvc, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			if assert.NoError(t, err, "PVC %s of a kept pod", name) {
				assert.Nil(t, pvc.DeletionTimestamp, "PVC %s of a kept pod is not being deleted", name)
			}
		}
		_, err := kc.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if p.DC == dc {
			assert.True(t, apierrors.IsNotFound(err), "pod %s gone (err=%v)", p.Name, err)
		} else {
			assert.NoError(t, err, "pod %s kept", p.Name)
		}
		v, err := cl.Sim.Node(p.Name)
		require.NoError(t, err)
		if p.DC == dc {
			assert.Equal(t, 1, v.DecommissionsStarted, "decommissions started on %s (calls: %d)", p.Name, v.DecommissionCalls)
			assert.Equal(t, sim.ModeDecommissioned, v.Mode, "%s", p.Name)
		} else {
			assert.Equal(t, 0, v.DecommissionsStarted, "kept node %s never decommissioned", p.Name)
			assert.Equal(t, sim.ModeNormal, v.Mode, "kept node %s", p.Name)
		}
	}
	x.g.Check(t, cl)

	// One ALTER per keyspace (each bumps the schema version), none replicating to dc.
	assertSchemaVersion(t, cl, len(replicatedKeyspaces))
	sc, err := cl.ReadSimSchema()
	require.NoError(t, err)
	for ks, rf := range sc.Keyspaces {
		assert.NotContains(t, rf, dc, "keyspace %s no longer replicates to %s", ks, dc)
	}

	stay := podsOf(cl, "dc1")[0]
	r := cassandra(t, ns, time.Minute, "nodetool", stay.Name, "--", "status")
	require.Equal(t, exitOK, r.Code, "%s", r)
	assert.NotContains(t, r.Stdout, "Datacenter: "+dc, "the ring of %s:\n%s", stay.Name, r.Stdout)
	for _, p := range podsOf(cl, dc) {
		assert.NotContains(t, r.Stdout, " "+p.IP+" ", "the ring of %s lists %s (%s):\n%s", stay.Name, p.Name, p.IP, r.Stdout)
	}
	for _, p := range podsOf(cl, "dc1") {
		assert.Regexp(t, `UN\s+`+strings.ReplaceAll(p.IP, ".", `\.`)+`\s`, r.Stdout, "%s UN in the ring", p.Name)
	}
}

// assertSchemaVersion: the simulated schema changed want times (one per ALTER).
func assertSchemaVersion(t *testing.T, cl *fixture.Cluster, want int) {
	t.Helper()
	sc, err := cl.ReadSimSchema()
	require.NoError(t, err)
	assert.Equal(t, want, sc.Version, "ALTER KEYSPACE statements run")
}

// topologyOf names the datacenters of the CR's spec.topology, in order.
func topologyOf(cr *unstructured.Unstructured) []string {
	dcs, _, _ := unstructured.NestedSlice(cr.Object, "spec", "topology", "dc")
	var out []string
	for _, d := range dcs {
		if m, ok := d.(map[string]any); ok {
			out = append(out, fmt.Sprint(m["name"]))
		}
	}
	return out
}

// podsOf lists the fixture pods of dc.
func podsOf(cl *fixture.Cluster, dc string) []fixture.Pod {
	return slices.DeleteFunc(slices.Clone(cl.Pods), func(p fixture.Pod) bool { return p.DC != dc })
}
