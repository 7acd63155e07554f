package cli

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
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

// assertLimits: every node still a member reads the limits it had before (before);
// it returns them.
func assertLimits(t *testing.T, w *world.World, before map[string]sim.Throughputs, label string) map[string]bool {
	t.Helper()
	nodes, err := w.Cass.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	member := map[string]bool{}
	for _, n := range nodes {
		if _, was := before[n.Pod]; !was || n.Left || n.Gone {
			continue // a new node's limits are its own
		}
		member[n.Pod] = true
		if n.Throughput != before[n.Pod] {
			t.Errorf("%s: node %s's limits are %+v, want %+v (as recorded before the operation)", label, n.Pod, n.Throughput, before[n.Pod])
		}
	}
	return member
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
	member := assertLimits(t, w, before, label)
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
		"read the stream throughput of demo-dc1-rack1-2 (its stream and entire-SSTable limiters) and record it in the checkpoint",
		"set the stream throughput of demo-dc1-rack1-2 to 200 MiB/s: it is the sender of its decommission, and only a sender's limit throttles a stream; 1.2 GiB in ≥ 7s (in ≥ 52s at the default 24 MiB/s)",
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
			aborted, resumed, putBack := 0, 0, 0
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
					if restoredAny(w, tc.target) {
						putBack++
					}
				}
				assertThroughputHistory(t, w, before, tc.target, label)
				if v := w.Violations(); len(v) > 0 {
					t.Errorf("%s: %v", label, v)
				}
			}
			t.Logf("%s: %d crash points, each resumed (crashed once more) and aborted (%d aborts, %d of which put a limit back; %d refused and resumed)", tc.name, points, aborted, putBack, resumed)
			if putBack == 0 {
				t.Errorf("no abort put a limit back: the matrix misses the point")
			}
		})
	}
}

// restoredAny: the plugin set a limiter back (a command to another value than target).
func restoredAny(w *world.World, target string) bool {
	for _, cmds := range throughputSets(w) {
		for _, c := range cmds {
			if !strings.HasSuffix(c, " "+target) {
				return true
			}
		}
	}
	return false
}

// TestDrivenStreamThroughputCrashMatrix: the same on cass-operator, which decommissions
// itself (never paused): the plugin sets the leaving node's limits before it asks for
// the node and restores them after, as steps of the driven list. Every crash point,
// resumed (crashed once more) then to the end: one size write per node, each limiter
// set once, every node still a member at its limits from before.
func TestDrivenStreamThroughputCrashMatrix(t *testing.T) {
	scale := append(scaleDC(1), "--stream-throughput", rate200)
	ref := drivenWorld(t, 3)
	before := limits(t, ref)
	if _, errOut, code, crashed := drun(ref, 0, scale...); code != 0 || crashed {
		t.Fatalf("reference run: exit %d crashed %v\n%s", code, crashed, errOut)
	}
	ref.SettleOperator(200)
	ref.AssertDrivenConverged(1, "reference")
	assertDrivenHistory(t, ref, sizeSteps(3, 1), "reference")
	assertThroughputHistory(t, ref, before, "200", "reference")
	if n := len(throughputSets(ref)[pod(2)]); n != 2 {
		t.Fatalf("reference run: %d throughput commands on %s, want 2: %v", n, pod(2), throughputSets(ref))
	}
	points := ref.SideEffects()
	aborted, resumed, putBack := 0, 0, 0
	for k := 1; k <= points; k++ {
		label := fmt.Sprintf("crash after side effect %d/%d", k, points)
		w := drivenWorld(t, 3)
		if _, errOut, _, crashed := drun(w, k, scale...); !crashed {
			t.Fatalf("%s: not reached\n%s", label, errOut)
		}
		second := 1 + (k*7)%5
		if _, errOut, code, crashed := drun(w, second, "resume", "dc1", "-n", "cassandra", "--yes"); !crashed && code != 0 {
			t.Fatalf("%s: resume (second crash at %d) exited %d\n%s", label, second, code, errOut)
		}
		if _, errOut, code, crashed := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes"); crashed || code != 0 {
			t.Fatalf("%s, then %d: final resume exited %d\n%s", label, second, code, errOut)
		}
		w.SettleOperator(200)
		w.AssertDrivenConverged(1, label)
		assertDrivenHistory(t, w, sizeSteps(3, 1), label)
		assertDecommissionedOnce(t, w, []string{pod(2), pod(1)}, label)
		assertThroughputHistory(t, w, before, "200", label)

		// The same crash, then abort (resume when abort refuses: a removal asked for
		// is the operator's to finish).
		label += ", then abort"
		w = drivenWorld(t, 3)
		drun(w, k, scale...)
		_, errOut, code, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
		if code != 0 {
			if _, errOut2, code2, _ := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes"); code2 != 0 {
				t.Fatalf("%s: abort exited %d, then resume %d\n%s\n%s", label, code, code2, errOut, errOut2)
			}
			resumed++
		} else {
			aborted++
			if restoredAny(w, "200") {
				putBack++
			}
		}
		w.SettleOperator(200)
		if w.HasDCCheckpoint() {
			t.Errorf("%s: the checkpoint is left", label)
		}
		assertThroughputHistory(t, w, before, "200", label)
	}
	t.Logf("%d crash points, each resumed (crashed once more) and aborted (%d aborts, %d of which put a limit back; %d refused and resumed)", points, aborted, putBack, resumed)
}

