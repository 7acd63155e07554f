package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// Scale-up, rolling restart and repair-operator-state on the real control plane. kwok
// runs no Cassandra: a fixture.SimController registers a new pod's node in the simulator
// (JOINING for opsJoinTime, then NORMAL) and restarts the node of a re-created pod.

const opsJoinTime = 3 * time.Second

// opsScenarios are registered in suite_test.go.
func opsScenarios() []scenario {
	return []scenario{
		{name: "ops-scale-up", run: testOpsScaleUp},
		{name: "ops-scale-up-sigkill", run: testOpsScaleUpSIGKILL},
		{name: "ops-restart", run: testOpsRestart},
		{name: "ops-restart-sigkill", run: testOpsRestartSIGKILL},
		{name: "ops-repair", run: testOpsRepair, group: true},
		{name: "ops-stream-throughput-sigkill", run: testOpsStreamThroughputSIGKILL},
		{name: "ops-replace-node-sigkill", run: testReplaceNodeSIGKILL},
	}
}

// startSimController starts the controller for cl, stopped when the test ends (after
// checking that it met no error).
func startSimController(t *testing.T, cl *fixture.Cluster) *fixture.SimController {
	t.Helper()
	sc, err := cl.StartSimController(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() {
		sc.Stop()
		if err := sc.Err(); err != nil {
			t.Errorf("sim controller: %v", err)
		}
	})
	return sc
}

func opsPodReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ---------------------------------------------------------------- scale-up

func scaleUpArgs(cl *fixture.Cluster, nodes int) []string {
	return append([]string{"scale", cl.Name, "--dc", "dc1", "--rack", "rack1", "--nodes", strconv.Itoa(nodes), "--cleanup"}, runFlags...)
}

// testOpsScaleUp: 1 -> 3 with --cleanup, in one run.
func testOpsScaleUp(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(1)})
	require.NoError(t, cl.SetSimJoinTime(opsJoinTime))
	sc := startSimController(t, cl)
	g := newPVCGuard(t, ns)
	r := cassandra(t, ns, opTimeout, scaleUpArgs(cl, 3)...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	t.Logf("scale 1->3 --cleanup took %s", r.Duration.Round(time.Millisecond))
	assertScaledUp(t, cl, sc, g, 1, 3)
	summary.markConverged(t)
}

// testOpsScaleUpSIGKILL: 1 -> 3, SIGKILLed while the second new node is joining, then
// resumed.
func testOpsScaleUpSIGKILL(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(1)})
	require.NoError(t, cl.SetSimJoinTime(opsJoinTime))
	sc := startSimController(t, cl)
	g := newPVCGuard(t, ns)
	second := fixture.PodName(cl.Name, "dc1", "rack1", 2)
	p := startCassandra(t, ns, scaleUpArgs(cl, 3)...)
	// The wait step of the second new node starts; then its node is JOINING; then kill.
	opsWaitStarted(t, p, cl, "wait-joined", second)
	waitFor(t, "node "+second+" joining", time.Minute, func(context.Context) (bool, error) {
		if p.Exited() {
			t.Fatalf("the plugin ended before %s joined:\n%s", second, p.result)
		}
		v, err := cl.Sim.Node(second)
		if err != nil {
			return false, err
		}
		return v.Joining, fmt.Errorf("mode %s", v.Mode)
	})
	killed := p.Kill(t)
	require.Equal(t, 137, killed.Code, "killed by SIGKILL:\n%s", killed)
	summary.crash("scale-up/wait-joined")
	cp, ok := readCheckpoint(t, cl)
	require.True(t, ok, "checkpoint left by the killed run")
	assert.Equal(t, "scale-up", cp.Kind)
	st, ok := cp.Started()
	require.True(t, ok, "a step is started in the checkpoint:\n%s", cp.Raw)
	assert.Equal(t, "wait-joined/"+second, st.ID, "step in progress at the kill")
	v, err := cl.Sim.Node(second)
	require.NoError(t, err)
	t.Logf("SIGKILL at %s after %s; %s is %s", st.ID, killed.Duration.Round(time.Millisecond), second, v.Mode)
	r := resume(t, cl)
	t.Logf("resume took %s", r.Duration.Round(time.Millisecond))
	assertScaledUp(t, cl, sc, g, 1, 3)
	summary.markConverged(t)
}

