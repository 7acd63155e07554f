package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// Issue 23, "the world is the truth": a decommission is judged by what the node and its
// peers show, not by its record alone.

const leavingPod = "demo-dc1-rack1-2"

// crashAtDecommissionStarted runs a 3 -> 2 scale-down (with opts.Operator, the operator
// paused first and its replicas recorded from the start) that dies right after the checkpoint write
// recording the decommission "started", before its exec: the crash point is found, not
// assumed.
func crashAtDecommissionStarted(t *testing.T, opts world.Opts) (*world.World, *world.ReplicaHistory) {
	t.Helper()
	id := record.StepID(record.StepDecommission, leavingPod)
	for k := 1; k <= 10; k++ {
		w := world.New(t, opts)
		var op *world.ReplicaHistory
		if opts.Operator {
			op = w.RecordReplicas("casskop")
		}
		if _, _, _, crashed := run(w, k, scaleTo(2)...); !crashed {
			t.Fatalf("crash point %d not reached", k)
		}
		cp := loadCP(t, w)
		if cp == nil {
			continue
		}
		if st, ok := cp.Step(id); ok && st.State == record.StateStarted {
			if _, calls := w.Decommissions(leavingPod); calls != 0 {
				t.Fatalf("crash point %d: the decommission was already sent", k)
			}
			return w, op
		}
	}
	t.Fatal("no crash point between the started write and the exec")
	return nil, nil
}

// backdateStarted moves the start of step id in the stored checkpoint back by d (the
// crash happened that long ago).
func backdateStarted(t *testing.T, w *world.World, id string, d time.Duration) {
	t.Helper()
	cp := loadCP(t, w)
	for i := range cp.Steps {
		if cp.Steps[i].ID == id && cp.Steps[i].StartedAt != nil {
			at := cp.Steps[i].StartedAt.Add(-d)
			cp.Steps[i].StartedAt = &at
		}
	}
	v, err := checkpoint.Encode(cp, testKinds())
	if err != nil {
		t.Fatal(err)
	}
	setAnnotation(t, w, checkpoint.Annotation, v)
}

