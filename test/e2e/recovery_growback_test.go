package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// testRacksAtDifferentSizesGrowBack (finding 6): a two-rack scale-down (--dc, 3 -> 2 per
// rack) with a running operator removes rack1's node, then Cassandra refuses rack2's
// (RF check): the racks now differ, which CassKop's one nodesPerRacks cannot keep. abort
// refuses, changes nothing and offers both ways forward; abort --grow-back grows rack1
// back to 3 under the same operation (a new node on new claims; nothing decommissioned)
// and ends consistent: both racks and nodesPerRacks at 3, the operator restored, no
// paused-by entry, one decommission in all. Three nodes a rack, not two: the fixture's
// seeds are the pods of ordinals 0 and 1, and a removed seed cannot be grown back while
// status.seedlist names it (steps.notSeed; CassKop does not prune the list).
func testRacksAtDifferentSizesGrowBack(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "abort")
	ctx := context.Background()
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: []fixture.DC{{Name: "dc1", Racks: []string{"rack1", "rack2"}, Nodes: 3}}})
	require.NoError(t, cl.SetSimJoinTime(regrownJoinTime))
	sc := startSimController(t, cl)
	d := startCassKopDeployment(t, ns)
	g := newPVCGuard(t, ns)
	removed, refused := fixture.PodName(cl.Name, "dc1", "rack1", 2), fixture.PodName(cl.Name, "dc1", "rack2", 2)
	require.NoError(t, cl.Sim.SetFault(refused, sim.Fault{RefuseRF: true}))

	r := cassandra(t, ns, opTimeout, append([]string{"scale", cl.Name, "--dc", "dc1", "--nodes", "2"}, runFlags...)...)
	require.Equal(t, exitRefused, r.Code, "Cassandra refuses rack2's node:\n%s", r)
	cp, ok := readCheckpoint(t, cl)
	require.True(t, ok, "the checkpoint is kept after the refusal")
	id := cp.OperationID

	before := cassandraObjects(t, cl)
	r = cassandra(t, ns, time.Minute, "abort", cl.Name, "--yes")
	require.Equal(t, exitRefused, r.Code, "abort with racks at different sizes:\n%s", r)
	assert.Contains(t, r.Stderr, "Finish rack rack2 first", "%s", r)
	assert.Contains(t, r.Stderr, "kubectl cassandra abort -n "+ns+" "+cl.Name+" --grow-back", "%s", r)
	assert.Equal(t, before, cassandraObjects(t, cl), "the refused abort changed nothing")
	old, err := cl.Sim.Node(removed)
	require.NoError(t, err)
	require.True(t, old.Left, "rack1's node left the ring")

	r = cassandra(t, ns, opTimeout, "abort", cl.Name, "--grow-back", "--yes")
	require.Equal(t, exitOK, r.Code, "abort --grow-back:\n%s", r)
	assert.Contains(t, r.Stderr, "growing the smaller racks of datacenter dc1 back to 3 nodes", "%s", r)

	kc := suite.clients.Kube
	for _, rack := range []string{"rack1", "rack2"} {
		sts, err := kc.AppsV1().StatefulSets(ns).Get(ctx, fixture.StatefulSetName(cl.Name, "dc1", rack), metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, int32(3), *sts.Spec.Replicas, "rack %s at 3", rack)
	}
	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	n, err := fixture.NodesPerRacks(cr, "dc1")
	require.NoError(t, err)
	assert.Equal(t, int64(3), n, "nodesPerRacks agrees with the StatefulSets")
	_, hasCP := cr.GetAnnotations()[annCheckpoint]
	assert.False(t, hasCP, "abort --grow-back ends the operation")
	if lo := lastOperation(t, cr); assert.NotNil(t, lo) {
		assert.Equal(t, id, lo["operationID"], "the same operation ends")
	}
	assertOperatorRestored(t, ns, d.Name)
	dep, err := kc.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, dep.Annotations[record.PausedByAnnotation], "no operation holds the operator paused")

	// rack1's regrown pod runs a new node (on new claims) that joined; nothing else moved.
	assert.Equal(t, []string{removed}, sc.Added(), "nodes added to the ring")
	assert.Equal(t, 1, old.DecommissionsStarted, "rack1's old node decommissioned once")
	for _, p := range cl.Pods {
		v, err := cl.Sim.Node(p.Name)
		require.NoError(t, err)
		assert.Equal(t, "UN", v.PeerCode, "node of %s", p.Name)
		assert.Equal(t, 0, v.DecommissionsStarted, "no decommission on the node of %s now", p.Name)
	}
	g.Check(t, cl)
	summary.markConverged(t)
}
