package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// regrownJoinTime is how long the regrown pod's new node bootstraps (short: the
// scenario only needs it to join before resume).
const regrownJoinTime = time.Second

// testRegrownPodThenResume (finding 2): a 3 -> 1 scale-down with a CassKop stand-in is
// SIGKILLed once node 1's decommission was sent (node 2 removed in full, its claims
// deleted). A human scales the paused operator back up: the stand-in grows the
// StatefulSet to nodesPerRacks (still 3), which re-creates pod 2 on new claims, and its
// new node joins the ring. The human pauses the operator again and runs resume: the
// regrown node is decommissioned (once) before its pod goes, its new claims are deleted,
// the run ends at 1 node with the operator restored and no paused-by entry left.
func testRegrownPodThenResume(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
	ctx := context.Background()
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3)})
	require.NoError(t, cl.SetSimJoinTime(regrownJoinTime))
	sc := startSimController(t, cl)
	d := startCassKopDeployment(t, ns)
	si := startStandin(t, cl, d.Name, 200*time.Millisecond)
	g := newPVCGuard(t, ns)
	second, third := fixture.PodName(cl.Name, "dc1", "rack1", 1), fixture.PodName(cl.Name, "dc1", "rack1", 2)

	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	killAt(t, p, cl, func(cp *Checkpoint) bool {
		if !slices.ContainsFunc(cp.Steps, startedKind("decommission", second)) {
			return false
		}
		// "started" is written before the exec: kill once Cassandra got it.
		waitFor(t, "decommission of "+second+" sent", 30*time.Second, func(context.Context) (bool, error) {
			v, err := cl.Sim.Node(second)
			if err != nil {
				return false, err
			}
			return v.DecommissionsStarted > 0, fmt.Errorf("%d decommissions started", v.DecommissionsStarted)
		})
		return true
	})
	summary.crash("scale-down/decommission (then regrown)")
	waitFor(t, second+" left the ring", opTimeout, func(context.Context) (bool, error) {
		v, err := cl.Sim.Node(second)
		if err != nil {
			return false, err
		}
		return v.Left, fmt.Errorf("mode %s", v.Mode)
	})
	old, err := cl.Sim.Node(third)
	require.NoError(t, err)
	require.True(t, old.Left, "node 2 was removed in full before the kill")
	require.Equal(t, 1, old.DecommissionsStarted, "node 2 decommissioned once by the killed run")

	// The human scales the operator back up; it regrows pod 2 on new claims, a new node.
	r := kubectl(t, time.Minute, "scale", "deployment", "-n", ns, d.Name, "--replicas=1")
	require.Equal(t, exitOK, r.Code, "kubectl scale the operator up: %s", r)
	waitFor(t, "the regrown "+third+" joined the ring", opTimeout, func(context.Context) (bool, error) {
		v, err := cl.Sim.Node(third)
		if err != nil {
			return false, err
		}
		return !v.Left && v.PeerCode == "UN", fmt.Errorf("mode %s, peers see %s", v.Mode, v.PeerCode)
	})
	require.Len(t, sc.UIDs(third), 2, "pod %s re-created once", third)
	r = kubectl(t, time.Minute, "scale", "deployment", "-n", ns, d.Name, "--replicas=0")
	require.Equal(t, exitOK, r.Code, "kubectl scale the operator down again: %s", r)
	_, _, grew := si.state()
	require.Len(t, grew, 1, "the stand-in grew the StatefulSet once, over pod 2: %v", grew)

	r = resume(t, cl)
	assert.Contains(t, r.Stderr, "pod "+third+" was re-created", "resume says what it found:\n%s", r)
	// Node 2's new node: decommissioned once, its claims deleted (assertConverged reads
	// the node now on pod 2); node 1's decommission was the killed run's, not redone.
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 3, to: 1})
	assertOperatorRestored(t, ns, d.Name)
	dep, err := suite.clients.Kube.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, dep.Annotations[record.PausedByAnnotation], "no operation holds the operator paused")
	_, _, grew = si.state()
	assert.Len(t, grew, 1, "the restored stand-in grew nothing back: %v", grew)
	summary.markConverged(t)
}