// opsWaitStarted waits until the checkpoint shows step kind/pod started (fails if p ends
// first).
func opsWaitStarted(t *testing.T, p *Proc, cl *fixture.Cluster, kind, pod string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	found := make(chan struct{})
	go func() {
		_ = watchCR(ctx, cl, opTimeout, func(cr *unstructured.Unstructured) bool {
			cp, ok, _ := parseCheckpoint(cr)
			if !ok {
				return false
			}
			if slices.ContainsFunc(cp.Steps, startedKind(kind, pod)) {
				close(found)
				return true
			}
			return false
		})
	}()
	select {
	case <-found:
	case <-p.Done():
		t.Fatalf("the plugin ended before %s/%s started:\n%s", kind, pod, p.result)
	case <-time.After(opTimeout):
		t.Fatalf("%s/%s not started within %s:\n%s", kind, pod, opTimeout, p.Stderr())
	}
}

// assertScaledUp: the rack at `to` Ready pods, every node UN (sim and status -o json),
// nodesPerRacks, no checkpoint, each new pod created once and its node added once,
// cleanup once on each node that was there before and never on a new one, no PVC deleted.
func assertScaledUp(t *testing.T, cl *fixture.Cluster, sc *fixture.SimController, g *pvcGuard, from, to int) {
	t.Helper()
	ctx := context.Background()
	kc := suite.clients.Kube
	sts, err := kc.AppsV1().StatefulSets(cl.Namespace).Get(ctx, fixture.StatefulSetName(cl.Name, "dc1", "rack1"), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(to), *sts.Spec.Replicas, "statefulset replicas")
	var newPods []string
	for i := range to {
		name := fixture.PodName(cl.Name, "dc1", "rack1", i)
		pod, err := kc.CoreV1().Pods(cl.Namespace).Get(ctx, name, metav1.GetOptions{})
		if !assert.NoError(t, err, "pod %s", name) {
			continue
		}
		assert.True(t, opsPodReady(pod), "pod %s Ready (phase %s)", name, pod.Status.Phase)
		v, err := cl.Sim.Node(name)
		if !assert.NoError(t, err, "sim node of %s", name) {
			continue
		}
		assert.Equal(t, sim.ModeNormal, v.Mode, "node %s", name)
		assert.Equal(t, "UN", v.PeerCode, "node %s as peers see it", name)
		if i < from {
			assert.Equal(t, 1, v.Cleanups, "nodetool cleanup on pre-existing node %s", name)
			continue
		}
		newPods = append(newPods, name)
		assert.Equal(t, 0, v.Cleanups, "no cleanup on new node %s", name)
		assert.Len(t, sc.UIDs(name), 1, "new pod %s created once (UIDs %v)", name, sc.UIDs(name))
		assert.Equal(t, pod.UID, opsFirst(sc.UIDs(name)), "pod %s is the one created", name)
	}
	assert.Equal(t, newPods, sc.Added(), "nodes added to the ring, in order")

	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	n, err := fixture.NodesPerRacks(cr, "dc1")
	require.NoError(t, err)
	assert.Equal(t, int64(to), n, "CR nodesPerRacks")
	_, hasCP := cr.GetAnnotations()[annCheckpoint]
	assert.False(t, hasCP, "checkpoint removed at the end")
	if lo := lastOperation(t, cr); assert.NotNil(t, lo) {
		assert.Equal(t, "succeeded", lo["result"])
		assert.Equal(t, "scale-up", lo["kind"])
	}
	assert.Empty(t, g.Deleted(), "no PVC deleted by a scale-up")
	g.Check(t, cl)
	opsAssertStatusUN(t, cl, to)
}

func opsFirst(u []types.UID) types.UID {
	if len(u) == 0 {
		return ""
	}
	return u[0]
}

