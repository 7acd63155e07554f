package cli

// The reproductions of findings 5-8 of the review of 2026-12-06
// (/work/shared/reviews/review-2026-12-06.md), kept as regression tests: the
// stream throughput carried by cass-operator's repair, a source that dies with its
// limit set, the limit's owner mark on the pod, and abort during a driven second
// removal.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setsTo counts the plugin's throughput commands on pod whose value is (not) value.
func setsTo(w *world.World, pod, value string) (to, other int) {
	for _, cmd := range throughputSets(w)[pod] {
		f := strings.Fields(cmd)
		if f[len(f)-1] == value {
			to++
		} else {
			other++
		}
	}
	return to, other
}

// TestDrivenRepairCarriesStreamThroughput: a cass-operator scale-down 3 -> 1 with
// --stream-throughput; the operator is killed while its decommission of sts-2 runs
// (FACTS §8 A: left unmarked). The run stops naming repair-operator-state, which carries
// the scale on with its throughput record and steps: the repair ends the operation,
// and every limit set is put back on the nodes that stay.
func TestDrivenRepairCarriesStreamThroughput(t *testing.T) {
	w := drivenWorld(t, 3)
	before := limits(t, w)
	w.KillOperatorAfter(standin.ActDecommission)
	_, errOut, code, _ := drun(w, 0, append(scaleDC(1), "--stream-throughput", rate200)...)
	if code == 0 || !strings.Contains(errOut, "repair-operator-state") {
		t.Fatalf("scale: exit %d, want it to name the repair\n%s", code, errOut)
	}
	w.SettleOperator(50)
	out, rerr, rcode, _ := drun(w, 0, "repair-operator-state", "dc1", "-n", "cassandra", "--yes", "--poll-interval", "1ms")
	if rcode != 0 {
		_, serr, scode, _ := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes", "--poll-interval", "1ms")
		t.Fatalf("repair-operator-state, which the scale named: exit %d: %s (then resume exit %d: %s)", rcode, shortLine(out+rerr, "Error"), scode, shortLine(serr, "Error"))
	}
	w.SettleOperator(50)
	w.AssertDrivenConverged(1, "repair carried the scale")
	assertThroughputHistory(t, w, before, "200", "repair carried the scale")
	for _, p := range []string{pod(1), pod(2)} {
		if len(throughputSets(w)[p]) == 0 {
			t.Errorf("%s's limit never set: %v", p, throughputSets(w))
		}
	}
}

// TestThroughputSourceDiesBeforeRestore: a scale-up 2 -> 3 with --stream-throughput
// stops after its new node joined, before restore-throughput; then a source dies for
// good (JVM down: nodetool's connection refused). Its limit went with its JVM: nothing
// is left to restore on it, and resume ends the operation, putting back the other
// source's limit once.
func TestThroughputSourceDiesBeforeRestore(t *testing.T) {
	scale := scaleTo(3, "--stream-throughput", rate200)
	var w *world.World
	var before map[string]sim.Throughputs
	for k := 1; ; k++ {
		if k > 40 {
			t.Fatal("no crash point with the new node joined and the limits not put back")
		}
		w = world.New(t, world.Opts{Nodes: 2, RF: 2, Version: "4.1", Operator: true})
		before = limits(t, w)
		if _, _, _, crashed := run(w, k, scale...); !crashed {
			t.Fatal("not killed")
		}
		n, err := w.Cass.Node("demo-dc1-rack1-2")
		if err == nil && n.PeerCode == "UN" && limits(t, w)["demo-dc1-rack1-1"] != before["demo-dc1-rack1-1"] {
			break
		}
	}
	w.KillNode("demo-dc1-rack1-1")
	_, rerr, rcode, _ := run(w, 0, append(resume, "--timeout", "2s")...)
	if rcode != 0 {
		_, aerr, acode, _ := run(w, 0, abortDemo...)
		t.Fatalf("a source died before the restore: resume exit %d (%s); abort exit %d (%s); operator at %d",
			rcode, shortLine(rerr, "Error"), acode, shortLine(aerr, "Error"), w.DeploymentReplicas("casskop"))
	}
	if !strings.Contains(rerr, "nothing to restore on demo-dc1-rack1-1") {
		t.Errorf("resume does not say why the dead source has nothing to restore:\n%s", rerr)
	}
	if n := w.DeploymentReplicas("casskop"); n != 1 {
		t.Errorf("operator at %d replicas, want 1", n)
	}
	// The live source put back once; the dead one set once and never put back.
	if to, back := setsTo(w, "demo-dc1-rack1-0", "200"); to != 2 || back != 2 {
		t.Errorf("demo-dc1-rack1-0: %d sets to the rate, %d back, want 2 and 2 (two limiters): %v", to, back, throughputSets(w)["demo-dc1-rack1-0"])
	}
	if to, back := setsTo(w, "demo-dc1-rack1-1", "200"); to != 2 || back != 0 {
		t.Errorf("demo-dc1-rack1-1: %d sets to the rate, %d back, want 2 and 0: %v", to, back, throughputSets(w)["demo-dc1-rack1-1"])
	}
	if got := limits(t, w)["demo-dc1-rack1-0"]; got != before["demo-dc1-rack1-0"] {
		t.Errorf("demo-dc1-rack1-0's limits %+v, want %+v", got, before["demo-dc1-rack1-0"])
	}
}

