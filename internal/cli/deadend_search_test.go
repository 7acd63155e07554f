package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// deadEndScenario is one command of the dead-end search, in the world setup leaves.
type deadEndScenario struct {
	name  string
	opts  world.Opts
	setup func(t *testing.T, w *world.World)
	// args is the command under test; again is what an SRE runs again when no record
	// is left and the cluster is not settled (the command that started it).
	args, again []string
	// shared: another cluster's operation (sharedHolder) holds the operator paused too.
	// Recovery must leave it paused for that one; once that operation ends, the
	// operator must come back (sharedEnds).
	shared bool
	// skip names disturbances that do not apply to this world.
	skip []string
}

// knownDeadEnds are states the search finds without a way forward, not fixed yet: the
// search reports them instead of failing, and fails once one has a way forward (so
// that it is taken off this list).
var knownDeadEnds = map[string]string{}

// sharedHolder is the operation of another cluster that holds the shared operator.
var sharedHolder = record.PauseHolder{OperationID: "scale-other", Namespace: "payments", Cluster: "ledger", Replicas: 1}

// shareOperator makes the world's operator shared: paused by sharedHolder, whose
// checkpoint stands on its own cluster.
func shareOperator(_ *testing.T, w *world.World) {
	w.AddClusterWithOperation(sharedHolder.Namespace, sharedHolder.Cluster, sharedHolder.OperationID)
	w.PauseDeployment("casskop", []record.PauseHolder{sharedHolder})
}

// sharedEnds is the other operation ending: it releases its hold (its own restore)
// and clears its checkpoint. It reports a hold that was lost before.
func sharedEnds(w *world.World) []string {
	hs := w.PausedBy("casskop")
	if len(hs) != 1 || hs[0].OperationID != sharedHolder.OperationID || w.DeploymentReplicas("casskop") != 0 {
		return []string{fmt.Sprintf("the operator shared with operation %s is at %d replicas, held by %v: the other operation's pause was not kept", sharedHolder.OperationID, w.DeploymentReplicas("casskop"), hs)}
	}
	op := record.PausedOperator{Namespace: w.NS, Name: "casskop", UID: "dep-casskop", Replicas: 1}
	sw := &steps.World{Kube: w.Kube, Namespace: sharedHolder.Namespace, CP: &record.Checkpoint{OperationID: sharedHolder.OperationID, Namespace: sharedHolder.Namespace, Cluster: sharedHolder.Cluster, PausedOperator: &op}}
	if _, err := steps.RestoreOperator(context.Background(), sw, op, true); err != nil {
		return []string{"the other operation's restore: " + err.Error()}
	}
	return nil
}

// sharedFilter drops from problems what the other operation's standing pause explains.
func sharedFilter(w *world.World, problems []string) []string {
	hs := w.PausedBy("casskop")
	if len(hs) != 1 || hs[0].OperationID != sharedHolder.OperationID {
		return problems
	}
	var out []string
	for _, p := range problems {
		if p == "the operator is at 0 replicas" || strings.HasPrefix(p, "the operator is still held paused by") {
			continue
		}
		out = append(out, p)
	}
	return out
}

