package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
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
}

// TestDeadEndSearch looks for dead ends instead of waiting for them (issue 23): every
// state reachable by crashing a command — a scale-down, a --force re-plan after
// Cassandra's refusal, an abort — right after any of its side effects, or by another
// party acting there (the record wiped, the cluster resource deleted, the operator's
// Deployment re-created or scaled up by hand), must have a way forward. From each, the
// SRE's recovery (resume; abort when resume stops; the same command again when no
// record is left; at most four commands) must reach a consistent cluster — the operator
// running and held by nobody, no checkpoint, every rack's StatefulSet at its count, no
// pod or PVC above it — and no safety check may have fired on the way (no node removed
// without a decommission, no PVC of a live pod or a ring member). It prints the number
// of states explored.
func TestDeadEndSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("the dead-end search runs in the full unit suite")
	}
	scale := scaleTo(1, "--stall-after", "50ms")
	scenarios := []deadEndScenario{
		{name: "scale-down 3->1", opts: world.Opts{Nodes: 3, Operator: true}, args: scale, again: scale},
		{name: "re-plan --force after a refusal", opts: world.Opts{Nodes: 3, Operator: true},
			setup: func(t *testing.T, w *world.World) {
				_ = w.Cass.SetFault("demo-dc1-rack1-1", sim.Fault{RefuseRF: true})
				if _, stderr, code, _ := run(w, 0, scale...); code != exit.Refused {
					t.Fatalf("setup: exit %d\n%s", code, stderr)
				}
				_ = w.Cass.UpdateFault("demo-dc1-rack1-1", func(f *sim.Fault) { f.RefuseRF = false })
			},
			args: scaleTo(1, "--force", "--stall-after", "50ms"), again: scaleTo(1, "--force", "--stall-after", "50ms")},
		{name: "abort after one node", opts: world.Opts{Nodes: 3, Operator: true},
			setup: func(t *testing.T, w *world.World) {
				if _, stderr, code := runUntilStderr(w, "[OK] delete PVC data-demo-dc1-rack1-2", scale...); code != exit.Interrupted {
					t.Fatalf("setup: exit %d\n%s", code, stderr)
				}
			},
			args: abortDemo, again: scale},
	}
	disturbances := []func() (string, *world.Change){
		func() (string, *world.Change) { return "crash", nil },
		func() (string, *world.Change) { c := world.RecordWiped(); return c.Name, &c },
		func() (string, *world.Change) { c := world.ClusterDeleted(); return c.Name, &c },
		func() (string, *world.Change) { c := world.OperatorRecreated("casskop"); return c.Name, &c },
		func() (string, *world.Change) { c := world.OperatorScaledUp("casskop"); return c.Name, &c },
	}
	states, failed := 0, 0
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
				label := fmt.Sprintf("%s/%s@%d", sc.name, name, k)
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
				log, problems := recoverFromDeadEnd(w, sc.again)
				if len(problems) > 0 {
					failed++
					t.Errorf("%s: no way forward: %s\nthe command:\n%s\nthe recovery:\n%s", label, strings.Join(problems, "; "), stderr, log)
				}
			}
		}
	}
	t.Logf("dead-end search: %d states explored, %d without a way forward", states, failed)
	fmt.Printf("dead-end search: %d states explored (scale-down, re-plan, abort x crash, record wiped, cluster deleted, operator re-created or scaled up), %d without a way forward\n", states, failed)
}

// recoverFromDeadEnd runs what an SRE would, at most four commands: resume while a
// record is left (abort when resume stops), the command again when the record is gone
// but the cluster is not settled (its count differs from a StatefulSet, or a claim is
// left above one). It returns what the commands printed and what is still wrong.
func recoverFromDeadEnd(w *world.World, again []string) (string, []string) {
	var log strings.Builder
	for i := 0; i < 4; i++ {
		problems := w.DeadEnd("casskop")
		if len(problems) == 0 {
			return log.String(), nil
		}
		args := resumeDemo
		if all := strings.Join(problems, " "); (strings.Contains(all, "nodesPerRacks") || strings.Contains(all, "left above the StatefulSet's replicas")) &&
			!strings.Contains(all, "checkpoint is left") {
			args = again
		}
		_, stderr, code, _ := run(w, 0, args...)
		fmt.Fprintf(&log, "$ %s -> %d\n%s", strings.Join(args, " "), code, stderr)
		if code != 0 && args[0] == "resume" {
			_, stderr, code, _ = run(w, 0, abortDemo...)
			fmt.Fprintf(&log, "$ abort -> %d\n%s", code, stderr)
		}
	}
	return log.String(), w.DeadEnd("casskop")
}
