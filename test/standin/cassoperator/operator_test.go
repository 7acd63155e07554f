package cassoperator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var (
	pod0 = PodName(testCluster, testDC, "r1", 0)
	pod1 = PodName(testCluster, testDC, "r1", 1)
	pod2 = PodName(testCluster, testDC, "r1", 2)
)

// scaleDownSeq is FACTS §8's observed order: ScalingDown, the decommission call, the
// label, (LEFT), the shrink, the PVC delete, the nodeStatuses entry, Ready.
var scaleDownSeq = []Action{
	CondAction(CondScalingDown, "True"), ProgressAction(ProgressUpdating), ActDecommission, ActLabelDecommissioning,
	ActShrinkStatefulSet, ActDeletePVCs, ActRemoveNodeStatus, CondAction(CondScalingDown, "False"), ProgressAction(ProgressReady),
}

func TestIdleWhenSettled(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	if got := e.run(New(e.cfg())); len(got) != 0 {
		t.Fatalf("a settled DC: %q", got)
	}
}

func TestScaleDown3to2(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	if err := e.setSize(2); err != nil {
		t.Fatal(err)
	}
	op := New(e.cfg())
	if got := e.run(op); !reflect.DeepEqual(got, scaleDownSeq) {
		t.Fatalf("actions\n got %q\nwant %q", got, scaleDownSeq)
	}
	e.assertScaledDownTo2()
	if v, _ := e.node(pod2); v.DecommissionCalls != 1 {
		t.Errorf("decommission calls = %d, want 1", v.DecommissionCalls)
	}
}

func (e *env) assertScaledDownTo2() {
	e.t.Helper()
	if e.pod(pod2) != nil || e.pvcExists(DataPVCName(pod2)) {
		e.t.Errorf("pod or PVC of %s still there", pod2)
	}
	if _, ok := e.nodeStatuses()[pod2]; ok || len(e.nodeStatuses()) != 2 {
		e.t.Errorf("nodeStatuses = %v", e.nodeStatuses())
	}
	if e.replicas("r1") != 2 || e.progress() != ProgressReady || e.cond(CondScalingDown) != "False" || e.cond(CondReady) != "True" {
		e.t.Errorf("replicas %d progress %s ScalingDown %s", e.replicas("r1"), e.progress(), e.cond(CondScalingDown))
	}
}

// The webhook refuses a second size change while ScalingDown is True (FACTS §3.8).
func TestSizeChangeRefusedWhileScalingDown(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	_ = e.setSize(2)
	op := New(e.cfg())
	if a, _ := op.Step(context.Background()); a != CondAction(CondScalingDown, "True") {
		t.Fatalf("first action %q", a)
	}
	err := e.setSize(1)
	if err == nil || !strings.Contains(err.Error(), MsgSizeWhileScalingDown) {
		t.Fatalf("size change while scaling down: %v", err)
	}
}

func TestScaleUp2to3(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 2)
	_ = e.setSize(3)
	want := []Action{CondAction(CondScalingUp, "True"), ProgressAction(ProgressUpdating), ActGrowStatefulSet,
		ActStartNode, ActLabelStarted, ActUpdateNodeStatuses, ActCreateCleanupTask, CondAction(CondScalingUp, "False"), ProgressAction(ProgressReady)}
	if got := e.run(New(e.cfg())); !reflect.DeepEqual(got, want) {
		t.Fatalf("actions\n got %q\nwant %q", got, want)
	}
	e.assertThreeStarted()
	tasks, err := e.dyn.Resource(TaskGVR).Namespace(testNS).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(tasks.Items) != 1 {
		t.Fatalf("cleanup tasks: %v %v", tasks, err)
	}
}

func (e *env) assertThreeStarted() {
	e.t.Helper()
	for _, p := range []string{pod0, pod1, pod2} {
		if pp := e.pod(p); pp == nil || pp.Labels[LabelNodeState] != StateStarted {
			e.t.Errorf("pod %s: %v", p, pp)
		}
		if v, err := e.node(p); err != nil || !v.Running || v.PeerCode != "UN" {
			e.t.Errorf("node %s: %+v %v", p, v, err)
		}
	}
	st := e.nodeStatuses()
	if len(st) != 3 {
		e.t.Errorf("nodeStatuses = %v", st)
	}
	if ns, _ := st[pod2].(map[string]any); ns == nil || ns["hostID"] == "" || ns["ip"] != e.pod(pod2).Status.PodIP || ns["rack"] != "r1" {
		e.t.Errorf("entry of %s = %v", pod2, st[pod2])
	}
	if e.progress() != ProgressReady || e.cond(CondScalingUp) != "False" {
		e.t.Errorf("progress %s ScalingUp %s", e.progress(), e.cond(CondScalingUp))
	}
}

