package cli

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// The stream throughput set and restored around each node's streaming
// (--stream-throughput, internal/steps/throughput*.go).

const rate200 = "200MiB/s"

// limits are every node's stream limiters, by pod (bytes/s, test/sim).
func limits(t *testing.T, w *world.World) map[string]sim.Throughputs {
	t.Helper()
	nodes, err := w.Cass.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]sim.Throughputs{}
	for _, n := range nodes {
		out[n.Pod] = n.Throughput
	}
	return out
}

// setLimit sets a limiter by hand, as an SRE would before the operation.
func setLimit(t *testing.T, w *world.World, pod string, args ...string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := w.Cass.Run(context.Background(), pod, args, &out, &errb); code != 0 {
		t.Fatalf("nodetool %v on %s: exit %d %s%s", args, pod, code, out.String(), errb.String())
	}
}

// throughputSets are the plugin's set(interdc)streamthroughput commands by pod, in
// order ("setstreamthroughput -m 200").
func throughputSets(w *world.World) map[string][]string {
	out := map[string][]string{}
	for _, ev := range w.History() {
		if ev.Kind == "exec" && strings.HasPrefix(ev.Verb, "set") && strings.Contains(ev.Verb, "streamthroughput") {
			out[ev.Name] = append(out[ev.Name], ev.Verb)
		}
	}
	return out
}

// assertThroughputHistory: every node still a member reads what it read before the
// operation (before); the plugin set each limiter of a node to the rate at most once
// and, on a node still a member, set it back exactly once after it had set it, never
// on a node that left (its settings go with it).
func assertThroughputHistory(t *testing.T, w *world.World, before map[string]sim.Throughputs, target, label string) {
	t.Helper()
	nodes, err := w.Cass.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	member := map[string]bool{}
	for _, n := range nodes {
		if n.Left || n.Gone {
			continue
		}
		member[n.Pod] = true
		if n.Throughput != before[n.Pod] {
			t.Errorf("%s: node %s's limits are %+v, want %+v (as recorded before the operation)", label, n.Pod, n.Throughput, before[n.Pod])
		}
	}
	sets := throughputSets(w)
	pods := make([]string, 0, len(sets))
	for p := range sets {
		pods = append(pods, p)
	}
	sort.Strings(pods)
	for _, pod := range pods {
		set, back := map[string]int{}, map[string]int{}
		for _, cmd := range sets[pod] {
			f := strings.Fields(cmd)
			limiter := f[0] // -m sets the same limiter in MiB/s, -e the entire-SSTable one
			if f[1] == "-e" {
				limiter += " -e"
			}
			if f[len(f)-1] == target {
				set[limiter]++
			} else {
				back[limiter]++
			}
		}
		for l, n := range set {
			want := 0
			if member[pod] {
				want = 1
			}
			if n != 1 || back[l] != want {
				t.Errorf("%s: %s on %s: set to %s %d times and back %d times, want once and %d (%v)", label, l, pod, target, n, back[l], want, sets[pod])
			}
		}
		for l, n := range back {
			if set[l] == 0 {
				t.Errorf("%s: %s on %s set back %d times, never set (%v)", label, l, pod, n, sets[pod])
			}
		}
	}
}

// TestScaleDownStreamThroughput: a 3 -> 1 scale-down with --stream-throughput sets
// each leaving node's limiters (stream and entire-SSTable on 4.1) before its
// decommission, once; the plan says the rate and the time at it beside the default's;
// a node that left has nothing to restore, and the node that stays was never touched.
func TestScaleDownStreamThroughput(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Version: "4.1"})
	setLimit(t, w, "demo-dc1-rack1-1", "setstreamthroughput", "-m", "50")
	before := limits(t, w)
	stdout, stderr, code, _ := run(w, 0, scaleTo(1, "--stream-throughput", rate200)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"read the stream throughput of demo-dc1-rack1-2 (its stream limiter, and its entire-SSTable one from Cassandra 4.1) and record it in the checkpoint",
		"set the stream throughput of demo-dc1-rack1-2 to 200 MiB/s: it is the sender of its decommission, and only a sender's limit throttles a stream; 1.2 GiB in ≥ 7s (≥ 52s at the default 24 MiB/s)",
		"put back the stream throughput recorded on demo-dc1-rack1-2 (nothing to restore once it has left the ring",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "nothing to restore on demo-dc1-rack1-2: node demo-dc1-rack1-2 has left the ring (DECOMMISSIONED)") {
		t.Errorf("the run does not say there was nothing to restore:\n%s", stderr)
	}
	w.AssertConverged(1, "scale-down")
	w.AssertHistory(scaleDownHistory(3, 1, false, false), "scale-down")
	assertThroughputHistory(t, w, before, "200", "scale-down")
	sets := throughputSets(w)
	if got := fmt.Sprint(sets["demo-dc1-rack1-2"], sets["demo-dc1-rack1-1"]); got != "[setstreamthroughput -m 200 setstreamthroughput -e 200] [setstreamthroughput -m 200 setstreamthroughput -e 200]" {
		t.Errorf("throughput commands %s", got)
	}
}

