package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/kinds"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// testFaultRefusalThenAbort (issue 15, "nothing stuck"): a 3 -> 1 scale-down with a
// running operator; Cassandra refuses the second decommission (RF check). The run stops
// with exit 3 naming resume, scale --force and abort; the refused step is pending with
// Cassandra's reason; the operator is still paused. abort then leaves the cluster
// consistent at what exists: the StatefulSet and nodesPerRacks at 2, the operator back at
// 1 replica, the checkpoint gone, last-operation "aborted after removing 1 of 2 nodes",
// one decommission in all.
func testFaultRefusalThenAbort(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "abort")
	ctx := context.Background()
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3)})
	d := startCassKopDeployment(t, ns)
	g := newPVCGuard(t, ns)
	first, refused := cl.Pods[2].Name, cl.Pods[1].Name
	require.NoError(t, cl.Sim.SetFault(refused, sim.Fault{RefuseRF: true}))

	r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	require.Equal(t, exitRefused, r.Code, "a refused decommission exits 3:\n%s", r)
	for _, want := range []string{"cassandra refused to decommission " + refused, "Not enough live nodes to maintain replication factor",
		"kubectl cassandra resume", "--force", "kubectl cassandra abort"} {
		assert.Contains(t, r.Stderr, want, "the refusal names the ways forward")
	}
	cp, ok := readCheckpoint(t, cl)
	require.True(t, ok, "the checkpoint is kept after a refusal")
	full, err := checkpoint.Decode(cp.Raw, "", kinds.Registry().Schemas())
	require.NoError(t, err)
	for _, s := range full.Steps {
		if s.ID == "decommission/"+refused {
			assert.Equal(t, record.StatePending, s.State, "the refused decommission is recorded as not started")
			assert.Contains(t, s.LastError, "Not enough live nodes", "the refusal is the step's last error")
		}
	}
	dep, err := suite.clients.Kube.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(0), *dep.Spec.Replicas, "the operator is still paused after the refusal")

	r = cassandra(t, ns, time.Minute, "abort", cl.Name, "--yes")
	require.Equal(t, exitOK, r.Code, "abort after the refusal:\n%s", r)
	assert.Contains(t, r.Stdout, "aborted after removing 1 of 2 nodes", "%s", r)

	sts, err := suite.clients.Kube.AppsV1().StatefulSets(ns).Get(ctx, fixture.StatefulSetName(cl.Name, "dc1", "rack1"), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(2), *sts.Spec.Replicas, "the StatefulSet keeps what exists")
	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	n, err := fixture.NodesPerRacks(cr, "dc1")
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "nodesPerRacks agrees with the StatefulSet")
	_, hasCP := cr.GetAnnotations()[annCheckpoint]
	assert.False(t, hasCP, "abort clears the checkpoint")
	if lo := lastOperation(t, cr); assert.NotNil(t, lo) {
		assert.Equal(t, "aborted", lo["result"])
		assert.Equal(t, "aborted after removing 1 of 2 nodes", lo["summary"])
	}
	assertOperatorRestored(t, ns, d.Name)
	for _, p := range cl.Pods {
		v, err := cl.Sim.Node(p.Name)
		require.NoError(t, err)
		want := 0
		if p.Name == first {
			want = 1
		}
		assert.Equal(t, want, v.DecommissionsStarted, "decommissions started on %s (calls %d)", p.Name, v.DecommissionCalls)
		if p.Name == refused {
			assert.Equal(t, sim.ModeNormal, v.Mode, "the refused node is untouched")
		}
	}
	if g != nil {
		g.Check(t, cl)
	}
	st := cassandra(t, ns, time.Minute, "status", cl.Name)
	assert.Equal(t, exitOK, st.Code, "%s", st)
	assert.False(t, strings.Contains(st.Stdout, "PAUSED"), "status shows no paused operator after abort:\n%s", st.Stdout)
	summary.markConverged(t)
}
