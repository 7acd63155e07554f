package replacenode

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// TestWithdrawable: a task is withdrawn only before it reached the pod: not finished,
// not Running, no pod status, the pod the planned one.
func TestWithdrawable(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u1"}}
	now := metav1.Now()
	dying := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u1", DeletionTimestamp: &now}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u2"}}
	for _, c := range []struct {
		name string
		t    *operator.Task
		p    *corev1.Pod
		want bool
	}{
		{"not started", &operator.Task{}, pod, true},
		{"started, not Running", &operator.Task{Started: true}, pod, true},
		{"Running", &operator.Task{Started: true, Running: true}, pod, false},
		{"a pod status", &operator.Task{Started: true, Pods: map[string]operator.TaskPod{"p": {Status: operator.TaskPodRunning}}}, pod, false},
		{"finished", &operator.Task{Started: true, Finished: true}, pod, false},
		{"no task", nil, pod, false},
		{"pod gone", &operator.Task{}, nil, false},
		{"pod being deleted", &operator.Task{}, dying, false},
		{"pod re-created by someone else, the task not started", &operator.Task{}, other, true},
	} {
		if got := withdrawable(c.t, c.p); got != c.want {
			t.Errorf("%s: withdrawable = %v, want %v", c.name, got, c.want)
		}
	}
}
