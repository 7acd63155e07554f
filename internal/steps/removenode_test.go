package steps

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

func TestRemovenodeNext(t *testing.T) {
	dn := pubnodetool.Node{Status: "D", State: "N"}
	dl := pubnodetool.Node{Status: "D", State: "L"}
	busy := nodetool.RemovalStatus{Removing: true, Token: "-42", Waiting: []string{"10.0.0.2"}}
	cases := []struct {
		name         string
		st           nodetool.RemovalStatus
		row          pubnodetool.Node
		listed, was  bool
		want         removalMove
		wantWordsHas string
	}{
		{"gone", nodetool.RemovalStatus{}, dn, false, false, removalGone, "gone"},
		{"DN, idle: issue", nodetool.RemovalStatus{}, dn, true, false, removalIssue, ""},
		{"in process on the coordinator: wait, never twice", busy, dl, true, true, removalWait, "10.0.0.2"},
		{"in process, not DL yet (RING_DELAY)", busy, dn, true, false, removalWait, "in process"},
		{"DL from someone else's removal: wait", nodetool.RemovalStatus{}, dl, true, false, removalWait, "did not issue"},
		{"DL, ours dropped (coordinator restarted): issue again", nodetool.RemovalStatus{}, dl, true, true, removalIssue, ""},
	}
	for _, c := range cases {
		got, why := removalNext(c.st, c.row, c.listed, c.was)
		if got != c.want || !strings.Contains(why, c.wantWordsHas) {
			t.Errorf("%s: %v %q, want %v containing %q", c.name, got, why, c.want, c.wantWordsHas)
		}
	}
}

func TestRemovenodeDeadNow(t *testing.T) {
	dn := pubnodetool.Node{Status: "D", State: "N", HostID: "h"}
	if what, err := deadNow("p", dn, true, "r", true, ""); what != "" || err != nil {
		t.Errorf("DN and silent: %q %v", what, err)
	}
	if what, err := deadNow("p", dn, true, "r", false, pubnodetool.ModeStarting); what == "" || err != nil {
		t.Errorf("DN but nodetool answers: want a wait, got %q %v", what, err)
	}
	if _, err := deadNow("p", pubnodetool.Node{Status: "U", State: "N"}, true, "r", false, pubnodetool.ModeNormal); err == nil || !strings.Contains(err.Error(), "not dead") {
		t.Errorf("UN again: want an error, got %v", err)
	}
	if what, err := deadNow("p", pubnodetool.Node{Status: "?", State: "N"}, true, "r", true, ""); what == "" || err != nil {
		t.Errorf("unknown status: want a wait, got %q %v", what, err)
	}
	if what, err := deadNow("p", dn, false, "r", false, ""); what != "" || err != nil {
		t.Errorf("not listed: %q %v", what, err)
	}
}

func TestRemovenodeNodetoolSilent(t *testing.T) {
	running := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
		{Name: "cassandra", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	crashing := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
		{Name: "cassandra", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}},
		{Name: "sidecar", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	cases := []struct {
		name    string
		p       *corev1.Pod
		err     error
		silent  bool
		unknown bool
	}{
		{"no pod", nil, nil, true, false},
		{"container not running (a sidecar runs)", crashing, nil, true, false},
		{"JMX unreachable", running, &pubnodetool.UnreachableError{Pod: "p", Message: "Failed to connect"}, true, false},
		{"answers", running, nil, false, false},
		{"exec broke: unknown", running, errors.New("exec: timeout"), false, true},
	}
	for _, c := range cases {
		silent, unknown := NodetoolSilent(c.p, "cassandra", c.err)
		if silent != c.silent || (unknown != "") != c.unknown {
			t.Errorf("%s: silent %v unknown %q", c.name, silent, unknown)
		}
	}
}

func TestRemovenodeCoordinatorIsOutsideThePlan(t *testing.T) {
	if got := CoordinatorOf(record.Node{StatefulSet: "demo-dc1-rack1", Ordinal: 2}); got != "demo-dc1-rack1-0" {
		t.Errorf("coordinator %s", got)
	}
}