// A StatefulSet shrunk by hand is grown back (CheckRackScale, cass-operator #744), and
// the pod that comes back on its claim is started by the operator.
func TestHandShrunkStatefulSetRegrown(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	b, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": 2}})
	if _, err := e.kube.AppsV1().StatefulSets(testNS).Patch(context.Background(), StatefulSetName(testCluster, testDC, "r1"), types.MergePatchType, b, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.controller()
	if e.pod(pod2) != nil {
		t.Fatal("pod-2 not deleted by the hand shrink")
	}
	want := []Action{CondAction(CondScalingUp, "True"), ProgressAction(ProgressUpdating), ActGrowStatefulSet,
		ActStartNode, ActLabelStarted, ActUpdateNodeStatuses, ActCreateCleanupTask, CondAction(CondScalingUp, "False"), ProgressAction(ProgressReady)}
	if got := e.run(New(e.cfg())); !reflect.DeepEqual(got, want) {
		t.Fatalf("actions\n got %q\nwant %q", got, want)
	}
	e.assertThreeStarted()
	if v, _ := e.node(pod2); v.Restarts != 1 {
		t.Errorf("pod-2's node restarts = %d, want 1 (the same node, started again)", v.Restarts)
	}
}

// A pod restarted while the operator is down stays not started (FACTS §3.7); the
// operator starts it when it runs again.
func TestPodRestartedWhileDownStaysDown(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	op := New(e.cfg())
	op.SetDown(true)
	e.deletePod(pod1)
	e.controller()
	for range 3 {
		if a, err := op.Step(context.Background()); a != "" || err != nil {
			t.Fatalf("down: %q %v", a, err)
		}
	}
	if p := e.pod(pod1); p.Labels[LabelNodeState] != StateReadyToStart {
		t.Fatalf("pod-1 state %q", p.Labels[LabelNodeState])
	}
	if v, _ := e.node(pod1); v.Running {
		t.Fatal("pod-1's Cassandra runs without the operator's start")
	}
	op.SetDown(false)
	want := []Action{ActStartNode, ActLabelStarted, ActUpdateNodeStatuses}
	if got := e.run(op); !reflect.DeepEqual(got, want) {
		t.Fatalf("actions\n got %q\nwant %q", got, want)
	}
	if v, _ := e.node(pod1); !v.Running {
		t.Fatal("pod-1 not started")
	}
}

// The operator's Deployment at 0 replicas is the same as down.
func TestDeploymentScaledToZeroIsDown(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	zero := int32(0)
	d := newDeployment(zero)
	if _, err := e.kube.AppsV1().Deployments(testNS).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = e.setSize(2)
	cfg := e.cfg()
	cfg.OperatorNamespace, cfg.OperatorDeployment = testNS, d.Name
	op := New(cfg)
	if a, err := op.Step(context.Background()); a != "" || err != nil || op.Waiting() != "down" {
		t.Fatalf("down: %q %v %q", a, err, op.Waiting())
	}
	one := int32(1)
	d.Spec.Replicas = &one
	if _, err := e.kube.AppsV1().Deployments(testNS).Update(context.Background(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := e.run(op); !reflect.DeepEqual(got, scaleDownSeq) {
		t.Fatalf("actions %q", got)
	}
}

// Racks lose nodes in SplitRacks order: the targets are SplitRacks(current-1), the first
// rack in spec order above its target loses its last ordinal (decommission_node.go).
func TestMultiRackScaleDownOrder(t *testing.T) {
	e := newEnv(t, []string{"r1", "r2", "r3"}, 6)
	_ = e.setSize(4)
	e.run(New(e.cfg()))
	// 6 = 2,2,2 -> 5 = 2,2,1 -> 4 = 2,1,1.
	if got := []int{e.replicas("r1"), e.replicas("r2"), e.replicas("r3")}; !reflect.DeepEqual(got, []int{2, 1, 1}) {
		t.Fatalf("replicas %v", got)
	}
	for _, p := range []string{PodName(testCluster, testDC, "r3", 1), PodName(testCluster, testDC, "r2", 1)} {
		if v, _ := e.node(p); v.DecommissionCalls != 1 || !v.Left {
			t.Errorf("%s: %+v", p, v)
		}
	}
	if e.progress() != ProgressReady || len(e.nodeStatuses()) != 4 {
		t.Errorf("progress %s nodeStatuses %v", e.progress(), e.nodeStatuses())
	}
}

func TestKillAfterEachScaleDownAction(t *testing.T) {
	for n := 1; n <= len(scaleDownSeq); n++ {
		t.Run(fmt.Sprintf("%d-%s", n, scaleDownSeq[n-1]), func(t *testing.T) {
			e := newEnv(t, []string{"r1"}, 3)
			_ = e.setSize(2)
			op := New(e.cfg())
			op.KillAfterStep(n)
			got := e.run(op)
			if !op.Killed() || !reflect.DeepEqual(got, scaleDownSeq[:n]) {
				t.Fatalf("before the kill: %q (killed %v)", got, op.Killed())
			}
			restarted := New(e.cfg())
			after := e.run(restarted)
			switch scaleDownSeq[n-1] {
			case ActDecommission:
				e.assertStateA(restarted)
			case ActShrinkStatefulSet:
				e.assertStateCD(true)
			case ActDeletePVCs:
				e.assertStateCD(false)
			default:
				e.assertScaledDownTo2()
			}
			if v, _ := e.node(pod2); v.DecommissionsStarted != 1 {
				t.Errorf("decommissions started = %d (after the restart: %q)", v.DecommissionsStarted, after)
			}
		})
	}
}

// assertStateA is FACTS §8 stuck state A: the node left, the pod was never labelled
// Decommissioning; after the restart it is Started-not-Ready and the operator waits
// on it, StatefulSet 3 pods / 2 ready, progress Updating.
func (e *env) assertStateA(op *Operator) {
	e.t.Helper()
	if v, _ := e.node(pod2); !v.Left {
		e.t.Errorf("pod-2's node did not leave: %+v", v)
	}
	p := e.pod(pod2)
	if p == nil || p.Labels[LabelNodeState] != StateStartedNotReady {
		e.t.Fatalf("pod-2: %v", p)
	}
	if e.replicas("r1") != 3 || e.progress() != ProgressUpdating || e.cond(CondScalingDown) != "False" {
		e.t.Errorf("replicas %d progress %s ScalingDown %s", e.replicas("r1"), e.progress(), e.cond(CondScalingDown))
	}
	if !strings.Contains(op.Waiting(), pod2+" is not ready") {
		e.t.Errorf("waiting for %q", op.Waiting())
	}
	// It stays so.
	if got := e.run(op); len(got) != 0 {
		e.t.Errorf("state A moved: %q", got)
	}
}

// assertStateCD is FACTS §8 stuck state C/D: Ready, the pod gone, its nodeStatuses
// entry stale, and (killed before the PVC delete) its PVC orphaned.
func (e *env) assertStateCD(pvcOrphaned bool) {
	e.t.Helper()
	if e.pod(pod2) != nil || e.replicas("r1") != 2 {
		e.t.Errorf("pod-2 %v replicas %d", e.pod(pod2), e.replicas("r1"))
	}
	if e.pvcExists(DataPVCName(pod2)) != pvcOrphaned {
		e.t.Errorf("PVC of pod-2 exists = %v, want %v", !pvcOrphaned, pvcOrphaned)
	}
	if _, ok := e.nodeStatuses()[pod2]; !ok {
		e.t.Errorf("nodeStatuses lost pod-2: %v", e.nodeStatuses())
	}
	if e.progress() != ProgressReady || e.cond(CondScalingDown) != "False" {
		e.t.Errorf("progress %s ScalingDown %s", e.progress(), e.cond(CondScalingDown))
	}
}

func (e *env) stateA() *Operator {
	e.t.Helper()
	_ = e.setSize(2)
	op := New(e.cfg())
	op.KillAfter(ActDecommission)
	e.run(op)
	restarted := New(e.cfg())
	e.run(restarted)
	e.assertStateA(restarted)
	return restarted
}

func (e *env) labelPod(name, state string) {
	e.t.Helper()
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{LabelNodeState: state}}})
	if _, err := e.kube.CoreV1().Pods(testNS).Patch(context.Background(), name, types.MergePatchType, b, metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// setScalingDownTrue is FACTS §8's JSON patch on /status that tests the condition's type
// at its index.
func (e *env) setScalingDownTrue() {
	e.t.Helper()
	conds := e.dc().Object["status"].(map[string]any)["conditions"].([]any)
	i := -1
	for k, c := range conds {
		if c.(map[string]any)["type"] == CondScalingDown {
			i = k
		}
	}
	patch := fmt.Sprintf(`[{"op":"test","path":"/status/conditions/%d/type","value":"ScalingDown"},{"op":"replace","path":"/status/conditions/%d/status","value":"True"}]`, i, i)
	if _, err := e.dyn.Resource(DatacenterGVR).Namespace(testNS).Patch(context.Background(), testDC, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		e.t.Fatal(err)
	}
}

func TestStateAUnstuckByLabelAndCondition(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	e.stateA()
	// The condition alone is set back to False at once.
	e.setScalingDownTrue()
	if got := e.run(New(e.cfg())); !reflect.DeepEqual(got, []Action{CondAction(CondScalingDown, "False")}) {
		t.Fatalf("condition alone: %q", got)
	}
	// The label alone changes nothing.
	e.labelPod(pod2, StateDecommissioning)
	op := New(e.cfg())
	if got := e.run(op); len(got) != 0 {
		t.Fatalf("label alone: %q", got)
	}
	// Both: the operator finishes the scale-down itself.
	e.setScalingDownTrue()
	want := []Action{ActShrinkStatefulSet, ActDeletePVCs, ActRemoveNodeStatus, CondAction(CondScalingDown, "False"), ProgressAction(ProgressReady)}
	if got := e.run(op); !reflect.DeepEqual(got, want) {
		t.Fatalf("label + condition\n got %q\nwant %q", got, want)
	}
	e.assertScaledDownTo2()
	if v, _ := e.node(pod2); v.DecommissionsStarted != 1 {
		t.Errorf("decommissioned %d times", v.DecommissionsStarted)
	}
	// A later scale-up works.
	_ = e.setSize(3)
	e.run(op)
	e.assertThreeStarted()
}

// With decommissioned nodes still Ready, the restarted operator re-sends the
// decommission (the call errors, ignored) and finishes (FACTS §8).
func TestStateANotStuckWhenDecommissionedStaysReady(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	_ = e.setSize(2)
	cfg := e.cfg()
	cfg.DecommissionedStaysReady = true
	op := New(cfg)
	op.KillAfter(ActDecommission)
	e.run(op)
	e.run(New(cfg))
	e.assertScaledDownTo2()
	if v, _ := e.node(pod2); v.DecommissionCalls != 2 || v.DecommissionsStarted != 1 {
		t.Errorf("calls %d started %d", v.DecommissionCalls, v.DecommissionsStarted)
	}
}

func (e *env) stateCD() {
	e.t.Helper()
	_ = e.setSize(2)
	op := New(e.cfg())
	op.KillAfter(ActShrinkStatefulSet)
	e.run(op)
	e.run(New(e.cfg()))
	e.assertStateCD(true)
}

func TestStateCDUnstuckByPVCDeleteAndStatusRemove(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	e.stateCD()
	ctx := context.Background()
	pvc, _ := e.kube.CoreV1().PersistentVolumeClaims(testNS).Get(ctx, DataPVCName(pod2), metav1.GetOptions{})
	if err := e.kube.CoreV1().PersistentVolumeClaims(testNS).Delete(ctx, pvc.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pvc.UID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.dyn.Resource(DatacenterGVR).Namespace(testNS).Patch(ctx, testDC, types.JSONPatchType,
		[]byte(`[{"op":"remove","path":"/status/nodeStatuses/`+pod2+`"}]`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	op := New(e.cfg())
	if got := e.run(op); len(got) != 0 {
		t.Fatalf("after the repair: %q", got)
	}
	e.assertScaledDownTo2()
	_ = e.setSize(3)
	e.run(op)
	e.assertThreeStarted()
	if v, _ := e.node(pod2); v.Restarts != 0 || v.DecommissionCalls != 0 {
		t.Errorf("pod-2 is not a fresh node: %+v", v)
	}
}

// Without the repair, a scale-up reuses the orphaned PVC: the node cannot start on
// decommissioned data, the operator deletes the pod and records a failed start (FACTS §8).
func TestStateCDScaleUpReusesOrphanedPVC(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	e.stateCD()
	_ = e.setSize(3)
	op := New(e.cfg())
	var got []Action
	for range 6 {
		a, err := op.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
		e.controller()
	}
	// The pod is deleted and re-created, its start refused again: a crash loop (the
	// real operator's is paced by its 20 s cooldown, not modelled).
	want := []Action{CondAction(CondScalingUp, "True"), ProgressAction(ProgressUpdating), ActGrowStatefulSet, ActStartNode, ActStartNode, ActStartNode}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("actions\n got %q\nwant %q", got, want)
	}
	fs, _ := e.dc().Object["status"].(map[string]any)["failedStarts"].([]any)
	if len(fs) != 1 || fs[0] != pod2 {
		t.Fatalf("failedStarts %v", fs)
	}
	if e.progress() == ProgressReady {
		t.Error("Ready with a node that cannot start")
	}
}

func TestKillAfterEachScaleUpAction(t *testing.T) {
	e0 := newEnv(t, []string{"r1"}, 2)
	_ = e0.setSize(3)
	seq := e0.run(New(e0.cfg()))
	for n := 1; n <= len(seq); n++ {
		t.Run(fmt.Sprintf("%d-%s", n, seq[n-1]), func(t *testing.T) {
			e := newEnv(t, []string{"r1"}, 2)
			_ = e.setSize(3)
			op := New(e.cfg())
			op.KillAfterStep(n)
			if got := e.run(op); !reflect.DeepEqual(got, seq[:n]) {
				t.Fatalf("before the kill: %q", got)
			}
			e.run(New(e.cfg()))
			e.assertThreeStarted()
			// cleanup-<unix seconds>: a restart after the create makes a second task once
			// the clock has moved on (createCleanupTask has no memory either).
			tasks, _ := e.dyn.Resource(TaskGVR).Namespace(testNS).List(context.Background(), metav1.ListOptions{})
			want := 1
			if seq[n-1] == ActCreateCleanupTask {
				want = 2
			}
			if len(tasks.Items) != want {
				t.Errorf("%d cleanup tasks, want %d", len(tasks.Items), want)
			}
		})
	}
}

func TestRunUntilContextDone(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	_ = e.setSize(2)
	op := New(e.cfg())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// The StatefulSet controller runs beside it, as in e2e.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			e.controller()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	err := op.Run(ctx, 10*time.Millisecond)
	<-done
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run: %v", err)
	}
	if got := op.Actions(); !reflect.DeepEqual(got, scaleDownSeq) {
		t.Fatalf("actions %q", got)
	}
}

// HoldAfter stops the process right after the action and keeps the pass's pending
// writes: released, it goes on with them (delete-pvcs, remove-node-status), unlike a kill.
func TestHoldAfterKeepsPendingWrites(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	_ = e.setSize(2)
	op := New(e.cfg())
	release := op.HoldAfter(ActShrinkStatefulSet)
	got := e.run(op)
	if len(got) == 0 || got[len(got)-1] != ActShrinkStatefulSet {
		t.Fatalf("held run: %q", got)
	}
	if op.Waiting() != "held" || !e.pvcExists(DataPVCName(pod2)) {
		t.Fatalf("held: waiting %q, PVC of %s there %v", op.Waiting(), pod2, e.pvcExists(DataPVCName(pod2)))
	}
	release()
	release()
	if rest := e.run(op); !reflect.DeepEqual(append(got, rest...), scaleDownSeq) {
		t.Fatalf("actions\n got %q\nwant %q", append(got, rest...), scaleDownSeq)
	}
	e.assertScaledDownTo2()
}
