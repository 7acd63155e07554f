package cli

import (
	"fmt"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// crashAndResume runs args in a fresh world killed right after side effect k, then a
// resume killed at another point, then a clean resume, which must succeed. It reports
// false when the run finished before side effect k: with joins and pod starts that take
// time, a wait that finds its node already there is not marked started, so a run can
// have fewer side effects than the reference (the end state is still checked).
func crashAndResume(t *testing.T, w *world.World, k int, args []string) bool {
	t.Helper()
	if _, stderr, code, crashed := run(w, k, args...); !crashed {
		if code != 0 {
			t.Fatalf("crash point %d was not reached and the run failed (%d)\n%s", k, code, stderr)
		}
		return false
	}
	second := 1 + (k*7)%5
	if _, stderr, code, crashed := run(w, second, "resume", "demo", "-n", "cassandra", "--yes"); !crashed && code != 0 {
		t.Fatalf("crash %d: resume (second crash at %d) exited %d\n%s", k, second, code, stderr)
	}
	if _, stderr, code, crashed := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); crashed || code != 0 {
		t.Fatalf("crash %d/%d: final resume exited %d\n%s", k, second, code, stderr)
	}
	return true
}

// TestScaleUpCrashMatrix kills a scale-up right after every API write and every
// nodetool exec with a side effect (cleanup), in turn, then resumes twice (the first
// resume crashes too). Every case must end with the racks at N Ready UN nodes, each new
// pod created once, the CR count at N, the operator restored and no checkpoint; every
// pre-existing node cleaned at least once (again only when a crash hit its cleanup).
func TestScaleUpCrashMatrix(t *testing.T) {
	cases := []struct {
		name     string
		opts     world.Opts
		args     []string
		to       int
		cleanups []string
		racks    []string // StatefulSets grown (default rack1's)
	}{
		{name: "1to3-4.1-cleanup-operator", opts: world.Opts{Nodes: 1, Version: "4.1", Operator: true, JoinTime: 10 * time.Millisecond, StartTime: 5 * time.Millisecond},
			args: []string{"--rack", "rack1", "--nodes", "3", "--cleanup"}, to: 3, cleanups: []string{"demo-dc1-rack1-0"}},
		{name: "1to3-3.11", opts: world.Opts{Nodes: 1, Version: "3.11", JoinTime: 5 * time.Millisecond},
			args: []string{"--rack", "rack1", "--nodes", "3"}, to: 3},
		{name: "2racks-1to2-5.0-dc-cleanup", opts: world.Opts{Nodes: 1, Version: "5.0", Racks: []string{"r1", "r2"}, Topology: true, ExtraPVC: true, JoinTime: 5 * time.Millisecond},
			args: []string{"--dc", "dc1", "--nodes", "2", "--cleanup"}, to: 2, cleanups: []string{"demo-dc1-r1-0", "demo-dc1-r2-0"}, racks: []string{"demo-dc1-r1", "demo-dc1-r2"}},
	}
	total := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"scale", "demo", "-n", "cassandra", "--yes"}, tc.args...)
			ref := world.New(t, tc.opts)
			if _, stderr, code, crashed := run(ref, 0, args...); code != 0 || crashed {
				t.Fatalf("reference run: code %d crashed %v\n%s", code, crashed, stderr)
			}
			ref.AssertScaledUp(tc.to, "reference")
			ref.AssertHistory(scaleUpHistory(ref, tc.racks, tc.to, tc.cleanups, tc.opts.Operator), "reference")
			points := ref.SideEffects()
			unreached := 0
			for k := 1; k <= points; k++ {
				w := world.New(t, tc.opts)
				if !crashAndResume(t, w, k, args) {
					unreached++
				}
				label := fmt.Sprintf("crash after side effect %d", k)
				w.AssertScaledUp(tc.to, label)
				for _, pod := range tc.cleanups {
					if n, _ := w.Cass.Node(pod); n.Cleanups < 1 || n.Cleanups > 3 {
						t.Errorf("%s: node %s cleaned %d times", label, pod, n.Cleanups)
					}
				}
				if tc.opts.Operator && w.DeploymentReplicas("casskop") != 1 {
					t.Errorf("%s: the operator was not restored", label)
				}
				w.AssertHistory(scaleUpHistory(w, tc.racks, tc.to, tc.cleanups, tc.opts.Operator), label)
				total++
			}
			if unreached > points/4 {
				t.Errorf("%d of %d crash points not reached (runs finished earlier)", unreached, points)
			}
			total -= unreached
			t.Logf("%s: %d crash points (every API write and cleanup exec), each followed by a crashed and a clean resume (%d finished before their point)", tc.name, points, unreached)
		})
	}
	fmt.Printf("scale-up crash matrix: %d crash points covered, all converged, each side effect exactly as often as the plan needs\n", total)
}