// opsAssertStatusUN: `status -o json` shows rack1 with `nodes` Ready replicas, every pod UN,
// nodesPerRack, no operation in flight, the last one succeeded.
func opsAssertStatusUN(t *testing.T, cl *fixture.Cluster, nodes int) {
	t.Helper()
	// readyReplicas lags the pods by a moment after a restart or a scale-up (the
	// StatefulSet controller may still count a pod it has not seen deleted): read
	// `status` until it reports every replica Ready, then check the rest of it.
	var r Result
	var st statusJSON
	waitFor(t, "status reports "+strconv.Itoa(nodes)+" ready replicas", 30*time.Second, func(ctx context.Context) (bool, error) {
		r = cassandra(t, cl.Namespace, time.Minute, "status", cl.Name, "-o", "json")
		if r.Code != exitOK {
			return false, fmt.Errorf("status exited %d", r.Code)
		}
		st = statusJSON{}
		if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil {
			return false, err
		}
		if len(st.Datacenters) != 1 || len(st.Datacenters[0].Racks) != 1 {
			return false, fmt.Errorf("unexpected topology:\n%s", r.Stdout)
		}
		ready := st.Datacenters[0].Racks[0].ReadyReplicas
		return ready == nodes, fmt.Errorf("ready replicas %d", ready)
	})
	assert.Nil(t, st.Operation, "no operation in flight")
	if assert.NotNil(t, st.LastOperation) {
		assert.Equal(t, "succeeded", st.LastOperation.Result)
	}
	require.Len(t, st.Datacenters, 1, "%s", r.Stdout)
	dc := st.Datacenters[0]
	assert.Equal(t, nodes, dc.NodesPerRack, "status nodesPerRack")
	require.Len(t, dc.Racks, 1, "%s", r.Stdout)
	rack := dc.Racks[0]
	assert.Equal(t, nodes, rack.Replicas, "status replicas")
	assert.Equal(t, nodes, rack.ReadyReplicas, "status ready replicas")
	var un []string
	for _, p := range rack.Pods {
		if p.NodeState == "UN" {
			un = append(un, p.Name)
		}
	}
	assert.Len(t, un, nodes, "pods UN in status -o json:\n%s", r.Stdout)
}

// ---------------------------------------------------------------- restart

func restartArgs(cl *fixture.Cluster) []string {
	return append([]string{"restart", cl.Name, "--dc", "dc1", "--rack", "rack1"}, runFlags...)
}

func opsPodUIDs(t *testing.T, cl *fixture.Cluster) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for _, p := range cl.Pods {
		pod, err := suite.clients.Kube.CoreV1().Pods(cl.Namespace).Get(context.Background(), p.Name, metav1.GetOptions{})
		require.NoError(t, err)
		out[p.Name] = pod.UID
	}
	return out
}

// testOpsRestart: a rolling restart of 3 pods in one run.
func testOpsRestart(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "restart")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3)})
	sc := startSimController(t, cl)
	g := newPVCGuard(t, ns)
	before := opsPodUIDs(t, cl)
	r := cassandra(t, ns, opTimeout, restartArgs(cl)...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	t.Logf("restart of 3 pods took %s", r.Duration.Round(time.Millisecond))
	assertRestarted(t, cl, sc, g, before, true)
	summary.markConverged(t)
}

// testOpsRestartSIGKILL: SIGKILL mid-rack, as the middle pod's delete starts (the highest
// pod is already restarted, the middle one drained), then resume. (The wait-restarted
// step is no crash point here: on kwok the pod is back and UN before that step begins,
// so the engine finds it done and never marks it started.)
func testOpsRestartSIGKILL(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "restart")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3)})
	sc := startSimController(t, cl)
	g := newPVCGuard(t, ns)
	before := opsPodUIDs(t, cl)
	mid := fixture.PodName(cl.Name, "dc1", "rack1", 1)
	top := fixture.PodName(cl.Name, "dc1", "rack1", 2)
	p := startCassandra(t, ns, restartArgs(cl)...)
	step, killed := killWhen(t, p, cl, startedKind("delete-pod", mid))
	if !killed {
		t.Fatalf("the plugin ended before delete-pod/%s:\n%s", mid, p.Wait(t, opTimeout))
	}
	summary.crash("restart/delete-pod")
	t.Logf("SIGKILL at %s", step.ID)
	// The highest pod was restarted before the kill, exactly once.
	assert.Len(t, sc.UIDs(top), 2, "%s restarted before the kill", top)
	if v, err := cl.Sim.Node(mid); assert.NoError(t, err) {
		assert.Equal(t, 1, v.Drains, "%s drained before its delete started", mid)
	}
	cp, ok := readCheckpoint(t, cl)
	require.True(t, ok, "checkpoint left by the killed run")
	assert.Equal(t, "restart", cp.Kind)
	r := resume(t, cl)
	t.Logf("resume took %s", r.Duration.Round(time.Millisecond))
	assertRestarted(t, cl, sc, g, before, false)
	summary.markConverged(t)
}

