package scaleup

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestAbortCountsAddedNodes: a new node counts as added once its StatefulSet reaches its
// ordinal (each StatefulSet read once); a cleanup that started is noted, never refused.
func TestAbortCountsAddedNodes(t *testing.T) {
	sts := func(name string, replicas int32) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: appsv1.StatefulSetSpec{Replicas: &replicas}}
	}
	kube := fake.NewSimpleClientset(sts("r1", 3), sts("r2", 1))
	cp := &record.Checkpoint{Namespace: "ns", Nodes: []record.Node{
		{Pod: "r1-0", StatefulSet: "r1", Ordinal: 0},
		{Pod: "r1-1", StatefulSet: "r1", Ordinal: 1, New: true},
		{Pod: "r1-2", StatefulSet: "r1", Ordinal: 2, New: true},
		{Pod: "r2-1", StatefulSet: "r2", Ordinal: 1, New: true},
	}, Steps: []record.Step{{Kind: StepCleanup, Pod: "r1-0", State: record.StateStarted}}}
	p, err := (Kind{}).Info().Abort.Assess(context.Background(), pub.AbortReads{Toolkit: &operation.Planner{Client: kube}}, cp)
	if err != nil {
		t.Fatal(err)
	}
	if p.Done != 2 || p.Total != 3 || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "cleanup on r1-0") {
		t.Fatalf("progress %+v", p)
	}
	if gets := len(kube.Actions()); gets != 2 {
		t.Errorf("%d reads, want one per StatefulSet", gets)
	}
	cp.Nodes = append(cp.Nodes, record.Node{Pod: "r3-0", StatefulSet: "r3", New: true})
	if _, err := (Kind{}).Info().Abort.Assess(context.Background(), pub.AbortReads{Toolkit: &operation.Planner{Client: kube}}, cp); err == nil ||
		!strings.Contains(err.Error(), "r3") || !strings.Contains(err.Error(), "nothing changed") {
		t.Fatalf("unreadable StatefulSet: %v", err)
	}
}