// TestAbortDecommissionStartedNeverSent (finding 7): the process died between the write
// marking the decommission started and the exec. The node is NORMAL, seen UN by a peer,
// streams nothing: abort leaves it a member (no decommission at all), sets nothing it
// need not, restores the operator and clears the checkpoint. Right after the crash it
// waits a minute first: an exec sent just before the death may still be on its way.
func TestAbortDecommissionStartedNeverSent(t *testing.T) {
	w, op := crashAtDecommissionStarted(t, world.Opts{Nodes: 3, Operator: true})

	before := snapshot(t, w)
	_, stderr, code, _ := run(w, 0, abortDemo...)
	if code != operation.ExitRefused || !strings.Contains(stderr, "shows no sign of it yet") || !strings.Contains(stderr, "try again in") {
		t.Fatalf("abort right after the crash: exit %d\n%s", code, stderr)
	}
	if snapshot(t, w) != before || w.DeploymentReplicas("casskop") != 0 {
		t.Fatal("the refused abort changed something")
	}

	backdateStarted(t, w, record.StepID(record.StepDecommission, leavingPod), 2*time.Minute)
	stdout, stderr, code, _ := run(w, 0, abortDemo...)
	if code != 0 || !strings.Contains(stdout, "aborted after removing 0 of 1 nodes") ||
		!strings.Contains(stderr, "Note: node "+leavingPod+": its decommission was recorded started but never reached it (NORMAL, UN on demo-dc1-rack1-0, no stream); it stays a member") {
		t.Fatalf("abort: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if nv, _ := w.Cass.Node(leavingPod); nv.Mode != sim.ModeNormal || nv.PeerCode != "UN" || nv.Left {
		t.Fatalf("node %s after abort: %+v", leavingPod, nv)
	}
	assertDecommissions(t, w, "abort of a decommission never sent", map[string][2]int{leavingPod: {0, 0}})
	w.AssertConsistentAt(3, "abort of a decommission never sent")
	assertHistory(t, op, "abort of a decommission never sent", 1, 0, 1)
	w.AssertHistory(world.Expect{ExecKinds: []string{"decommission", "drain", "cleanup"}, Operator: map[string][]int32{"casskop": {1, 0, 1}}}, "abort of a decommission never sent")
}

// TestAbortFinishesDecommissionFailedWhileLeaving (CASSANDRA-21493/21583): on 5.0 the
// node's mode reads DECOMMISSION_FAILED while it is still leaving (its peers see it UL;
// held, it also streams out). Whether its step is pending or recorded started, abort
// takes it for leaving and finishes its removal first, never sending a decommission:
// while it cannot (the node still streams past the step's timeout) it stops with the
// checkpoint kept and the operator paused, and names abort again; once the node left,
// abort finishes it and stops the operation there.
func TestAbortFinishesDecommissionFailedWhileLeaving(t *testing.T) {
	for _, tc := range []struct {
		name    string
		started bool
	}{
		{"step pending", false},
		{"step started", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Held, a short decommission streams until released.
			opts := world.Opts{Nodes: 3, Version: "5.0", Operator: true, DecommissionTime: 30 * time.Millisecond}
			want := "node " + leavingPod + " is half removed (it is DECOMMISSION_FAILED but streams out its data"
			var w *world.World
			if tc.started {
				w, _ = crashAtDecommissionStarted(t, opts)
				backdateStarted(t, w, record.StepID(record.StepDecommission, leavingPod), 2*time.Minute)
			} else {
				w = world.New(t, opts)
				for k := 1; w.DeploymentReplicas("casskop") != 0; k++ { // crash once the operator is paused
					w = world.New(t, opts)
					if _, _, _, crashed := run(w, k, scaleTo(2)...); !crashed || k > 10 {
						t.Fatal("the operator was never paused")
					}
				}
				if st := stepOf(t, loadCP(t, w), "decommission/"+leavingPod); st.State != record.StatePending {
					t.Fatalf("crash point: %+v", st)
				}
			}
			if err := w.Cass.SetFault(leavingPod, sim.Fault{HoldStreaming: true}); err != nil {
				t.Fatal(err)
			}
			w.StartDecommission(leavingPod)
			if err := w.Cass.UpdateFault(leavingPod, func(f *sim.Fault) { f.FailedWhileLeaving = true }); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); ; {
				nv, _ := w.Cass.Node(leavingPod)
				if nv.Mode == sim.ModeDecommissionFailed && nv.PeerCode == "UL" && nv.Streaming {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("node: %+v", nv)
				}
				<-time.After(time.Millisecond) // the held decommission reaches its streaming phase
			}
			_, stderr, code, _ := run(w, 0, append(abortDemo, "--timeout", "200ms")...)
			if code != exit.Interrupted || !strings.Contains(stderr, want) || !strings.Contains(stderr, "abort stopped while finishing the removal of node "+leavingPod) ||
				!strings.Contains(stderr, "kubectl cassandra abort -n cassandra demo") {
				t.Fatalf("abort while it still leaves: exit %d, want 4 and %q\n%s", code, want, stderr)
			}
			if loadCP(t, w) == nil || w.DeploymentReplicas("casskop") != 0 {
				t.Fatal("the unfinished abort cleared the checkpoint or restored the operator")
			}
			// The node finishes leaving (a short decommission, or the held one released).
			if err := w.Cass.UpdateFault(leavingPod, func(f *sim.Fault) { f.HoldStreaming = false }); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code, _ := run(w, 0, abortDemo...)
			if code != 0 || !strings.Contains(stdout, "aborted after removing 1 of 1 nodes") {
				t.Fatalf("abort once it left: exit %d\n%s\n%s", code, stdout, stderr)
			}
			w.AssertConsistentAt(2, "abort finishing a DECOMMISSION_FAILED leaving node")
			assertDecommissions(t, w, "abort finishing a DECOMMISSION_FAILED leaving node", map[string][2]int{leavingPod: {1, 1}})
		})
	}
}

// sentThenLost is crashAtDecommissionStarted whose exec reached Cassandra anyway (the
// decommission runs, its client gone), held until released: a resume finds the node
// LEAVING.
func sentThenLost(t *testing.T, opts world.Opts) *world.World {
	t.Helper()
	w, _ := crashAtDecommissionStarted(t, opts)
	if err := w.Cass.SetFault(leavingPod, sim.Fault{HoldStreaming: true}); err != nil {
		t.Fatal(err)
	}
	w.StartDecommission(leavingPod)
	return w
}