// assertRestarted: each pod has a new UID, is Ready, was re-created and its node restarted
// exactly once, every node UN; no checkpoint; no PVC deleted. exactDrains: one drain per
// node (a run without crash).
func assertRestarted(t *testing.T, cl *fixture.Cluster, sc *fixture.SimController, g *pvcGuard, before map[string]types.UID, exactDrains bool) {
	t.Helper()
	ctx := context.Background()
	for _, fp := range cl.Pods {
		pod, err := suite.clients.Kube.CoreV1().Pods(cl.Namespace).Get(ctx, fp.Name, metav1.GetOptions{})
		if !assert.NoError(t, err, fp.Name) {
			continue
		}
		assert.NotEqual(t, before[fp.Name], pod.UID, "pod %s has a new UID", fp.Name)
		assert.True(t, opsPodReady(pod), "pod %s Ready", fp.Name)
		uids := sc.UIDs(fp.Name)
		assert.Equal(t, []types.UID{before[fp.Name], pod.UID}, uids, "pod %s re-created exactly once", fp.Name)
		assert.Equal(t, 1, sc.Restarts(fp.Name), "node %s restarted once by the controller", fp.Name)
		v, err := cl.Sim.Node(fp.Name)
		if !assert.NoError(t, err) {
			continue
		}
		assert.Equal(t, 1, v.Restarts, "sim restarts of %s", fp.Name)
		assert.Equal(t, sim.ModeNormal, v.Mode, "node %s", fp.Name)
		assert.Equal(t, "UN", v.PeerCode, "node %s as peers see it", fp.Name)
		assert.Equal(t, fp.HostID, v.HostID, "node %s kept its Host ID", fp.Name)
		if exactDrains {
			assert.Equal(t, 1, v.Drains, "drains of %s", fp.Name)
		} else {
			assert.GreaterOrEqual(t, v.Drains, 1, "drains of %s", fp.Name)
		}
	}
	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	_, hasCP := cr.GetAnnotations()[annCheckpoint]
	assert.False(t, hasCP, "checkpoint removed at the end")
	if lo := lastOperation(t, cr); assert.NotNil(t, lo) {
		assert.Equal(t, "succeeded", lo["result"])
		assert.Equal(t, "restart", lo["kind"])
	}
	assert.Empty(t, g.Deleted(), "no PVC deleted by a restart")
	g.Check(t, cl)
	opsAssertStatusUN(t, cl, len(cl.Pods))
}

// ---------------------------------------------------------------- repair-operator-state

