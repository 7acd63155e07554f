package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// snapshot is what a refused or failed run must leave unchanged.
type snapshot struct {
	replicas map[string]int32
	pvcs     []string
	pods     []string
	crRV     string
}

func takeSnapshot(t *testing.T, cl *fixture.Cluster) snapshot {
	t.Helper()
	ctx := context.Background()
	kc := suite.clients.Kube
	s := snapshot{replicas: map[string]int32{}}
	stss, err := kc.AppsV1().StatefulSets(cl.Namespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, st := range stss.Items {
		s.replicas[st.Name] = *st.Spec.Replicas
	}
	pvcs, err := kc.CoreV1().PersistentVolumeClaims(cl.Namespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, p := range pvcs.Items {
		if p.DeletionTimestamp == nil {
			s.pvcs = append(s.pvcs, p.Name)
		}
	}
	pods, err := kc.CoreV1().Pods(cl.Namespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			s.pods = append(s.pods, p.Name)
		}
	}
	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	s.crRV = cr.GetResourceVersion()
	return s
}

// assertUnchanged: same StatefulSet sizes, pods and PVCs; with crUntouched, the CR was not
// written at all (a refusal happens before the checkpoint is written).
func assertUnchanged(t *testing.T, cl *fixture.Cluster, before snapshot, crUntouched bool) {
	t.Helper()
	after := takeSnapshot(t, cl)
	assert.Equal(t, before.replicas, after.replicas, "statefulset sizes unchanged")
	assert.ElementsMatch(t, before.pods, after.pods, "pods unchanged")
	assert.ElementsMatch(t, before.pvcs, after.pvcs, "PVCs unchanged")
	if crUntouched {
		assert.Equal(t, before.crRV, after.crRV, "the CR was not written")
	}
	for _, p := range cl.Pods {
		v, err := cl.Sim.Node(p.Name)
		require.NoError(t, err)
		assert.Equal(t, 0, v.DecommissionsStarted, "no decommission started on %s", p.Name)
	}
}

// operatorDeployment is a CassKop operator as its Helm chart installs it: CassKop 2.1's
// chart (Orange) or 2.3's (cscetbon), to match the CRD under test.
func operatorDeployment(crd *fixture.CRDInfo) *appsv1.Deployment {
	name, labels, image := "cassandra-operator", map[string]string{"app": "cassandra-operator", "operator": "cassandra"}, "orangeopensource/casskop:v2.1.0"
	if strings.HasPrefix(crd.Variant.Name, "cscetbon") {
		name, labels, image = "casskop", map[string]string{"app": "casskop", "name": "casskop"}, "ghcr.io/cscetbon/casskop:2.3.4"
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: name, Image: image,
					Env: []corev1.EnvVar{
						{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
						{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
						{Name: "OPERATOR_NAME", Value: "cassandra-operator"},
					},
				}}},
			},
		},
	}
}

// testRefuseOperatorRunning: with the operator running in the namespace the plugin refuses
// (exit 3) and changes nothing; once the operator is scaled to 0, the same command works.
func testRefuseOperatorRunning(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	converged := false
	summary.track(t, &converged)
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
	ctx := context.Background()
	deps := suite.clients.Kube.AppsV1().Deployments(ns)
	d, err := deps.Create(ctx, operatorDeployment(crd), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, "operator deployment available", time.Minute, func(ctx context.Context) (bool, error) {
		got, err := deps.Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.AvailableReplicas == 1, fmt.Errorf("available %d", got.Status.AvailableReplicas)
	})
	before := takeSnapshot(t, cl)
	r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	assert.Equal(t, exitRefused, r.Code, "%s", r)
	assert.Contains(t, strings.ToLower(r.Stderr), "operator", "the refusal names the operator:\n%s", r)
	assertUnchanged(t, cl, before, true)

	_, err = deps.UpdateScale(ctx, d.Name, &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 0}}, metav1.UpdateOptions{})
	require.NoError(t, err)
	waitFor(t, "operator scaled to 0", time.Minute, func(ctx context.Context) (bool, error) {
		got, err := deps.Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.Replicas == 0, fmt.Errorf("replicas %d", got.Status.Replicas)
	})
	g := newPVCGuard(t, ns)
	r = cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	require.Equal(t, exitOK, r.Code, "with the operator stopped:\n%s", r)
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 2, to: 1})
	converged = !t.Failed()
}