// TestDeadEndSearch looks for dead ends instead of waiting for them (issue 23): every
// state reachable by crashing a command — a scale-down, a --force re-plan after
// Cassandra's refusal, a resume, an abort, a repair — right after any of its side
// effects, or by another party acting there (the record wiped, the cluster resource deleted, the operator's
// Deployment re-created or scaled up by hand), must have a way forward. From each, the
// SRE's recovery (resume; abort when resume stops; the same command again when no
// record is left; at most four commands) must reach a consistent cluster — the operator
// running and held by nobody, no checkpoint, every rack's StatefulSet at its count, no
// pod or PVC above it — and no safety check may have fired on the way (no node removed
// without a decommission, no PVC of a live pod or a ring member). The worlds: one rack;
// two racks (--dc); racks left at different sizes (abort --grow-back after Cassandra
// refused rack2's node); a --force re-plan after that refusal; two clusters sharing one
// operator (the other operation's pause must stand until it ends, then the operator
// comes back); a two-rack scale-up whose rack1 pod stays Pending (abort), and the
// scale-down that takes such a never-started pod away once no record is left; a
// two-rack scale-down removing seeds; repair-operator-state of a scale-down CassKop
// left; and a kept node going DN at the crash point, in the rack or in the other (back
// up before the recovery). It prints the number of states explored. Every command waits
// 2 s at most for a step (a world changed under a run can leave a wait that never ends).
func TestDeadEndSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("the dead-end search runs in the full unit suite")
	}
	scale := scaleTo(1, searchFlags...)
	racks := world.Opts{Nodes: 2, Racks: []string{"rack1", "rack2"}, Topology: true, Operator: true}
	scaleDC := func(n int) []string {
		return append([]string{"scale", "demo", "-n", "cassandra", "--dc", "dc1", "--nodes", fmt.Sprint(n), "--yes"}, searchFlags...)
	}
	pending := racks
	pending.Nodes, pending.PendingPods = 1, []string{"demo-dc1-rack1-1"}
	scenarios := []deadEndScenario{
		{name: "scale-down 3->1", opts: world.Opts{Nodes: 3, Operator: true}, args: scale, again: scale},
		{name: "re-plan --force after a refusal", opts: world.Opts{Nodes: 3, Operator: true},
			setup: func(t *testing.T, w *world.World) {
				_ = w.Cass.SetFault("demo-dc1-rack1-1", sim.Fault{RefuseRF: true})
				if _, stderr, code, _ := run(w, 0, scale...); code != operation.ExitRefused {
					t.Fatalf("setup: exit %d\n%s", code, stderr)
				}
				_ = w.Cass.UpdateFault("demo-dc1-rack1-1", func(f *sim.Fault) { f.RefuseRF = false })
			},
			args: scaleTo(1, append([]string{"--force"}, searchFlags...)...), again: scaleTo(1, append([]string{"--force"}, searchFlags...)...)},
		{name: "abort after one node", opts: world.Opts{Nodes: 3, Operator: true},
			setup: func(t *testing.T, w *world.World) {
				if _, stderr, code := runUntilStderr(w, "[OK] delete PVC data-demo-dc1-rack1-2", scale...); code != exit.Interrupted {
					t.Fatalf("setup: exit %d\n%s", code, stderr)
				}
			},
			args: abortDemo, again: scale},
		{name: "resume after one node", opts: world.Opts{Nodes: 3, Operator: true},
			setup: func(t *testing.T, w *world.World) {
				if _, stderr, code := runUntilStderr(w, "[OK] delete PVC data-demo-dc1-rack1-2", scale...); code != exit.Interrupted {
					t.Fatalf("setup: exit %d\n%s", code, stderr)
				}
			},
			args: append(append([]string{}, resumeDemo...), searchFlags...), again: scale},
		{name: "two racks scale-down 2->1 (--dc)", opts: racks, args: scaleDC(1), again: scaleDC(1)},
		{name: "abort --grow-back of racks at different sizes", opts: racks,
			setup: func(t *testing.T, w *world.World) {
				_ = w.Cass.SetFault("demo-dc1-rack2-1", sim.Fault{RefuseRF: true})
				if _, stderr, code, _ := run(w, 0, scaleDC(1)...); code != operation.ExitRefused {
					t.Fatalf("setup: exit %d\n%s", code, stderr)
				}
			},
			args: append(append([]string{}, abortDemo...), append([]string{"--grow-back"}, searchFlags...)...), again: scaleDC(2)},
		{name: "scale-down 3->1 sharing the operator with another cluster", opts: world.Opts{Nodes: 3, Operator: true},
			// Re-created, the Deployment loses every hold; scaled up by hand, it runs under
			// the other operation's: only that operation's own run can answer either.
			setup: shareOperator, args: scale, again: scale, shared: true, skip: []string{"operator-recreated", "operator-scaled-up"}},
		{name: "abort a two-rack scale-up with a Pending pod", opts: pending,
			setup: func(t *testing.T, w *world.World) {
				if _, stderr, code := runUntilStderr(w, "not scheduled", scaleDC(2)...); code != exit.Interrupted {
					t.Fatalf("setup: exit %d\n%s", code, stderr)
				}
			},
			args: abortDemo, again: scaleDC(1)},
		{name: "scale-down taking away a never-started pod", opts: pending,
			setup: func(t *testing.T, w *world.World) { wipedAbortOfPendingScaleUp(t, w) },
			args:  scaleDC(1), again: scaleDC(1)},
		{name: "two racks re-plan --force after a refusal in rack2", opts: racks,
			setup: func(t *testing.T, w *world.World) {
				_ = w.Cass.SetFault("demo-dc1-rack2-1", sim.Fault{RefuseRF: true})
				if _, stderr, code, _ := run(w, 0, scaleDC(1)...); code != operation.ExitRefused {
					t.Fatalf("setup: exit %d\n%s", code, stderr)
				}
				_ = w.Cass.UpdateFault("demo-dc1-rack2-1", func(f *sim.Fault) { f.RefuseRF = false })
			},
			args: append(scaleDC(1), "--force"), again: append(scaleDC(1), "--force")},
		{name: "two racks scale-down removing seeds", opts: racks,
			setup: func(_ *testing.T, w *world.World) {
				w.SetSeedlist("demo-dc1-rack1-0", "demo-dc1-rack1-1", "demo-dc1-rack2-0", "demo-dc1-rack2-1")
			},
			args: scaleDC(1), again: scaleDC(1)},
		{name: "repair-operator-state of a scale-down CassKop left", opts: world.Opts{Nodes: 3, Operator: true},
			setup: func(t *testing.T, w *world.World) { makeStuck(t, w, "todo-decommissioned") },
			args:  append(append([]string{}, repairArgs...), searchFlags...), again: append(append([]string{}, repairArgs...), searchFlags...)},
	}
	disturbances := []func() (string, *world.Change){
		func() (string, *world.Change) { return "crash", nil },
		func() (string, *world.Change) { c := world.RecordWiped(); return c.Name, &c },
		func() (string, *world.Change) { c := world.ClusterDeleted(); return c.Name, &c },
		func() (string, *world.Change) { c := world.OperatorRecreated("casskop"); return c.Name, &c },
		func() (string, *world.Change) { c := world.OperatorScaledUp("casskop"); return c.Name, &c },
		// A kept node goes DN and stays down while the command runs; it is back up for
		// the recovery (the world fixed).
		func() (string, *world.Change) { c := world.NodeDown(world.PickPod(0)); return c.Name, &c },
		// In a two-rack world, a node of the other rack goes DN.
		func() (string, *world.Change) {
			c := world.NodeDown(func(*world.World) string { return "demo-dc1-rack2-0" })
			c.Name = "node-DN-rack2"
			return c.Name, &c
		},
	}
	states, failed := 0, 0
	var slowest time.Duration
	var slowestAt string
	start := time.Now()
	for _, sc := range scenarios {
		// The reference run counts the command's side effects: its boundaries.
		ref := world.New(t, sc.opts)
		if sc.setup != nil {
			sc.setup(t, ref)
		}
		if _, stderr, code, _ := run(ref, 0, sc.args...); code != 0 {
			t.Fatalf("%s: reference run: exit %d\n%s", sc.name, code, stderr)
		}
		effects := ref.SideEffects()
		for k := 1; k <= effects; k++ {
			for _, d := range disturbances {
				name, change := d()
				if slices.Contains(sc.skip, name) || (name == "node-DN-rack2" && len(sc.opts.Racks) < 2) {
					continue
				}
				label := fmt.Sprintf("%s/%s@%d", sc.name, name, k)
				t0 := time.Now()
				w := world.New(t, sc.opts)
				if sc.setup != nil {
					sc.setup(t, w)
				}
				crashAt := 0
				if change == nil {
					crashAt = k
				} else {
					w.ChangeAfter(k, *change)
				}
				_, stderr, _, _ := run(w, crashAt, sc.args...)
				if change != nil {
					w.PutBack()
				}
				states++
				log, problems := recoverFromDeadEnd(w, sc.again, sc.shared)
				if d := time.Since(t0); d > slowest {
					slowest, slowestAt = d, label
				}
				if why, known := knownDeadEnds[label]; known {
					if len(problems) == 0 {
						t.Errorf("%s: known dead end (%s) has a way forward now: take it off knownDeadEnds", label, why)
					} else {
						t.Logf("%s: known dead end (%s): %s", label, why, strings.Join(problems, "; "))
					}
					continue
				}
				if len(problems) > 0 {
					failed++
					t.Errorf("%s: no way forward: %s\nthe command:\n%s\nthe recovery:\n%s", label, strings.Join(problems, "; "), stderr, log)
				}
			}
		}
	}
	t.Logf("dead-end search: %d states explored in %s (slowest %s: %s), %d without a way forward, %d known", states, time.Since(start).Round(time.Millisecond), slowestAt, slowest.Round(time.Millisecond), failed, len(knownDeadEnds))
	fmt.Printf("dead-end search: %d states explored (scale-down of one rack and of two, resume, re-plan in one rack and in two, abort, abort --grow-back, a shared operator, a Pending pod, a never-started pod taken away, seeds removed, repair-operator-state x crash, record wiped, cluster deleted, operator re-created or scaled up, a node DN in the rack or in the other), %d without a way forward, %d known\n", states, failed, len(knownDeadEnds))
}