// TestStreamThroughputRefusals: a rate that is no rate is bad usage (exit 2), one the
// cluster's version cannot take is refused with the nearest it can (exit 3), a restart
// refuses the flag with the reason; nothing is written or run.
func TestStreamThroughputRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		args          []string
		code          int
		want          []string
	}{
		{"megabytes", "4.1", scaleTo(1, "--stream-throughput", "200MB/s"), exit.Usage,
			[]string{`--stream-throughput: rate "200MB/s": unit "MB/s" is not one nodetool knows: write MiB/s (mebibytes per second) or Mb/s (megabits per second); nothing changed`}},
		{"no unit", "4.1", scaleTo(1, "--stream-throughput", "200"), exit.Usage, []string{"has no unit: write 200MiB/s (mebibytes) or 200Mb/s (megabits)"}},
		// 4.0.2+ counts 125 000 B per megabit (3.11.0-11 counted 131 072: 200 MiB/s was
		// 1600 of them there).
		{"MiB on 4.0", "4.0", scaleTo(1, "--stream-throughput", rate200), operation.ExitRefused, []string{"--stream-throughput 200MiB/s: cassandra 4.0.13 cannot set its stream limiter to 200 MiB/s: it takes whole Mb/s (nearest: 1678 Mb/s); nothing changed"}},
		{"megabits on the entire-SSTable limiter", "4.1", scaleTo(1, "--stream-throughput", "1600Mb/s"), operation.ExitRefused, []string{"cassandra 4.1.6 cannot set its entire-sstable limiter to 1600 Mb/s: it takes whole MiB/s (nearest: 191 MiB/s); nothing changed"}},
		{"restart", "4.1", []string{"restart", "demo", "-n", "cassandra", "--rack", "rack1", "--yes", "--stream-throughput", rate200}, exit.Usage,
			[]string{"--stream-throughput does not apply to a restart: a restarted node comes back on its own data and streams nothing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := world.New(t, world.Opts{Nodes: 3, Version: tc.version})
			_, stderr, code, _ := run(w, 0, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			for _, want := range tc.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if h := w.History(); len(h) != 0 {
				t.Errorf("refused, yet: %v", h)
			}
		})
	}
}