// testOpsRepair builds each stuck CassKop state of a 3 -> 2 scale-down of rack1 on the
// real cluster, repairs it, and checks one refusal.
func testOpsRepair(t *testing.T, crd *fixture.CRDInfo) {
	for _, state := range []string{"ongoing-pod-gone", "finalizing-not-shrunk", "todo-decommissioned"} {
		t.Run(state, func(t *testing.T) {
			t.Parallel()
			summary.track(t)
			requireCommand(t, "repair-operator-state")
			ns := newNamespace(t)
			cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3)})
			stuck := cl.Pods[2]
			g := newPVCGuard(t, ns)
			opsDecommission(t, cl, stuck.Name)
			switch state {
			case "ongoing-pod-gone":
				opsShrink(t, cl, 2, true)
				opsStuckStatus(t, cl, "Ongoing", []string{stuck.Name})
			case "finalizing-not-shrunk":
				opsStuckStatus(t, cl, "Finalizing", []string{stuck.Name})
			case "todo-decommissioned":
				opsStuckStatus(t, cl, "ToDo", nil)
			}
			r := cassandra(t, ns, opTimeout, append([]string{"repair-operator-state", cl.Name}, runFlags...)...)
			require.Equal(t, exitOK, r.Code, "%s", r)
			t.Logf("repair (%s) took %s", state, r.Duration.Round(time.Millisecond))
			assertOpsRepaired(t, cl, g, stuck)
			summary.markConverged(t)
		})
	}
	t.Run("refuse-node-in-ring", func(t *testing.T) {
		t.Parallel()
		summary.track(t)
		requireCommand(t, "repair-operator-state")
		ns := newNamespace(t)
		cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3)})
		stuck := cl.Pods[2]
		g := newPVCGuard(t, ns)
		// The pod was removed before any decommission: its node is still in the ring.
		opsShrink(t, cl, 2, true)
		opsStuckStatus(t, cl, "Ongoing", []string{stuck.Name})
		crBefore, err := cl.Get(context.Background())
		require.NoError(t, err)
		r := cassandra(t, ns, opTimeout, append([]string{"repair-operator-state", cl.Name}, runFlags...)...)
		require.Equal(t, exitRefused, r.Code, "%s", r)
		assert.Contains(t, r.Stderr, "is still in the ring")
		assert.Contains(t, r.Stderr, "nothing changed")
		crAfter, err := cl.Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, crBefore.GetResourceVersion(), crAfter.GetResourceVersion(), "CR unchanged")
		sts, err := suite.clients.Kube.AppsV1().StatefulSets(ns).Get(context.Background(), fixture.StatefulSetName(cl.Name, "dc1", "rack1"), metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, int32(2), *sts.Spec.Replicas)
		for _, p := range cl.Pods {
			for _, name := range p.PVCs {
				pvc, err := suite.clients.Kube.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
				if assert.NoError(t, err, "PVC %s kept", name) {
					assert.Nil(t, pvc.DeletionTimestamp, "PVC %s not being deleted", name)
				}
			}
		}
		assert.Empty(t, g.Deleted(), "no PVC deleted")
		v, err := cl.Sim.Node(stuck.Name)
		require.NoError(t, err)
		assert.Equal(t, 0, v.DecommissionsStarted, "node %s not decommissioned", stuck.Name)
		assert.Equal(t, sim.ModeNormal, v.Mode)
		summary.markConverged(t)
	})
}

// opsDecommission runs a decommission of pod's node in the simulator (as CassKop's exec
// did) and waits for it to end.
func opsDecommission(t *testing.T, cl *fixture.Cluster, pod string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := cl.Sim.Run(ctx, pod, []string{"decommission"}, &out, &errb)
	require.Equal(t, 0, code, "decommission %s: %s %s", pod, out.String(), errb.String())
	v, err := cl.Sim.Node(pod)
	require.NoError(t, err)
	require.Equal(t, sim.ModeDecommissioned, v.Mode)
}

// opsShrink sets the CR's nodesPerRacks and the StatefulSet to n (what CassKop did), and
// waits until the pods above are gone when wait.
func opsShrink(t *testing.T, cl *fixture.Cluster, n int, shrinkSTS bool) {
	t.Helper()
	ctx := context.Background()
	_, err := suite.clients.Dyn.Resource(fixture.CassandraClusterGVR).Namespace(cl.Namespace).Patch(ctx, cl.Name, types.MergePatchType,
		[]byte(fmt.Sprintf(`{"spec":{"nodesPerRacks":%d}}`, n)), metav1.PatchOptions{})
	require.NoError(t, err)
	if !shrinkSTS {
		return
	}
	stsName := fixture.StatefulSetName(cl.Name, "dc1", "rack1")
	_, err = suite.clients.Kube.AppsV1().StatefulSets(cl.Namespace).Patch(ctx, stsName, types.MergePatchType,
		[]byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)), metav1.PatchOptions{})
	require.NoError(t, err)
	for _, p := range cl.Pods {
		if p.Ordinal < n {
			continue
		}
		waitFor(t, "pod "+p.Name+" gone", time.Minute, func(ctx context.Context) (bool, error) {
			_, err := suite.clients.Kube.CoreV1().Pods(cl.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, fmt.Errorf("pod %s still there (err=%v)", p.Name, err)
		})
	}
}

