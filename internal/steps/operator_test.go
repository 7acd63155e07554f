package steps

import (
	"context"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// sharedWorld is the steps' world of operation id on cluster ns/name, pausing the
// fake world's operator Deployment.
func sharedWorld(w *fakeworld.World, id, ns, name string) (*World, record.PausedOperator) {
	op := record.PausedOperator{Namespace: w.NS, Name: fakeworld.OperatorName, UID: fakeworld.OperatorUID, Replicas: 1}
	cp := &record.Checkpoint{OperationID: id, Namespace: ns, Cluster: name, PausedOperator: &op}
	sw := &World{Kube: w.Kube, Namespace: ns, CP: cp, Reporter: nopReporter{}}
	sw.obs.SetUncached(true)
	return sw, op
}

func holders(t *testing.T, w *fakeworld.World) ([]record.PauseHolder, int32) {
	t.Helper()
	obj, err := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), w.NS, fakeworld.OperatorName)
	if err != nil {
		t.Fatal(err)
	}
	d := obj.(*appsv1.Deployment)
	hs, err := record.PauseHolders(d.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	return hs, *d.Spec.Replicas
}

func ids(hs []record.PauseHolder) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.OperationID)
	}
	return out
}

// TestSharedPause: two operations on two clusters pause one operator; the first one's
// restore leaves it paused for the second, whose restore scales it back to the replicas
// from before the first pause. Every action is idempotent (a resume repeats it).
func TestSharedPause(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 1, Operator: true})
	a, opA := sharedWorld(w, "op-a", "cassandra", "demo")
	b, opB := sharedWorld(w, "op-b", "apps", "other")
	pauseA, restoreA := &pauseOperator{operatorStep{w: a, op: opA}}, &resumeOperator{operatorStep{w: a, op: opA}}
	pauseB, restoreB := &pauseOperator{operatorStep{w: b, op: opB}}, &resumeOperator{operatorStep{w: b, op: opB}}

	for i := 0; i < 2; i++ { // twice: a resumed pause changes nothing
		if err := pauseA.Do(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mustDone(t, pauseA, true)
	mustDone(t, pauseB, false) // paused, but not by B
	if err := pauseB.Do(ctx); err != nil {
		t.Fatal(err)
	}
	mustDone(t, pauseB, true)
	hs, replicas := holders(t, w)
	if !reflect.DeepEqual(ids(hs), []string{"op-a", "op-b"}) || replicas != 0 || hs[1].Replicas != 1 || hs[1].Cluster != "other" {
		t.Fatalf("after both pauses: holders %+v, replicas %d", hs, replicas)
	}
	// A ends first: the operator stays paused for B.
	mustDone(t, restoreA, false)
	for i := 0; i < 2; i++ {
		if err := restoreA.Do(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mustDone(t, restoreA, true)
	mustDone(t, restoreB, false)
	if hs, replicas := holders(t, w); !reflect.DeepEqual(ids(hs), []string{"op-b"}) || replicas != 0 {
		t.Fatalf("after A's restore: holders %v, replicas %d", ids(hs), replicas)
	}
	// B ends: back to the replicas from before the first pause, annotation gone.
	for i := 0; i < 2; i++ {
		if err := restoreB.Do(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mustDone(t, restoreB, true)
	if hs, replicas := holders(t, w); len(hs) != 0 || replicas != 1 {
		t.Fatalf("after B's restore: holders %v, replicas %d", ids(hs), replicas)
	}
	// A's restore resumed once more (its run died before the checkpoint was cleared)
	// does nothing, and neither does a second abort.
	if _, err := RestoreOperator(ctx, a, opA, true); err != nil {
		t.Fatal(err)
	}
	if got := w.OperatorReplicas(fakeworld.OperatorName); !reflect.DeepEqual(got, []int32{1, 0, 0, 0, 1}) {
		t.Fatalf("operator writes %v, want [1 0 0 0 1] (A pauses, B joins, A leaves, B restores)", got)
	}
}

// TestPauseStaysDoneAfterRestore: for every kind, once the restore is recorded started
// (its write may have happened, its done mark not), the pause is done without asking
// the Deployment: a resume must not pause the operator again.
func TestPauseStaysDoneAfterRestore(t *testing.T) {
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 1, Operator: true})
	for _, kind := range []string{checkpoint.KindScaleDown, "scale-up", "restart"} {
		sw, op := sharedWorld(w, "op-"+kind, w.NS, w.Name)
		sw.CP.Kind = kind
		sw.CP.Steps = []record.Step{checkpoint.PendingStep(record.StepPauseOperator, ""), checkpoint.PendingStep(record.StepResumeOperator, "")}
		pause := &pauseOperator{operatorStep{w: sw, op: op}}
		mustDone(t, pause, false) // running, not paused by this operation
		sw.CP.Steps[1].State = record.StateStarted
		mustDone(t, pause, true)
	}
}

// TestPausedByUnreadable: a holder list that cannot be read stops the pause and the
// restore with an error (unknown is never taken as "nobody else holds it").
func TestPausedByUnreadable(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 1, Operator: true})
	w.SetDeploymentAnnotation(fakeworld.OperatorName, record.PausedByAnnotation, "{not json")
	a, op := sharedWorld(w, "op-a", w.NS, w.Name)
	for _, err := range []error{(&pauseOperator{operatorStep{w: a, op: op}}).Do(ctx), func() error { _, err := RestoreOperator(ctx, a, op, true); return err }()} {
		if err == nil {
			t.Fatal("an unreadable holder list was accepted")
		}
	}
	if _, err := (&resumeOperator{operatorStep{w: a, op: op}}).Done(ctx); err == nil {
		t.Fatal("restore done with an unreadable holder list")
	}
}
