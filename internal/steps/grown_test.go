package steps

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// TestGrownCause: the shrink names the paused operator only when it runs again.
func TestGrownCause(t *testing.T) {
	cp := &record.Checkpoint{Namespace: "cassandra", Cluster: "demo"}
	op := &record.PausedOperator{Namespace: "ops", Name: "fake-operator"}
	if got := grownCause(cp, op, 0); got != "someone changed it" {
		t.Errorf("paused operator: %q", got)
	}
	if got := grownCause(cp, nil, 1); got != "someone changed it" {
		t.Errorf("no operator: %q", got)
	}
	want := "operator Deployment ops/fake-operator, which this operation holds paused, runs again (1 replicas) and grew it back"
	if got := grownCause(cp, op, 1); !strings.Contains(got, want) || !strings.Contains(got, "kubectl cassandra resume -n cassandra demo") {
		t.Errorf("running operator: %q", got)
	}
}

// TestShrinkNamesRunningOperator: the shrink's check finds the StatefulSet grown while
// the operator the plan holds paused runs again, and says so.
func TestShrinkNamesRunningOperator(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	sw.CP.PausedOperator = &record.PausedOperator{Namespace: w.NS, Name: fakeworld.OperatorName}
	addOperator(t, w, 1)
	if err := (&decommission{node: node{sw, n}}).Do(ctx); err != nil {
		t.Fatal(err)
	}
	w.SetReplicas("rack1", 4) // as an operator grows a StatefulSet it did not shrink (CassKop does)
	err := (&shrinkStatefulSet{node: node{sw, n}}).Safe(ctx)
	want := "StatefulSet fake-demo-dc1-rack1 has 4 replicas, expected 3: pod fake-demo-dc1-rack1-2 is not its highest ordinal (operator Deployment cassandra/fake-operator, which this operation holds paused, runs again (1 replicas)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Safe: %v, want %q", err, want)
	}
}

// addOperator adds the operator Deployment with replicas (the world's own needs its
// Operator option at creation).
func addOperator(t *testing.T, w *fakeworld.World, replicas int32) {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: fakeworld.OperatorName, Namespace: w.NS}, Spec: appsv1.DeploymentSpec{Replicas: &replicas}}
	if err := w.Kube.Tracker().Add(d); err != nil {
		t.Fatal(err)
	}
}
