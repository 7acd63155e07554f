package world

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDrivenDeadEnd: in a cass-operator world, DeadEnd judges the datacenter (its size
// against the StatefulSets and the pods that exist, its server-data claims) and a
// plugin write to the operator's Deployment, which is never paused, is a violation.
func TestDrivenDeadEnd(t *testing.T) {
	w := New(t, Opts{CassOperator: true, Nodes: 3})
	if d := w.DeadEnd(CassOperatorDeployment); len(d) != 0 {
		t.Fatalf("a settled datacenter: %v", d)
	}

	w.mu.Lock()
	w.setDCSize(2)
	w.mu.Unlock()
	if d := strings.Join(w.DeadEnd(CassOperatorDeployment), "; "); !strings.Contains(d, "spec.size of dc1 is 2 and its StatefulSets have 3 replicas") {
		t.Errorf("size 2 with 3 replicas: %q", d)
	}
	if got := w.DCSizeEdits(); strings.Join(got, " ") != "3->2" {
		t.Errorf("edits %v, want [3->2]", got)
	}
	w.SettleOperator(400) // the operator removes pod 2 and its claim
	if d := w.DeadEnd(CassOperatorDeployment); len(d) != 0 {
		t.Errorf("settled at 2: %v", d)
	}

	d, err := w.Kube.AppsV1().Deployments(w.NS).Get(context.Background(), CassOperatorDeployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zero := int32(0)
	d.Spec.Replicas = &zero
	if _, err := w.Kube.AppsV1().Deployments(w.NS).Update(context.Background(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := strings.Join(w.Violations(), "; "); !strings.Contains(v, "never paused") {
		t.Errorf("the plugin scaled cass-operator: violations %q", v)
	}
	if d := strings.Join(w.DeadEnd(CassOperatorDeployment), "; "); !strings.Contains(d, "the operator is at 0 replicas") {
		t.Errorf("operator at 0: %q", d)
	}
}
