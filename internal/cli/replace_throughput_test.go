package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// The stream throughput of the nodes that stream to a replacement, set before the
// replacement can start and put back once it is verified (replace-node
// --stream-throughput; internal/operation/replacenode/throughput.go).

// replaceTP is replace-node of deadPod on the CassKop world with --stream-throughput rate.
func replaceTP(rate string) []string {
	return []string{"replace-node", "demo", "-n", "cassandra", "--pod", deadPod, "--yes", "--stream-throughput", rate}
}

// sourceLimits are the limits of every node but dead before the replace: the
// replacement's limits are its own (the dead node's JVM is gone with them).
func sourceLimits(t *testing.T, w *world.World, dead string) map[string]sim.Throughputs {
	t.Helper()
	before := limits(t, w)
	delete(before, dead)
	return before
}

// prepareSources sets a source's entire-SSTable limit by hand (a value of its own to put
// back) and returns the sources' limits.
func prepareSources(t *testing.T, w *world.World) map[string]sim.Throughputs {
	t.Helper()
	setLimit(t, w, "demo-dc1-rack1-0", "setstreamthroughput", "-e", "100")
	return sourceLimits(t, w, deadPod)
}

// assertThrottledAround: the plugin set every limit to target before the first event
// start matches (the one that can make the replacement stream), and set every one back
// after the last event end matches; never on the dead node's pod.
func assertThrottledAround(t *testing.T, w *world.World, dead, target string, start, end func(world.Event) bool, label string) {
	t.Helper()
	first, last := -1, -1
	var sets, backs []int
	for i, ev := range w.History() {
		if first < 0 && start(ev) {
			first = i
		}
		if end(ev) {
			last = i
		}
		if ev.Kind != "exec" || !strings.HasPrefix(ev.Verb, "set") || !strings.Contains(ev.Verb, "streamthroughput") {
			continue
		}
		if ev.Name == dead {
			t.Errorf("%s: the plugin changed the dead node's pod's limits: %s", label, ev)
		}
		if strings.HasSuffix(ev.Verb, " "+target) {
			sets = append(sets, i)
		} else {
			backs = append(backs, i)
		}
	}
	if first < 0 || last < 0 || len(sets) == 0 || len(backs) == 0 {
		t.Fatalf("%s: start at %d, end at %d, %d sets and %d set back", label, first, last, len(sets), len(backs))
	}
	if sets[len(sets)-1] > first {
		t.Errorf("%s: a limit was set (event %d) after the replacement could start (event %d)", label, sets[len(sets)-1], first)
	}
	if backs[0] < last {
		t.Errorf("%s: a limit was set back (event %d) before the replacement streamed (event %d)", label, backs[0], last)
	}
}

func isConfigMapWrite(ev world.Event) bool { return ev.Kind == "write" && ev.Resource == "configmaps" }

