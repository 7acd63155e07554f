package cli

// Regression tests of the 2026-12-06 review's findings 1, 4 and 10 on cass-operator
// (driven mode): a replace task the operator has not started while the node comes
// back, a replace task that fails, a task created and gone (finished, TTL-deleted)
// before a resume. The review's reproductions (deadends-2026-12-06_test.go.txt), with
// what the way out must look like.

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// drNodetool runs nodetool args in pod of the simulated Cassandra (what an SRE runs by hand).
func drNodetool(w *world.World, pod string, args ...string) (int, string) {
	var out, errb bytes.Buffer
	code := w.Cass.Run(context.Background(), pod, args, &out, &errb)
	return code, out.String() + errb.String()
}

// drRunOnStderr is runOnStderr for the build of both operators (drun's).
func drRunOnStderr(w *world.World, markers []string, fn func(), args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stdout, stderr, code, _ = runOperators(ctx, w, drivenBuild, w, 0, &onStderr{markers: markers, fn: fn}, args...)
	return stdout, stderr, code
}

// drCrashedAfterTask is a cass-operator replace of pod(1) killed right after it created
// its task, the operator not stepped yet (and kept away); with the nodes' stream limits
// before the run.
func drCrashedAfterTask(t *testing.T, extra ...string) (*world.World, world.DeadNode, map[string]sim.Throughputs) {
	t.Helper()
	for k := 1; k <= 30; k++ {
		w, d := drivenReplaceWorld(t)
		w.PauseOperatorSteps(true)
		before := limits(t, w)
		if _, _, _, crashed := drun(w, k, append(replaceDC(pod(1)), extra...)...); !crashed {
			t.Fatal("not killed")
		}
		if len(drivenTasks(t, w)) > 0 {
			return w, d, before
		}
	}
	t.Fatal("no crash point right after the task's creation")
	return nil, world.DeadNode{}, nil
}

// drDCSteps is the DC checkpoint's steps and states, in words.
func drDCSteps(t *testing.T, w *world.World) string {
	t.Helper()
	v, ok := w.DC().GetAnnotations()[checkpoint.Annotation]
	if !ok {
		return "(none)"
	}
	kinds := NewOptions(genericiooptions.NewTestIOStreamsDiscard(), drivenBuild...).Kinds.Schemas()
	cp, err := checkpoint.Decode(v, "", kinds)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, st := range cp.Steps {
		out = append(out, st.ID+"="+st.State)
	}
	return strings.Join(out, " ")
}

// drAssertUntouched: the operator acted on none of pod(1)'s node (no drain, no claim
// or pod deleted), whose node runs as planned (Host ID d's); no task is left, the plugin
// created one and deleted it once (withdrawn), and nothing unsafe happened.
func drAssertUntouched(t *testing.T, w *world.World, d world.DeadNode, label string) {
	t.Helper()
	v, _ := w.SimNode(pod(1))
	if n := countActions(w.OperatorActions(), standin.ActTaskDrain); n > 0 || len(w.OperatorDeletes("persistentvolumeclaims")) > 0 || len(w.OperatorDeletes("pods")) > 0 {
		t.Errorf("%s: the operator drained the node %d time(s), deleted claims %v and pods %v", label, n, w.OperatorDeletes("persistentvolumeclaims"), w.OperatorDeletes("pods"))
	}
	if v.HostID != d.HostID || v.PeerCode != "UN" {
		t.Errorf("%s: pod %s runs %s %s, want the planned node %s UN", label, pod(1), v.HostID, v.PeerCode, d.HostID)
	}
	if ts := drivenTasks(t, w); len(ts) > 0 {
		t.Errorf("%s: task %s is left", label, ts[0].GetName())
	}
	var verbs []string
	for _, wr := range pluginWrites(w, "cassandratasks") {
		verbs = append(verbs, strings.Fields(wr)[0])
	}
	if strings.Join(verbs, " ") != "create delete" {
		t.Errorf("%s: the plugin's task writes %v, want one create then one delete", label, pluginWrites(w, "cassandratasks"))
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("%s: unsafe actions: %s", label, strings.Join(v, "; "))
	}
}

