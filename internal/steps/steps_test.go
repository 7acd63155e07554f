package steps

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

type nopReporter struct{}

func (nopReporter) StepStarted(string, string, int)       {}
func (nopReporter) StepDone(string, string, bool)         {}
func (nopReporter) StepFailed(string, string, error)      {}
func (nopReporter) Waiting(string, string, time.Duration) {}
func (nopReporter) Warn(string, string)                   {}

// setup builds a 3-node rack and a plan removing pod 2 (ordinal 2).
func setup(t *testing.T, version string) (*fakeworld.World, *World, record.Node) {
	t.Helper()
	return setupWith(t, fakeworld.Opts{Nodes: 3, Version: version})
}

// setupWith is setup in a world made with opts (3 nodes at least).
func setupWith(t *testing.T, opts fakeworld.Opts) (*fakeworld.World, *World, record.Node) {
	t.Helper()
	w := fakeworld.New(t, opts)
	version := opts.Version
	pod := w.Pod("rack1", 2)
	nv, err := w.Cass.Node(pod)
	if err != nil {
		t.Fatal(err)
	}
	a := w.Adapter()
	n := record.Node{Pod: pod, PodUID: "pod-" + pod, Ordinal: 2, DC: "dc1", Rack: "rack1", StatefulSet: w.STS("rack1"),
		HostID: nv.HostID, PVCs: []record.PVC{{Name: "storage-" + pod, UID: "pvc-storage-" + pod}}}
	cp := &record.Checkpoint{Namespace: w.NS, Cluster: w.Name, Target: record.Target{DC: "dc1", Nodes: 2}, Nodes: []record.Node{n}}
	sw := &World{Kube: w.Kube, Nodetool: nodetool.Client{Exec: w}, Namespace: w.NS, ClusterSelector: a.ClusterSelector(w.Name),
		Racks: []topology.Rack{{DC: "dc1", Name: "rack1", StatefulSet: w.STS("rack1")}}, CountWords: a.CountWords(), Container: a.Container(), CP: cp, Reporter: nopReporter{}, Poll: time.Millisecond, ServerVersion: version + ".0",
		Spec: a.DCSpec(w.NS, w.Name, "dc1"), variant: Variant{RingReaders: true}}
	sw.obs.SetUncached(true)
	return w, sw, n
}

func mustDone(t *testing.T, st operation.Step, want bool) {
	t.Helper()
	got, err := st.Done(context.Background())
	if err != nil {
		t.Fatalf("%T.Done: %v", st, err)
	}
	if got != want {
		t.Fatalf("%T.Done = %v, want %v", st, got, want)
	}
}

func TestDecommissionStep(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	st := &decommission{node: node{sw, n}}
	mustDone(t, st, false)
	if err := st.Safe(ctx); err != nil {
		t.Fatalf("Safe on a NORMAL node: %v", err)
	}
	if err := st.Do(ctx); err != nil {
		t.Fatalf("Do: %v", err)
	}
	mustDone(t, st, true)
	// Idempotent: a second Do on a decommissioned node changes nothing.
	if err := st.Do(ctx); err != nil {
		t.Fatalf("second Do: %v", err)
	}
	if nv, _ := w.Cass.Node(n.Pod); nv.DecommissionsStarted != 1 {
		t.Fatalf("decommissions started %d", nv.DecommissionsStarted)
	}
	// Unknown is never done: the node's JVM is down and the ring is unreadable.
	w2, sw2, n2 := setup(t, "4.1")
	_ = w2.Cass.SetFault(n2.Pod, sim.Fault{Down: true})
	if done, err := (&decommission{node: node{sw2, n2}}).Done(ctx); done || err == nil {
		t.Fatalf("down node: done=%v err=%v, want unknown", done, err)
	}
	// Refusal: not started (the engine records the step pending), exit 3, and the
	// error says what Cassandra refused.
	w3, sw3, n3 := setup(t, "4.1")
	_ = w3.Cass.SetFault(n3.Pod, sim.Fault{RefuseRF: true})
	err := (&decommission{node: node{sw3, n3}}).Do(ctx)
	var notStarted *engine.NotStarted
	var refused *RefusedError
	if !errors.As(err, &notStarted) || notStarted.Code != 3 || !errors.As(err, &refused) || refused.Pod != n3.Pod {
		t.Fatalf("refusal: %v", err)
	}
	// 3.11: a LEAVING node is not safe to call again (no guard, a duplicate would run).
	w4, sw4, n4 := setup(t, "3.11")
	_ = w4
	sw4.ServerVersion = "3.11.11"
	sw4.Nodetool = leavingNodetool{sw4.Nodetool.(nodetool.Client)}
	if err := (&decommission{node: node{sw4, n4}}).Safe(ctx); err == nil || !strings.Contains(err.Error(), "no guard") {
		t.Fatalf("3.11 LEAVING: %v", err)
	}
}

