package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// changeScenarios: the world changes while a run goes on (issue 15): a node goes down
// between two decommissions, a planned pod is deleted and re-created by its StatefulSet.
func changeScenarios() []scenario {
	return []scenario{
		{name: "change-node-down-mid-run", run: testChangeNodeDownMidRun},
		{name: "change-pod-deleted-mid-run", run: testChangePodDeletedMidRun},
	}
}

// holdNextDecommission slows every nodetool answer of pod (the next node to leave), so
// the run sits in that node's first checks while the test changes the world; release
// undoes it.
func holdNextDecommission(t *testing.T, cl *fixture.Cluster, pod string) (release func()) {
	t.Helper()
	require.NoError(t, cl.Sim.UpdateFault(pod, func(f *sim.Fault) { f.Slow = 3 * time.Second }))
	return func() { require.NoError(t, cl.Sim.UpdateFault(pod, func(f *sim.Fault) { f.Slow = 0 })) }
}

// waitClaimsGone waits until pod's data claim is deleted (or being deleted).
func waitClaimsGone(t *testing.T, cl *fixture.Cluster, pod string, p *Proc) {
	t.Helper()
	waitFor(t, "claims of "+pod+" deleted", opTimeout, func(ctx context.Context) (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("plugin exited: %s", p.Stderr())
		}
		c, err := suite.clients.Kube.CoreV1().PersistentVolumeClaims(cl.Namespace).Get(ctx, "data-"+pod, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && c.DeletionTimestamp != nil, nil
	})
}

// testChangeNodeDownMidRun: 3 → 1; node 0 goes down once the first node left. The
// second decommission must not start: the run waits, names the node, and stops with
// exit 4 after --stall-after (5 s). Node 0 back: resume finishes, one decommission per
// removed node.
func testChangeNodeDownMidRun(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3), Sim: fixture.SimOptions{DecommissionTime: time.Second}})
	first, second, reader := cl.Pods[2].Name, cl.Pods[1].Name, cl.Pods[0].Name
	g := newPVCGuard(t, ns)
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	waitDecommissioning(t, cl, first, p)
	release := holdNextDecommission(t, cl, second)
	waitClaimsGone(t, cl, first, p)
	require.NoError(t, cl.Sim.UpdateFault(reader, func(f *sim.Fault) { f.Down = true }))
	release()
	r := p.Wait(t, opTimeout)
	assert.Equal(t, exitInterrupted, r.Code, "the run stops, it does not decommission beside a down node: %s", r)
	assert.Contains(t, r.Stderr, "is DN", "the message names the down node:\n%s", r)
	assert.Contains(t, r.Stderr, "kubectl cassandra resume", "the message says how to go on:\n%s", r)
	v, err := cl.Sim.Node(second)
	require.NoError(t, err)
	assert.Equal(t, sim.ModeNormal, v.Mode, "%s did not start leaving", second)
	require.NoError(t, cl.Sim.UpdateFault(reader, func(f *sim.Fault) { f.Down = false }))
	resume(t, cl)
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 3, to: 1, decommissions: 1, exactAttempts: true})
	summary.markConverged(t)
}

// testChangePodDeletedMidRun: 3 → 1; the second node's pod is deleted (an eviction)
// while the first node leaves. Its StatefulSet re-creates it (new UID, same claims, the
// same node): the run carries on with it, records the new UID and finishes; no claim of
// a live pod is deleted (the PVC guard).
func testChangePodDeletedMidRun(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3), Sim: fixture.SimOptions{DecommissionTime: 2 * time.Second}})
	startSimController(t, cl)
	first, evicted := cl.Pods[2].Name, cl.Pods[1].Name
	g := newPVCGuard(t, ns)
	kc := suite.clients.Kube
	old, err := kc.CoreV1().Pods(ns).Get(context.Background(), evicted, metav1.GetOptions{})
	require.NoError(t, err)
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	waitDecommissioning(t, cl, first, p)
	kubectl(t, time.Minute, "delete", "pod", "-n", ns, evicted, "--wait=false")
	waitFor(t, evicted+" re-created", opTimeout, func(ctx context.Context) (bool, error) {
		np, err := kc.CoreV1().Pods(ns).Get(ctx, evicted, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && np.UID != old.UID, err
	})
	r := runToEnd(t, cl, p, 2)
	last := r[len(r)-1]
	require.Equal(t, exitOK, last.Code, "the run finishes with the re-created pod: %v", r)
	all := ""
	for _, x := range r {
		all += x.Stderr
	}
	assert.True(t, strings.Contains(all, "was re-created"), "the run reports the re-created pod:\n%s", all)
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 3, to: 1, decommissions: 1, exactAttempts: true})
	summary.markConverged(t)
}
