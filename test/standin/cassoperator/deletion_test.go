package cassoperator

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// honourFinalizers makes the fake dynamic client treat a CassandraDatacenter's
// finalizers as the API server does: a delete of one that has finalizers only sets
// deletionTimestamp; the write that removes the last finalizer of one being deleted
// deletes it.
func (e *env) honourFinalizers() {
	tr := e.dyn.Tracker()
	e.dyn.PrependReactor("*", "cassandradatacenters", func(a k8stesting.Action) (bool, runtime.Object, error) {
		switch a := a.(type) {
		case k8stesting.DeleteAction:
			obj, err := tr.Get(DatacenterGVR, a.GetNamespace(), a.GetName())
			if err != nil {
				return true, nil, err
			}
			u := obj.(*unstructured.Unstructured).DeepCopy()
			if len(u.GetFinalizers()) == 0 {
				return false, nil, nil
			}
			if u.GetDeletionTimestamp() == nil {
				now := metav1.NewTime(e.now)
				u.SetDeletionTimestamp(&now)
			}
			return true, u, tr.Update(DatacenterGVR, u, a.GetNamespace())
		case k8stesting.UpdateAction:
			u := a.GetObject().(*unstructured.Unstructured)
			if u.GetDeletionTimestamp() == nil || len(u.GetFinalizers()) > 0 || a.GetSubresource() != "" {
				return false, nil, nil
			}
			return true, u, tr.Delete(DatacenterGVR, a.GetNamespace(), u.GetName())
		}
		return false, nil, nil
	})
}

// withOtherDC adds datacenter dc2 (n nodes, UN, no pods here: another
// CassandraDatacenter's) to the ring.
func (e *env) withOtherDC(n int) {
	for i := 0; i < n; i++ {
		e.nextIP++
		spec := sim.NodeSpec{Pod: PodName(testCluster, "dc2", "r1", i), HostID: fmt.Sprintf("00000000-0000-4000-9000-%012d", e.nextIP),
			Address: fmt.Sprintf("10.0.0.%d", e.nextIP), DC: "dc2", Rack: "r1"}
		if err := e.cass.AddNode(spec); err != nil {
			e.t.Fatal(err)
		}
	}
}

// deleteDC deletes the CassandraDatacenter (annotated decommission-on-delete first
// when decommission).
func (e *env) deleteDC(decommission bool) {
	e.t.Helper()
	ctx := context.Background()
	r := e.dyn.Resource(DatacenterGVR).Namespace(testNS)
	if decommission {
		u := e.dc()
		u.SetAnnotations(map[string]string{AnnotationDecommissionOnDelete: "true"})
		if _, err := r.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := r.Delete(ctx, testDC, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if u := e.dc(); u.GetDeletionTimestamp() == nil {
		e.t.Fatal("no deletionTimestamp: the finalizer did not hold the datacenter")
	}
}

func (e *env) dcGone() bool {
	_, err := e.dyn.Resource(DatacenterGVR).Namespace(testNS).Get(context.Background(), testDC, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

func countOf(as []Action, a Action) int {
	n := 0
	for _, x := range as {
		if x == a {
			n++
		}
	}
	return n
}

// ringCodes is each node's status code as peers print it, by pod ("" = not listed).
func (e *env) ringCodes() map[string]string {
	nodes, err := e.cass.Nodes()
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range nodes {
		out[n.Pod] = n.PeerCode
	}
	return out
}

// The deletion with decommission-on-delete and another datacenter in the ring
// (ProcessDeletion, FACTS §9): Decommission=True, then the scale-down flow, one node at
// a time (highest ordinal, racks in SplitRacks order), each decommissioned exactly once;
// then the claims, the finalizer, and the resource is gone. dc2 stays UN.
func TestDeleteWithDecommissionOnDelete(t *testing.T) {
	e := newEnv(t, []string{"r1", "r2"}, 3)
	e.honourFinalizers()
	e.withOtherDC(2)
	e.deleteDC(true)
	got := e.run(New(e.cfg()))
	one := []Action{ActDecommission, ActLabelDecommissioning, ActShrinkStatefulSet, ActDeletePVCs, ActRemoveNodeStatus}
	want := []Action{ProgressAction(ProgressUpdating), CondAction(CondDecommission, "True"), CondAction(CondScalingDown, "True")}
	want = append(want, one...)
	for i := 0; i < 2; i++ {
		want = append(want, CondAction(CondScalingDown, "False"), CondAction(CondScalingDown, "True"))
		want = append(want, one...)
	}
	want = append(want, CondAction(CondScalingDown, "False"), ActDeleteDCPVCs, ActRemoveFinalizer)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("actions\n got %q\nwant %q", got, want)
	}
	if !e.dcGone() {
		t.Fatal("the CassandraDatacenter is still there")
	}
	codes := e.ringCodes()
	for _, p := range []string{PodName(testCluster, testDC, "r1", 0), PodName(testCluster, testDC, "r1", 1), PodName(testCluster, testDC, "r2", 0)} {
		v, err := e.node(p)
		if err != nil || v.DecommissionsStarted != 1 || v.DecommissionCalls != 1 {
			t.Errorf("node %s: %+v %v, want decommissioned exactly once", p, v, err)
		}
		if codes[p] != "" {
			t.Errorf("node %s still in the ring as %q", p, codes[p])
		}
		if e.pod(p) != nil || e.pvcExists(DataPVCName(p)) {
			t.Errorf("pod or claim of %s left", p)
		}
	}
	for i := 0; i < 2; i++ {
		if p := PodName(testCluster, "dc2", "r1", i); codes[p] != "UN" {
			t.Errorf("dc2 node %s is %q, want UN", p, codes[p])
		}
	}
	if e.replicas("r1") != 0 || e.replicas("r2") != 0 {
		t.Errorf("replicas r1 %d r2 %d, want 0", e.replicas("r1"), e.replicas("r2"))
	}
}

// Without the annotation: every StatefulSet to 0 at once, no decommission; the claims
// are deleted once no pod mounts them, the finalizer removed. The other datacenter's
// ring keeps the nodes as DN (cass-operator #125).
func TestDeleteWithoutDecommissionOnDelete(t *testing.T) {
	e := newEnv(t, []string{"r1", "r2"}, 3)
	e.honourFinalizers()
	e.withOtherDC(2)
	e.deleteDC(false)
	got := e.run(New(e.cfg()))
	want := []Action{ProgressAction(ProgressUpdating), ActScaleToZero, ActScaleToZero, ActDeleteDCPVCs, ActRemoveFinalizer}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("actions\n got %q\nwant %q", got, want)
	}
	if !e.dcGone() {
		t.Fatal("the CassandraDatacenter is still there")
	}
	codes := e.ringCodes()
	for _, p := range []string{PodName(testCluster, testDC, "r1", 0), PodName(testCluster, testDC, "r1", 1), PodName(testCluster, testDC, "r2", 0)} {
		v, err := e.node(p)
		if err != nil || v.DecommissionCalls != 0 || v.DecommissionsStarted != 0 {
			t.Errorf("node %s: %+v %v, want never decommissioned", p, v, err)
		}
		if codes[p] != "DN" {
			t.Errorf("node %s is %q in the ring, want DN", p, codes[p])
		}
		if e.pod(p) != nil || e.pvcExists(DataPVCName(p)) {
			t.Errorf("pod or claim of %s left", p)
		}
	}
}

// With the annotation in a single-datacenter ring, ProcessDeletion requeues for ever
// ("How could we have pods if we've decommissioned everything?"): nothing is touched.
func TestDeleteWithDecommissionOnDeleteSingleDC(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 2)
	e.honourFinalizers()
	e.deleteDC(true)
	op := New(e.cfg())
	got := e.run(op)
	if want := []Action{ProgressAction(ProgressUpdating)}; !reflect.DeepEqual(got, want) {
		t.Fatalf("actions %q, want %q", got, want)
	}
	if !strings.Contains(op.Waiting(), "no other datacenter") || e.replicas("r1") != 2 || e.dcGone() {
		t.Fatalf("waiting %q, replicas %d, gone %v", op.Waiting(), e.replicas("r1"), e.dcGone())
	}
	if n := countOf(op.Actions(), ActDecommission); n != 0 {
		t.Fatalf("%d decommissions", n)
	}
}

// A datacenter without the finalizer gets it (handler.go addFinalizer); one annotated
// no-finalizer does not.
func TestAddFinalizer(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 1)
	u := e.dc()
	u.SetFinalizers(nil)
	if _, err := e.dyn.Resource(DatacenterGVR).Namespace(testNS).Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := e.run(New(e.cfg())); !reflect.DeepEqual(got, []Action{ActAddFinalizer}) {
		t.Fatalf("actions %q", got)
	}
	if f := e.dc().GetFinalizers(); !reflect.DeepEqual(f, []string{Finalizer}) {
		t.Fatalf("finalizers %v", f)
	}
}