// TestReplaceNodeStreamThroughput: a CassKop replace with --stream-throughput sets the
// limits of every other node of the datacenter (the sources: a replacement only
// receives) once, before the replace option is written, and puts each back once, after
// the replacement is verified; the plan says the rate and the time the dead node's data
// takes at it beside the default's.
func TestReplaceNodeStreamThroughput(t *testing.T) {
	w, deadID, tokens := replaceWorld(t, "4.1")
	before := prepareSources(t, w)
	stdout, stderr, code, _ := run(w, 0, replaceTP(rate200)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"read the stream throughput of the 2 nodes that stream to the replacement (demo-dc1-rack1-0, demo-dc1-rack1-1) (its stream and entire-SSTable limiters) and record it in the checkpoint",
		"set the stream throughput of the 2 nodes that stream to the replacement (demo-dc1-rack1-0, demo-dc1-rack1-1) to 200 MiB/s: each source's own limit throttles its part of the replacement's streaming",
		// The ring reads a DN node's Load as "?": the datacenter's average stands in.
		deadPod + " receives 1.2 GiB in ≥ 7s (in ≥ 52s at the default 24 MiB/s)",
		"put back the stream throughput recorded on the 2 nodes that stream to the replacement",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
	assertReplaced(t, w, deadID, tokens, "replace-node")
	w.AssertHistory(replaceHistory(), "replace-node")
	assertThroughputHistory(t, w, before, "200", "replace-node")
	isPodDelete := func(ev world.Event) bool { return ev.Verb == "delete" && ev.Resource == "pods" }
	assertThrottledAround(t, w, deadPod, "200", isConfigMapWrite, isPodDelete, "replace-node")
	sets := throughputSets(w)
	for _, p := range []string{"demo-dc1-rack1-0", "demo-dc1-rack1-1"} {
		if got := fmt.Sprint(sets[p]); !strings.HasPrefix(got, "[setstreamthroughput -m 200 setstreamthroughput -e 200 ") || len(sets[p]) != 4 {
			t.Errorf("throughput commands on %s: %s, want both limiters set then set back", p, got)
		}
	}
	if got := configMapWrites(w); got != 2 {
		t.Errorf("the ConfigMap was written %d times, want 2", got)
	}
}

// TestReplaceNodeStreamThroughputCrashMatrix kills a replace with --stream-throughput
// right after each of its side effects (API writes, every setstreamthroughput), then
// either resumes it (crashed once more, then to the end) or aborts it (resumed when
// abort refuses: the dead node's data is gone). Every case ends with each source at the
// limits it had before (one set by hand), each limiter set to the rate at most once and
// set back exactly once; resumed, the node is replaced with the replace's own history;
// aborted, nothing was deleted and the option and the operator are back.
func TestReplaceNodeStreamThroughputCrashMatrix(t *testing.T) {
	args := replaceTP(rate200)
	ref, deadID, tokens := replaceWorld(t, "4.1")
	before := prepareSources(t, ref)
	if _, stderr, code, crashed := run(ref, 0, args...); code != 0 || crashed {
		t.Fatalf("reference run: exit %d crashed %v\n%s", code, crashed, stderr)
	}
	assertReplaced(t, ref, deadID, tokens, "reference")
	assertThroughputHistory(t, ref, before, "200", "reference")
	points := ref.SideEffects()
	aborted, resumed, putBack := 0, 0, 0
	for k := 1; k <= points; k++ {
		label := fmt.Sprintf("crash after side effect %d/%d", k, points)
		w, deadID, tokens := replaceWorld(t, "4.1")
		before := prepareSources(t, w)
		if !crashAndResume(t, w, k, args) {
			t.Fatalf("%s: not reached", label)
		}
		assertReplaced(t, w, deadID, tokens, label)
		w.AssertHistory(replaceHistory(), label)
		assertThroughputHistory(t, w, before, "200", label)

		label += ", then abort"
		w, deadID, tokens = replaceWorld(t, "4.1")
		before = prepareSources(t, w)
		run(w, k, args...)
		if !w.HasCheckpoint() {
			// Killed after its last write: the replace is over, nothing to abort.
			assertReplaced(t, w, deadID, tokens, label)
			assertThroughputHistory(t, w, before, "200", label)
			continue
		}
		_, stderr, code, _ := run(w, 0, "abort", "demo", "-n", "cassandra", "--yes")
		if code != 0 {
			if code != operation.ExitRefused || !strings.Contains(stderr, "resume") {
				t.Fatalf("%s: abort exited %d\n%s", label, code, stderr)
			}
			if _, stderr, code, _ := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 {
				t.Fatalf("%s: abort refused, then resume exited %d\n%s", label, code, stderr)
			}
			assertReplaced(t, w, deadID, tokens, label)
			resumed++
		} else {
			assertAbortedReplace(t, w, label)
			aborted++
			if restoredAny(w, "200") {
				putBack++
			}
		}
		assertThroughputHistory(t, w, before, "200", label)
	}
	t.Logf("%d crash points, each resumed (crashed once more) and aborted (%d aborts, %d of which put a limit back; %d refused and resumed)", points, aborted, putBack, resumed)
	if putBack == 0 || resumed == 0 {
		t.Errorf("no abort put a limit back, or none was refused: the matrix misses the point")
	}
}

// assertAbortedReplace: an aborted replace left no checkpoint, no replace option, the
// operator running and the dead node's claims and pod in place.
func assertAbortedReplace(t *testing.T, w *world.World, label string) {
	t.Helper()
	if w.HasCheckpoint() {
		t.Errorf("%s: a checkpoint is left", label)
	}
	if s, _ := w.ConfigMap(); strings.Contains(s, "replace_address") {
		t.Errorf("%s: abort left the replace option", label)
	}
	if w.DeploymentReplicas("casskop") != 1 {
		t.Errorf("%s: abort did not restore the operator", label)
	}
	if got := deletesOf(w); len(got) > 0 {
		t.Errorf("%s: deleted %v", label, got)
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("%s: unsafe actions: %s", label, strings.Join(v, "; "))
	}
}

// TestReplaceNodeAbortPutsBackStreamThroughput: a replace killed once the sources'
// limits are set and the option written, before the dead node's claims are deleted, is
// aborted: abort says it puts the limits back and does, once each, besides taking the
// option out and restoring the operator.
func TestReplaceNodeAbortPutsBackStreamThroughput(t *testing.T) {
	var w *world.World
	var before map[string]sim.Throughputs
	for k := 1; ; k++ {
		if k > 30 {
			t.Fatal("no crash point leaves the limits set and the claims intact")
		}
		w, _, _ = replaceWorld(t, "4.1")
		before = prepareSources(t, w)
		if _, _, _, crashed := run(w, k, replaceTP(rate200)...); !crashed {
			t.Fatal("the run was not killed")
		}
		// Killed right after the option was written: past the sets, before the claims.
		if s, _ := w.ConfigMap(); strings.Contains(s, "replace_address") && len(deletesOf(w)) == 0 {
			break
		}
	}
	for _, p := range []string{"demo-dc1-rack1-0", "demo-dc1-rack1-1"} {
		if n, _ := w.Cass.Node(p); n.Throughput.Stream != 200<<20 || n.Throughput.EntireSSTable != 200<<20 {
			t.Fatalf("before the abort %s is not at 200 MiB/s: %+v", p, n.Throughput)
		}
	}
	_, stderr, code, _ := run(w, 0, "abort", "demo", "-n", "cassandra", "--yes")
	if code != 0 {
		t.Fatalf("abort exited %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"Note: the stream throughput this operation set on the 2 nodes that stream to the replacement (200 MiB/s) goes back to what was recorded before it",
		"Put back the stream throughput operation",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("abort does not say %q:\n%s", want, stderr)
		}
	}
	assertAbortedReplace(t, w, "abort")
	assertThroughputHistory(t, w, before, "200", "abort")
	if !restoredAny(w, "200") {
		t.Error("abort put no limit back")
	}
}

// TestReplaceNodeResumeKeepsItsRate: replace-node run again on a replace in flight with
// another rate resumes it at its own rate, and says so.
func TestReplaceNodeResumeKeepsItsRate(t *testing.T) {
	w, deadID, tokens := replaceWorld(t, "4.1")
	before := sourceLimits(t, w, deadPod)
	if _, _, _, crashed := run(w, 6, replaceTP(rate200)...); !crashed {
		t.Fatal("the run was not killed")
	}
	_, stderr, code, _ := run(w, 0, replaceTP("100MiB/s")...)
	if code != 0 || !strings.Contains(stderr, "It sets the stream throughput to 200 MiB/s: --stream-throughput 100MiB/s is not applied (abort it and run replace-node again to change it).") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	assertReplaced(t, w, deadID, tokens, "resumed")
	assertThroughputHistory(t, w, before, "200", "resumed")
}

// TestDrivenReplaceNodeStreamThroughput: on cass-operator, which replaces the node
// through its task, the plugin sets the sources' limits before it creates the task and
// puts them back once the replacement is verified.
func TestDrivenReplaceNodeStreamThroughput(t *testing.T) {
	w, d := drivenReplaceWorld(t)
	before := sourceLimits(t, w, d.Pod)
	out, errOut, code, _ := drun(w, 0, append(replaceDC(d.Pod), "--stream-throughput", rate200)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if want := "set the stream throughput of the 2 nodes that stream to the replacement (" + pod(0) + ", " + pod(2) + ") to 200 MiB/s"; !strings.Contains(out, want) {
		t.Errorf("plan lacks %q:\n%s", want, out)
	}
	assertDrivenReplaced(t, w, d, "replace-node")
	assertThroughputHistory(t, w, before, "200", "replace-node")
	isTaskCreate := func(ev world.Event) bool {
		return ev.Kind == "write" && ev.Resource == "cassandratasks" && ev.Verb == "create"
	}
	assertThrottledAround(t, w, d.Pod, "200", isTaskCreate, isTaskCreate, "replace-node")
	for _, p := range []string{pod(0), pod(2)} {
		if n := len(throughputSets(w)[p]); n != 4 {
			t.Errorf("%d throughput commands on the source %s, want 4 (two limiters set, then back): %v", n, p, throughputSets(w))
		}
	}
}

// TestDrivenReplaceNodeStreamThroughputCrashMatrix: the same killed right after each
// side effect, then resumed (crashed once more) to the end: replaced through one task,
// each source's limits set once and back once. Or aborted: before the task exists
// abort puts the limits back and no task is ever created; once it exists abort refuses
// and resume finishes.
func TestDrivenReplaceNodeStreamThroughputCrashMatrix(t *testing.T) {
	ref, d := drivenReplaceWorld(t)
	args := append(replaceDC(d.Pod), "--stream-throughput", rate200)
	before := sourceLimits(t, ref, d.Pod)
	if _, errOut, code, crashed := drun(ref, 0, args...); code != 0 || crashed {
		t.Fatalf("reference run: exit %d crashed %v\n%s", code, crashed, errOut)
	}
	assertThroughputHistory(t, ref, before, "200", "reference")
	points := ref.SideEffects()
	aborted, resumed := 0, 0
	for k := 1; k <= points; k++ {
		label := fmt.Sprintf("crash after side effect %d/%d", k, points)
		w, d := drivenReplaceWorld(t)
		before := sourceLimits(t, w, d.Pod)
		drivenCrashAndResume(t, w, k, args, label)
		assertDrivenReplaced(t, w, d, label)
		assertThroughputHistory(t, w, before, "200", label)

		label += ", then abort"
		w, d = drivenReplaceWorld(t)
		before = sourceLimits(t, w, d.Pod)
		drun(w, k, args...)
		if !w.HasDCCheckpoint() {
			assertDrivenReplaced(t, w, d, label) // killed after its last write: over
			continue
		}
		_, errOut, code, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
		if code != 0 {
			if code != operation.ExitRefused || !strings.Contains(errOut, "task") {
				t.Fatalf("%s: abort exited %d\n%s", label, code, errOut)
			}
			if _, errOut, code, _ := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes"); code != 0 {
				t.Fatalf("%s: abort refused, then resume exited %d\n%s", label, code, errOut)
			}
			assertDrivenReplaced(t, w, d, label)
			resumed++
		} else {
			if got := pluginWrites(w, "cassandratasks"); len(got) > 0 || w.HasDCCheckpoint() {
				t.Errorf("%s: aborted, yet tasks %v, checkpoint left %v", label, got, w.HasDCCheckpoint())
			}
			aborted++
		}
		assertThroughputHistory(t, w, before, "200", label)
	}
	t.Logf("%d crash points, each resumed (crashed once more) and aborted (%d aborts, %d refused and resumed)", points, aborted, resumed)
	if aborted == 0 || resumed == 0 {
		t.Errorf("no abort went through, or none was refused: the matrix misses the point")
	}
}

// TestReplaceNodeStreamThroughputRefusals: a rate the cluster's version cannot take is
// refused with the nearest it can (exit 3), one that is no rate is bad usage (exit 2);
// nothing is written or run.
func TestReplaceNodeStreamThroughputRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, version, rate string
		code                int
		want                string
	}{
		{"MiB on 4.0", "4.0", rate200, operation.ExitRefused, "--stream-throughput 200MiB/s: cassandra 4.0.13 cannot set its stream limiter to 200 MiB/s: it takes whole Mb/s (nearest: 1678 Mb/s); nothing changed"},
		{"megabytes", "4.1", "200MB/s", exit.Usage, `--stream-throughput: rate "200MB/s": unit "MB/s" is not one nodetool knows`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _, _ := replaceWorld(t, tc.version)
			_, stderr, code, _ := run(w, 0, replaceTP(tc.rate)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want %d saying %q\n%s", code, tc.code, tc.want, stderr)
			}
			if h := w.History(); len(h) != 0 {
				t.Errorf("refused, yet: %v", h)
			}
		})
	}
}
