package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
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

// startOperator runs a CassKop operator Deployment (the chart's shape for the CRD under
// test) in ns and waits until its pod is available.
func startOperator(t *testing.T, ns string, crd *fixture.CRDInfo) *appsv1.Deployment {
	t.Helper()
	deps := suite.clients.Kube.AppsV1().Deployments(ns)
	d, err := deps.Create(context.Background(), operatorDeployment(crd), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, "operator deployment available", time.Minute, func(ctx context.Context) (bool, error) {
		got, err := deps.Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.AvailableReplicas == 1, fmt.Errorf("available %d", got.Status.AvailableReplicas)
	})
	return d
}

// replicaRecorder records the spec.replicas values a Deployment goes through.
type replicaRecorder struct {
	mu     sync.Mutex
	values []int32
}

func recordReplicas(t *testing.T, ns, name string) *replicaRecorder {
	t.Helper()
	rr := &replicaRecorder{}
	ctx, cancel := context.WithCancel(context.Background())
	deps := suite.clients.Kube.AppsV1().Deployments(ns)
	w, err := deps.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if d, ok := ev.Object.(*appsv1.Deployment); ok && d.Spec.Replicas != nil {
				rr.mu.Lock()
				if n := len(rr.values); n == 0 || rr.values[n-1] != *d.Spec.Replicas {
					rr.values = append(rr.values, *d.Spec.Replicas)
				}
				rr.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	return rr
}

func (rr *replicaRecorder) Values() []int32 {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return slices.Clone(rr.values)
}

// assertOperatorRestored: the operator Deployment is back at 1 replica.
func assertOperatorRestored(t *testing.T, ns, name string) {
	t.Helper()
	d, err := suite.clients.Kube.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(1), *d.Spec.Replicas, "operator Deployment %s restored", name)
}

// testOperatorPausedAndRestored: with a CassKop operator running in the namespace,
// --pause-operator=false refuses (exit 3) and changes nothing; by default the plugin scales
// the operator to 0 for the operation (CassKop would regrow the StatefulSet) and restores
// it at the end.
func testOperatorPausedAndRestored(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
	d := startOperator(t, ns, crd)
	before := takeSnapshot(t, cl)
	r := cassandra(t, ns, opTimeout, append(scaleArgs(cl, "dc1", "rack1", 1), "--pause-operator=false")...)
	assert.Equal(t, exitRefused, r.Code, "%s", r)
	assert.Contains(t, strings.ToLower(r.Stderr), "operator", "the refusal names the operator:\n%s", r)
	assertUnchanged(t, cl, before, true)

	rr := recordReplicas(t, ns, d.Name)
	g := newPVCGuard(t, ns)
	r = cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 2, to: 1})
	assertOperatorRestored(t, ns, d.Name)
	waitFor(t, "the replica watch to see the restore", 10*time.Second, func(context.Context) (bool, error) {
		v := rr.Values()
		return len(v) > 0 && v[len(v)-1] == 1, fmt.Errorf("replicas seen: %v", v)
	})
	assert.Equal(t, []int32{1, 0, 1}, rr.Values(), "operator paused during the operation, then restored")
	summary.markConverged(t)
}

// testRefuseCassKopBusy: CassKop's status says a ScaleDown is in progress: refuse (exit 3),
// write nothing.
func testRefuseCassKopBusy(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2), Busy: true})
	before := takeSnapshot(t, cl)
	r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	assert.Equal(t, exitRefused, r.Code, "%s", r)
	assertUnchanged(t, cl, before, true)
	summary.markConverged(t)
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
	summary.markConverged(t)
}

// testFaultStreamFailureRetry: the first decommission attempt fails while streaming (node
// stuck LEAVING); the retry (by the plugin, or by resume) succeeds.
func testFaultStreamFailureRetry(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
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
	summary.markConverged(t)
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
	summary.markConverged(t)
}

// testFaultEmptyRing: nodetool status prints nothing (exit 0) on every pod while the node
// leaves. An empty ring must never count as "the node left": the run waits (the rack is
// not shrunk), and proceeds once status reads normally again.
func testFaultEmptyRing(t *testing.T, crd *fixture.CRDInfo) {
	testUnreadableRing(t, crd, sim.Fault{EmptyRing: true})
}

// testFaultGarbledRing: the same with status and netstats printing garbage (exit 0).
func testFaultGarbledRing(t *testing.T, crd *fixture.CRDInfo) {
	testUnreadableRing(t, crd, sim.Fault{Garbled: true})
}

func testUnreadableRing(t *testing.T, crd *fixture.CRDInfo, fault sim.Fault) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	// 2 s: the faults must be in place before the decommission call returns and the
	// plugin reads the ring.
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2), Sim: fixture.SimOptions{DecommissionTime: 2 * time.Second}})
	victim := cl.Pods[1].Name
	g := newPVCGuard(t, ns)
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	waitDecommissioning(t, cl, victim, p)
	for _, pod := range cl.Pods {
		require.NoError(t, cl.Sim.SetFault(pod.Name, fault))
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
	require.ErrorIs(t, err, context.DeadlineExceeded, "the plugin went past verify-left on an unreadable ring (%+v)", fault)
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
	summary.markConverged(t)
}

// testFaultExecCut: the plugin dies while `nodetool decommission` runs (the exec session is
// cut; Cassandra keeps decommissioning server-side). resume must wait for that
// decommission, not start another one.
func testFaultExecCut(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
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
	summary.markConverged(t)
}

// testRefuseNotEnoughSpace: the remaining node's data volume cannot take the leaving
// node's Load (2 GiB volumes, 1.5 GiB per node): refuse before any change.
func testRefuseNotEnoughSpace(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2), DataCapacity: "2Gi", Sim: fixture.SimOptions{Load: "1.5 GiB"}})
	before := takeSnapshot(t, cl)
	r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	assert.Equal(t, exitRefused, r.Code, "%s", r)
	assert.Contains(t, r.Stderr, "free space", "%s", r)
	assertUnchanged(t, cl, before, true)
	summary.markConverged(t)
}
