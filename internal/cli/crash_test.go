package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// TestCrashMatrix kills the plugin right after every API write and every decommission
// exec of a scale-down, in turn, then resumes in a fresh process — and once more kills
// that resume at another point and resumes again. Every case must converge to the same
// end state with each node decommissioned once and no PVC of a live pod deleted.
func TestCrashMatrix(t *testing.T) {
	cases := []struct {
		name     string
		from, to int
		version  string
		topology bool
		extraPVC bool
		operator bool
	}{
		{name: "2to1-4.1", from: 2, to: 1, version: "4.1"},
		{name: "4to1-4.1", from: 4, to: 1, version: "4.1", topology: true, extraPVC: true},
		{name: "4to1-3.11", from: 4, to: 1, version: "3.11"},
		{name: "2to1-5.0", from: 2, to: 1, version: "5.0", topology: true},
		{name: "3to1-4.1-operator-paused", from: 3, to: 1, version: "4.1", operator: true},
	}
	total := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := world.Opts{Version: tc.version, Nodes: tc.from, Topology: tc.topology, ExtraPVC: tc.extraPVC, Operator: tc.operator}
			scale := []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", fmt.Sprint(tc.to), "--yes"}
			// Reference run: count the side effects.
			ref := world.New(t, opts)
			_, stderr, code, crashed := run(ref, 0, scale...)
			if code != 0 || crashed {
				t.Fatalf("reference run: code %d crashed %v\n%s", code, crashed, stderr)
			}
			ref.AssertConverged(tc.to, "reference")
			ref.AssertHistory(scaleDownHistory(tc.from, tc.to, tc.extraPVC, tc.operator), "reference")
			points := ref.SideEffects()
			if points < 5*(tc.from-tc.to) {
				t.Fatalf("only %d side effects in the reference run", points)
			}
			for k := 1; k <= points; k++ {
				w := world.New(t, opts)
				_, stderr, _, crashed := run(w, k, scale...)
				if !crashed {
					t.Fatalf("crash point %d/%d was not reached\n%s", k, points, stderr)
				}
				// A second crash, during the resume.
				second := 1 + (k*7)%5
				_, stderr, code, crashed2 := run(w, second, "resume", "demo", "-n", "cassandra", "--yes")
				if !crashed2 && code != 0 {
					t.Fatalf("crash %d: resume (second crash at %d) exited %d\n%s", k, second, code, stderr)
				}
				_, stderr, code, crashed = run(w, 0, "resume", "demo", "-n", "cassandra", "--yes")
				if crashed || code != 0 {
					t.Fatalf("crash %d/%d: final resume exited %d\n%s", k, second, code, stderr)
				}
				label := fmt.Sprintf("crash after side effect %d (then %d)", k, second)
				w.AssertConverged(tc.to, label)
				if tc.operator && w.DeploymentReplicas("casskop") != 1 {
					t.Fatalf("crash %d: the operator was not restored", k)
				}
				w.AssertHistory(scaleDownHistory(tc.from, tc.to, tc.extraPVC, tc.operator), label)
				total++
			}
			t.Logf("%s: %d crash points (every API write and decommission exec), each followed by a crashed and a clean resume", tc.name, points)
		})
	}
	fmt.Printf("crash matrix: %d crash points covered, all converged, each side effect exactly as often as the plan needs\n", total)
}

// scaleDownHistory is what a scale-down of rack1 from 'from' to 'to' nodes must do,
// however often it crashed: one decommission per removed node (highest ordinal first),
// the StatefulSet shrunk one node per write, each claim of a removed node deleted once,
// nodesPerRacks written once, and a paused operator 1 -> 0 -> 1. No repetition is
// allowed: a decommission is written "started" before its exec, and resume asks the
// node (internal/steps/node.go), so a crash right after the exec does not run it again.
func scaleDownHistory(from, to int, extraPVC, operator bool) world.Expect {
	e := world.Expect{
		Execs: map[string]int{}, ExecKinds: []string{"decommission"},
		Replicas:   map[string][]int32{"demo-dc1-rack1": world.Down(from, to)},
		SpecWrites: 1,
	}
	for i := from - 1; i >= to; i-- {
		pod := fmt.Sprintf("demo-dc1-rack1-%d", i)
		e.Execs["decommission "+pod] = 1
		e.PVCDeletes = append(e.PVCDeletes, "data-"+pod)
		if extraPVC {
			e.PVCDeletes = append(e.PVCDeletes, "cassandra-logs-"+pod)
		}
	}
	if operator {
		e.Operator = map[string][]int32{"casskop": {1, 0, 1}}
	}
	return e
}

// TestScaleSameTargetResumes checks that re-running the same scale after a crash
// resumes, and a different target is refused with a pointer to resume.
func TestScaleSameTargetResumes(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3})
	_, _, _, crashed := run(w, 4, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--yes")
	if !crashed {
		t.Fatal("no crash")
	}
	_, stderr, code, _ := run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--yes")
	if code != operation.ExitRefused || !strings.Contains(stderr, "kubectl cassandra resume -n cassandra demo") {
		t.Fatalf("different target: code %d, stderr:\n%s", code, stderr)
	}
	_, stderr, code, _ = run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--yes")
	if code != 0 || !strings.Contains(stderr, "resuming it") {
		t.Fatalf("same target: code %d, stderr:\n%s", code, stderr)
	}
	w.AssertConverged(1, "same target")
}