// TestDecommissionFailedWhileLeavingIsWaitedFor (CASSANDRA-21493/21583): a resume finds
// the node's 5.0 mode reading DECOMMISSION_FAILED while it is still leaving (peers see
// it UL). It waits, saying so, instead of deciding the decommission failed and calling
// it again; the node leaves and the scale-down finishes with no decommission call.
func TestDecommissionFailedWhileLeavingIsWaitedFor(t *testing.T) {
	w := sentThenLost(t, world.Opts{Nodes: 3, Version: "5.0", DecommissionTime: 30 * time.Millisecond})
	if err := w.Cass.UpdateFault(leavingPod, func(f *sim.Fault) { f.FailedWhileLeaving = true }); err != nil {
		t.Fatal(err)
	}
	marker := "node " + leavingPod + " reports DECOMMISSION_FAILED but is still leaving: "
	_, stderr, code := runOnStderr(w, []string{marker}, func() {
		_ = w.Cass.UpdateFault(leavingPod, func(f *sim.Fault) { f.HoldStreaming = false })
	}, resume...)
	if code != 0 || !strings.Contains(stderr, marker) || strings.Contains(stderr, "going back to decommission") {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(2, "DECOMMISSION_FAILED while leaving")
	assertDecommissions(t, w, "DECOMMISSION_FAILED while leaving", map[string][2]int{leavingPod: {1, 1}})
}

// TestDecommissionResumedAfterRestartAdvisesRepair (CASSANDRA-16290): the node was
// LEAVING when the resume found it, then restarted (NORMAL again): the resume issues
// the decommission again, and the run that sees the node removed says to repair the
// datacenter's keyspaces on the remaining nodes and keeps that in the last-operation
// record — also when the run that re-issued it died right after the exec (the
// checkpoint carries it).
func TestDecommissionResumedAfterRestartAdvisesRepair(t *testing.T) {
	const advice = "node " + leavingPod + " was removed, but its decommission was issued again after the node restarted in the middle of it: " +
		"a resumed decommission skips the ranges it had already streamed, and writes to them since may be missing on their new replicas (CASSANDRA-16290). " +
		"Run `nodetool repair -pr <keyspace>` for each of system_auth, system_distributed, system_traces, app on every remaining node of datacenter dc1"
	restarted := func(w *world.World) *onStderr {
		return &onStderr{markers: []string{leavingPod + " is LEAVING"}, fn: func() {
			_ = w.Cass.Restart(leavingPod)
			_ = w.Cass.SetFault(leavingPod, sim.Fault{})
		}}
	}
	check := func(t *testing.T, w *world.World, stderr, label string) {
		t.Helper()
		if !strings.Contains(stderr, "[!!] "+advice) {
			t.Fatalf("%s: no repair advice\n%s", label, stderr)
		}
		if lo := w.LastOperation(); lo == nil || len(lo.Warnings) != 1 || !strings.HasPrefix(lo.Warnings[0], advice) {
			t.Fatalf("%s: last operation %+v", label, lo)
		}
		assertDecommissions(t, w, label, map[string][2]int{leavingPod: {2, 2}})
		if problems := w.ScaledDownProblems(2); len(problems) != 1 || problems[0] != "node "+leavingPod+" decommissions started = 2, want 1" {
			t.Fatalf("%s: %q", label, problems) // twice, as the restart made necessary; nothing else amiss
		}
		if v := w.Violations(); len(v) != 0 {
			t.Fatalf("%s: %q", label, v)
		}
	}

	w := sentThenLost(t, world.Opts{Nodes: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a backstop
	defer cancel()
	_, stderr, code, _ := runIO(ctx, w, w, 0, restarted(w), resume...)
	if code != 0 || !strings.Contains(stderr, "is NORMAL again (restarted?); going back to decommission/"+leavingPod) {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	check(t, w, stderr, "one run")

	// The run that re-issued it dies right after the exec; the next one says it.
	for k := 1; ; k++ {
		w = sentThenLost(t, world.Opts{Nodes: 3})
		_, stderr, _, crashed := runIO(ctx, w, w, k, restarted(w), resume...)
		if !crashed {
			t.Fatalf("crash point %d not reached before the end\n%s", k, stderr)
		}
		if started, _ := w.Decommissions(leavingPod); started == 2 {
			break // the crash came right after the second exec
		}
	}
	if st := stepOf(t, loadCP(t, w), "decommission/"+leavingPod); !st.ResumedAfterRestart {
		t.Fatalf("the checkpoint does not carry the resumption: %+v", st)
	}
	_, stderr, code, _ = run(w, 0, resume...)
	if code != 0 {
		t.Fatalf("resume after the crash: exit %d\n%s", code, stderr)
	}
	check(t, w, stderr, "after a crash")

	// A decommission only recorded started, never sent, resumed: no such word.
	w, _ = crashAtDecommissionStarted(t, world.Opts{Nodes: 3})
	_, stderr, code, _ = run(w, 0, resume...)
	if code != 0 || strings.Contains(stderr, "CASSANDRA-16290") || w.LastOperation().Warnings != nil {
		t.Fatalf("plain resume: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(2, "plain resume")
}