// searchFlags are the search's run flags: a wait that cannot end (the world changed
// under it) gives up after 2 s, not the tests' default 20.
var searchFlags = []string{"--stall-after", "50ms", "--poll-interval", "1ms", "--timeout", "2s"}

// recoverFromDeadEnd runs what an SRE would, at most five commands: resume while a
// record is left (abort when resume stops, abort --grow-back when abort offers it), the
// command again when the record is gone but the cluster is not settled (its count
// differs from a StatefulSet, or a claim is left above one). With a shared operator the
// other operation's pause is expected to stand, then to end (sharedEnds). It returns
// what the commands printed and what is still wrong.
func recoverFromDeadEnd(w *world.World, again []string, shared bool) (string, []string) {
	var log strings.Builder
	problems := func() []string {
		if shared {
			return sharedFilter(w, w.DeadEnd("casskop"))
		}
		return w.DeadEnd("casskop")
	}
	resume := append(append([]string{}, resumeDemo...), searchFlags...)
	growBack := append(append([]string{}, abortDemo...), append([]string{"--grow-back"}, searchFlags...)...)
	for i := 0; i < 5; i++ {
		now := problems()
		if len(now) == 0 {
			break
		}
		args := resume
		if all := strings.Join(now, " "); (strings.Contains(all, "nodesPerRacks") || strings.Contains(all, "left above the StatefulSet's replicas")) &&
			!strings.Contains(all, "checkpoint is left") {
			args = again
		}
		_, stderr, code, _ := run(w, 0, args...)
		fmt.Fprintf(&log, "$ %s -> %d\n%s", strings.Join(args, " "), code, stderr)
		if code != 0 && args[0] == "resume" {
			_, stderr, code, _ = run(w, 0, abortDemo...)
			fmt.Fprintf(&log, "$ abort -> %d\n%s", code, stderr)
			if code != 0 && strings.Contains(stderr, "--grow-back") {
				_, stderr, code, _ = run(w, 0, growBack...)
				fmt.Fprintf(&log, "$ abort --grow-back -> %d\n%s", code, stderr)
			}
		}
	}
	left := problems()
	if shared && len(left) == 0 {
		if left = sharedEnds(w); len(left) == 0 {
			left = w.DeadEnd("casskop")
		}
	}
	return log.String(), left
}
