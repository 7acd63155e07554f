package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// The CassKop replace-node's start-script states of the 2026-12-06 review (findings 2,
// 3, 9, 11, 12): the ConfigMap re-created, the script reverted, a dead node without
// claims, a cluster being deleted, a record wiped. Each state has a way forward that
// ends with the operator restored and no block of a gone operation left in pre_run.sh.

var replaceDeadArgs = []string{"replace-node", "demo", "-n", "cassandra", "--pod", deadPod, "--yes"}

// nodetoolOn runs nodetool args in pod of the simulated Cassandra (what an SRE runs by hand).
func nodetoolOn(w *world.World, pod string, args ...string) (int, string) {
	var out, errb bytes.Buffer
	code := w.Cass.Run(context.Background(), pod, args, &out, &errb)
	return code, out.String() + errb.String()
}

// recreateStartScript deletes the start script's ConfigMap and creates it again with
// another UID and the given pre_run.sh (a helm reinstall, kubectl replace --force, a
// GitOps tool that re-creates it).
func recreateStartScript(t *testing.T, w *world.World, script string) {
	t.Helper()
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	name := w.ConfigMapName()
	obj, err := w.Kube.Tracker().Get(gvr, w.NS, name)
	if err != nil {
		t.Fatal(err)
	}
	cm := obj.(*corev1.ConfigMap).DeepCopy()
	if err := w.Kube.Tracker().Delete(gvr, w.NS, name); err != nil {
		t.Fatal(err)
	}
	cm.UID, cm.ResourceVersion = "cm-recreated", "1"
	cm.Data = map[string]string{}
	if script != "" {
		cm.Data[world.PreRunKey] = script
	}
	if err := w.Kube.Tracker().Add(cm); err != nil {
		t.Fatal(err)
	}
}

// assertNoOption fails when pre_run.sh still holds a replace option.
func assertNoOption(t *testing.T, w *world.World, label string) {
	t.Helper()
	if s, _ := w.ConfigMap(); strings.Contains(s, "replace_address") || strings.Contains(s, "kubectl-cassandra replace-node") {
		t.Errorf("%s: pre_run.sh still holds a block of replace-node:\n%s", label, s)
	}
}

// TestReplaceNodeConfigMapRecreated: the ConfigMap is re-created (the block gone)
// before the claims are deleted. resume refuses to write into a ConfigMap nobody
// checked; abort ends the operation, the operator restored, nothing discarded.
func TestReplaceNodeConfigMapRecreated(t *testing.T) {
	w, _, _ := replaceWorld(t, "4.1")
	_, stderr, code := runUntilStderr(w, "[OK] write the replace option", replaceTP("200MiB/s")...)
	if code != exit.Interrupted {
		t.Fatalf("replace-node: exit %d\n%s", code, stderr)
	}
	recreateStartScript(t, w, "")
	_, rerr, rcode, _ := run(w, 0, resume...)
	if rcode != operation.ExitRefused || !strings.Contains(rerr, "re-created") {
		t.Errorf("resume: exit %d, want %d saying the ConfigMap was re-created: %s", rcode, operation.ExitRefused, lineWith(rerr, "re-created"))
	}
	_, aerr, acode, _ := run(w, 0, abortDemo...)
	if acode != 0 || w.HasCheckpoint() || w.DeploymentReplicas("casskop") != 1 {
		t.Errorf("abort: exit %d (%s); operator at %d, checkpoint kept %v", acode, lineWith(aerr, "ConfigMap"), w.DeploymentReplicas("casskop"), w.HasCheckpoint())
	}
	if d := w.PVCDeletes(); len(d) != 0 {
		t.Errorf("claims deleted: %v", d)
	}
	if d := w.PodDeletes(); len(d) != 0 {
		t.Errorf("pods deleted: %v", d)
	}
	if got := w.OperatorReplicas("casskop"); len(got) != 3 || got[2] != 1 {
		t.Errorf("operator history %v, want paused and restored once", got)
	}
}

