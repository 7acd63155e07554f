package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// replaceDC is replace-node of pod on the cass-operator world's datacenter dc1.
func replaceDC(p string) []string {
	return []string{"replace-node", "dc1", "-n", "cassandra", "--pod", p, "--yes"}
}

// drivenReplaceWorld is a 3-node cass-operator datacenter whose node of pod(1) is dead.
func drivenReplaceWorld(t *testing.T) (*world.World, world.DeadNode) {
	w := world.New(t, world.Opts{CassOperator: true, Nodes: 3, RF: 3, JoinTime: 300 * time.Millisecond})
	d := w.KillNode(pod(1))
	w.ExpectReplace(pod(1))
	return w, d
}

// assertDrivenReplaced: the replacement UN with the dead node's token count, the dead
// Host ID gone from gossip (unless kept on its own address), one replacenode task,
// nothing written by the plugin but the task and its checkpoint.
func assertDrivenReplaced(t *testing.T, w *world.World, d world.DeadNode, label string) {
	t.Helper()
	v, _ := w.SimNode(pod(1))
	if v.PeerCode != "UN" || v.Tokens != len(d.Tokens) || (v.HostID == d.HostID && v.Address != d.Address) {
		t.Errorf("%s: replacement %s %s with %d tokens; dead node %s had %d", label, v.HostID, v.PeerCode, v.Tokens, d.HostID, len(d.Tokens))
	}
	if ids := w.GossipHostIDs(); v.HostID != d.HostID && slices.Contains(ids, d.HostID) {
		t.Errorf("%s: the dead Host ID %s is still in gossip: %v", label, d.HostID, ids)
	}
	assertOneTask(t, w, "replacenode", label)
	for _, r := range []string{"statefulsets", "persistentvolumeclaims", "deployments"} {
		if got := pluginWrites(w, r); len(got) > 0 {
			t.Errorf("%s: the plugin wrote %s: %v", label, r, got)
		}
	}
	// Pods: only the stream throughput's owner mark, written then removed
	// (steps.ThroughputMarkAnnotation), never left.
	marks := map[string]int{}
	for _, wr := range pluginWrites(w, "pods") {
		verb, name, _ := strings.Cut(wr, " ")
		if verb != "patch" {
			t.Errorf("%s: the plugin wrote pods: %v", label, pluginWrites(w, "pods"))
			break
		}
		marks[name]++
	}
	for _, p := range w.PodNames() {
		if m := markOn(t, w, p); m != "" {
			t.Errorf("%s: pod %s keeps a stream throughput mark: %s (pod patches %v)", label, p, m, marks)
		}
	}
	if w.HasDCCheckpoint() {
		t.Errorf("%s: a checkpoint is left", label)
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("%s: unsafe actions: %s", label, strings.Join(v, "; "))
	}
}

// TestDrivenReplaceNodeCrashMatrix kills replace-node on cass-operator right after each
// of its side effects (the task's creation, the checkpoint writes), then resumes (the
// first resume crashes too): every case ends replaced, through one task.
func TestDrivenReplaceNodeCrashMatrix(t *testing.T) {
	ref, d := drivenReplaceWorld(t)
	if _, errOut, code, crashed := drun(ref, 0, replaceDC(pod(1))...); code != 0 || crashed {
		t.Fatalf("reference run: exit %d crashed %v\n%s", code, crashed, errOut)
	}
	assertDrivenReplaced(t, ref, d, "reference")
	points := ref.SideEffects()
	for k := 1; k <= points; k++ {
		label := fmt.Sprintf("crash after side effect %d/%d", k, points)
		w, d := drivenReplaceWorld(t)
		drivenCrashAndResume(t, w, k, replaceDC(pod(1)), label)
		assertDrivenReplaced(t, w, d, label)
	}
	t.Logf("replace-node on cass-operator: %d crash points, each followed by a crashed and a clean resume", points)
}

// TestDrivenReplaceNode: on cass-operator the plugin never pauses the operator nor
// deletes anything itself: it creates one replacenode task for the dead node's pod, then
// verifies the replacement in the ring (the task completes before it: #748).
func TestDrivenReplaceNode(t *testing.T) {
	w := world.New(t, world.Opts{CassOperator: true, Nodes: 3, RF: 3, JoinTime: 300 * time.Millisecond})
	dead, ok := w.SimNode(pod(1))
	if !ok {
		t.Fatal("no node for " + pod(1))
	}
	w.KillNode(pod(1))
	w.ExpectReplace(pod(1))
	out, errOut, code, _ := drun(w, 0, replaceDC(pod(1))...)
	if code != 0 {
		t.Fatalf("replace-node: exit %d\n%s\n%s\noperator: %v\n%v", code, out, errOut, w.OperatorActions(), w.OperatorErrors())
	}
	v, _ := w.SimNode(pod(1))
	if v.HostID == dead.HostID || v.Tokens != dead.Tokens || v.PeerCode != "UN" {
		t.Errorf("replacement %s %s with %d tokens; dead node %s had %d", v.HostID, v.PeerCode, v.Tokens, dead.HostID, dead.Tokens)
	}
	if ids := w.GossipHostIDs(); slices.Contains(ids, dead.HostID) {
		t.Errorf("the dead Host ID %s is still in gossip: %v", dead.HostID, ids)
	}
	assertOneTask(t, w, "replacenode", "replace-node")
	for _, r := range []string{"statefulsets", "pods", "persistentvolumeclaims", "deployments"} {
		if got := pluginWrites(w, r); len(got) > 0 {
			t.Errorf("the plugin wrote %s: %v", r, got)
		}
	}
	if got := w.OperatorDeletes("persistentvolumeclaims"); !slices.Equal(got, []string{"server-data-" + pod(1)}) {
		t.Errorf("the operator deleted claims %v, want the dead node's only", got)
	}
	if !strings.Contains(errOut, "[OK] wait until "+pod(1)+"'s new node replaced") {
		t.Errorf("the run does not show the verification step:\n%s", errOut)
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("unsafe actions: %s", strings.Join(v, "; "))
	}
}

// TestDrivenReplaceNodeRefusesALiveNode: exit 3, no task.
func TestDrivenReplaceNodeRefusesALiveNode(t *testing.T) {
	w := world.New(t, world.Opts{CassOperator: true, Nodes: 3})
	_, errOut, code, _ := drun(w, 0, replaceDC(pod(1))...)
	if code != 3 || !strings.Contains(errOut, "not DN") {
		t.Fatalf("exit %d, want 3 saying the node is not DN\n%s", code, errOut)
	}
	if got := pluginWrites(w, "cassandratasks"); len(got) > 0 {
		t.Errorf("the plugin wrote tasks: %v", got)
	}
}
