package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
	cassrepair "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator/repair"
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// The plugin on a cass-operator world (test/world Opts.CassOperator): the operator, a
// stand-in stepped once before each API request of the plugin, acts; the plugin asks
// it for one node at a time and verifies each step.

// drivenBuild is the plugin as main.go composes it: CassKop, then cass-operator.
var drivenBuild = []operator.Operator{repair.Operator{Plugin: casskop.Plugin{}}, cassrepair.Operator{Plugin: cassoperator.Plugin{}}}

// drun runs one command of that build against w, dying right after side effect crashAt.
func drun(w *world.World, crashAt int, args ...string) (stdout, stderr string, code int, crashed bool) {
	return runOperators(context.Background(), w, drivenBuild, w, crashAt, nil, args...)
}

// drivenCrashAndResume runs args on a cass-operator world killed right after side
// effect k (which must be reached), then a resume killed at another point, then a clean
// resume, which must succeed.
func drivenCrashAndResume(t *testing.T, w *world.World, k int, args []string, label string) {
	t.Helper()
	if _, errOut, _, crashed := drun(w, k, args...); !crashed {
		t.Fatalf("%s: not reached\n%s", label, errOut)
	}
	second := 1 + (k*7)%5
	if _, errOut, code, crashed := drun(w, second, "resume", "dc1", "-n", "cassandra", "--yes"); !crashed && code != 0 {
		t.Fatalf("%s: resume (second crash at %d) exited %d\n%s", label, second, code, errOut)
	}
	if _, errOut, code, crashed := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes"); crashed || code != 0 {
		t.Fatalf("%s, then %d: final resume exited %d\n%s", label, second, code, errOut)
	}
}

func drivenWorld(t *testing.T, nodes int, racks ...string) *world.World {
	if len(racks) == 0 {
		racks = []string{"rack1"}
	}
	return world.New(t, world.Opts{CassOperator: true, Nodes: nodes, Racks: racks})
}

func scaleDC(n int) []string {
	return []string{"scale", "dc1", "-n", "cassandra", "--nodes", fmt.Sprint(n), "--yes"}
}

// sizeWrites is the spec.size changes the plugin made, in order ("3->2").
func sizeWrites(w *world.World) []string {
	var out []string
	for _, ev := range w.History() {
		if ev.Kind == "write" && ev.Resource == "cassandradatacenters" && ev.SpecChanged {
			out = append(out, fmt.Sprintf("%d->%d", ev.Before, ev.After))
		}
	}
	return out
}

// sizeSteps is one size change per node, from 'from' to 'to'.
func sizeSteps(from, to int) []string {
	var out []string
	for s := from; s != to; {
		n := s - 1
		if to > from {
			n = s + 1
		}
		out = append(out, fmt.Sprintf("%d->%d", s, n))
		s = n
	}
	return out
}

// assertDrivenHistory: the plugin changed spec.size exactly as sizes say (one write per
// node, in order, whatever crashed), and nothing else that acts: no StatefulSet or
// Deployment write, no PVC or pod delete, no nodetool decommission, drain or cleanup.
func assertDrivenHistory(t *testing.T, w *world.World, sizes []string, label string) {
	t.Helper()
	w.AssertHistory(world.Expect{ExecKinds: []string{"decommission", "drain", "cleanup"}, SpecWrites: len(sizes)}, label)
	if got := sizeWrites(w); strings.Join(got, " ") != strings.Join(sizes, " ") {
		t.Errorf("%s: spec.size writes %v, want %v", label, got, sizes)
	}
}

// assertDecommissionedOnce: each removed pod's node was decommissioned once, by the
// operator (its one management-API call).
func assertDecommissionedOnce(t *testing.T, w *world.World, pods []string, label string) {
	t.Helper()
	for _, p := range pods {
		n, err := w.Cass.Node(p)
		if err != nil {
			t.Errorf("%s: node %s: %v", label, p, err)
			continue
		}
		if n.DecommissionCalls != 1 || n.DecommissionsStarted != 1 || !n.Left {
			t.Errorf("%s: node %s: %d decommission calls, %d started, left %v; want 1, 1, true", label, p, n.DecommissionCalls, n.DecommissionsStarted, n.Left)
		}
	}
}

func countActions(as []standin.Action, a standin.Action) int {
	n := 0
	for _, x := range as {
		if x == a {
			n++
		}
	}
	return n
}

func pod(i int) string { return fmt.Sprintf("demo-dc1-rack1-sts-%d", i) }

