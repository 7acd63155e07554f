package cli

// Regression tests of the 2026-12-06 review's findings 1, 4 and 10 on cass-operator
// (driven mode): a replace task the operator has not started while the node comes
// back, a replace task that fails, a task created and gone (finished, TTL-deleted)
// before a resume. Their reproductions, kept with their set-up.

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
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// drLine is the first line of s holding sub (else s's last line), cut short.
func drLine(s, sub string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	pick := lines[len(lines)-1]
	for _, l := range lines {
		if sub != "" && strings.Contains(l, sub) {
			pick = l
			break
		}
	}
	if len(pick) > 300 {
		pick = pick[:300] + "…"
	}
	return pick
}

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
// its task, the operator not stepped yet.
func drCrashedAfterTask(t *testing.T, extra ...string) (*world.World, world.DeadNode) {
	t.Helper()
	for k := 1; k <= 30; k++ {
		w, d := drivenReplaceWorld(t)
		w.PauseOperatorSteps(true)
		if _, _, _, crashed := drun(w, k, append(replaceDC(pod(1)), extra...)...); !crashed {
			t.Fatal("not killed")
		}
		if len(drivenTasks(t, w)) > 0 {
			return w, d
		}
	}
	t.Fatal("no crash point right after the task's creation")
	return nil, world.DeadNode{}
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

// TestDrivenReplaceNodeBackBeforeOperatorActs: on cass-operator the task is
// created once the node is still dead right then; the operator gets to it later (it
// was down, restarting, or busy). Meanwhile the dead node comes back (its Kubernetes
// node returns): UN, its pod Ready, nodetool answers. Nothing in the plugin looks again:
// wait-replaced only waits for a new pod, abort refuses because the task exists ("resume
// finishes the replace"). The operator then deletes the LIVE node's data claim and pod
// (the real job also drains it first when its container is Ready), and replace-node ends
// with exit 0: a replacement of a live node, its data discarded.
func TestDrivenReplaceNodeBackBeforeOperatorActs(t *testing.T) {
	w, d := drivenReplaceWorld(t)
	w.PauseOperatorSteps(true) // the operator does not get to the task yet
	seen := ""
	back := func() {
		w.ReviveNode(pod(1))
		n, _ := w.SimNode(pod(1))
		code, _ := drNodetool(w, pod(1), "info")
		seen = fmt.Sprintf("%s %s, nodetool info on it exit %d", n.HostID, n.PeerCode, code)
		w.PauseOperatorSteps(false)
	}
	_, errOut, code := drRunOnStderr(w, []string{"[OK] create task"}, back, append(replaceDC(pod(1)), "--timeout", "5s")...)
	v, _ := w.SimNode(pod(1))
	drained := countActions(w.OperatorActions(), standin.ActTaskDrain)
	deleted := w.OperatorDeletes("persistentvolumeclaims")
	t.Logf("replace-node: exit %d: %s", code, drLine(errOut, "Error"))
	if drained > 0 || len(deleted) > 0 {
		t.Errorf("the node of %s came back before the operator ran the task (%s); the plugin let it run (replace-node exit %d): the operator drained it %d time(s) and deleted claims %v; the pod now runs %s %s (was %s)",
			pod(1), seen, code, drained, deleted, v.HostID, v.PeerCode, d.HostID)
	}
}

// TestDrivenReplaceAbortBeforeOperatorActs: the run dies right after it
// created the task, the operator has not touched it, and the node came back. abort
// refuses (the task exists) and names resume, which lets the operator replace the live
// node; there is no way to take the request back with the plugin.
func TestDrivenReplaceAbortBeforeOperatorActs(t *testing.T) {
	var w *world.World
	for k := 1; ; k++ {
		if k > 30 {
			t.Fatal("no crash point right after the task's creation")
		}
		w, _ = drivenReplaceWorld(t)
		w.PauseOperatorSteps(true)
		if _, _, _, crashed := drun(w, k, replaceDC(pod(1))...); !crashed {
			t.Fatal("not killed")
		}
		if len(drivenTasks(t, w)) > 0 {
			break
		}
	}
	w.ReviveNode(pod(1))
	_, aerr, acode, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
	if acode != 0 {
		t.Errorf("the operator has not started the task and the node is UN again, yet abort exit %d: %s", acode, drLine(aerr, "task"))
	}
}

// TestDrivenReplaceTaskFailed: cass-operator is killed twice in the middle of the
// replacenode job (after its claims delete, before its pod delete): the third process
// marks the pod ERROR ("Pod or controller crashed during sync task") and the task ends
// Complete+Failed. The dead pod is never deleted (its claim stays terminating under
// pvc-protection). wait-replaced waits for a new pod that never comes (it never reads
// the task), abort refuses because the task exists, resume and replace-node again wait
// until their timeout: a dead end, with the sources' throughput set (--stream-throughput).
func TestDrivenReplaceTaskFailed(t *testing.T) {
	w, _ := drCrashedAfterTask(t, "--stream-throughput", "200MiB/s")
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
	w.PauseOperatorSteps(false)
	now := limits(t, w)
	_, rerr, rcode, _ := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes", "--timeout", "2s")
	_, aerr, acode, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
	_, serr, scode, _ := drun(w, 0, append(replaceDC(pod(1)), "--timeout", "2s")...)
	if rcode != 0 && acode != 0 && scode != 0 {
		t.Errorf("task %s Failed with the pod not deleted: resume exit %d (%s); abort exit %d (%s); replace-node again exit %d; sources' limits still %v",
			tasks[0].GetName(), rcode, drLine(rerr, "timed out"), acode, drLine(aerr, "task"), scode, now)
	}
	_ = serr
}

// TestDrivenReplaceTaskFailedThenPodDeleted: the failed-task state above, the SRE
// deletes the dead pod by hand (the way on that the run never names). The replacement
// then starts and is verified, but wait-replace-task reads the task Failed and stops the
// run (exit 1, "the node is replaced"), on every resume; abort refuses (the task
// exists). Only deleting the task by hand (or its TTL) ends the operation.
func TestDrivenReplaceTaskFailedThenPodDeleted(t *testing.T) {
	w, d := drCrashedAfterTask(t)
	w.KillOperatorAfter(standin.ActTaskDeletePVCs)
	for i := 0; i < 100 && len(w.OperatorKills()) < 1; i++ {
		w.SettleOperator(1)
	}
	w.SettleOperator(1)
	w.KillOperatorAfter(standin.ActTaskDeletePVCs)
	for i := 0; i < 100 && len(w.OperatorKills()) < 2; i++ {
		w.SettleOperator(1)
	}
	w.SettleOperator(100)
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
	_, rerr2, rcode2, _ := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes", "--timeout", "2s")
	_, aerr, acode, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
	if rcode2 != 0 && acode != 0 {
		t.Errorf("pod deleted by hand, the pod's node now %s %s (dead %s): resume exit %d (%s); again exit %d (%s); abort exit %d (%s)",
			v.HostID, v.PeerCode, d.HostID, rcode, drLine(rerr, "Error"), rcode2, drLine(rerr2, "Error"), acode, drLine(aerr, "task"))
	}
}

// TestDrivenTaskRestartGoneBeforeResume: restart dc1 (a restart CassandraTask) is
// killed right after it created its task; create-task is evident, so the checkpoint on
// the server still shows it pending. The operator rolls every pod, finishes the task,
// and the finished task is deleted (its TTL) before anyone resumes. resume finds no
// task, creates it again, and the whole datacenter is rolled a second time.
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
			code, drLine(errOut, "create task"), rolled, got, w.RolledPods())
	}
}

// TestDrivenReplaceTaskGoneBeforeResume: the same on replace-node (cass-operator):
// killed right after the task's creation, the operator replaces the node, the task is
// deleted after its TTL. resume asks create-replace-task again: the dead Host ID is out of
// the ring now (replaced), so its safety check waits until --stall-after (exit 4), every
// time; abort then ends it saying "no node replaced yet", the replacement never verified.
func TestDrivenReplaceTaskGoneBeforeResume(t *testing.T) {
	w, d := drCrashedAfterTask(t)
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
	_, rerr, rcode, _ := drun(w, 0, "resume", "dc1", "-n", "cassandra", "--yes", "--timeout", "2s", "--stall-after", "1s")
	out, aerr, acode, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
	if rcode != 0 {
		t.Errorf("the node was replaced while no run watched: resume exit %d (%s); abort exit %d: %q %s", rcode, drLine(rerr, "Error"), acode, strings.TrimSpace(out), drLine(aerr, "Aborting"))
	}
}