// TestStreamThroughputCrashMatrix kills a 3 -> 1 scale-down with --stream-throughput
// right after each of its side effects (API writes, decommissions and every
// setstreamthroughput), then either resumes it (crashed once more, then to the end) or
// aborts it. Every case ends with each node still a member at the limits it had before
// (one of them set by hand), each limiter set to the rate at most once and set back
// exactly once on a node that stays (never on one that left), and the scale-down's own
// history unchanged: one decommission per removed node.
func TestStreamThroughputCrashMatrix(t *testing.T) {
	for _, tc := range []struct{ name, version, rate, target string }{
		{"3to1-4.1", "4.1", rate200, "200"},
		{"3to1-3.11", "3.11", "1600Mb/s", "1600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := world.Opts{Nodes: 3, Version: tc.version}
			scale := scaleTo(1, "--stream-throughput", tc.rate)
			prepare := func(w *world.World) map[string]sim.Throughputs {
				setLimit(t, w, "demo-dc1-rack1-1", "setstreamthroughput", "400")
				return limits(t, w)
			}
			ref := world.New(t, opts)
			before := prepare(ref)
			if _, stderr, code, crashed := run(ref, 0, scale...); code != 0 || crashed {
				t.Fatalf("reference run: exit %d crashed %v\n%s", code, crashed, stderr)
			}
			assertThroughputHistory(t, ref, before, tc.target, "reference")
			points := ref.SideEffects()
			aborted, resumed := 0, 0
			for k := 1; k <= points; k++ {
				label := fmt.Sprintf("crash after side effect %d/%d", k, points)
				w := world.New(t, opts)
				before := prepare(w)
				if _, stderr, _, crashed := run(w, k, scale...); !crashed {
					t.Fatalf("%s: not reached\n%s", label, stderr)
				}
				second := 1 + (k*7)%5
				if _, stderr, code, crashed := run(w, second, resume...); !crashed && code != 0 {
					t.Fatalf("%s: resume (second crash at %d) exited %d\n%s", label, second, code, stderr)
				}
				if _, stderr, code, crashed := run(w, 0, resume...); crashed || code != 0 {
					t.Fatalf("%s, then %d: final resume exited %d\n%s", label, second, code, stderr)
				}
				w.AssertConverged(1, label)
				w.AssertHistory(scaleDownHistory(3, 1, false, false), label)
				assertThroughputHistory(t, w, before, tc.target, label)

				// The same crash, then abort.
				label = fmt.Sprintf("crash after side effect %d/%d, then abort", k, points)
				w = world.New(t, opts)
				before = prepare(w)
				run(w, k, scale...)
				_, stderr, code, _ := run(w, 0, abortDemo...)
				if code != 0 {
					// Abort refuses while a decommission recorded a moment ago may still
					// reach its node: the way forward is resume.
					if _, stderr2, code, _ := run(w, 0, resume...); code != 0 {
						t.Fatalf("%s: abort exited %d, then resume %d\n%s\n%s", label, code, code, stderr, stderr2)
					}
					w.AssertConverged(1, label)
					resumed++
				} else {
					if p := w.ConsistentProblems(); len(p) > 0 {
						t.Errorf("%s: %v\n%s", label, p, stderr)
					}
					aborted++
				}
				assertThroughputHistory(t, w, before, tc.target, label)
				if v := w.Violations(); len(v) > 0 {
					t.Errorf("%s: %v", label, v)
				}
			}
			t.Logf("%s: %d crash points, each resumed (crashed once more) and aborted (%d aborts, %d refused and resumed)", tc.name, points, aborted, resumed)
		})
	}
}