// leavingNodetool reports every node LEAVING.
type leavingNodetool struct{ nodetool.Client }

func (leavingNodetool) Netstats(context.Context, string) (nodetool.Netstats, error) {
	return nodetool.Netstats{Mode: pubnodetool.ModeLeaving}, nil
}

func asFatal(err error, f **operation.Fatal) bool {
	if e, ok := err.(*operation.Fatal); ok {
		*f = e
		return true
	}
	return false
}

func TestVerifyLeftStep(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	st := &verifyLeft{node: node{sw, n}}
	mustDone(t, st, false) // NORMAL
	if err := (&decommission{node: node{sw, n}}).Do(ctx); err != nil {
		t.Fatal(err)
	}
	mustDone(t, st, true) // DECOMMISSIONED and absent from the ring
	// An empty ring read is unknown, not "left".
	_ = w.Cass.SetFault(w.Pod("rack1", 0), sim.Fault{EmptyRing: true})
	_ = w.Cass.SetFault(w.Pod("rack1", 1), sim.Fault{EmptyRing: true})
	if done, err := st.Done(ctx); done || err == nil {
		t.Fatalf("empty ring: done=%v err=%v", done, err)
	}
	// A garbled read too.
	_ = w.Cass.SetFault(w.Pod("rack1", 0), sim.Fault{Garbled: true})
	_ = w.Cass.SetFault(w.Pod("rack1", 1), sim.Fault{Garbled: true})
	if done, err := st.Done(ctx); done || err == nil {
		t.Fatalf("garbled ring: done=%v err=%v", done, err)
	}
	// A restarted node (NORMAL again) makes Wait ask for the decommission again.
	w2, sw2, n2 := setup(t, "4.1")
	_ = w2
	err := (&verifyLeft{node: node{sw2, n2}}).Wait(ctx)
	if redo, ok := err.(*engine.Redo); !ok || redo.StepID != "decommission/"+n2.Pod {
		t.Fatalf("NORMAL node: %v", err)
	}
}

func TestShrinkStatefulSetStep(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	st := &shrinkStatefulSet{node: node{sw, n}}
	mustDone(t, st, false)
	if err := st.Safe(ctx); err == nil || !strings.Contains(err.Error(), "not confirmed gone") {
		t.Fatalf("Safe before the node left: %v", err)
	}
	if err := (&decommission{node: node{sw, n}}).Do(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Safe(ctx); err != nil {
		t.Fatalf("Safe after the node left: %v", err)
	}
	if err := st.Do(ctx); err != nil {
		t.Fatal(err)
	}
	mustDone(t, st, true)
	if w.Replicas("rack1") != 2 {
		t.Fatalf("replicas %d", w.Replicas("rack1"))
	}
	if err := st.Do(ctx); err != nil { // idempotent
		t.Fatal(err)
	}
	if w.Replicas("rack1") != 2 {
		t.Fatal("second Do changed replicas")
	}
	// Not the highest ordinal any more (someone scaled up): refused.
	w2, sw2, n2 := setup(t, "4.1")
	if err := (&decommission{node: node{sw2, n2}}).Do(ctx); err != nil {
		t.Fatal(err)
	}
	obj, _ := w2.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("statefulsets"), w2.NS, w2.STS("rack1"))
	sts := obj.(*appsv1.StatefulSet).DeepCopy()
	four := int32(4)
	sts.Spec.Replicas = &four
	_ = w2.Kube.Tracker().Update(appsv1.SchemeGroupVersion.WithResource("statefulsets"), sts, w2.NS)
	if err := (&shrinkStatefulSet{node: node{sw2, n2}}).Safe(ctx); err == nil || !strings.Contains(err.Error(), "not its highest ordinal") {
		t.Fatalf("grown StatefulSet: %v", err)
	}
}

