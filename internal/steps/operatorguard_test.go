package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// TestOperatorGuard: while the plan holds the operator paused, an action is refused
// (exit 3, naming the Deployment and its replicas, resume and abort) once someone
// scaled it up, learnt from the watch opened at the start (no GET per check); before
// the pause and from the restore on, it does not apply. A closed watch is reopened.
func TestOperatorGuard(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 1, Operator: true})
	sw, op := sharedWorld(w, "op-a", "cassandra", "demo")
	sw.CP.Steps = []record.Step{
		{ID: "pause-operator", Kind: record.StepPauseOperator, State: record.StatePending},
		{ID: "decommission/x", Kind: record.StepDecommission, State: record.StatePending},
		{ID: "resume-operator", Kind: record.StepResumeOperator, State: record.StatePending},
	}
	g := NewOperatorGuard(ctx, sw)
	defer g.Stop()
	// Before the pause: running is fine.
	if err := g.Check(ctx, "decommission/x"); err != nil {
		t.Fatalf("before the pause: %v", err)
	}
	if err := (&pauseOperator{operatorStep{w: sw, op: op}}).Do(ctx); err != nil {
		t.Fatal(err)
	}
	sw.CP.Steps[0].State = record.StateDone
	w.Kube.ClearActions()
	if err := g.Check(ctx, "decommission/x"); err != nil {
		t.Fatalf("paused: %v", err)
	}
	if n := len(w.Kube.Actions()); n != 0 {
		t.Fatalf("check while the watch delivers: %d requests, want 0", n)
	}
	scale(t, w, 2)
	err := g.Check(ctx, "decommission/x")
	var fatal *operation.Fatal
	if !errors.As(err, &fatal) || fatal.Code != operation.ExitRefused {
		t.Fatalf("scaled up: %v, want exit %d", err, operation.ExitRefused)
	}
	for _, want := range []string{"operator Deployment " + w.NS + "/fake-operator was scaled to 2 replicas by someone", "resume -n cassandra demo", "abort -n cassandra demo"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("message %q does not say %q", err, want)
		}
	}
	// The restore itself is not refused, nor anything once it started.
	if err := g.Check(ctx, "resume-operator"); err != nil {
		t.Fatalf("restore: %v", err)
	}
	// A closed watch: reopened, the state read once.
	g.mu.Lock()
	g.watch.Stop()
	g.mu.Unlock()
	scale(t, w, 0)
	w.Kube.ClearActions()
	if err := g.Check(ctx, "decommission/x"); err != nil {
		t.Fatalf("back at 0 after a closed watch: %v", err)
	}
	// The watch reopened (its first events, or one GET, tell the state).
	if acts := w.Kube.Actions(); len(acts) == 0 || len(acts) > 2 || acts[0].GetVerb() != "watch" {
		t.Fatalf("after a closed watch: %v, want a watch (and at most one GET)", acts)
	}
	sw.CP.Steps[2].State = record.StateStarted
	scale(t, w, 1)
	if err := g.Check(ctx, "decommission/x"); err != nil {
		t.Fatalf("restore started: %v", err)
	}
}

func scale(t *testing.T, w *fakeworld.World, to int32) {
	t.Helper()
	gvr := appsv1.SchemeGroupVersion.WithResource("deployments")
	obj, err := w.Kube.Tracker().Get(gvr, w.NS, fakeworld.OperatorName)
	if err != nil {
		t.Fatal(err)
	}
	d := obj.(*appsv1.Deployment).DeepCopy()
	d.Spec.Replicas = &to
	d.ResourceVersion = fmt.Sprintf("%d", 9000+to)
	if err := w.Kube.Tracker().Update(gvr, d, w.NS); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreRecheckNamesEdit: the operator restore checks the cluster resource against
// the StatefulSets from reads made in its Recheck (after its "started" write, right
// before the Deployment write): an edit of the count stops it with exit 3 naming the
// edit, the StatefulSets' count and both ways forward; put back, it goes ahead.
func TestRestoreRecheckNamesEdit(t *testing.T) {
	ctx := context.Background()
	w, sw := kindWorld(t, fakeworld.Opts{Nodes: 3, Operator: true}, "restart")
	st := &resumeOperator{operatorStep{w: sw, op: record.PausedOperator{Namespace: w.NS, Name: fakeworld.OperatorName, Replicas: 1}}}
	if err := st.Recheck(ctx); err != nil {
		t.Fatalf("agreeing: %v", err)
	}
	if err := sw.Spec.SetRackNodes(ctx, map[string]int{"rack1": 4}); err != nil {
		t.Fatal(err)
	}
	if err := st.Safe(ctx); err != nil {
		t.Fatalf("Safe leaves the check to Recheck: %v", err)
	}
	err := st.Recheck(ctx)
	var fatal *operation.Fatal
	if !errors.As(err, &fatal) || fatal.Code != operation.ExitRefused {
		t.Fatalf("edited: %v, want exit %d", err, operation.ExitRefused)
	}
	for _, want := range []string{"members of dc1 is now 4", "the StatefulSets have 3", "back to 3", "resume -n " + w.NS + " demo", "abort -n " + w.NS + " demo", "sets members to the StatefulSets' replicas"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("message %q does not say %q", err, want)
		}
	}
	if err := sw.Spec.SetRackNodes(ctx, map[string]int{"rack1": 3}); err != nil {
		t.Fatal(err)
	}
	if err := st.Recheck(ctx); err != nil {
		t.Fatalf("put back: %v", err)
	}
}