// TestRestartCrashMatrix kills a rolling restart of 3 pods right after every API write
// and every drain exec, in turn, then resumes twice (the first resume crashes too).
// Every case must end with every pod on a new UID, restarted exactly once, every node UN,
// the operator restored and no checkpoint.
func TestRestartCrashMatrix(t *testing.T) {
	cases := []struct {
		name string
		opts world.Opts
		args []string
		pods []string
	}{
		{name: "3pods-4.1-operator", opts: world.Opts{Nodes: 3, Version: "4.1", Operator: true, StartTime: 10 * time.Millisecond},
			args: []string{"--rack", "rack1"}, pods: rack1Pods},
		{name: "3pods-3.11", opts: world.Opts{Nodes: 3, Version: "3.11"}, args: []string{"--rack", "rack1"}, pods: rack1Pods},
	}
	total := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"restart", "demo", "-n", "cassandra", "--yes"}, tc.args...)
			ref := world.New(t, tc.opts)
			before := podUIDs(ref, tc.pods)
			if _, stderr, code, crashed := run(ref, 0, args...); code != 0 || crashed {
				t.Fatalf("reference run: code %d crashed %v\n%s", code, crashed, stderr)
			}
			ref.AssertRestarted(tc.pods, before, "reference")
			ref.AssertHistory(restartHistory(tc.pods, tc.opts.Operator), "reference")
			points := ref.SideEffects()
			unreached := 0
			for k := 1; k <= points; k++ {
				w := world.New(t, tc.opts)
				before := podUIDs(w, tc.pods)
				if !crashAndResume(t, w, k, args) {
					unreached++
				}
				w.AssertRestarted(tc.pods, before, fmt.Sprintf("crash after side effect %d", k))
				if tc.opts.Operator && w.DeploymentReplicas("casskop") != 1 {
					t.Errorf("crash %d: the operator was not restored", k)
				}
				w.AssertHistory(restartHistory(tc.pods, tc.opts.Operator), fmt.Sprintf("crash after side effect %d", k))
				total++
			}
			if unreached > points/4 {
				t.Errorf("%d of %d crash points not reached (runs finished earlier)", unreached, points)
			}
			total -= unreached
			t.Logf("%s: %d crash points (every API write and drain exec), each followed by a crashed and a clean resume (%d finished before their point)", tc.name, points, unreached)
		})
	}
	fmt.Printf("restart crash matrix: %d crash points covered, all converged, each side effect exactly as often as the plan needs\n", total)
}

// scaleUpHistory is what a scale-up of the racks' StatefulSets (rack1's by default) from
// 1 to 'to' nodes must do however often it crashed: each StatefulSet grown one node per
// write, no decommission, drain, claim or pod delete, nodesPerRacks written once, a
// paused operator 1 -> 0 -> 1, and one cleanup per pre-existing node. The one allowed
// repetition: a cleanup whose run died after the exec and before a checkpoint write
// recorded it done runs again on resume (nodetool cannot tell a cleanup ran; running it
// twice is harmless, internal/steps/scaleup.go, cleanup), once per such crash.
func scaleUpHistory(w *world.World, racks []string, to int, cleanups []string, operator bool) world.Expect {
	if len(racks) == 0 {
		racks = []string{"demo-dc1-rack1"}
	}
	e := world.Expect{Execs: map[string]int{}, ExecKinds: []string{"decommission", "drain", "cleanup"},
		Replicas: map[string][]int32{}, SpecWrites: 1, Rerun: w.RerunsAfterCrash}
	for _, r := range racks {
		e.Replicas[r] = world.Up(1, to)
	}
	for _, pod := range cleanups {
		e.Execs["cleanup "+pod] = 1
	}
	if operator {
		e.Operator = map[string][]int32{"casskop": {1, 0, 1}}
	}
	return e
}

// restartHistory is what a rolling restart of pods must do however often it crashed:
// one drain and one delete per pod, no StatefulSet, claim or spec write, and a paused
// operator 1 -> 0 -> 1. No repetition: a drained node says so (nodetool netstats Mode
// DRAINED) and a re-created pod has a new UID, so resume never drains or deletes twice.
func restartHistory(pods []string, operator bool) world.Expect {
	e := world.Expect{Execs: map[string]int{}, ExecKinds: []string{"decommission", "drain", "cleanup"}}
	for _, pod := range pods {
		e.Execs["drain "+pod] = 1
		e.PodDeletes = append(e.PodDeletes, pod)
	}
	if operator {
		e.Operator = map[string][]int32{"casskop": {1, 0, 1}}
	}
	return e
}