// TestReplaceNodeConfigMapRecreatedWhileStreaming: the same re-creation past the
// claims and the pod: resume reads the ConfigMap as it is now, verifies the
// replacement and ends, the operator restored.
func TestReplaceNodeConfigMapRecreatedWhileStreaming(t *testing.T) {
	w, deadID, tokens := replaceWorld(t, "4.1")
	_, stderr, code := runUntilStderr(w, "[OK] delete pod "+deadPod, replaceDeadArgs...)
	if code != exit.Interrupted {
		t.Fatalf("replace-node: exit %d\n%s", code, stderr)
	}
	recreateStartScript(t, w, "")
	_, rerr, rcode, _ := run(w, 0, resume...)
	if rcode != 0 {
		t.Fatalf("resume: exit %d: %s", rcode, lineWith(rerr, "Error"))
	}
	assertReplaced(t, w, deadID, tokens, "resume")
	w.AssertHistory(replaceHistory(), "ConfigMap re-created while streaming")
}

// TestReplaceNodeConfigMapRecreatedWithBlock: a ConfigMap re-created from a copy that
// still holds the operation's block is read as it is: the block is taken out at the end.
func TestReplaceNodeConfigMapRecreatedWithBlock(t *testing.T) {
	w, deadID, tokens := replaceWorld(t, "4.1")
	_, stderr, code := runUntilStderr(w, "[OK] delete pod "+deadPod, replaceDeadArgs...)
	if code != exit.Interrupted {
		t.Fatalf("replace-node: exit %d\n%s", code, stderr)
	}
	s, _ := w.ConfigMap()
	recreateStartScript(t, w, s)
	if _, rerr, rcode, _ := run(w, 0, resume...); rcode != 0 {
		t.Fatalf("resume: exit %d: %s", rcode, lineWith(rerr, "Error"))
	}
	assertReplaced(t, w, deadID, tokens, "resume")
}

// TestReplaceNodeScriptRevertedAfterClaims: a GitOps sync puts the start script back
// right after the dead node's claims were deleted. delete-dead-pod checks the option
// too: the pod is not deleted, the run stops and says resume writes it again; resume
// does and finishes the replace (claims and pod deleted once each).
func TestReplaceNodeScriptRevertedAfterClaims(t *testing.T) {
	w, deadID, tokens := replaceWorld(t, "4.1")
	_, stderr, code := runOnStderr(w, []string{"[OK] delete the claims of " + deadPod}, func() { w.SetPreRun("") }, replaceDeadArgs...)
	if code != operation.ExitRefused || !strings.Contains(stderr, "taken out") {
		t.Fatalf("replace-node with the script reverted after the claims: exit %d, want %d:\n%s", code, operation.ExitRefused, stderr)
	}
	if d := w.PodDeletes(); len(d) != 0 {
		t.Errorf("pod deleted without the option in place: %v", d)
	}
	_, aerr, acode, _ := run(w, 0, abortDemo...)
	if acode != operation.ExitRefused || !strings.Contains(aerr, "resume") {
		t.Errorf("abort past the claims: exit %d, want %d naming resume: %s", acode, operation.ExitRefused, lineWith(aerr, "claims"))
	}
	_, rerr, rcode, _ := run(w, 0, resume...)
	if rcode != 0 {
		t.Fatalf("resume: exit %d: %s", rcode, lineWith(rerr, "Error"))
	}
	assertReplaced(t, w, deadID, tokens, "resume")
	w.AssertHistory(replaceHistory(), "script reverted after the claims")
}

// revertOnPodDelete reverts pre_run.sh as the dead pod is deleted, before its
// replacement's init container runs: the race no check can close.
func revertOnPodDelete(w *world.World) {
	done := false
	w.Kube.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if d, ok := a.(k8stesting.DeleteAction); ok && d.GetName() == deadPod && !done {
			done = true
			w.SetPreRun("")
		}
		return false, nil, nil
	})
}