func TestWaitPodGoneStep(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	st := &waitPodGone{node: node{sw, n}}
	mustDone(t, st, false)
	// A pod re-created under the same name (another UID) is an error, not "gone".
	obj, _ := w.Kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), w.NS, n.Pod)
	p := obj.(*corev1.Pod).DeepCopy()
	p.UID = "another"
	_ = w.Kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, w.NS)
	if _, err := st.Done(ctx); err == nil || !strings.Contains(err.Error(), "re-created") {
		t.Fatalf("re-created pod: %v", err)
	}
	// The watch sees the deletion.
	p.UID = k8stypes.UID(n.PodUID)
	_ = w.Kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, w.NS)
	errc := make(chan error, 1)
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	w.Kube.ClearActions()
	go func() { errc <- st.Wait(wctx) }()
	// The fake server does not replay events from a resourceVersion: act once the
	// watch is open.
	waitFor(wctx, t, "Wait to open its watch", func() bool { return countVerb(w, "watch") > 0 })
	// Another pod's deletion must not end the wait.
	_ = w.Kube.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), w.NS, w.Pod("rack1", 0))
	_ = w.Kube.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), w.NS, n.Pod)
	if err := <-errc; err != nil {
		t.Fatalf("Wait: %v", err)
	}
	mustDone(t, st, true)
}

func TestDeletePVCsStep(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	st := &deletePVCs{node: node{sw, n}}
	mustDone(t, st, false)
	if err := st.Safe(ctx); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("Safe with the pod alive: %v", err)
	}
	// Pod gone but node never decommissioned (still in the ring): refused.
	_ = w.Kube.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), w.NS, n.Pod)
	if err := st.Safe(ctx); err == nil || !strings.Contains(err.Error(), "not confirmed gone") {
		t.Fatalf("Safe with the node in the ring: %v", err)
	}
	// Decommissioned, STS shrunk, pod gone: safe, deleted with a UID precondition.
	w2, sw2, n2 := setup(t, "4.1")
	for _, s := range []operation.Step{&decommission{node: node{sw2, n2}}, &shrinkStatefulSet{node: node{sw2, n2}}} {
		if err := s.Do(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st2 := &deletePVCs{node: node{sw2, n2}}
	if err := st2.Safe(ctx); err != nil {
		t.Fatalf("Safe: %v", err)
	}
	if err := st2.Do(ctx); err != nil {
		t.Fatal(err)
	}
	mustDone(t, st2, true)
	if len(w2.Violations()) > 0 {
		t.Fatal(w2.Violations())
	}
	// A claim of the same name with another UID is not ours: Done, and never deleted.
	w3, sw3, n3 := setup(t, "4.1")
	obj, _ := w3.Kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), w3.NS, "storage-"+n3.Pod)
	pvc := obj.(*corev1.PersistentVolumeClaim).DeepCopy()
	pvc.UID = "someone-else"
	_ = w3.Kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), pvc, w3.NS)
	mustDone(t, &deletePVCs{node: node{sw3, n3}}, true)
}