// TestAbortPutsBackStreamThroughput: Cassandra refuses a decommission after its node's
// limits were set (the run stops, exit 3); abort sets them back to what was recorded,
// once. When the node restarted meanwhile (its cassandra.yaml value is back), abort
// says so and sets nothing.
func TestAbortPutsBackStreamThroughput(t *testing.T) {
	for _, restarted := range []bool{false, true} {
		t.Run(fmt.Sprintf("restarted=%v", restarted), func(t *testing.T) {
			const node = "demo-dc1-rack1-1"
			w := world.New(t, world.Opts{Nodes: 2, Version: "4.1"})
			before := limits(t, w)
			_ = w.Cass.SetFault(node, sim.Fault{RefuseRF: true})
			if _, stderr, code, _ := run(w, 0, scaleTo(1, "--stream-throughput", "0")...); code != operation.ExitRefused {
				t.Fatalf("exit %d, want 3\n%s", code, stderr)
			}
			if n, _ := w.Cass.Node(node); !math.IsInf(n.Throughput.Stream, 1) || !math.IsInf(n.Throughput.EntireSSTable, 1) {
				t.Fatalf("after the refusal %s is not unthrottled: %+v", node, n.Throughput)
			}
			if restarted {
				if err := w.Cass.Restart(node); err != nil {
					t.Fatal(err)
				}
			}
			stdout, stderr, code, _ := run(w, 0, abortDemo...)
			if code != 0 {
				t.Fatalf("abort: exit %d\n%s\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, "Note: the stream throughput this operation set on "+node+" (unlimited) goes back to what was recorded before it") {
				t.Errorf("abort does not say what it puts back:\n%s", stderr)
			}
			warned := strings.Contains(stderr, "the stream limiter of "+node+" reads 24 MiB/s, its value before this operation, not the unlimited it set: the node restarted since")
			if warned != restarted {
				t.Errorf("restart warned %v, want %v:\n%s", warned, restarted, stderr)
			}
			w.AssertConsistentAt(2, "abort")
			if restarted {
				assertLimits(t, w, before, "abort")
			} else {
				assertThroughputHistory(t, w, before, "0", "abort")
			}
			if n := len(throughputSets(w)[node]); restarted && n != 2 || !restarted && n != 4 {
				t.Errorf("%d throughput commands on %s: %v", n, node, throughputSets(w))
			}
		})
	}
}

// TestScaleUpStreamThroughput: a scale-up with --stream-throughput sets the limits of
// the nodes that stream to the joining ones (every node of the datacenter before it)
// once, before the first new node, and puts them back once after the last joined.
func TestScaleUpStreamThroughput(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2, Version: "4.1"})
	setLimit(t, w, "demo-dc1-rack1-0", "setstreamthroughput", "-e", "100")
	before := limits(t, w)
	stdout, stderr, code, _ := run(w, 0, scaleTo(4, "--stream-throughput", rate200)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"set the stream throughput of the 2 nodes that stream to the new ones (demo-dc1-rack1-0, demo-dc1-rack1-1) to 200 MiB/s: each source's own limit throttles its part of a bootstrap, and the joining node's plays no part; " +
			"at most, one source at a time: demo-dc1-rack1-2 receives 614.4 MiB in ≥ 4s (in ≥ 26s at the default 24 MiB/s)",
		"put back the stream throughput recorded on the 2 nodes that stream to the new ones",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
	w.AssertScaledUp(4, "scale-up")
	assertThroughputHistory(t, w, before, "200", "scale-up")
	for _, p := range []string{"demo-dc1-rack1-2", "demo-dc1-rack1-3"} {
		if len(throughputSets(w)[p]) != 0 {
			t.Errorf("the new node %s's limits were changed: %v", p, throughputSets(w))
		}
	}
}

