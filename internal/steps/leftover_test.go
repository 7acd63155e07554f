package steps

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestJudgeLeftover: left-over claims may go only while no pod uses them, the
// StatefulSet does not want their pod back and every ring member of the datacenter runs
// at a pod's address.
func TestJudgeLeftover(t *testing.T) {
	l := record.Leftover{Pod: "c-dc1-r1-1", StatefulSet: "c-dc1-r1", Ordinal: 1, PVCs: []record.PVC{{Name: "data-c-dc1-r1-1", UID: "u"}}}
	pod := func(name, ip, claim string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{PodIP: ip}}
		if claim != "" {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
		}
		return p
	}
	ring := pubnodetool.Ring{Nodes: []pubnodetool.Node{{DC: "dc1", Status: "U", State: "N", Address: "10.0.0.1", HostID: "h0"}}}
	pods := []corev1.Pod{pod("c-dc1-r1-0", "10.0.0.1", "data-c-dc1-r1-0")}
	for _, tc := range []struct {
		name     string
		ring     pubnodetool.Ring
		replicas int
		pods     []corev1.Pod
		want     string // "" when they may go
	}{
		{"settled", ring, 1, pods, ""},
		{"used", ring, 1, append(pods, pod("debug", "", "data-c-dc1-r1-1")), "PVC data-c-dc1-r1-1 is used by pod debug"},
		{"wanted again", ring, 2, pods, "StatefulSet c-dc1-r1 has 2 replicas and wants pod c-dc1-r1-1 again"},
		{"member without pod", pubnodetool.Ring{Nodes: append(append([]pubnodetool.Node{}, ring.Nodes...), pubnodetool.Node{DC: "dc1", Status: "D", State: "N", Address: "10.0.0.2", HostID: "h1"}, pubnodetool.Node{DC: "dc2", Status: "D", State: "N", Address: "10.9.0.2", HostID: "other"})}, 1, pods, "ring members of datacenter dc1 run where no pod is (10.0.0.2 (Host ID h1, DN), ring read from r)"},
	} {
		got := JudgeLeftover(l, "dc1", tc.ring, "r", tc.replicas, tc.pods)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
