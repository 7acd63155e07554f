package cli

import (
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
