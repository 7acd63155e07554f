package steps

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// rackSpec is an operator whose spec keeps a count per rack (as cass-operator's size
// split over racks does); it records every write.
type rackSpec struct {
	counts map[string]int
	writes []map[string]int
}

func (s *rackSpec) RackNodes(context.Context) (map[string]int, error) { return s.counts, nil }

func (s *rackSpec) SetRackNodes(_ context.Context, racks map[string]int) error {
	s.writes = append(s.writes, racks)
	for r, n := range racks {
		s.counts[r] = n
	}
	return nil
}

func statefulSet(name string, replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: appsv1.StatefulSetSpec{Replicas: &replicas}}
}

// TestUpdateClusterRacksDifferByOne: the neutral model expresses a datacenter whose
// racks differ by one (7 nodes over 3 racks: 3, 2, 2). The final step waits until each
// StatefulSet has its own rack's count, then writes every rack's count once.
func TestUpdateClusterRacksDifferByOne(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset(statefulSet("c-dc1-r1", 3), statefulSet("c-dc1-r2", 3), statefulSet("c-dc1-r3", 2))
	spec := &rackSpec{counts: map[string]int{"r1": 3, "r2": 3, "r3": 3}}
	racks := []topology.Rack{{DC: "dc1", Name: "r1", StatefulSet: "c-dc1-r1"}, {DC: "dc1", Name: "r2", StatefulSet: "c-dc1-r2"}, {DC: "dc1", Name: "r3", StatefulSet: "c-dc1-r3"}}
	want := map[string]int{"r1": 3, "r2": 2, "r3": 2}
	cp := &record.Checkpoint{Namespace: "ns", Cluster: "c", Target: record.Target{DC: "dc1", Racks: []string{"r2", "r3"}, Nodes: 2, RackNodes: want}}
	w := &World{Kube: kube, Namespace: "ns", CP: cp, Racks: racks, Spec: spec, Reporter: nopReporter{}}
	w.obs.SetUncached(true)
	st := newUpdateCluster(w)
	if got := st.Describe(); got != "set c rack counts of datacenter dc1 to r1=3, r2=2, r3=2" {
		t.Errorf("Describe = %q", got)
	}
	mustDone(t, st, false)
	if err := st.Safe(ctx); err == nil || !strings.Contains(err.Error(), "c-dc1-r2 has 3") || strings.Contains(err.Error(), "c-dc1-r3") {
		t.Fatalf("Safe with rack r2 not shrunk yet: %v", err)
	}
	if _, err := kube.AppsV1().StatefulSets("ns").Update(ctx, statefulSet("c-dc1-r2", 2), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Safe(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Do(ctx); err != nil {
		t.Fatal(err)
	}
	mustDone(t, st, true)
	if len(spec.writes) != 1 || !sameCounts(spec.writes[0], want) || len(spec.writes[0]) != 3 {
		t.Fatalf("writes %v, want one of %v", spec.writes, want)
	}
}

// TestTargetWantedLegacy: a checkpoint without per-rack counts (every one written so far)
// wants Nodes of every rack of the DC, as before.
func TestTargetWantedLegacy(t *testing.T) {
	got := record.Target{DC: "dc1", Racks: []string{"r1"}, Nodes: 2}.Wanted([]string{"r1", "r2"})
	if !sameCounts(got, map[string]int{"r1": 2, "r2": 2}) || len(got) != 2 {
		t.Fatalf("Wanted = %v", got)
	}
	if s := countText(got); s != "2" {
		t.Fatalf("countText = %q", s)
	}
}

// TestRestoreAfterRepairWhileScaleUnfinished: after a repair, CassKop still has its own
// scale-down to finish, so the cluster resource and the StatefulSets disagree; the
// restore that ends a scale refuses then (someone edited the count), the one that ends
// a repair goes ahead, or the operator would stay paused for good.
func TestRestoreAfterRepairWhileScaleUnfinished(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset(statefulSet("c-dc1-r1", 2), statefulSet("c-dc1-r2", 3))
	spec := &rackSpec{counts: map[string]int{"r1": 1, "r2": 1}}
	racks := []topology.Rack{{DC: "dc1", Name: "r1", StatefulSet: "c-dc1-r1"}, {DC: "dc1", Name: "r2", StatefulSet: "c-dc1-r2"}}
	cp := &record.Checkpoint{Namespace: "ns", Cluster: "c", Target: record.Target{DC: "dc1", Racks: []string{"r1"}, Nodes: 1}}
	w := &World{Kube: kube, Namespace: "ns", CP: cp, Racks: racks, Spec: spec, Reporter: nopReporter{}}
	w.obs.SetUncached(true)
	op := record.PausedOperator{Namespace: "ns", Name: "op", Replicas: 1}
	if err := (&resumeOperator{operatorStep{w: w, op: op}}).Recheck(ctx); err == nil {
		t.Fatal("the restore ending a scale went ahead while the StatefulSets differ from the spec")
	}
	if err := (&resumeAfterRepair{resumeOperator: &resumeOperator{operatorStep{w: w, op: op}}}).Recheck(ctx); err != nil {
		t.Fatalf("the restore ending a repair: %v", err)
	}
}