// A process killed at any write of the deletion leaves a state the next one finishes
// from the world: the datacenter goes, each node decommissioned exactly once. Killed
// right after the decommission call, it is FACTS §8's state A, repaired as §8 says.
func TestDeleteWithDecommissionOnDeleteKilled(t *testing.T) {
	for _, at := range []Action{ProgressAction(ProgressUpdating), CondAction(CondDecommission, "True"), ActDecommission,
		ActLabelDecommissioning, ActShrinkStatefulSet, ActDeletePVCs, ActRemoveNodeStatus, ActDeleteDCPVCs} {
		t.Run(string(at), func(t *testing.T) {
			e := newEnv(t, []string{"r1"}, 2)
			e.honourFinalizers()
			e.withOtherDC(1)
			e.deleteDC(true)
			first := New(e.cfg())
			first.KillAfter(at)
			e.run(first)
			if !first.Killed() {
				t.Fatalf("never made %q: %q", at, first.Actions())
			}
			second := New(e.cfg())
			e.run(second)
			if at == ActDecommission {
				// FACTS §8 state A, in a deletion too: the node left, its pod never
				// labelled; the restarted operator waits on it for ever. The §8 repair
				// (label, then ScalingDown=True) lets it go on.
				left := PodName(testCluster, testDC, "r1", 1)
				if !strings.Contains(second.Waiting(), left+" is not ready") || e.dcGone() {
					t.Fatalf("want state A on %s; waits %q", left, second.Waiting())
				}
				e.labelPod(left, StateDecommissioning)
				e.setScalingDownTrue()
				e.run(second)
			}
			if !e.dcGone() {
				t.Fatalf("not gone; the restarted operator waits: %s (actions %q)", second.Waiting(), second.Actions())
			}
			for k := 0; k < 2; k++ {
				p := PodName(testCluster, testDC, "r1", k)
				if v, err := e.node(p); err != nil || v.DecommissionsStarted != 1 || v.PeerCode != "" {
					t.Errorf("node %s: %+v %v, want decommissioned exactly once", p, v, err)
				}
				if e.pod(p) != nil || e.pvcExists(DataPVCName(p)) {
					t.Errorf("pod or claim of %s left", p)
				}
			}
		})
	}
}