func TestDrivenStatus(t *testing.T) {
	w := drivenWorld(t, 3)
	out, errOut, code, _ := drun(w, 0, "status", "dc1", "-n", "cassandra")
	if code != 0 {
		t.Fatalf("status exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"CassandraDatacenter cassandra/dc1 (cass-operator", "Datacenter dc1 (size 3)", "Rack rack1: [OK] StatefulSet demo-dc1-rack1-sts, 3/3 ready",
		pod(0), pod(1), pod(2), "server-data-" + pod(2), " UN ", "cass-operator:[OK] idle", "Next: kubectl cassandra scale -n cassandra dc1 --nodes SIZE"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if len(w.History()) != 0 {
		t.Errorf("status wrote: %v", w.History())
	}
}

// TestDrivenScaleSequence: 3 -> 2 -> 1 -> 3, each run to its end by the operator, the
// plugin asking one node at a time.
func TestDrivenScaleSequence(t *testing.T) {
	w := drivenWorld(t, 3)
	var sizes []string
	for _, step := range []struct {
		from, to int
		removed  []string
	}{{3, 2, []string{pod(2)}}, {2, 1, []string{pod(1)}}, {1, 3, nil}} {
		label := fmt.Sprintf("scale %d -> %d", step.from, step.to)
		before := len(w.OperatorActions())
		out, errOut, code, _ := drun(w, 0, scaleDC(step.to)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s\noperator: %v\n%v", label, code, out, errOut, w.OperatorActions(), w.OperatorEvents())
		}
		w.SettleOperator(200)
		w.AssertDrivenConverged(step.to, label)
		sizes = append(sizes, sizeSteps(step.from, step.to)...)
		assertDrivenHistory(t, w, sizes, label)
		assertDecommissionedOnce(t, w, step.removed, label)
		acts := w.OperatorActions()[before:]
		if n := countActions(acts, standin.ActDecommission); n != len(step.removed) {
			t.Errorf("%s: the operator decommissioned %d times, want %d: %v", label, n, len(step.removed), acts)
		}
		if step.to > step.from {
			if n := countActions(acts, standin.ActStartNode); n != step.to-step.from {
				t.Errorf("%s: the operator started %d nodes, want %d: %v", label, n, step.to-step.from, acts)
			}
			for i := step.from; i < step.to; i++ {
				if got := w.Incarnations("pvc", "server-data-"+pod(i)); got != 2 {
					t.Errorf("%s: PVC server-data-%s made %d times, want 2 (a fresh claim)", label, pod(i), got)
				}
			}
		}
	}
}

// TestDrivenCrashMatrix kills the plugin right after each of its side effects during a
// scale-down 3 -> 1 and a scale-up 1 -> 3 on the cass-operator world, then resumes
// (once more crashed at another point, then to the end): each case converges with one
// size write per node and nothing else done by the plugin, each removed node
// decommissioned once by the operator.
func TestDrivenCrashMatrix(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to int
		removed  []string
	}{{"down-3to1", 3, 1, []string{pod(2), pod(1)}}, {"up-1to3", 1, 3, nil}} {
		t.Run(tc.name, func(t *testing.T) {
			ref := drivenWorld(t, tc.from)
			if _, errOut, code, crashed := drun(ref, 0, scaleDC(tc.to)...); code != 0 || crashed {
				t.Fatalf("reference run: exit %d crashed %v\n%s", code, crashed, errOut)
			}
			ref.SettleOperator(200)
			ref.AssertDrivenConverged(tc.to, "reference")
			assertDrivenHistory(t, ref, sizeSteps(tc.from, tc.to), "reference")
			points := ref.SideEffects()
			if points < 2*abs(tc.from-tc.to) {
				t.Fatalf("only %d side effects in the reference run", points)
			}
			for k := 1; k <= points; k++ {
				label := fmt.Sprintf("crash after side effect %d/%d", k, points)
				w := drivenWorld(t, tc.from)
				drivenCrashAndResume(t, w, k, scaleDC(tc.to), label)
				w.SettleOperator(200)
				w.AssertDrivenConverged(tc.to, label)
				assertDrivenHistory(t, w, sizeSteps(tc.from, tc.to), label)
				assertDecommissionedOnce(t, w, tc.removed, label)
			}
			t.Logf("%s: %d crash points, each followed by a crashed and a clean resume", tc.name, points)
		})
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestDrivenRefusals: no running cass-operator (the one that acts) refuses a scale and
// a resume, changing nothing; --rack is a size only when SplitRacks gives it.
func TestDrivenRefusals(t *testing.T) {
	w := drivenWorld(t, 3)
	w.ScaleCassOperator(0)
	_, errOut, code, _ := drun(w, 0, scaleDC(2)...)
	if code != operation.ExitRefused || !strings.Contains(errOut, "no running cass-operator manages namespace cassandra") {
		t.Fatalf("scale with cass-operator down: exit %d\n%s", code, errOut)
	}
	out, _, _, _ := drun(w, 0, "status", "dc1", "-n", "cassandra")
	if !strings.Contains(out, "no running cass-operator manages namespace cassandra") {
		t.Errorf("status does not warn that no cass-operator runs:\n%s", out)
	}
	if h := w.History(); len(h) != 0 {
		t.Errorf("refused scale wrote: %v", h)
	}
	if got := w.DCCondition("ScalingDown"); got != "False" || len(w.OperatorActions()) != 0 {
		t.Errorf("the stopped operator acted: %v", w.OperatorActions())
	}

	// Three racks of two nodes each.
	w = drivenWorld(t, 6, "r1", "r2", "r3")
	_, errOut, code, _ = drun(w, 0, "scale", "dc1", "-n", "cassandra", "--rack", "r1", "--nodes", "1", "--yes")
	if code != operation.ExitRefused || !strings.Contains(errOut, "no size gives rack r1 1 nodes and leaves the other racks as they are") ||
		!strings.Contains(errOut, "kubectl cassandra scale dc1 --nodes SIZE") {
		t.Fatalf("--rack r1 --nodes 1: exit %d\n%s", code, errOut)
	}
	if h := w.History(); len(h) != 0 {
		t.Errorf("refused scale wrote: %v", h)
	}
	// r3 at 1 with r1, r2 at 2 is size 5: allowed, one node removed from r3.
	out, errOut, code, _ = drun(w, 0, "scale", "dc1", "-n", "cassandra", "--rack", "r3", "--nodes", "1", "--yes")
	if code != 0 || !strings.Contains(out, "size 6 -> 5") {
		t.Fatalf("--rack r3 --nodes 1: exit %d\n%s\n%s", code, out, errOut)
	}
	w.SettleOperator(200)
	w.AssertDrivenConverged(5, "--rack r3 --nodes 1")
	assertDrivenHistory(t, w, []string{"6->5"}, "--rack r3 --nodes 1")
	assertDecommissionedOnce(t, w, []string{"demo-dc1-r3-sts-1"}, "--rack r3 --nodes 1")
}

// TestDrivenOperatorKilled: cass-operator killed in the middle of its own scale-down
// leaves a state it does not leave by itself (FACTS §8 A and C/D); the plugin stops
// there, names the state and repair-operator-state, and does nothing unsafe itself.
func TestDrivenOperatorKilled(t *testing.T) {
	for _, tc := range []struct {
		kill       standin.Action
		msg        string
		found      string
		podGone    bool
		pvcLeft    bool
		statusLeft bool
	}{
		{kill: standin.ActDecommission, msg: "the operator stopped removing " + pod(2) + ": its node left the ring, but the pod was never marked leaving", found: "was never labelled Decommissioning", pvcLeft: true, statusLeft: true},
		{kill: standin.ActShrinkStatefulSet, msg: "the operator finished its scale-down but left the PVCs of " + pod(2), found: "is left over", podGone: true, pvcLeft: true, statusLeft: true},
	} {
		t.Run(string(tc.kill), func(t *testing.T) {
			w := drivenWorld(t, 3)
			w.KillOperatorAfter(tc.kill)
			out, errOut, code, _ := drun(w, 0, scaleDC(2)...)
			if code == 0 || !strings.Contains(errOut, tc.msg) || !strings.Contains(errOut, "kubectl cassandra repair-operator-state -n cassandra dc1") {
				t.Fatalf("exit %d\n%s\n%s\noperator: %v (waiting: %s)", code, out, errOut, w.OperatorActions(), w.OperatorWaiting())
			}
			if k := w.OperatorKills(); len(k) != 1 || k[0] != tc.kill {
				t.Fatalf("operator kills %v", k)
			}
			// Nothing unsafe: one size write, no StatefulSet, claim or pod touched by the
			// plugin, the node decommissioned once (by the operator), no violation.
			assertDrivenHistory(t, w, []string{"3->2"}, "killed operator")
			assertDecommissionedOnce(t, w, []string{pod(2)}, "killed operator")
			if v := w.Violations(); len(v) > 0 {
				t.Errorf("violations: %v", v)
			}
			pods, pvcs := " "+strings.Join(w.PodNames(), " ")+" ", " "+strings.Join(w.PVCNames(), " ")+" "
			if strings.Contains(pods, " "+pod(2)+" ") == tc.podGone {
				t.Errorf("pod %s present=%v, want %v", pod(2), !tc.podGone, !tc.podGone)
			}
			if strings.Contains(pvcs, " server-data-"+pod(2)+" ") != tc.pvcLeft {
				t.Errorf("PVC of %s present=%v, want %v", pod(2), !tc.pvcLeft, tc.pvcLeft)
			}
			if st := strings.Join(w.NodeStatuses(), " "); strings.Contains(st, pod(2)) != tc.statusLeft {
				t.Errorf("nodeStatuses %s", st)
			}
			if _, ok := w.DC().GetAnnotations()[checkpoint.Annotation]; !ok {
				t.Error("the checkpoint is gone: the operation cannot be resumed after the repair")
			}
			// The operator, restarted, stays where it is (it does not leave the state).
			w.SettleOperator(50)
			if got := w.Replicas("rack1"); (tc.podGone && got != 2) || (!tc.podGone && got != 3) {
				t.Errorf("StatefulSet replicas %d", got)
			}
			// repair-operator-state finds the state (verified against the ring), its dry
			// run changes nothing, the repair un-sticks the operator, which finishes by
			// itself; the scale is resumed and converges.
			before := len(w.History())
			out, errOut, code, _ = drun(w, 0, "repair-operator-state", "dc1", "-n", "cassandra", "--dry-run")
			if code != 0 || !strings.Contains(out, tc.found) || len(w.History()) != before {
				t.Fatalf("repair dry run (exit %d):\n%s\n%s", code, out, errOut)
			}
			// The scale's checkpoint is in flight: the repair carries it on (the same
			// operation ID), and nothing is left to resume.
			out, errOut, code, _ = drun(w, 0, "repair-operator-state", "dc1", "-n", "cassandra", "--yes", "--poll-interval", "1ms")
			t.Logf("repair (exit %d):\n%s\n%s", code, out, errOut)
			if code != 0 {
				t.Fatalf("repair (exit %d):\n%s\n%s\noperator: %v", code, out, errOut, w.OperatorActions())
			}
			w.SettleOperator(50)
			if out, errOut, code, _ := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes", "--poll-interval", "1ms"); code != 0 || !strings.Contains(out+errOut, "No operation in flight") {
				t.Fatalf("resume after the repair (exit %d):\n%s\n%s", code, out, errOut)
			}
			w.AssertDrivenConverged(2, "repaired and carried on")
			assertDecommissionedOnce(t, w, []string{pod(2)}, "repaired")
		})
	}
}

// TestDrivenAbortFinishesAskedRemoval: a scale-down 3 -> 1 dies right after asking for
// its first removal (size 3 -> 2). A removal asked of cass-operator cannot be
// cancelled: abort waits until the operator removed that node in full, asks nothing
// more, and stops there — the size equal to what exists, the second planned node
// untouched.
func TestDrivenAbortFinishesAskedRemoval(t *testing.T) {
	var w *world.World
	for k := 1; ; k++ { // the crash point right after the first size write, found
		// Its decommission lasts long enough for abort to find the node leaving.
		w = world.New(t, world.Opts{CassOperator: true, Nodes: 3, Racks: []string{"rack1"}, DecommissionTime: 300 * time.Millisecond})
		if _, errOut, _, crashed := drun(w, k, scaleDC(1)...); !crashed || k > 10 {
			t.Fatalf("no crash after the first size write\n%s", errOut)
		}
		if strings.Join(sizeWrites(w), " ") == "3->2" {
			break
		}
	}
	for i := 0; i < 50 && w.StepOperator() != standin.ActDecommission; i++ {
	}
	if n, _ := w.Cass.Node(pod(2)); n.Mode != "LEAVING" {
		t.Fatalf("the operator did not start the decommission: %+v, actions %v", n, w.OperatorActions())
	}
	out, errOut, code, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
	if code != 0 || !strings.Contains(errOut, "node "+pod(2)+" is half removed (the datacenter's size (2) asks the operator to remove it") ||
		!strings.Contains(out, "aborted after removing 1 of 2 nodes") {
		t.Fatalf("abort: exit %d\n%s\n%s\noperator: %v", code, out, errOut, w.OperatorActions())
	}
	w.SettleOperator(200)
	w.AssertDrivenConverged(2, "abort after the first removal was asked")
	assertDrivenHistory(t, w, []string{"3->2"}, "abort after the first removal was asked")
	assertDecommissionedOnce(t, w, []string{pod(2)}, "abort after the first removal was asked")
	if n, _ := w.Cass.Node(pod(1)); n.DecommissionCalls != 0 || n.Left {
		t.Errorf("the second planned node was touched: %+v", n)
	}
}
