package steps

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// TestNeverStarted: only a Pending pod none of whose containers ever ran is one abort
// may take away; a pod that ran once (restarted, terminated, or being deleted) is not.
func TestNeverStarted(t *testing.T) {
	now := metav1.Now()
	pending := func(cs ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: cs}}
	}
	waiting := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"unscheduled", pending(), true},
		{"image never pulled", pending(corev1.ContainerStatus{State: waiting}), true},
		{"ran and crashed", pending(corev1.ContainerStatus{State: waiting, RestartCount: 1}), false},
		{"terminated once", pending(corev1.ContainerStatus{State: waiting, LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}), false},
		{"running", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, false},
		{"being deleted", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: corev1.PodStatus{Phase: corev1.PodPending}}, false},
	} {
		if got := NeverStarted(tc.pod); got != tc.want {
			t.Errorf("%s: NeverStarted %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNoNodeOn: a never-started pod is confirmed empty only when the ring has no node
// at its address and none at an address no other pod of the cluster has.
func TestNoNodeOn(t *testing.T) {
	pod := func(name, ip string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{PodIP: ip}}
	}
	ring := pubnodetool.Ring{Nodes: []pubnodetool.Node{{Address: "10.0.0.1", HostID: "h1"}, {Address: "10.0.0.2", HostID: "h2"}}}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want string
	}{
		{"no IP, every node accounted for", []corev1.Pod{pod("a", "10.0.0.1"), pod("b", "10.0.0.2"), pod("p", "")}, ""},
		{"a node at its address", []corev1.Pod{pod("a", "10.0.0.1"), pod("p", "10.0.0.2")}, "at its address"},
		{"a node no other pod has", []corev1.Pod{pod("a", "10.0.0.1"), pod("p", "")}, "no running pod of the cluster has"},
	} {
		err := NoNodeOn(ring, "a", tc.pods, []string{"p"})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestUnstartedSteps: a scale-down's never-started pod (Node.Unstarted, no Host ID) is
// shrunk and its claims deleted without a decommission; right before each write the
// judgment is made again from fresh reads (Recheck): a pod that started meanwhile is
// not shrunk, a pod still there keeps its claims, and an operator that scales itself
// never gets a StatefulSet shrunk.
func TestUnstartedSteps(t *testing.T) {
	ctx := context.Background()
	const name = "fake-demo-dc1-rack1-2"
	// Two nodes; rack1 grown to 3, whose new pod stays Pending (never scheduled).
	mk := func(t *testing.T) (*fakeworld.World, *World, record.Node) {
		w := fakeworld.New(t, fakeworld.Opts{Nodes: 2, Version: "4.1", PendingPods: []string{name}})
		w.SetReplicas("rack1", 3)
		n := record.Node{Pod: name, PodUID: w.PodUID(name), Ordinal: 2, DC: "dc1", Rack: "rack1", StatefulSet: w.STS("rack1"),
			PVCs: []record.PVC{{Name: "storage-" + name, UID: "pvc-storage-" + name}}, Unstarted: true}
		cp := &record.Checkpoint{Namespace: w.NS, Cluster: w.Name, Target: record.Target{DC: "dc1", Nodes: 2}, Nodes: []record.Node{n}}
		a := w.Adapter()
		sw := &World{Kube: w.Kube, Nodetool: nodetool.Client{Exec: w}, Namespace: w.NS, ClusterSelector: a.ClusterSelector(w.Name),
			Racks: []topology.Rack{{DC: "dc1", Name: "rack1", StatefulSet: w.STS("rack1")}}, CountWords: a.CountWords(), Container: a.Container(), CP: cp,
			Reporter: nopReporter{}, Poll: time.Millisecond, ServerVersion: "4.1.0", variant: Variant{RingReaders: true}}
		sw.obs.SetUncached(true)
		if n.PodUID == "" {
			t.Fatalf("pod %s was not created", name)
		}
		return w, sw, n
	}
	w, sw, n := mk(t)
	shrink := &shrinkStatefulSet{node: node{sw, n}}
	for _, step := range []interface {
		Safe(context.Context) error
		Recheck(context.Context) error
	}{shrink} {
		if err := step.Safe(ctx); err != nil {
			t.Fatalf("Safe: %v", err)
		}
		if err := step.Recheck(ctx); err != nil {
			t.Fatalf("Recheck: %v", err)
		}
	}
	del := &deletePVCs{node: node{sw, n}}
	if err := del.Safe(ctx); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("claims' Safe with the pod still there: %v", err)
	}
	if err := shrink.Do(ctx); err != nil {
		t.Fatal(err)
	}
	if w.Replicas("rack1") != 2 {
		t.Fatalf("replicas %d, want 2", w.Replicas("rack1"))
	}
	_ = w.Kube.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), w.NS, name)
	if err := del.Safe(ctx); err != nil {
		t.Fatalf("claims' Safe: %v", err)
	}
	if err := del.Recheck(ctx); err != nil {
		t.Fatalf("claims' Recheck: %v", err)
	}
	if err := del.Do(ctx); err != nil {
		t.Fatal(err)
	}
	mustDone(t, del, true)
	if got := w.PVCDeletes(); len(got) != 1 || got[0] != "storage-"+name {
		t.Errorf("claims deleted %v, want storage-%s once", got, name)
	}
	for _, ev := range w.History() {
		if ev.Kind == "exec" && ev.Name == name {
			t.Errorf("nodetool ran in the never-started pod: %+v", ev)
		}
	}
	if v := w.Violations(); len(v) > 0 {
		t.Fatal(v)
	}

	// The pod started after the plan: the shrink is not done.
	w2, sw2, n2 := mk(t)
	obj, _ := w2.Kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), w2.NS, name)
	p := obj.(*corev1.Pod).DeepCopy()
	p.Status.Phase = corev1.PodRunning
	_ = w2.Kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, w2.NS)
	if err := (&shrinkStatefulSet{node: node{sw2, n2}}).Recheck(ctx); err == nil || !strings.Contains(err.Error(), "started since it was planned") {
		t.Fatalf("Recheck of a pod that started: %v", err)
	}

	// An operator that scales itself: never.
	_, sw3, n3 := mk(t)
	sw3.Scaler = scalerStub{}
	if err := (&shrinkStatefulSet{node: node{sw3, n3}}).Recheck(ctx); err == nil || !strings.Contains(err.Error(), "never shrinks") {
		t.Fatalf("Recheck under an operator that scales itself: %v", err)
	}
}

// scalerStub stands for an operator that scales itself; never called.
type scalerStub struct{ operator.Scaler }
