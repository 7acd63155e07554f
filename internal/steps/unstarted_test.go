package steps

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
			t.Errorf("%s: neverStarted %v, want %v", tc.name, got, tc.want)
		}
	}
}
