package fakeadapter_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// TestGetMapsTheSpec: the resource is found by discovery and read as the neutral model,
// every rack with its own count, StatefulSet and labels; the selector finds its pods.
func TestGetMapsTheSpec(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 2, Racks: []string{"r1", "r2"}})
	a := fakeadapter.Plugin{}.Connect(operator.Clients{Dynamic: w.Dyn, Discovery: w.Kube.Discovery(), Kube: w.Kube})
	if v, err := a.Resolve(ctx); err != nil || v != fakeadapter.Version {
		t.Fatalf("Resolve: %q %v", v, err)
	}
	cl, _, err := a.Get(ctx, w.NS, w.Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.DCs) != 1 || len(cl.DCs[0].Racks) != 2 || cl.Operator != fakeadapter.OperatorName || cl.ServerVersion != "4.1.0" {
		t.Fatalf("cluster %+v", cl)
	}
	r := cl.DCs[0].Racks[1]
	if r.Name != "r2" || r.Nodes != 2 || r.StatefulSet != "fake-demo-dc1-r2" || r.Labels[fakeadapter.LabelRack] != "r2" {
		t.Fatalf("rack %+v", r)
	}
	pods, err := w.Kube.CoreV1().Pods(w.NS).List(ctx, metav1.ListOptions{LabelSelector: a.ClusterSelector(w.Name)})
	if err != nil || len(pods.Items) != 4 {
		t.Fatalf("pods of the cluster: %v %v", pods, err)
	}
	// No resource served: ErrNoResource.
	w.Kube.Resources = nil
	none := &fakeadapter.Adapter{Discovery: w.Kube.Discovery()}
	if _, err := none.Resolve(ctx); !errors.Is(err, operator.ErrNoResource) {
		t.Fatalf("nothing served: %v", err)
	}
}

// TestCountWritesAreGuarded: a count write tests the rack's place in the spec, and with
// a resourceVersion, that nothing changed since: refused with 422, nothing written.
func TestCountWritesAreGuarded(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 3, Racks: []string{"r1", "r2"}})
	a := w.Adapter()
	old := w.CR().GetResourceVersion()
	if err := a.DCSpec(w.NS, w.Name, "dc1").SetRackNodes(ctx, map[string]int{"r1": 2}); err != nil {
		t.Fatal(err)
	}
	if w.Members("r1") != 2 || w.Members("r2") != 3 || w.SpecWrites() != 1 {
		t.Fatalf("members r1=%d r2=%d after %d writes", w.Members("r1"), w.Members("r2"), w.SpecWrites())
	}
	err := a.SetRackNodesAt(ctx, w.NS, w.Name, "dc1", map[string]int{"r1": 3, "r2": 3}, old)
	if se := (apierrors.APIStatus)(nil); !errors.As(err, &se) || se.Status().Code != http.StatusUnprocessableEntity {
		t.Fatalf("write at an old resourceVersion: %v, want 422", err)
	}
	if err := a.SetRackNodesAt(ctx, w.NS, w.Name, "dc1", map[string]int{"r9": 1}, w.CR().GetResourceVersion()); err == nil {
		t.Fatal("a rack the spec lacks was written")
	}
	if w.Members("r1") != 2 || w.SpecWrites() != 1 {
		t.Fatalf("a refused write changed the spec: r1=%d, %d writes", w.Members("r1"), w.SpecWrites())
	}
}

// TestOperatorStatusRepair: a rack's operation unfinished on a pod reads as stuck on
// it; marked done, it is Finished on it; another pod's operation is not stuck on it.
func TestOperatorStatusRepair(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 3})
	pod := w.Pod("rack1", 2)
	w.SetOperations(fakeadapter.Operation{Datacenter: "dc1", Rack: "rack1", Pod: pod, Phase: fakeadapter.PhaseRunning})
	st := w.Adapter().OperatorStatus(w.NS, w.Name, nil)
	if err := st.StuckOn(ctx, "dc1", "rack1", pod); err != nil {
		t.Fatal(err)
	}
	if err := st.MarkOperationDone(ctx, "dc1", "rack1", pod); err != nil {
		t.Fatal(err)
	}
	if done, err := st.OperationDone(ctx, "dc1", "rack1", pod); !done || err != nil {
		t.Fatalf("done %v %v", done, err)
	}
	w.SetOperations(fakeadapter.Operation{Datacenter: "dc1", Rack: "rack1", Pod: w.Pod("rack1", 1), Phase: fakeadapter.PhaseRunning})
	if err := st.StuckOn(ctx, "dc1", "rack1", pod); err == nil || !strings.Contains(err.Error(), "changed since the plan") {
		t.Fatalf("another pod's operation: %v", err)
	}
}

// TestOperatorFound: the operator's Deployment is recognised by its label, paused
// holders and all.
func TestOperatorFound(t *testing.T) {
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 1, Operator: true})
	ops, err := w.Adapter().RunningOperators(context.Background(), w.NS)
	if err != nil || len(ops) != 1 || ops[0].Name != fakeworld.OperatorName || ops[0].Replicas != 1 || ops[0].Watch != "" {
		t.Fatalf("operators %+v %v", ops, err)
	}
	if gr := w.Adapter().GroupResource(); gr != (schema.GroupResource{Group: fakeadapter.Group, Resource: fakeadapter.Resource}) {
		t.Fatalf("group resource %v", gr)
	}
}