func TestUpdateClusterStep(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	st := &updateCluster{w: sw, want: map[string]int{"rack1": 2}}
	mustDone(t, st, false)
	if err := st.Safe(ctx); err == nil || !strings.Contains(err.Error(), "fake-demo-dc1-rack1 has 3") {
		t.Fatalf("Safe before the shrink: %v", err)
	}
	for _, s := range []operation.Step{&decommission{node: node{sw, n}}, &shrinkStatefulSet{node: node{sw, n}}} {
		if err := s.Do(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Safe(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Do(ctx); err != nil {
		t.Fatal(err)
	}
	mustDone(t, st, true)
	if got := w.Members("rack1"); got != 2 {
		t.Fatalf("members %d", got)
	}
	if got := w.SpecWrites(); got != 1 {
		t.Fatalf("the spec was written %d times, want once", got)
	}
}

func TestOperatorSteps(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 2, Operator: true})
	obj, _ := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), w.NS, fakeworld.OperatorName)
	d := obj.(*appsv1.Deployment)
	op := record.PausedOperator{Namespace: w.NS, Name: fakeworld.OperatorName, UID: string(d.UID), Replicas: 1}
	cp := &record.Checkpoint{Namespace: w.NS, Cluster: w.Name, Target: record.Target{DC: "dc1", Nodes: 2}, PausedOperator: &op}
	a := w.Adapter()
	sw := &World{Kube: w.Kube, Namespace: w.NS, CP: cp, Racks: []topology.Rack{{DC: "dc1", Name: "rack1", StatefulSet: w.STS("rack1")}}, CountWords: a.CountWords(), Reporter: nopReporter{},
		Spec: a.DCSpec(w.NS, w.Name, "dc1")}
	sw.obs.SetUncached(true)
	pause, restore := &pauseOperator{operatorStep{w: sw, op: op}}, &resumeOperator{operatorStep{w: sw, op: op}}
	mustDone(t, pause, false)
	if err := pause.Safe(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pause.Do(ctx); err != nil {
		t.Fatal(err)
	}
	mustDone(t, pause, true)
	mustDone(t, restore, false)
	if err := restore.Safe(ctx); err != nil { // CR and STS agree (2 and 2)
		t.Fatal(err)
	}
	if err := restore.Do(ctx); err != nil {
		t.Fatal(err)
	}
	mustDone(t, restore, true)
	if got := w.OperatorReplicas(fakeworld.OperatorName); len(got) != 3 || got[1] != 0 || got[2] != 1 {
		t.Fatalf("operator writes %v, want [1 0 1]", got)
	}
	if w.DeploymentReplicas(fakeworld.OperatorName) != 1 {
		t.Fatal("not restored")
	}
	// A re-created Deployment (another UID) is not paused.
	op.UID = "other"
	if err := (&pauseOperator{operatorStep{w: sw, op: op}}).Safe(ctx); err == nil {
		t.Fatal("re-created Deployment accepted")
	}
}

// commandCounter counts the nodetool netstats calls made through it, by pod.
// commandCounter counts, by pod, the nodetool calls of one command (netstats when
// command is empty).
type commandCounter struct {
	inner interface {
		Exec(ctx context.Context, pod string, argv []string) (string, string, error)
	}
	command string
	mu      sync.Mutex
	calls   map[string]int
	// seen, when set, receives each call counted.
	seen chan struct{}
}

func (c *commandCounter) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	command := c.command
	if command == "" {
		command = "netstats"
	}
	if slices.Contains(argv, command) {
		c.mu.Lock()
		c.calls[pod]++
		c.mu.Unlock()
		if c.seen != nil {
			c.seen <- struct{}{}
		}
	}
	return c.inner.Exec(ctx, pod, argv)
}

// TestVerifyLeftDrivenPodGoing: with an operator that acts, a pod it is deleting (or
// has deleted) is not asked for its node's mode: the ring alone decides, and still says
// "not yet" while it lists the node. A pod that stays is asked as before.
func TestVerifyLeftDrivenPodGoing(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	sw.Scaler = readyScaler()
	c := &commandCounter{inner: w, calls: map[string]int{}}
	sw.Nodetool = nodetool.Client{Exec: c}
	st := &verifyLeft{node: node{sw, n}}
	mustDone(t, st, false) // NORMAL, its pod there: asked
	if c.calls[n.Pod] != 1 {
		t.Fatalf("netstats of a pod that stays: %d calls, want 1", c.calls[n.Pod])
	}
	// The pod is being deleted while its node is still in the ring: not left.
	p, err := w.Kube.CoreV1().Pods(w.NS).Get(ctx, n.Pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	p.DeletionTimestamp = &now
	if _, err := w.Kube.CoreV1().Pods(w.NS).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustDone(t, st, false)
	if c.calls[n.Pod] != 1 {
		t.Fatalf("netstats of a pod being deleted: %d calls in all, want the first one only", c.calls[n.Pod])
	}
	if err := (&decommission{node: node{sw, n}}).Do(ctx); err != nil {
		t.Fatal(err)
	}
	before := c.calls[n.Pod]
	mustDone(t, st, true) // out of the ring
	if c.calls[n.Pod] != before {
		t.Fatalf("netstats of a pod being deleted: %d calls, want none", c.calls[n.Pod]-before)
	}
	if !podGoing(nil, true) || podGoing(&corev1.Pod{}, false) || !podGoing(p, false) {
		t.Fatal("podGoing")
	}
}

// count is how many calls c counted in all.
func (c *commandCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.calls {
		n += k
	}
	return n
}