// testRefuseCassKopBusy: CassKop's status says a ScaleDown is in progress: refuse (exit 3),
// write nothing.
func testRefuseCassKopBusy(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	converged := false
	summary.track(t, &converged)
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2), Busy: true})
	before := takeSnapshot(t, cl)
	r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	assert.Equal(t, exitRefused, r.Code, "%s", r)
	assertUnchanged(t, cl, before, true)
	converged = !t.Failed()
}

// runToEnd runs a scale-down that may stop with an error (a fault), and resumes it until it
// succeeds (at most tries resumes). It returns the results.
func runToEnd(t *testing.T, cl *fixture.Cluster, p *Proc, tries int) []Result {
	t.Helper()
	var rs []Result
	r := p.Wait(t, opTimeout)
	rs = append(rs, r)
	for i := 0; r.Code != exitOK && i < tries; i++ {
		_, ok := readCheckpoint(t, cl)
		require.True(t, ok, "a failed run keeps its checkpoint:\n%s", r)
		summary.resumed()
		r = cassandra(t, cl.Namespace, opTimeout, resumeArgs(cl)...)
		rs = append(rs, r)
	}
	require.Equal(t, exitOK, r.Code, "did not converge after %d resumes:\n%s", tries, r)
	return rs
}

// testFaultRFRefusal: Cassandra refuses the decommission (not enough nodes for the RF).
// The plugin must stop with an error that says so, having destroyed nothing; once the
// cause is gone, the operation can be finished.
func testFaultRFRefusal(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
	converged := false
	summary.track(t, &converged)
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
	victim := cl.Pods[1].Name
	require.NoError(t, cl.Sim.SetFault(victim, sim.Fault{RefuseRF: true}))
	before := takeSnapshot(t, cl)
	r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	assert.Contains(t, []int{exitError, exitRefused}, r.Code, "%s", r)
	assert.Contains(t, strings.ToLower(r.Stderr), "replication factor", "the error carries Cassandra's reason:\n%s", r)
	assertUnchanged(t, cl, before, false)
	v, err := cl.Sim.Node(victim)
	require.NoError(t, err)
	assert.Equal(t, sim.ModeNormal, v.Mode)

	require.NoError(t, cl.Sim.SetFault(victim, sim.Fault{}))
	g := newPVCGuard(t, ns)
	if _, ok := readCheckpoint(t, cl); ok {
		resume(t, cl)
	} else {
		r = cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
		require.Equal(t, exitOK, r.Code, "%s", r)
	}
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 2, to: 1})
	converged = !t.Failed()
}

// testFaultStreamFailureRetry: the first decommission attempt fails while streaming (node
// stuck LEAVING); the retry (by the plugin, or by resume) succeeds.
func testFaultStreamFailureRetry(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
	converged := false
	summary.track(t, &converged)
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
	victim := cl.Pods[1].Name
	require.NoError(t, cl.Sim.SetFault(victim, sim.Fault{StreamFailures: 1}))
	g := newPVCGuard(t, ns)
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	rs := runToEnd(t, cl, p, 2)
	if rs[0].Code != exitOK {
		assert.Contains(t, strings.ToLower(rs[0].Stderr), "stream", "the failure says what failed:\n%s", rs[0])
	}
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 2, to: 1, decommissions: 2, exactAttempts: true})
	converged = !t.Failed()
}

// waitDecommissioning waits until the simulated node is running a decommission.
func waitDecommissioning(t *testing.T, cl *fixture.Cluster, pod string, p *Proc) {
	t.Helper()
	waitFor(t, pod+" decommissioning", opTimeout, func(context.Context) (bool, error) {
		if p != nil && p.Exited() {
			return false, fmt.Errorf("plugin exited: %s", p.Stderr())
		}
		v, err := cl.Sim.Node(pod)
		if err != nil {
			return false, err
		}
		return v.Decommissioning && !v.Left, fmt.Errorf("mode %s", v.Mode)
	})
}

