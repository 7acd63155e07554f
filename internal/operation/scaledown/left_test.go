package scaledown

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestLeftWhy: a node missing from the ring is taken for one that left it only when it
// says DECOMMISSIONED itself and runs on claims older than its pod.
func TestLeftWhy(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-2", CreationTimestamp: metav1.NewTime(t0)}}
	claim := func(name string, at time.Time) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at)}}
	}
	for _, tc := range []struct {
		name   string
		mode   pubnodetool.Mode
		claims []*corev1.PersistentVolumeClaim
		want   string // "" when left
	}{
		{"decommissioned on its claims", pubnodetool.ModeDecommissioned, []*corev1.PersistentVolumeClaim{claim("data-p-2", t0.Add(-time.Hour)), claim("logs-p-2", t0)}, ""},
		{"a claim missing", pubnodetool.ModeDecommissioned, []*corev1.PersistentVolumeClaim{nil}, ""},
		{"normal", pubnodetool.ModeNormal, nil, "its node is NORMAL, not DECOMMISSIONED"},
		{"starting", pubnodetool.ModeStarting, nil, "not DECOMMISSIONED"},
		{"a claim newer than the pod", pubnodetool.ModeDecommissioned, []*corev1.PersistentVolumeClaim{claim("data-p-2", t0.Add(time.Minute))}, "its PVC data-p-2 was created after the pod"},
	} {
		got := leftWhy(tc.mode, pod, tc.claims)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestMarkLeft: only the decommission and the verification of the nodes that left are
// recorded done.
func TestMarkLeft(t *testing.T) {
	steps := Steps([]record.Node{{Pod: "p-2"}, {Pod: "p-1"}}, true)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	markLeft(steps, map[string]bool{"p-2": true}, now)
	var done []string
	for _, s := range steps {
		if s.State == record.StateDone {
			done = append(done, s.ID)
			if s.FinishedAt == nil || !s.FinishedAt.Equal(now) {
				t.Errorf("%s done without its time: %+v", s.ID, s)
			}
		}
	}
	if got := strings.Join(done, " "); got != "decommission/p-2 verify-left/p-2" {
		t.Errorf("done: %s", got)
	}
}