// TestDrivenReplaceNodeBackBeforeOperatorActs: on cass-operator the task is created
// once the node is still dead right then; the operator gets to it later (it was down,
// restarting, or busy). Meanwhile the dead node comes back (its Kubernetes node
// returns): UN, its pod Ready, nodetool answers. wait-replaced looks again each round
// while the task has not reached the pod: it withdraws the task (deleted with its UID
// and resourceVersion as preconditions) and stops with exit 3; the operator, back, has
// nothing to run; abort ends the operation. (The operator stays away until the run
// stopped: the stand-in steps at each of the plugin's requests, and the real one goes
// from starting a task to its job in one reconcile, which no watch outruns; the
// plugin's window is the time the operator is away, a poll round is enough.)
func TestDrivenReplaceNodeBackBeforeOperatorActs(t *testing.T) {
	w, d := drivenReplaceWorld(t)
	w.PauseOperatorSteps(true) // the operator does not get to the task yet
	seen := ""
	back := func() {
		w.ReviveNode(pod(1))
		n, _ := w.SimNode(pod(1))
		code, _ := drNodetool(w, pod(1), "info")
		seen = fmt.Sprintf("%s %s, nodetool info on it exit %d", n.HostID, n.PeerCode, code)
	}
	_, errOut, code := drRunOnStderr(w, []string{"[OK] create task"}, back, append(replaceDC(pod(1)), "--timeout", "5s")...)
	t.Logf("node back (%s); replace-node: exit %d: %s", seen, code, shortLine(errOut, "Error"))
	if code != operation.ExitRefused || !strings.Contains(errOut, "withdrawn") {
		t.Errorf("replace-node: exit %d, want 3 saying the task was withdrawn\n%s", code, errOut)
	}
	w.PauseOperatorSteps(false)
	w.SettleOperator(200) // the operator is back
	drAssertUntouched(t, w, d, "after the withdrawal")
	out, aerr, acode, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
	if acode != 0 || w.HasDCCheckpoint() {
		t.Errorf("abort after the withdrawal: exit %d, checkpoint left %v: %s %s", acode, w.HasDCCheckpoint(), out, aerr)
	}
	w.SettleOperator(200)
	drAssertUntouched(t, w, d, "after abort")
}

// TestDrivenReplaceNodeBackWhileWatched: the same, the node back only after a few
// rounds of the wait (the operator still away): withdrawn all the same.
func TestDrivenReplaceNodeBackWhileWatched(t *testing.T) {
	w, d := drivenReplaceWorld(t)
	w.PauseOperatorSteps(true)
	back := func() { w.ReviveNode(pod(1)) }
	_, errOut, code := drRunOnStderr(w, []string{"waiting for the new pod"}, back, append(replaceDC(pod(1)), "--timeout", "5s")...)
	if code != operation.ExitRefused || !strings.Contains(errOut, "withdrawn") {
		t.Errorf("replace-node: exit %d, want 3 saying the task was withdrawn\n%s", code, errOut)
	}
	w.PauseOperatorSteps(false)
	w.SettleOperator(200)
	drAssertUntouched(t, w, d, "node back while watched")
}

// TestDrivenReplaceAbortBeforeOperatorActs: the run dies right after it created the
// task, the operator has not touched it, and the node came back. abort withdraws the
// task (the operator has not started it) and ends the operation; the operator, back,
// has nothing to run.
func TestDrivenReplaceAbortBeforeOperatorActs(t *testing.T) {
	w, d, _ := drCrashedAfterTask(t)
	w.ReviveNode(pod(1))
	out, aerr, acode, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
	t.Logf("abort: exit %d:\n%s%s", acode, aerr, out)
	if acode != 0 || w.HasDCCheckpoint() || !strings.Contains(aerr, "Withdrew task") {
		t.Errorf("the operator has not started the task and the node is UN again, yet abort exit %d (checkpoint left %v): %s %s", acode, w.HasDCCheckpoint(), out, aerr)
	}
	w.PauseOperatorSteps(false)
	w.SettleOperator(200)
	drAssertUntouched(t, w, d, "abort")
}