// TestReplaceNodeJoinedAsNewNode: the script is reverted as the dead pod is deleted, so
// its new pod bootstraps as a new node. The run says the way that works (removenode
// of the dead Host ID, then resume); resume then ends, and says what it verified: the
// dead node removed and the pod's new node joined with tokens of its own, not
// "replaced, its tokens taken over".
func TestReplaceNodeJoinedAsNewNode(t *testing.T) {
	w, deadID, _ := replaceWorld(t, "4.1")
	revertOnPodDelete(w)
	_, stderr, code, _ := run(w, 0, replaceDeadArgs...)
	if code == 0 || !strings.Contains(stderr, "joined as a new node") || !strings.Contains(stderr, "removenode "+deadID) {
		t.Fatalf("replace-node with the script reverted at the pod's deletion: exit %d, want the removenode advice:\n%s", code, stderr)
	}
	for i := 0; i < 500; i++ {
		if n, err := w.Cass.Node(deadPod); err == nil && n.PeerCode == "UN" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, aerr, acode, _ := run(w, 0, abortDemo...)
	if acode != operation.ExitRefused || !strings.Contains(aerr, "removenode "+deadID) {
		t.Errorf("abort: exit %d, want %d with the removenode advice: %s", acode, operation.ExitRefused, lineWith(aerr, "removenode"))
	}
	if c, out := nodetoolOn(w, "demo-dc1-rack1-0", "removenode", deadID); c != 0 {
		t.Fatalf("removenode of the dead node: exit %d %s", c, out)
	}
	out, rerr, rcode, _ := run(w, 0, resume...)
	if rcode != 0 {
		t.Fatalf("resume after removenode: exit %d: %s", rcode, lineWith(rerr, "Error"))
	}
	last := w.LastOperation()
	if last == nil || strings.Contains(last.Summary, "tokens taken over") || !strings.Contains(last.Summary, "new node") {
		t.Errorf("last operation %+v: want a summary saying the pod's node joined as a new node (stdout %q)", last, out)
	}
	if w.HasCheckpoint() || w.DeploymentReplicas("casskop") != 1 {
		t.Errorf("checkpoint kept %v; operator at %d", w.HasCheckpoint(), w.DeploymentReplicas("casskop"))
	}
	if e, ok := w.Endpoint(deadID); ok && !e.Removed {
		t.Errorf("the dead Host ID %s is still a member: %+v", deadID, e)
	}
	assertNoOption(t, w, "resume")
	if d := w.PVCDeletes(); len(d) != 1 {
		t.Errorf("claims deleted %v, want once", d)
	}
	if d := w.PodDeletes(); len(d) != 1 {
		t.Errorf("pods deleted %v, want once", d)
	}
}

// TestReplaceNodeNoClaimsAbortMidStream: the dead node's claim is gone at planning; once
// its pod is deleted, abort refuses (the point of no return) and names resume.
func TestReplaceNodeNoClaimsAbortMidStream(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, RF: 3, Version: "4.1", Operator: true, JoinTime: 3 * time.Second, StartTime: 5 * time.Millisecond})
	w.KillNode(deadPod)
	w.ExpectReplace(deadPod)
	if err := w.Kube.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), w.NS, "data-"+deadPod); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runUntilStderr(w, "[OK] delete pod "+deadPod, replaceDeadArgs...); code != exit.Interrupted {
		t.Fatalf("replace-node: exit %d\n%s", code, stderr)
	}
	_, aerr, acode, _ := run(w, 0, abortDemo...)
	if acode != operation.ExitRefused || !strings.Contains(aerr, "resume") {
		t.Errorf("abort with the dead pod deleted and its replacement streaming: exit %d, want %d naming resume: %s", acode, operation.ExitRefused, lineWith(aerr, "pod"))
	}
	if s, _ := w.ConfigMap(); !strings.Contains(s, "replace_address") {
		t.Errorf("abort took the option out under a replacement in flight:\n%s", s)
	}
}

// TestReplaceNodeNoClaimsAbortBeforePod: the same plan, stopped before the pod's
// deletion: abort still goes through, the option taken out.
func TestReplaceNodeNoClaimsAbortBeforePod(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, RF: 3, Version: "4.1", Operator: true, JoinTime: 20 * time.Millisecond, StartTime: 5 * time.Millisecond})
	w.KillNode(deadPod)
	w.ExpectReplace(deadPod)
	if err := w.Kube.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), w.NS, "data-"+deadPod); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runUntilStderr(w, "[OK] write the replace option", replaceDeadArgs...); code != exit.Interrupted {
		t.Fatalf("replace-node: exit %d\n%s", code, stderr)
	}
	if _, aerr, acode, _ := run(w, 0, abortDemo...); acode != 0 {
		t.Fatalf("abort before the pod's deletion: exit %d: %s", acode, lineWith(aerr, "Error"))
	}
	assertNoOption(t, w, "abort")
	if d := w.PodDeletes(); len(d) != 0 {
		t.Errorf("pods deleted: %v", d)
	}
}