// TestThroughputSourceDiesBeforeRestoreAbort: the same state, ended by abort: the dead
// source has nothing to put back, the live one is put back, the operator restored.
func TestThroughputSourceDiesBeforeRestoreAbort(t *testing.T) {
	scale := scaleTo(3, "--stream-throughput", rate200)
	w := world.New(t, world.Opts{Nodes: 2, RF: 2, Version: "4.1", Operator: true})
	before := limits(t, w)
	if _, stderr, code := runUntilStderr(w, "[OK] set the stream throughput", scale...); code != exit.Interrupted {
		t.Fatalf("scale: exit %d\n%s", code, stderr)
	}
	w.KillNode("demo-dc1-rack1-1")
	_, aerr, acode, _ := run(w, 0, abortDemo...)
	if acode != 0 {
		t.Fatalf("abort with a dead source: exit %d: %s", acode, shortLine(aerr, "Error"))
	}
	if n := w.DeploymentReplicas("casskop"); n != 1 {
		t.Errorf("operator at %d replicas, want 1", n)
	}
	if got := limits(t, w)["demo-dc1-rack1-0"]; got != before["demo-dc1-rack1-0"] {
		t.Errorf("demo-dc1-rack1-0's limits %+v, want %+v", got, before["demo-dc1-rack1-0"])
	}
	if _, back := setsTo(w, "demo-dc1-rack1-1", "200"); back != 0 {
		t.Errorf("the dead source was set back %d times: %v", back, throughputSets(w)["demo-dc1-rack1-1"])
	}
}

// TestReplaceThroughputSourceDiesWhileStreaming: a CassKop replace with
// --stream-throughput (4 nodes, RF 3) is interrupted past the claims and the pod, while
// its replacement streams; then one of the sources dies for good. Its limit went with
// its JVM: resume (or abort) is not stopped by it.
func TestReplaceThroughputSourceDiesWhileStreaming(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 4, RF: 3, Version: "4.1", Operator: true, JoinTime: 20 * time.Millisecond, StartTime: 5 * time.Millisecond})
	before := limits(t, w)
	w.KillNode("demo-dc1-rack1-3")
	w.ExpectReplace("demo-dc1-rack1-3")
	args := []string{"replace-node", "demo", "-n", "cassandra", "--pod", "demo-dc1-rack1-3", "--yes", "--stream-throughput", rate200}
	if _, stderr, code := runUntilStderr(w, "[OK] delete pod demo-dc1-rack1-3", args...); code != exit.Interrupted {
		t.Fatalf("replace-node: exit %d\n%s", code, stderr)
	}
	w.KillNode("demo-dc1-rack1-1")
	w.ExpectReplace("demo-dc1-rack1-1")
	_, rerr, rcode, _ := run(w, 0, append(resume, "--timeout", "5s")...)
	if rcode != 0 {
		_, aerr, acode, _ := run(w, 0, abortDemo...)
		t.Fatalf("a source died while the replacement streamed: resume exit %d (%s); abort exit %d (%s); operator at %d",
			rcode, shortLine(rerr, "Error"), acode, shortLine(aerr, "Error"), w.DeploymentReplicas("casskop"))
	}
	if n := w.DeploymentReplicas("casskop"); n != 1 {
		t.Errorf("operator at %d replicas, want 1", n)
	}
	for _, p := range []string{"demo-dc1-rack1-0", "demo-dc1-rack1-2"} {
		if got := limits(t, w)[p]; got != before[p] {
			t.Errorf("%s's limits %+v, want %+v", p, got, before[p])
		}
		if to, back := setsTo(w, p, "200"); to != 2 || back != 2 {
			t.Errorf("%s: %d sets to the rate, %d back, want 2 and 2: %v", p, to, back, throughputSets(w)[p])
		}
	}
	if _, back := setsTo(w, "demo-dc1-rack1-1", "200"); back != 0 {
		t.Errorf("the dead source was set back %d times: %v", back, throughputSets(w)["demo-dc1-rack1-1"])
	}
}

// drivenSecondRemoval is a driven scale-down 4 -> 1 killed right after its second size
// write (sts-3 removed in full, sts-2 asked for); the stored checkpoint may still show
// every step pending (evident and passive steps' marks ride on later writes).
func drivenSecondRemoval(t *testing.T) *world.World {
	for k := 1; k <= 40; k++ {
		w := world.New(t, world.Opts{CassOperator: true, Nodes: 4, Racks: []string{"rack1"}, DecommissionTime: 300 * time.Millisecond})
		if _, errOut, _, crashed := drun(w, k, scaleDC(1)...); !crashed {
			t.Fatalf("not killed\n%s", errOut)
		}
		if strings.Join(sizeWrites(w), " ") == "4->3 3->2" {
			return w
		}
	}
	t.Fatal("no crash point right after the second size write")
	return nil
}