// testFaultRestartMidDecommission: Cassandra restarts while leaving; it comes back NORMAL
// and must be decommissioned again before its pod is removed.
func testFaultRestartMidDecommission(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
	converged := false
	summary.track(t, &converged)
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2), Sim: fixture.SimOptions{DecommissionTime: 2 * time.Second}})
	victim := cl.Pods[1].Name
	g := newPVCGuard(t, ns)
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	waitDecommissioning(t, cl, victim, p)
	require.NoError(t, cl.Sim.Restart(victim))
	v, err := cl.Sim.Node(victim)
	require.NoError(t, err)
	require.Equal(t, sim.ModeNormal, v.Mode, "restarted node is NORMAL again")
	runToEnd(t, cl, p, 2)
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 2, to: 1, decommissions: 2, exactAttempts: true})
	converged = !t.Failed()
}

// testFaultEmptyRing: nodetool status prints nothing (exit 0) on every pod while the node
// leaves. An empty ring must never count as "the node left": the run waits (the rack is
// not shrunk), and proceeds once status reads normally again.
func testFaultEmptyRing(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	converged := false
	summary.track(t, &converged)
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
	victim := cl.Pods[1].Name
	g := newPVCGuard(t, ns)
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	waitDecommissioning(t, cl, victim, p)
	for _, pod := range cl.Pods {
		require.NoError(t, cl.Sim.SetFault(pod.Name, sim.Fault{EmptyRing: true}))
	}
	// Let the decommission finish, then watch the plugin for a while: no shrink may start.
	waitFor(t, victim+" decommissioned", time.Minute, func(context.Context) (bool, error) {
		v, err := cl.Sim.Node(victim)
		return err == nil && v.Mode == sim.ModeDecommissioned, err
	})
	const window = 4 * time.Second
	err := watchCR(context.Background(), cl, window, func(cr *unstructured.Unstructured) bool {
		cp, ok, _ := parseCheckpoint(cr)
		if !ok {
			return true // finished: certainly too early
		}
		for _, s := range cp.Steps {
			if s.Kind == "shrink-statefulset" && s.State != "pending" {
				return true
			}
		}
		return false
	})
	require.ErrorIs(t, err, context.DeadlineExceeded, "the plugin went past verify-left on an empty ring")
	require.False(t, p.Exited(), "the plugin keeps waiting on an unreadable ring:\n%s", p.Stderr())
	sts, err := suite.clients.Kube.AppsV1().StatefulSets(ns).Get(context.Background(), fixture.StatefulSetName(cl.Name, "dc1", "rack1"), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(2), *sts.Spec.Replicas, "not shrunk while the ring is unreadable")

	for _, pod := range cl.Pods {
		require.NoError(t, cl.Sim.SetFault(pod.Name, sim.Fault{}))
	}
	r := p.Wait(t, opTimeout)
	require.Equal(t, exitOK, r.Code, "%s", r)
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 2, to: 1})
	converged = !t.Failed()
}

// testFaultExecCut: the plugin dies while `nodetool decommission` runs (the exec session is
// cut; Cassandra keeps decommissioning server-side). resume must wait for that
// decommission, not start another one.
func testFaultExecCut(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
	converged := false
	summary.track(t, &converged)
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2), Sim: fixture.SimOptions{DecommissionTime: 2 * time.Second}})
	victim := cl.Pods[1].Name
	g := newPVCGuard(t, ns)
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	waitDecommissioning(t, cl, victim, p)
	p.Kill(t)
	summary.crash("exec-cut")
	v, err := cl.Sim.Node(victim)
	require.NoError(t, err)
	t.Logf("killed during decommission: node mode %s, decommissioning %v", v.Mode, v.Decommissioning)
	resume(t, cl)
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 2, to: 1})
	converged = !t.Failed()
}