// TestReplaceNodeAbortDeletingTakesOptionOut: abort of a cluster being deleted still
// takes the option out of the user's ConfigMap (the cluster does not own it).
func TestReplaceNodeAbortDeletingTakesOptionOut(t *testing.T) {
	w, _, _ := replaceWorld(t, "4.1")
	if _, stderr, code := runUntilStderr(w, "[OK] write the replace option", replaceDeadArgs...); code != exit.Interrupted {
		t.Fatalf("replace-node: exit %d\n%s", code, stderr)
	}
	w.MarkDeleting()
	_, aerr, acode, _ := run(w, 0, abortDemo...)
	if acode != 0 || w.DeploymentReplicas("casskop") != 1 {
		t.Errorf("abort of a cluster being deleted: exit %d (%s); operator at %d", acode, lineWith(aerr, "Error"), w.DeploymentReplicas("casskop"))
	}
	assertNoOption(t, w, "abort of a cluster being deleted")
}

// TestReplaceNodeWipedBlockReaped: the checkpoint of a replace stopped once its option
// was written is wiped. The next replace-node reaps the gone operation's block (and
// says so), and ends with nothing of either operation left in pre_run.sh.
func TestReplaceNodeWipedBlockReaped(t *testing.T) {
	w, deadID, tokens := replaceWorld(t, "4.1")
	if _, stderr, code := runUntilStderr(w, "[OK] write the replace option", replaceDeadArgs...); code != exit.Interrupted {
		t.Fatalf("replace-node: exit %d\n%s", code, stderr)
	}
	wipeCheckpoint(t, w)
	_, stderr, code, _ := run(w, 0, replaceDeadArgs...)
	if code != 0 {
		t.Fatalf("replace-node again: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "operations that are gone") {
		t.Errorf("replace-node again did not say it took the gone operation's block out:\n%s", stderr)
	}
	assertReplaced(t, w, deadID, tokens, "replace-node again")
	assertNoOption(t, w, "replace-node again")
}

// TestReplaceNodeWipedBlockReapedByStatus: status (which changes nothing) reports the
// block of a gone operation; abort (nothing in flight) takes it out.
func TestReplaceNodeWipedBlockReapedByAbort(t *testing.T) {
	w, _, _ := replaceWorld(t, "4.1")
	if _, stderr, code := runUntilStderr(w, "[OK] write the replace option", replaceDeadArgs...); code != exit.Interrupted {
		t.Fatalf("replace-node: exit %d\n%s", code, stderr)
	}
	wipeCheckpoint(t, w)
	sout, serr, scode, _ := run(w, 0, "status", "demo", "-n", "cassandra")
	if scode != 0 || !strings.Contains(sout+serr, "operations that are gone") {
		t.Errorf("status: exit %d, want the gone operation's block reported:\n%s%s", scode, sout, serr)
	}
	if s, _ := w.ConfigMap(); !strings.Contains(s, "replace_address") {
		t.Errorf("status changed the ConfigMap:\n%s", s)
	}
	if _, aerr, acode, _ := run(w, 0, abortDemo...); acode != 0 {
		t.Fatalf("abort: exit %d: %s", acode, aerr)
	}
	assertNoOption(t, w, "abort with nothing in flight")
}

// TestReplaceNodeRemovedByHandBeforePod: the run stopped before the pod's deletion (the
// script reverted), and the SRE removed the dead node from the ring by hand: nothing is
// left to replace, resume cannot write the option for it, so abort ends the operation
// (the operator restored) and says what to do with the pod.
func TestReplaceNodeRemovedByHandBeforePod(t *testing.T) {
	w, deadID, _ := replaceWorld(t, "4.1")
	if _, stderr, code := runOnStderr(w, []string{"[OK] delete the claims of " + deadPod}, func() { w.SetPreRun("") }, replaceDeadArgs...); code != operation.ExitRefused {
		t.Fatalf("replace-node: exit %d\n%s", code, stderr)
	}
	if c, out := nodetoolOn(w, "demo-dc1-rack1-0", "removenode", deadID); c != 0 {
		t.Fatalf("removenode of the dead node: exit %d %s", c, out)
	}
	_, aerr, acode, _ := run(w, 0, abortDemo...)
	if acode != 0 || !strings.Contains(aerr, "removed by hand") {
		t.Fatalf("abort: exit %d, want 0 saying the dead node was removed by hand:\n%s", acode, aerr)
	}
	if w.HasCheckpoint() || w.DeploymentReplicas("casskop") != 1 {
		t.Errorf("checkpoint kept %v; operator at %d", w.HasCheckpoint(), w.DeploymentReplicas("casskop"))
	}
	if d := w.PodDeletes(); len(d) != 0 {
		t.Errorf("pods deleted: %v", d)
	}
	assertNoOption(t, w, "abort")
}
