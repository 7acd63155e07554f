package scaleup

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/stepworld"
)

func TestCleanupStep(t *testing.T) {
	ctx := context.Background()
	w, sw := stepworld.World(t, fakeworld.Opts{Nodes: 2}, "scale-up")
	n := stepworld.Existing(w, 0)
	sw.CP.Nodes = []record.Node{n}
	sw.CP.Steps = []record.Step{checkpoint.PendingStep(StepCleanup, n.Pod)}
	st := built(t, sw, StepCleanup, n)
	stepworld.MustDone(t, sw, st, false)
	stepworld.MustSafe(t, sw, st)
	stepworld.MustDo(t, sw, st)
	if err := st.(engine.Waiter).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	// Nothing in the real world tells: done only once the checkpoint says so.
	stepworld.MustDone(t, sw, st, false)
	sw.CP.Steps[0].State = record.StateDone
	stepworld.MustDone(t, sw, st, true)
	if nv, _ := w.Cass.Node(n.Pod); nv.Cleanups != 1 {
		t.Fatalf("cleanups %d", nv.Cleanups)
	}
	// Running it again is harmless (that is what a resume after a crash does).
	stepworld.MustDo(t, sw, st)
	// A node that is not NORMAL is not cleaned; a cleanup Cassandra refuses is retried.
	var out, errb strings.Builder
	w.Cass.Run(ctx, n.Pod, []string{"drain"}, &out, &errb)
	stepworld.MustUnsafe(t, sw, st, "fake-demo-dc1-rack1-0 is in mode DRAINED") // Safe asks the node itself
	if err := st.(engine.Rechecker).Recheck(ctx); err == nil || !strings.Contains(err.Error(), "fake-demo-dc1-rack1-0 (10.244.0.11) of datacenter dc1 is DN") {
		t.Fatalf("Recheck = %v, want the node DN (peers see a drained node down)", err)
	}
	w2, sw2 := stepworld.World(t, fakeworld.Opts{Nodes: 1, JoinTime: time.Hour}, "scale-up")
	stepworld.MustDo(t, sw2, built(t, sw2, StepGrowSTS, stepworld.NewNode(1))) // joins for an hour
	sw2.Forget()
	err := built(t, sw2, StepCleanup, stepworld.Existing(w2, 0)).Do(ctx)
	if _, ok := err.(*pub.Retryable); !ok || !strings.Contains(err.Error(), "Not safe to run cleanup") {
		t.Fatalf("cleanup during a join: %v", err)
	}
}
