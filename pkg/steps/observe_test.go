package steps

import (
	"context"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// countExec counts nodetool calls.
type countExec struct {
	inner nodetool.Execer
	n     int
}

func (c *countExec) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	c.n++
	return c.inner.Exec(ctx, pod, argv)
}

// One step's Done and Safe, asked back to back, share one read of the pod and one
// nodetool call; once time passed (a poll sleep), the next answer reads again.
func TestObservationsServeUntilTimePasses(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	sw.uncached = false
	ex := &countExec{inner: w}
	sw.Nodetool = nodetool.Client{Exec: ex}
	st := &Decommission{w: sw, n: n}
	w.Kube.ClearActions()
	mustDone(t, st, false)
	if err := st.Safe(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(w.Kube.Actions()); got != 1 || ex.n != 1 {
		t.Fatalf("Done+Safe: %d API requests and %d nodetool calls, want 1 and 1", got, ex.n)
	}
	// The node goes down meanwhile: a kept answer must not hide it once time passed.
	_ = w.Cass.SetFault(n.Pod, sim.Fault{Down: true})
	if err := sw.sleep(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := st.Safe(ctx); err == nil {
		t.Fatal("Safe answered from a read made before the sleep: the node is down")
	}
	if ex.n != 2 {
		t.Fatalf("%d nodetool calls after the sleep, want 2", ex.n)
	}
}

// An action the cache does not follow is forgotten by the engine; the StatefulSet
// shrink keeps the StatefulSet as its write returned it and forgets the pod.
func TestShrinkKeepsWhatItWrote(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	sw.uncached = false
	sw.setLeft(n.Pod)
	st := &ShrinkStatefulSet{w: sw, n: n}
	if err := st.Safe(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.getPod(ctx, n.Pod); err != nil {
		t.Fatal(err)
	}
	if err := st.Do(ctx); err != nil {
		t.Fatal(err)
	}
	w.Kube.ClearActions()
	mustDone(t, st, true) // from the PATCH response: no GET
	if got := len(w.Kube.Actions()); got != 0 {
		t.Fatalf("%d requests after the shrink, want 0: %v", got, w.Kube.Actions())
	}
	// The pod was forgotten: the next question reads it (the fake controller removed it).
	if p, err := sw.getPod(ctx, n.Pod); err != nil || p != nil {
		t.Fatalf("pod after the shrink: %v, %v (want gone, read afresh)", p, err)
	}
	if got := len(w.Kube.Actions()); got != 1 {
		t.Fatalf("%d requests, want the pod's GET", got)
	}
}
