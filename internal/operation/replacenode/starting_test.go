package replacenode

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestRecreatedPodStartingIsWaitedOn: a pod re-created since the plan on the dead node's
// claims that does not answer may be starting: it is waited on, not taken as dead, until
// it shows it cannot start or startGrace passed since first seen (no dead end). The
// planned pod, a pod whose start failed, and a pod whose claims are going are not.
func TestRecreatedPodStartingIsWaitedOn(t *testing.T) {
	ctx := context.Background()
	claim := func(deleting bool) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-p2", Namespace: "ns", UID: "c1"}}
		if deleting {
			now := metav1.Now()
			c.DeletionTimestamp, c.Finalizers = &now, []string{"kubernetes.io/pvc-protection"}
		}
		return c
	}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	newRun := func(c *corev1.PersistentVolumeClaim) *run {
		cp := &record.Checkpoint{OperationID: "replace-1", Namespace: "ns", Cluster: "demo"}
		w := &steps.World{Kube: fake.NewClientset(c), CP: cp, Container: "cassandra", Now: func() time.Time { return now }}
		return &run{w: w, rep: &record.Replacement{Pod: "p2", HostID: "dead"},
			n: record.Node{Pod: "p2", PodUID: "pod-old", PVCs: []record.PVC{{Name: "data-p2", UID: "c1"}}}}
	}
	pod := func(uid string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p2", Namespace: "ns", UID: types.UID(uid)}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}

	r := newRun(claim(false))
	why := r.mayBeStarting(ctx, pod("pod-new"))
	for _, want := range []string{"re-created since the plan", "may be starting", "unknown", "3m0s"} {
		if !strings.Contains(why, want) {
			t.Errorf("a re-created pod that does not answer yet: %q does not say %q", why, want)
		}
	}
	now = now.Add(startGrace - time.Second)
	if r.mayBeStarting(ctx, pod("pod-new")) == "" {
		t.Error("the grace counts from when this run first saw the pod: still waited on a second before it ends")
	}
	now = now.Add(time.Second)
	if why := r.mayBeStarting(ctx, pod("pod-new")); why != "" {
		t.Errorf("after %s without an answer the node is dead (no dead end): %q", startGrace, why)
	}
	if why := r.mayBeStarting(ctx, pod("pod-newer")); why == "" {
		t.Error("another re-created pod gets its own grace")
	}

	if why := newRun(claim(false)).mayBeStarting(ctx, pod("pod-old")); why != "" {
		t.Errorf("the planned pod was judged by the plan: %q", why)
	}
	crashing := pod("pod-new")
	crashing.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "bootstrap", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
	if why := newRun(claim(false)).mayBeStarting(ctx, crashing); why != "" {
		t.Errorf("a pod whose start fails is no node coming back: %q", why)
	}
	unschedulable := pod("pod-new")
	unschedulable.Status.Phase = corev1.PodPending
	unschedulable.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	if why := newRun(claim(false)).mayBeStarting(ctx, unschedulable); why != "" {
		t.Errorf("an unschedulable pod is not starting: %q", why)
	}
	if why := newRun(claim(true)).mayBeStarting(ctx, pod("pod-new")); why != "" {
		t.Errorf("a pod whose dead node's claims are being deleted cannot start on its data: %q", why)
	}
}

// TestStartFailedSaysWhy: each sign that a pod's Cassandra cannot start is named; a
// container running now (after restarts too) or an init container done is none.
func TestStartFailedSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		st   corev1.PodStatus
		want string
	}{
		{corev1.PodStatus{Phase: corev1.PodRunning}, ""},
		{corev1.PodStatus{Phase: corev1.PodFailed}, "the pod failed"},
		{corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "cassandra", RestartCount: 2}}}, "container cassandra restarted 2 times and does not run"},
		{corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "cassandra", RestartCount: 2, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}, ""},
		{corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{{Name: "bootstrap", RestartCount: 1, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}}, ""},
		{corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "cassandra", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3}}}}}, "container cassandra exited 3"},
		{corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "cassandra", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}, ""},
	} {
		if got := startFailed(&corev1.Pod{Status: tc.st}); got != tc.want {
			t.Errorf("startFailed(%+v) = %q, want %q", tc.st, got, tc.want)
		}
	}
}