// drFailTask kills cass-operator twice in the middle of the replacenode job (after its
// claims delete, before its pod delete): the third process marks the pod ERROR ("Pod or
// controller crashed during sync task") and the task ends Complete+Failed, the dead pod
// not deleted (its claim terminating under pvc-protection).
func drFailTask(t *testing.T, w *world.World) {
	t.Helper()
	w.KillOperatorAfter(standin.ActTaskDeletePVCs)
	for i := 0; i < 100 && len(w.OperatorKills()) < 1; i++ {
		w.SettleOperator(1)
	}
	w.SettleOperator(1) // the restarted process's first step
	w.KillOperatorAfter(standin.ActTaskDeletePVCs)
	for i := 0; i < 100 && len(w.OperatorKills()) < 2; i++ {
		w.SettleOperator(1)
	}
	w.SettleOperator(100)
	tasks := drivenTasks(t, w)
	if len(tasks) != 1 || taskCond(tasks[0], "Failed") != "True" {
		t.Fatalf("the task did not fail: %v; operator actions %v", tasks, w.OperatorActions())
	}
}

// TestDrivenReplaceTaskFailed: the replace task failed with the pod not deleted.
// resume stops at once (exit 1) saying the operator will not replace the node, that
// its claims are being deleted, and the two ways on; abort goes through (the node was
// not replaced: the sources' limits put back, the task left to its TTL); replace-node
// again asks the operator anew, which replaces the node.
func TestDrivenReplaceTaskFailed(t *testing.T) {
	w, d, before := drCrashedAfterTask(t, "--stream-throughput", "200MiB/s")
	drFailTask(t, w)
	w.PauseOperatorSteps(false)
	_, rerr, rcode, _ := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes", "--timeout", "2s")
	t.Logf("resume: exit %d: %s", rcode, shortLine(rerr, "Error"))
	if rcode != exit.Error || !strings.Contains(rerr, "will not replace the node") || !strings.Contains(rerr, "server-data-"+pod(1)) {
		t.Errorf("resume: exit %d, want 1 saying the operator will not replace the node and its claims are deleted\n%s", rcode, rerr)
	}
	_, aerr, acode, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
	t.Logf("abort: exit %d:\n%s", acode, aerr)
	if acode != 0 || w.HasDCCheckpoint() {
		t.Fatalf("abort: exit %d (checkpoint left %v)\n%s", acode, w.HasDCCheckpoint(), aerr)
	}
	assertLimits(t, w, before, "abort after the failed task")
	_, serr, scode, _ := drun(w, 0, replaceDC(pod(1))...)
	if scode != 0 {
		t.Fatalf("replace-node again: exit %d\n%s", scode, serr)
	}
	if v, _ := w.SimNode(pod(1)); v.HostID == d.HostID || v.PeerCode != "UN" || v.Tokens != len(d.Tokens) {
		t.Errorf("replace-node again: pod %s runs %s %s with %d tokens (dead %s had %d)", pod(1), v.HostID, v.PeerCode, v.Tokens, d.HostID, len(d.Tokens))
	}
}

