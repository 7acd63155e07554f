package cli

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// Issue 23: the world changes under a scale-down in ways the checkpoint does not know
// of. The checkpoint is a lock and a log of intent; the world is the truth.

// crashAfterDecommissionOf is the side effect right after pod's decommission exec in a
// scale-down of a world built with opts, counted on a reference run: a run killed there
// has its node decommissioned and nothing after it done.
func crashAfterDecommissionOf(t *testing.T, opts world.Opts, pod string, args ...string) int {
	t.Helper()
	ref := world.New(t, opts)
	at := 0
	ref.OnSideEffect = func(n int) {
		if nv, err := ref.Cass.Node(pod); err == nil && nv.DecommissionsStarted == 1 && at == 0 {
			at = n
		}
	}
	if _, stderr, code, _ := run(ref, 0, args...); code != 0 || at == 0 {
		t.Fatalf("reference run: exit %d, decommission of %s at side effect %d\n%s", code, pod, at, stderr)
	}
	return at
}

// wipeCheckpoint removes the checkpoint annotation from the cluster resource, as a
// GitOps sync or `kubectl annotate …-` does (not a side effect of the plugin).
func wipeCheckpoint(t *testing.T, w *world.World) {
	t.Helper()
	cr := w.CR().DeepCopy()
	a := cr.GetAnnotations()
	if _, ok := a[checkpoint.Annotation]; !ok {
		t.Fatal("no checkpoint to wipe")
	}
	delete(a, checkpoint.Annotation)
	cr.SetAnnotations(a)
	if err := w.Dyn.Tracker().Update(world.CCGVR, cr, w.NS); err != nil {
		t.Fatal(err)
	}
}

// TestWipedCheckpointFinishesLeftNode (finding 1): the checkpoint of a 4 → 1 scale-down
// is removed right after node 2's decommission (its node left the ring; its pod,
// StatefulSet slot and claims are still there). The same scale, run again, plans from
// the world: it finishes node 2's removal without decommissioning it again, then
// removes node 1. Run without an operator to pause (the pause's adoption is another
// change): the history asserted is Kubernetes' and Cassandra's.
func TestWipedCheckpointFinishesLeftNode(t *testing.T) {
	opts := world.Opts{Nodes: 4}
	const pod = "demo-dc1-rack1-2"
	at := crashAfterDecommissionOf(t, opts, pod, scaleTo(1)...)
	w := world.New(t, opts)
	if _, _, _, crashed := run(w, at, scaleTo(1)...); !crashed {
		t.Fatal("no crash")
	}
	if nv, _ := w.Cass.Node(pod); !nv.Left || nv.Mode != sim.ModeDecommissioned || w.Replicas("rack1") != 3 {
		t.Fatalf("crash point: node %s %+v, replicas %d; want it left with the StatefulSet at 3", pod, nv, w.Replicas("rack1"))
	}
	wipeCheckpoint(t, w)

	stdout, stderr, code, _ := run(w, 0, scaleTo(1)...)
	want := "node demo-dc1-rack1-2 already left the ring (a previous run's work): finishing its removal"
	if code != 0 || !strings.Contains(stdout, want) {
		t.Fatalf("the same scale again: exit %d, want 0 and a plan saying %q\n%s\n%s", code, want, stdout, stderr)
	}
	if !strings.Contains(stdout, "[x]  1. nodetool decommission on "+pod) {
		t.Errorf("the plan does not show %s's decommission done:\n%s", pod, stdout)
	}
	w.AssertConverged(1, "after the wiped checkpoint")
	// Each removed node decommissioned once (AssertConverged), each claim deleted once,
	// the StatefulSet shrunk one node per write, nodesPerRacks written once.
	w.AssertHistory(scaleDownHistory(4, 1, false, false), "after the wiped checkpoint")
}

// TestLeftNodeBelowMemberRefused: a node that left the ring below one that is still a
// member cannot be finished (a StatefulSet removes its highest pod first): the plan
// refuses, naming both, and changes nothing.
func TestLeftNodeBelowMemberRefused(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3})
	// Decommissioned by hand, not by the plugin.
	w.Cass.Run(context.Background(), "demo-dc1-rack1-1", []string{"decommission"}, io.Discard, io.Discard)
	if nv, _ := w.Cass.Node("demo-dc1-rack1-1"); !nv.Left {
		t.Fatalf("setup: node 1 did not leave: %+v", nv)
	}
	before := snapshot(t, w)
	_, stderr, code, _ := run(w, 0, scaleTo(1)...)
	want := "node demo-dc1-rack1-1 left the ring but node demo-dc1-rack1-2 above it in StatefulSet demo-dc1-rack1 is still a member"
	if code != operation.ExitRefused || !strings.Contains(stderr, want) || !strings.Contains(stderr, "nothing changed") || snapshot(t, w) != before {
		t.Fatalf("exit %d, want 3 saying %q and nothing changed\n%s", code, want, stderr)
	}
}