// TestDrivenAbortSecondRemoval: abort of that state, while the operator decommissions
// sts-2: abort judges sts-3 removed from the world (not the record), finishes sts-2
// with the operator, and stops there; sts-1 stays a member, never decommissioned.
func TestDrivenAbortSecondRemoval(t *testing.T) {
	w := drivenSecondRemoval(t)
	for i := 0; i < 50 && w.StepOperator() != standin.ActDecommission; i++ {
	}
	out, aerr, acode, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
	if acode != 0 {
		t.Fatalf("abort during the second removal: exit %d: %s", acode, shortLine(aerr, "Error"))
	}
	if !strings.Contains(out, "2 of 3") {
		t.Errorf("abort's summary does not say 2 of 3 nodes removed: %s", out)
	}
	n1, err := w.Cass.Node(pod(1))
	if err != nil {
		t.Fatal(err)
	}
	if n1.DecommissionsStarted != 0 || n1.Left {
		t.Errorf("node %s, which abort keeps: %d decommission(s), left %v", pod(1), n1.DecommissionsStarted, n1.Left)
	}
	if got := strings.Join(sizeWrites(w), " "); got != "4->3 3->2" {
		t.Errorf("size writes %s, want 4->3 3->2 (abort asks for no removal)", got)
	}
	w.SettleOperator(200)
	w.AssertDrivenConverged(2, "aborted during the second removal")
}

// TestDrivenAbortSecondRemovalAfterWait: the same state with the operator let finish
// sts-2 by itself: abort ends the operation at 2 of 3.
func TestDrivenAbortSecondRemovalAfterWait(t *testing.T) {
	w := drivenSecondRemoval(t)
	for i := 0; i < 400; i++ {
		w.SettleOperator(50)
		if n, err := w.Cass.Node(pod(2)); err != nil || n.Left {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.SettleOperator(200)
	out, aerr, acode, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
	if acode != 0 || !strings.Contains(out, "2 of 3") {
		t.Fatalf("abort once the operator finished sts-2: exit %d: %s %s", acode, strings.TrimSpace(out), shortLine(aerr, "Error"))
	}
}

// markOn is pod's stream throughput mark annotation ("" when none).
func markOn(t *testing.T, w *world.World, pod string) string {
	t.Helper()
	p, err := w.Kube.CoreV1().Pods(w.NS).Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Annotations[steps.ThroughputMarkAnnotation]
}

// TestThroughputWipedCheckpointReaped: a scale-up with --stream-throughput stops after
// set-throughput; its checkpoint is then wiped (the README's "record removed mid-run").
// The limit carried its owner's mark on each source's pod: the same scale run again
// reaps the marks of the gone operation (puts back what they had, once) and its own
// plan records what the sources had before either operation, never the rate.
func TestThroughputWipedCheckpointReaped(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2, Version: "4.1"})
	before := limits(t, w)
	scale := scaleTo(3, "--stream-throughput", rate200)
	if _, stderr, code := runUntilStderr(w, "[OK] set the stream throughput", scale...); code != exit.Interrupted {
		t.Fatalf("scale: exit %d\n%s", code, stderr)
	}
	for _, p := range []string{"demo-dc1-rack1-0", "demo-dc1-rack1-1"} {
		if m := markOn(t, w, p); !strings.Contains(m, "scale-") {
			t.Fatalf("%s carries no mark of the operation that set its limit: %q", p, m)
		}
	}
	wipeCheckpoint(t, w)
	_, stderr, code, _ := run(w, 0, scale...)
	if code != 0 {
		t.Fatalf("scale again after the wipe: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "Stream throughput left by an operation that is gone") {
		t.Errorf("the scale does not say it put back what the gone operation set:\n%s", stderr)
	}
	after := limits(t, w)
	for _, p := range []string{"demo-dc1-rack1-0", "demo-dc1-rack1-1"} {
		if after[p] != before[p] {
			t.Errorf("%s's limits %+v, before the operations %+v: never put back", p, after[p], before[p])
		}
		if m := markOn(t, w, p); m != "" {
			t.Errorf("%s keeps a mark: %s", p, m)
		}
		// Two operations, each set the two limiters once and put them back once (the
		// gone one's by the reaping).
		if to, back := setsTo(w, p, "200"); to != 4 || back != 4 {
			t.Errorf("%s: %d sets to the rate, %d back, want 4 and 4: %v", p, to, back, throughputSets(w)[p])
		}
	}
}

// TestThroughputMarkRemovedOnRestore: a scale-up with --stream-throughput run to its end
// leaves no mark: each restore removes its own.
func TestThroughputMarkRemovedOnRestore(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2, Version: "4.1"})
	before := limits(t, w)
	if _, stderr, code, _ := run(w, 0, scaleTo(3, "--stream-throughput", rate200)...); code != 0 {
		t.Fatalf("scale: exit %d\n%s", code, stderr)
	}
	for _, p := range []string{"demo-dc1-rack1-0", "demo-dc1-rack1-1"} {
		if m := markOn(t, w, p); m != "" {
			t.Errorf("%s keeps a mark after its restore: %s", p, m)
		}
	}
	assertThroughputHistory(t, w, before, "200", "scale-up")
}