// TestScaleUpStreamThroughputCrashMatrix kills a 2 -> 3 scale-up with
// --stream-throughput right after each side effect, then resumes it (crashed once
// more, then to the end): each source's limits set once and back once, even when the
// run died in the middle of putting them back (a resume asks every step again, and the
// set must not act after its restore began).
func TestScaleUpStreamThroughputCrashMatrix(t *testing.T) {
	opts := world.Opts{Nodes: 2, Version: "4.1"}
	scale := scaleTo(3, "--stream-throughput", rate200)
	ref := world.New(t, opts)
	before := limits(t, ref)
	if _, stderr, code, crashed := run(ref, 0, scale...); code != 0 || crashed {
		t.Fatalf("reference run: exit %d crashed %v\n%s", code, crashed, stderr)
	}
	assertThroughputHistory(t, ref, before, "200", "reference")
	points := ref.SideEffects()
	for k := 1; k <= points; k++ {
		label := fmt.Sprintf("crash after side effect %d/%d", k, points)
		w := world.New(t, opts)
		before := limits(t, w)
		if !crashAndResume(t, w, k, scale) {
			t.Fatalf("%s: not reached", label)
		}
		w.AssertScaledUp(3, label)
		assertThroughputHistory(t, w, before, "200", label)
	}
	t.Logf("%d crash points, each resumed (crashed once more) to the end", points)
}

// TestReplanKeepsStreamThroughputRecord: after Cassandra refused a decommission whose
// node was already unthrottled, the same scale with --force (and no rate) is planned
// again with the rate in flight and the node's record from before the first plan: an
// abort of the new plan puts that value back, not the rate the first plan set.
func TestReplanKeepsStreamThroughputRecord(t *testing.T) {
	const node = "demo-dc1-rack1-2"
	w := world.New(t, world.Opts{Nodes: 3, Version: "4.1"})
	before := limits(t, w)
	_ = w.Cass.SetFault(node, sim.Fault{RefuseRF: true})
	if _, stderr, code, _ := run(w, 0, scaleTo(1, "--stream-throughput", "0")...); code != operation.ExitRefused {
		t.Fatalf("exit %d, want 3\n%s", code, stderr)
	}
	// The re-plan replaces the checkpoint in two writes (the takeover, then the new
	// plan): it dies right after the second.
	_, stderr, _, crashed := run(w, 2, scaleTo(1, "--force")...)
	if !crashed || !strings.Contains(stderr, "Keeping --stream-throughput 0 of operation") {
		t.Fatalf("re-plan: crashed %v\n%s", crashed, stderr)
	}
	cp := loadCP(t, w)
	if r, ok := cp.Throughput.RecordOf(node); !cp.Force || !ok || r.Limiters["stream"].Unlimited || r.Limiters["stream"].Value != 24 {
		t.Fatalf("the new plan's record of %s: %+v (force %v)", node, cp.Throughput, cp.Force)
	}
	if _, stderr, code, _ := run(w, 0, abortDemo...); code != 0 {
		t.Fatalf("abort: exit %d\n%s", code, stderr)
	}
	assertThroughputHistory(t, w, before, "0", "abort after the re-plan")
}

// TestStreamThroughputWarnsOfEncryption: internode encryption in the cluster resource
// (CassKop's spec.config cassandra-yaml) makes the plan warn that the rate may not be
// reached; a cassandra.yaml from a ConfigMap makes it say it cannot tell.
func TestStreamThroughputWarnsOfEncryption(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec map[string]any
		want string
	}{
		{"all", map[string]any{"config": map[string]any{"cassandra-yaml": map[string]any{"server_encryption_options": map[string]any{"internode_encryption": "all"}}}},
			`[!!] --stream-throughput: internode encryption is "all": streams are encrypted, so zero-copy streaming is off and the rate may stay well below the limit`},
		{"configmap", map[string]any{"configMapName": "my-yaml"},
			"[!!] --stream-throughput: whether internode encryption is on cannot be told from the cluster resource (spec.configMapName my-yaml provides cassandra.yaml)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := world.New(t, world.Opts{Nodes: 2, Version: "4.1"})
			cr := w.CR().DeepCopy()
			for k, v := range tc.spec {
				cr.Object["spec"].(map[string]any)[k] = v
			}
			if err := w.Dyn.Tracker().Update(world.CCGVR, cr, w.NS); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code, _ := run(w, 0, scaleTo(1, "--stream-throughput", rate200, "--dry-run")...)
			if code != 0 || !strings.Contains(stdout, tc.want) {
				t.Fatalf("exit %d, want the warning %q\n%s\n%s", code, tc.want, stdout, stderr)
			}
			if !strings.Contains(stdout, "--stream-throughput 200MiB/s") {
				t.Errorf("the command to run it drops the rate:\n%s", stdout)
			}
		})
	}
}