// TestDrivenReplaceTaskFailedThenPodDeleted: the failed-task state above, the SRE
// deletes the dead pod by hand (one way on the stop names). The replacement then starts
// and is verified; the failed task is a warning: resume ends the operation (exit 0).
func TestDrivenReplaceTaskFailedThenPodDeleted(t *testing.T) {
	w, d, _ := drCrashedAfterTask(t)
	drFailTask(t, w)
	w.PauseOperatorSteps(false)
	if err := w.Kube.CoreV1().Pods(w.NS).Delete(context.Background(), pod(1), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		w.SettleOperator(50)
		if v, ok := w.SimNode(pod(1)); ok && v.PeerCode == "UN" && v.HostID != d.HostID {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	v, _ := w.SimNode(pod(1))
	_, rerr, rcode, _ := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes", "--timeout", "2s")
	t.Logf("resume: exit %d: %s", rcode, shortLine(rerr, "failed"))
	if rcode != 0 || w.HasDCCheckpoint() || !strings.Contains(rerr, "failed") {
		t.Errorf("pod deleted by hand, the pod's node now %s %s (dead %s): resume exit %d (checkpoint left %v), want 0 with a warning on the failed task\n%s",
			v.HostID, v.PeerCode, d.HostID, rcode, w.HasDCCheckpoint(), rerr)
	}
}

// TestDrivenTaskRestartGoneBeforeResume: restart dc1 (a restart CassandraTask) is
// killed right after it created its task; create-task is evident, so the checkpoint on
// the server still shows it pending. The operator rolls every pod, finishes the task,
// and the finished task is deleted (its TTL) before anyone resumes. resume judges by
// the world (every pod re-created since the plan): the task is not created again, no pod
// is rolled a second time, and the operation ends.
func TestDrivenTaskRestartGoneBeforeResume(t *testing.T) {
	var w *world.World
	for k := 1; ; k++ {
		if k > 10 {
			t.Fatal("no crash point right after the task's creation")
		}
		w = drivenWorld(t, 3)
		w.PauseOperatorSteps(true)
		if _, errOut, _, crashed := drun(w, k, restartDC()...); !crashed {
			t.Fatalf("not reached\n%s", errOut)
		}
		if len(drivenTasks(t, w)) > 0 {
			break
		}
	}
	w.PauseOperatorSteps(false)
	w.SettleOperator(400)
	t.Logf("checkpoint on the server: %s", drDCSteps(t, w))
	rolled := len(w.RolledPods())
	for _, u := range drivenTasks(t, w) {
		t.Logf("task %s Complete=%s", u.GetName(), taskCond(u, "Complete"))
		if err := w.Dyn.Tracker().Delete(standin.TaskGVR, w.NS, u.GetName()); err != nil {
			t.Fatal(err)
		}
	}
	_, errOut, code, _ := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes")
	w.SettleOperator(400)
	if got := len(w.RolledPods()); got > rolled {
		t.Errorf("resume after the finished task was deleted: exit %d (%s); pods rolled %d times before, %d after: the datacenter was restarted again (%v)",
			code, shortLine(errOut, "create task"), rolled, got, w.RolledPods())
	}
	if code != 0 || w.HasDCCheckpoint() || !strings.Contains(errOut, "not created again") {
		t.Errorf("resume: exit %d (checkpoint left %v), want 0 saying the task is not created again\n%s", code, w.HasDCCheckpoint(), errOut)
	}
	if got := pluginWrites(w, "cassandratasks"); len(got) != 1 {
		t.Errorf("the plugin's task writes %v, want the one create", got)
	}
}

// TestDrivenReplaceTaskGoneBeforeResume: the same on replace-node (cass-operator):
// killed right after the task's creation, the operator replaces the node, the task is
// deleted after its TTL. The world shows the operator ran it (the dead node's claims and
// pod deleted): abort refuses (the data is discarded) and names resume, which does not
// ask again, verifies the replacement and ends the operation.
func TestDrivenReplaceTaskGoneBeforeResume(t *testing.T) {
	w, d, _ := drCrashedAfterTask(t)
	w.PauseOperatorSteps(false)
	for i := 0; i < 300; i++ {
		w.SettleOperator(50)
		if v, ok := w.SimNode(pod(1)); ok && v.PeerCode == "UN" && v.HostID != d.HostID {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, u := range drivenTasks(t, w) {
		if err := w.Dyn.Tracker().Delete(standin.TaskGVR, w.NS, u.GetName()); err != nil {
			t.Fatal(err)
		}
	}
	out, aerr, acode, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
	t.Logf("abort: exit %d: %s", acode, shortLine(aerr, "Error"))
	if acode != operation.ExitRefused || !strings.Contains(aerr, "resume verifies the replacement") {
		t.Errorf("abort of a node the operator replaced: exit %d, want 3 naming resume: %q %s", acode, strings.TrimSpace(out), aerr)
	}
	_, rerr, rcode, _ := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes", "--timeout", "2s", "--stall-after", "1s")
	if rcode != 0 || w.HasDCCheckpoint() {
		t.Errorf("the node was replaced while no run watched: resume exit %d (checkpoint left %v)\n%s", rcode, w.HasDCCheckpoint(), rerr)
	}
	if got := pluginWrites(w, "cassandratasks"); len(got) != 1 {
		t.Errorf("the plugin's task writes %v, want the one create", got)
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("unsafe actions: %s", strings.Join(v, "; "))
	}
}
