package world

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	cassop "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
)

// twoDCs is the cass-operator world with dc1 (3 nodes, rack1) and dc2 (2 nodes over
// r1, r2) of cluster demo in one ring.
func twoDCs(t *testing.T) *World {
	w := New(t, Opts{CassOperator: true, Nodes: 3, OtherDC: "dc2", OtherDCRacks: []string{"r1", "r2"}, OtherDCNodes: 2})
	if got := w.SettleOperator(50); len(got) != 0 {
		t.Fatalf("the settled world is not idle: %q", got)
	}
	out, _, err := w.Exec(context.Background(), dc1Pods(w)[0], []string{"nodetool", "status"})
	if err != nil || !strings.Contains(out, "Datacenter: dc1") || !strings.Contains(out, "Datacenter: dc2") {
		t.Fatalf("nodetool status does not show both datacenters (%v):\n%s", err, out)
	}
	return w
}

// dc2Pods are dc2's pods.
func dc2Pods(w *World) []string {
	return []string{cassop.StatefulSetName(w.Name, "dc2", "r1") + "-0", cassop.StatefulSetName(w.Name, "dc2", "r2") + "-0"}
}

// dc1Pods are dc1's pods.
func dc1Pods(w *World) []string {
	var out []string
	for i := 0; i < 3; i++ {
		out = append(out, fmt.Sprintf("%s-%d", w.stsName("rack1"), i))
	}
	return out
}

// deleteDC deletes datacenter name as a user would (annotated first when decommission).
func deleteDC(t *testing.T, w *World, name string, decommission bool) {
	t.Helper()
	ctx := context.Background()
	w.PauseOperatorSteps(true)
	defer w.PauseOperatorSteps(false)
	r := w.Dyn.Resource(DCGVR).Namespace(w.NS)
	if decommission {
		body := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, cassop.DecommissionOnDeleteAnnotation)
		if _, err := r.Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	u, ok := w.Datacenter(name)
	if !ok || u.GetDeletionTimestamp() == nil {
		t.Fatalf("%s not held by its finalizer: %v", name, u)
	}
}

// assertDC2Gone: the resource, its StatefulSets, pods and claims are gone; dc1 is
// untouched (its nodes UN, its stand-in idle), nobody broke a safety rule.
func assertDC2Gone(t *testing.T, w *World) {
	t.Helper()
	if _, ok := w.Datacenter("dc2"); ok {
		t.Fatal("CassandraDatacenter dc2 is still there")
	}
	pods, pvcs := " "+strings.Join(w.PodNames(), " ")+" ", " "+strings.Join(w.PVCNames(), " ")+" "
	for _, p := range dc2Pods(w) {
		if strings.Contains(pods, " "+p+" ") || strings.Contains(pvcs, " server-data-"+p+" ") {
			t.Errorf("pod or claim of %s left", p)
		}
	}
	for _, r := range []string{"r1", "r2"} {
		if _, err := w.Kube.AppsV1().StatefulSets(w.NS).Get(context.Background(), cassop.StatefulSetName(w.Name, "dc2", r), metav1.GetOptions{}); err == nil {
			t.Errorf("StatefulSet of dc2 rack %s left", r)
		}
	}
	for _, p := range dc1Pods(w) {
		if n, err := w.Cass.Node(p); err != nil || n.PeerCode != "UN" || n.DecommissionCalls != 0 {
			t.Errorf("dc1 node %s: %+v %v, want UN, never decommissioned", p, n, err)
		}
	}
	if a := w.OperatorActions(); len(a) != 0 {
		t.Errorf("the stand-in acted on dc1: %q", a)
	}
	if e := w.OperatorErrors(); len(e) != 0 {
		t.Errorf("operator errors: %v", e)
	}
	if v := w.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
}

// With decommission-on-delete: the operator decommissions dc2's nodes one at a time,
// each exactly once, and they leave the ring; then the resource and all of dc2 go.
func TestCassOperatorDeleteDCWithDecommission(t *testing.T) {
	w := twoDCs(t)
	deleteDC(t, w, "dc2", true)
	w.SettleOperator(500)
	assertDC2Gone(t, w)
	for _, p := range dc2Pods(w) {
		n, err := w.Cass.Node(p)
		if err != nil || n.DecommissionsStarted != 1 || n.DecommissionCalls != 1 || n.PeerCode != "" {
			t.Errorf("dc2 node %s: %+v %v, want decommissioned exactly once, out of the ring", p, n, err)
		}
	}
	acts := w.OtherOperatorActions()
	t.Logf("the stand-in on dc2: %q", acts)
	if n := count(acts, standin.ActDecommission); n != 2 {
		t.Errorf("%d decommission calls, want 2: %q", n, acts)
	}
	if n := count(acts, standin.CondAction(standin.CondDecommission, "True")); n != 1 {
		t.Errorf("Decommission=True set %d times: %q", n, acts)
	}
	if n := count(acts, standin.ActScaleToZero); n != 0 {
		t.Errorf("StatefulSets scaled to 0 without decommission: %q", acts)
	}
}