// TestDrivenScaleUpStreamThroughput: on cass-operator, which bootstraps the new nodes
// itself, the plugin still sets the sources' limits before it asks for the first node
// and puts them back once the last one joined.
func TestDrivenScaleUpStreamThroughput(t *testing.T) {
	w := drivenWorld(t, 1)
	before := limits(t, w)
	stdout, errOut, code, _ := drun(w, 0, append(scaleDC(3), "--stream-throughput", rate200)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	w.SettleOperator(200)
	w.AssertDrivenConverged(3, "scale-up")
	assertDrivenHistory(t, w, sizeSteps(1, 3), "scale-up")
	assertThroughputHistory(t, w, before, "200", "scale-up")
	if n := len(throughputSets(w)[pod(0)]); n != 4 {
		t.Errorf("%d throughput commands on the source %s, want 4 (two limiters set, then back): %v", n, pod(0), throughputSets(w))
	}
}

// TestRestartUnderDecommissionSetsThroughputAgain: a resume finds the leaving node in
// the middle of its decommission, which then restarts (NORMAL again, its cassandra.yaml
// limits back): the run goes back to setting its limits, then decommissions it again,
// at the rate asked.
func TestRestartUnderDecommissionSetsThroughputAgain(t *testing.T) {
	const node = "demo-dc1-rack1-1"
	opts := world.Opts{Nodes: 2, Version: "4.1", DecommissionTime: 30 * time.Millisecond}
	scale := scaleTo(1, "--stream-throughput", rate200)
	var w *world.World
	for k := 1; ; k++ {
		// The run dies right after it wrote the decommission "started", before the exec.
		w = world.New(t, opts)
		if _, stderr, _, crashed := run(w, k, scale...); !crashed {
			t.Fatalf("no crash point between the decommission's record and its exec\n%s", stderr)
		}
		if cp := loadCP(t, w); cp != nil && stepOf(t, cp, "decommission/"+node).State == "started" {
			break
		}
	}
	// The exec reached the node after all, which leaves slowly.
	if err := w.Cass.SetFault(node, sim.Fault{HoldStreaming: true}); err != nil {
		t.Fatal(err)
	}
	w.StartDecommission(node)
	restarted := &onStderr{markers: []string{node + " is LEAVING"}, fn: func() {
		_ = w.Cass.Restart(node)
		_ = w.Cass.SetFault(node, sim.Fault{})
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a backstop
	defer cancel()
	_, stderr, code, _ := runIO(ctx, w, w, 0, restarted, resume...)
	if code != 0 || !strings.Contains(stderr, "is NORMAL again (restarted?); going back to set-throughput/"+node) {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if got := fmt.Sprint(throughputSets(w)[node]); got != "[setstreamthroughput -m 200 setstreamthroughput -e 200 setstreamthroughput -m 200 setstreamthroughput -e 200]" {
		t.Errorf("throughput commands on %s: %s", node, got)
	}
	assertDecommissions(t, w, "restarted", map[string][2]int{node: {2, 2}})
	if problems := w.ScaledDownProblems(1); len(problems) != 1 || problems[0] != "node "+node+" decommissions started = 2, want 1" {
		t.Fatalf("%q", problems) // twice, as the restart made necessary; nothing else amiss
	}
}
