package scaledown

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// TestFindLeftovers: the claims of the rack's StatefulSet at or above its replicas whose
// pod is gone and that no pod uses, grouped by pod, highest ordinal first; nothing
// else.
func TestFindLeftovers(t *testing.T) {
	one := int32(1)
	st := operation.RackNow{
		Rack: topology.Rack{Name: "rack1"},
		STS: &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "c-dc1-rack1"}, Spec: appsv1.StatefulSetSpec{Replicas: &one,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}, {ObjectMeta: metav1.ObjectMeta{Name: "logs"}}}}},
		Pods: map[int]corev1.Pod{0: {ObjectMeta: metav1.ObjectMeta{Name: "c-dc1-rack1-0"}}, 4: {ObjectMeta: metav1.ObjectMeta{Name: "c-dc1-rack1-4"}}},
		Cur:  1,
	}
	now := metav1.Now()
	claims := map[string]*corev1.PersistentVolumeClaim{}
	for _, c := range []struct {
		name     string
		deleting bool
	}{
		{"data-c-dc1-rack1-0", false},  // below the replicas
		{"data-c-dc1-rack1-1", false},  // left over
		{"logs-c-dc1-rack1-1", false},  // left over, same pod
		{"data-c-dc1-rack1-2", false},  // left over
		{"logs-c-dc1-rack1-2", true},   // being deleted already
		{"data-c-dc1-rack1-3", false},  // used by another pod
		{"data-c-dc1-rack1-4", false},  // its pod is still there
		{"data-c-dc1-rack10-1", false}, // another StatefulSet's
		{"data-c-dc1-rack1-01", false}, // not a name the controller gives
		{"other-c-dc1-rack1-5", false}, // no template of this StatefulSet
	} {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: c.name, UID: types.UID("uid-" + c.name)}}
		if c.deleting {
			pvc.DeletionTimestamp = &now
		}
		claims[c.name] = pvc
	}
	pods := []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "backup"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v",
		VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-c-dc1-rack1-3"}}}}}}}
	got := findLeftovers(st, claims, pods)
	var desc []string
	for _, l := range got {
		var names []string
		for _, c := range l.PVCs {
			names = append(names, c.Name+"@"+c.UID)
		}
		desc = append(desc, l.Pod+"("+l.StatefulSet+","+l.Rack+","+strings.Join(names, " ")+")")
	}
	want := "c-dc1-rack1-2(c-dc1-rack1,rack1,data-c-dc1-rack1-2@uid-data-c-dc1-rack1-2) " +
		"c-dc1-rack1-1(c-dc1-rack1,rack1,data-c-dc1-rack1-1@uid-data-c-dc1-rack1-1 logs-c-dc1-rack1-1@uid-logs-c-dc1-rack1-1)"
	if s := strings.Join(desc, " "); s != want {
		t.Fatalf("leftovers:\n %s\nwant\n %s", s, want)
	}
	if got[0].Ordinal != 2 || got[1].Ordinal != 1 {
		t.Fatalf("ordinals %d, %d", got[0].Ordinal, got[1].Ordinal)
	}
}

// TestCountsOff: the racks whose count differs from the target, said as one number
// when they agree.
func TestCountsOff(t *testing.T) {
	dc := topology.DC{Name: "dc1", Racks: []topology.Rack{{Name: "r1", Nodes: 3}, {Name: "r2", Nodes: 1}, {Name: "r3", Nodes: 3}}}
	off := countsOff(dc, 1)
	if len(off) != 2 || off["r1"] != 3 || off["r3"] != 3 || asked(off) != "3" {
		t.Fatalf("off %v (%s)", off, asked(off))
	}
	if got := asked(map[string]int{"r1": 3, "r2": 2}); got != "r1=3, r2=2" {
		t.Fatalf("asked %q", got)
	}
	if off := countsOff(dc, 3); len(off) != 1 || off["r2"] != 1 {
		t.Fatalf("off %v", off)
	}
}

// TestSummarySettled: a plan that removes no node says it settled, and how many
// left-over claims it deleted.
func TestSummarySettled(t *testing.T) {
	cp := &record.Checkpoint{Target: record.Target{DC: "dc1", Racks: []string{"rack1"}, Nodes: 1},
		Leftovers: []record.Leftover{{Pod: "p-2", PVCs: []record.PVC{{Name: "data-p-2"}, {Name: "logs-p-2"}}}, {Pod: "p-1", PVCs: []record.PVC{{Name: "data-p-1"}}}}}
	if got, want := (Kind{}).Summary(cp), "datacenter dc1 racks rack1 settled at 1 nodes (0 removed, 3 left-over PVCs deleted)"; got != want {
		t.Fatalf("summary %q, want %q", got, want)
	}
	cp.Nodes = []record.Node{{Pod: "p-3"}}
	if got := (Kind{}).Summary(cp); got != "datacenter dc1 racks rack1 scaled to 1 nodes (1 removed)" {
		t.Fatalf("summary %q", got)
	}
}