// opsStuckStatus writes CassKop's status of a 3 -> 2 scale-down of rack1 stuck in the
// given podLastOperation status (through /status when the CRD has it, else a plain
// update: fixture.UpdateStatus), and sets nodesPerRacks to 2 as the user did.
func opsStuckStatus(t *testing.T, cl *fixture.Cluster, opStatus string, pods []string) {
	t.Helper()
	opsShrink(t, cl, 2, false)
	nodes := map[string]any{}
	for _, p := range cl.Pods {
		nodes[p.Name] = map[string]any{"hostId": p.HostID, "nodeIp": p.IP}
	}
	podList := []any{}
	for _, p := range pods {
		podList = append(podList, p)
	}
	start := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	err := cl.UpdateStatus(context.Background(), func(st map[string]any) {
		st["phase"] = "Pending"
		st["lastClusterAction"] = "ScaleDown"
		st["lastClusterActionStatus"] = "ToDo"
		st["cassandraNodeStatus"] = nodes
		st["cassandraRackStatus"] = map[string]any{"dc1-rack1": map[string]any{
			"phase":               "Pending",
			"cassandraLastAction": map[string]any{"name": "ScaleDown", "status": "ToDo", "startTime": start},
			"podLastOperation":    map[string]any{"name": "decommission", "status": opStatus, "pods": podList, "podsOK": []any{}, "startTime": start},
		}}
	})
	require.NoError(t, err)
	cr, err := cl.Get(context.Background())
	require.NoError(t, err)
	got, _, _ := unstructured.NestedString(cr.Object, "status", "cassandraRackStatus", "dc1-rack1", "podLastOperation", "status")
	require.Equal(t, opStatus, got, "stuck status stored")
}

// assertOpsRepaired: the stuck pod's PVCs gone, the StatefulSet at 2 and its pod gone,
// CassKop's status Done in the stored CR, the other pods' PVCs untouched.
func assertOpsRepaired(t *testing.T, cl *fixture.Cluster, g *pvcGuard, stuck fixture.Pod) {
	t.Helper()
	ctx := context.Background()
	kc := suite.clients.Kube
	ns := cl.Namespace
	for _, name := range stuck.PVCs {
		waitFor(t, "PVC "+name+" deleted", 30*time.Second, func(ctx context.Context) (bool, error) {
			_, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, fmt.Errorf("PVC %s still there (err=%v)", name, err)
		})
	}
	sts, err := kc.AppsV1().StatefulSets(ns).Get(ctx, fixture.StatefulSetName(cl.Name, "dc1", "rack1"), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(2), *sts.Spec.Replicas, "statefulset replicas")
	_, err = kc.CoreV1().Pods(ns).Get(ctx, stuck.Name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "pod %s gone (err=%v)", stuck.Name, err)
	for _, p := range cl.Pods {
		if p.Name == stuck.Name {
			continue
		}
		for _, name := range p.PVCs {
			pvc, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			if assert.NoError(t, err, "PVC %s of live pod %s", name, p.Name) {
				assert.Nil(t, pvc.DeletionTimestamp, "PVC %s of live pod not being deleted", name)
			}
		}
	}
	assert.ElementsMatch(t, stuck.PVCs, g.Deleted(), "exactly the stuck pod's PVCs deleted")
	g.Check(t, cl)

	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	rs, _, _ := unstructured.NestedMap(cr.Object, "status", "cassandraRackStatus", "dc1-rack1")
	b, _ := json.Marshal(rs)
	po, _ := rs["podLastOperation"].(map[string]any)
	la, _ := rs["cassandraLastAction"].(map[string]any)
	assert.Equal(t, "Done", po["status"], "podLastOperation status: %s", b)
	assert.Equal(t, "decommission", po["name"], "podLastOperation name: %s", b)
	assert.Equal(t, []any{stuck.Name}, po["podsOK"], "podLastOperation podsOK: %s", b)
	assert.Equal(t, "Done", la["status"], "cassandraLastAction status: %s", b)
	assert.Equal(t, "ScaleDown", la["name"], "cassandraLastAction name: %s", b)
	_, hasCP := cr.GetAnnotations()[annCheckpoint]
	assert.False(t, hasCP, "checkpoint removed at the end")
	if lo := lastOperation(t, cr); assert.NotNil(t, lo) {
		assert.Equal(t, "succeeded", lo["result"])
	}
	// Other nodes untouched.
	for _, p := range cl.Pods {
		v, err := cl.Sim.Node(p.Name)
		require.NoError(t, err)
		if p.Name == stuck.Name {
			assert.Equal(t, 1, v.DecommissionsStarted, "node %s decommissioned once", p.Name)
			continue
		}
		assert.Equal(t, sim.ModeNormal, v.Mode, "node %s", p.Name)
		assert.Equal(t, 0, v.DecommissionsStarted, "node %s never decommissioned", p.Name)
	}
}