// Without it: StatefulSets to 0, no decommission; dc1's ring keeps dc2's nodes as DN.
func TestCassOperatorDeleteDCWithoutDecommission(t *testing.T) {
	w := twoDCs(t)
	deleteDC(t, w, "dc2", false)
	w.SettleOperator(500)
	assertDC2Gone(t, w)
	for _, p := range dc2Pods(w) {
		n, err := w.Cass.Node(p)
		if err != nil || n.DecommissionCalls != 0 || n.PeerCode != "DN" {
			t.Errorf("dc2 node %s: %+v %v, want never decommissioned, DN in the ring", p, n, err)
		}
	}
	out, _, err := w.Exec(context.Background(), dc1Pods(w)[0], []string{"nodetool", "status"})
	if err != nil || strings.Count(out, "DN ") != 2 {
		t.Errorf("nodetool status on dc1 should list dc2's two nodes DN (%v):\n%s", err, out)
	}
	if n := count(w.OtherOperatorActions(), standin.ActScaleToZero); n != 2 {
		t.Errorf("%d StatefulSets scaled to 0, want 2: %q", n, w.OtherOperatorActions())
	}
}

// The adapter's remover against the world: RemoveDatacenter annotates dc2 and deletes
// it (one patch, one delete with preconditions: History), the operator takes it down,
// and DatacenterLeft empties (each poll steps the operator); asked again, nothing.
func TestCassOperatorRemoveDatacenter(t *testing.T) {
	w := twoDCs(t)
	a := &cassop.Adapter{Clients: operator.Clients{Dynamic: w.Dyn, Kube: w.Kube, Discovery: w.Kube.Discovery()}}
	a.Assume()
	ctx := context.Background()
	if err := a.RemoveDatacenter(ctx, w.NS, "dc2", "dc2", "dc-uid-1", "op-1"); err == nil || !strings.Contains(err.Error(), "re-created") {
		t.Fatalf("another UID: %v", err)
	}
	if err := a.RemoveDatacenter(ctx, w.NS, "dc2", "dc2", "dc-uid-2", "op-1"); err != nil {
		t.Fatal(err)
	}
	var left []string
	for i := 0; i < 500; i++ {
		var err error
		if left, err = a.DatacenterLeft(ctx, w.NS, "dc2", "dc2"); err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			break
		}
	}
	if len(left) != 0 {
		t.Fatalf("left after 500 polls: %q; the stand-in waits: %s", left, w.co.others[0].op.Waiting())
	}
	if err := a.RemoveDatacenter(ctx, w.NS, "dc2", "dc2", "dc-uid-2", "op-1"); err != nil {
		t.Fatalf("again: %v", err)
	}
	var writes []string
	for _, e := range w.History() {
		if e.Kind == "write" && e.Resource == cassop.Resource {
			writes = append(writes, e.Verb+" "+e.Name)
		}
	}
	if got := strings.Join(writes, ", "); got != "patch dc2, delete dc2" {
		t.Errorf("the plugin's writes of CassandraDatacenters: %s", got)
	}
	assertDC2Gone(t, w)
	for _, p := range dc2Pods(w) {
		if n, err := w.Cass.Node(p); err != nil || n.DecommissionsStarted != 1 || n.PeerCode != "" {
			t.Errorf("dc2 node %s: %+v %v, want decommissioned exactly once", p, n, err)
		}
	}
}

func count(as []standin.Action, a standin.Action) int {
	n := 0
	for _, x := range as {
		if x == a {
			n++
		}
	}
	return n
}

// A run that dies right after the mark leaves dc2 annotated, not deleted: the mark
// names its operation, and once that operation is gone a later command takes it back
// (both annotations: the operation added decommission-on-delete); dc2 stays, untouched.
func TestCassOperatorRemoveDatacenterMarkTakenBack(t *testing.T) {
	w := twoDCs(t)
	a := &cassop.Adapter{Clients: operator.Clients{Dynamic: w.Dyn, Kube: w.Kube, Discovery: w.Kube.Discovery()}}
	a.Assume()
	ctx := context.Background()
	if !w.Process(1, func() { _ = a.RemoveDatacenter(ctx, w.NS, "dc2", "dc2", "dc-uid-2", "op-1") }) {
		t.Fatal("the run did not die at its first write")
	}
	marks, err := a.DatacenterMarks(ctx, w.NS)
	if err != nil || len(marks) != 1 || marks[0] != (operator.DatacenterMark{Name: "dc2", UID: "dc-uid-2", Op: "op-1"}) {
		t.Fatalf("marks %v, %v", marks, err)
	}
	if err := a.Unmark(ctx, w.NS, "dc2", "op-1", "dc-uid-2"); err != nil {
		t.Fatal(err)
	}
	u, ok := w.Datacenter("dc2")
	if !ok || u.GetDeletionTimestamp() != nil {
		t.Fatalf("dc2: %v", u)
	}
	for _, k := range []string{cassop.DecommissionOnDeleteAnnotation, cassop.RemoveDCMarkAnnotation} {
		if _, on := u.GetAnnotations()[k]; on {
			t.Errorf("annotation %s left", k)
		}
	}
	if marks, _ := a.DatacenterMarks(ctx, w.NS); len(marks) != 0 {
		t.Errorf("marks left: %v", marks)
	}
	if n := count(w.OtherOperatorActions(), standin.ActDecommission); n != 0 {
		t.Errorf("dc2 decommissioned: %q", w.OtherOperatorActions())
	}
}
