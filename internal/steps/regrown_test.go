package steps

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestJudgeRegrown: a pod re-created at a planned node's name is a node of the ring
// when a successful ring read lists its address; out of it when every member is on
// another pod; unknown when a member is on no pod; its claims new when their UIDs are not
// the recorded ones.
func TestJudgeRegrown(t *testing.T) {
	rec := record.Node{Pod: "p-3", PVCs: []record.PVC{{Name: "data-p-3", UID: "old"}}}
	pod := func(ip string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-3", UID: "new-pod"}, Status: corev1.PodStatus{PodIP: ip}}
	}
	claim := func(uid string) map[string]*corev1.PersistentVolumeClaim {
		return map[string]*corev1.PersistentVolumeClaim{"data-p-3": {ObjectMeta: metav1.ObjectMeta{Name: "data-p-3", UID: k8stypes.UID(uid)}}}
	}
	ring := pubnodetool.Ring{Nodes: []pubnodetool.Node{
		{Address: "10.0.0.1", HostID: "h1", Status: "U", State: "N"},
		{Address: "10.0.0.4", HostID: "h4", Status: "U", State: "J"},
	}}
	ips := []string{"10.0.0.1", "10.0.0.4"}
	for _, tc := range []struct {
		name    string
		p       *corev1.Pod
		ring    pubnodetool.Ring
		ips     []string
		claims  map[string]*corev1.PersistentVolumeClaim
		want    regrowth
		wantErr string
	}{
		{"joining at its address", pod("10.0.0.4"), ring, ips, claim("new"), regrowJoined, ""},
		{"never started, new claims", pod(""), ring, ips, claim("new"), regrowUnrecorded, ""},
		{"not in the ring, claims recorded", pod("10.0.0.9"), ring, append(ips, "10.0.0.9"), claim("old"), regrowOut, ""},
		{"no claim", pod(""), ring, ips, map[string]*corev1.PersistentVolumeClaim{"data-p-3": nil}, regrowOut, ""},
		{"a member on no pod", pod(""), ring, ips[:1], claim("new"), regrowNone, "node 10.0.0.4 (Host ID h4) is in the ring at an address no pod of the cluster has"},
	} {
		got, row, err := judgeRegrown(rec, tc.p, tc.ring, tc.ips, tc.claims)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %v %v, want %v", tc.name, got, err, tc.want)
		}
		if got == regrowJoined && row.HostID != "h4" {
			t.Errorf("%s: row %+v", tc.name, row)
		}
	}
}
