package world

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
)

// taskState is a CassandraTask's completion and conditions.
func taskState(u *unstructured.Unstructured) (done bool, conds map[string]string) {
	c, _, _ := unstructured.NestedString(u.Object, "status", "completionTime")
	conds = map[string]string{}
	cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, ci := range cs {
		m := ci.(map[string]any)
		conds[m["type"].(string)], _ = m["status"].(string)
	}
	return c != "", conds
}

// TestCassOperatorReplaceNode: in the cass-operator world, a replacenode task on a dead
// node's pod (KillNode) deletes its claim and the pod once each; the new pod starts a
// fresh node with the dead node's address as replace address; it is UJ then UN with
// the dead node's token count and a new host ID, and the old host ID leaves gossip. The
// task is Complete before that (#748), while the DC still lists the pod in
// nodeReplacements; at the end the list is empty, ReplacingNodes False, the DC Ready.
func TestCassOperatorReplaceNode(t *testing.T) {
	// JoinTime 1.2 s (real time): RING_DELAY 200 ms, the replacement streams 600 ms.
	w := New(t, Opts{CassOperator: true, Nodes: 3, RF: 3, JoinTime: 1200 * time.Millisecond})
	pod := w.stsName("rack1") + "-1"
	dead, ok := w.SimNode(pod)
	if !ok {
		t.Fatal("no node for " + pod)
	}
	w.KillNode(pod)
	if v, _ := w.SimNode(pod); v.Running || v.PeerCode != "DN" {
		t.Fatalf("killed node: %+v", v)
	}
	if _, _, err := w.Exec(t.Context(), pod, []string{"nodetool", "status"}); err == nil {
		t.Fatal("nodetool on a killed node answered")
	}
	w.CreateReplaceTask("op-replace", pod)

	var codes []string
	replacing, doneWhile := "", ""
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		a := w.StepOperator()
		if v, ok := w.SimNode(pod); ok && v.HostID != dead.HostID {
			if len(codes) == 0 || codes[len(codes)-1] != v.PeerCode {
				codes = append(codes, v.PeerCode)
			}
			if v.Replacing != "" {
				replacing = v.Replacing
			}
		}
		done, _ := taskState(w.Task("op-replace"))
		if done && doneWhile == "" {
			v, _ := w.SimNode(pod)
			doneWhile = v.Mode
			if !slices.Contains(w.NodeReplacements(), pod) {
				t.Errorf("task done with nodeReplacements %v", w.NodeReplacements())
			}
		}
		if a == "" && done && w.DCCondition("ReplacingNodes") == "False" {
			break
		}
		if a == "" {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if got := w.OperatorDeletes("persistentvolumeclaims"); !slices.Equal(got, []string{"server-data-" + pod}) {
		t.Errorf("claim deletes %q", got)
	}
	if got := w.OperatorDeletes("pods"); !slices.Equal(got, []string{pod}) {
		t.Errorf("pod deletes %q", got)
	}
	if replacing != dead.Address {
		t.Errorf("replace address %q, want %s", replacing, dead.Address)
	}
	if !slices.Equal(codes, []string{"", "UJ", "UN"}) {
		t.Errorf("replacement as peers see it %q, want unlisted, UJ, UN (operator %q, waiting %q, errors %v)",
			codes, w.OperatorActions(), w.OperatorWaiting(), w.OperatorErrors())
	}
	if doneWhile != sim.ModeJoining {
		t.Errorf("task completed while the replacement was %q, want JOINING (#748)", doneWhile)
	}
	v, _ := w.SimNode(pod)
	if v.HostID == dead.HostID || v.Tokens != dead.Tokens || v.Mode != sim.ModeNormal || v.PeerCode != "UN" {
		t.Errorf("replacement %+v, dead node host %s tokens %d", v, dead.HostID, dead.Tokens)
	}
	if ids := w.GossipHostIDs(); slices.Contains(ids, dead.HostID) || len(ids) != 3 {
		t.Errorf("gossip host IDs %v, dead %s", ids, dead.HostID)
	}
	_, conds := taskState(w.Task("op-replace"))
	if conds["Complete"] != "True" || conds["Failed"] != "" {
		t.Errorf("task conditions %v", conds)
	}
	if r := w.NodeReplacements(); len(r) != 0 || w.DCCondition("Ready") != "True" {
		t.Errorf("nodeReplacements %v, Ready %s", r, w.DCCondition("Ready"))
	}
	if w.PodLabel(pod, standin.LabelNodeState) != standin.StateStarted {
		t.Errorf("pod %s is %s", pod, w.PodLabel(pod, standin.LabelNodeState))
	}
	if e := w.OperatorErrors(); len(e) > 0 {
		t.Errorf("operator errors: %v", e)
	}
}

// TestCassOperatorReplaceMissingPod: a replacenode task naming no pod of the DC fails
// as the real one: Complete, Failed "terminal error: valid pod_name to replace is
// required", nothing deleted, the DC untouched.
func TestCassOperatorReplaceMissingPod(t *testing.T) {
	w := New(t, Opts{CassOperator: true, Nodes: 3})
	w.CreateReplaceTask("op-replace", w.stsName("rack1")+"-9")
	w.SettleOperator(50)
	u := w.Task("op-replace")
	done, conds := taskState(u)
	if !done || conds["Failed"] != "True" || conds["Complete"] != "True" {
		t.Fatalf("task %v done=%v", conds, done)
	}
	cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, ci := range cs {
		if m := ci.(map[string]any); m["type"] == "Failed" && m["message"] != "terminal error: valid pod_name to replace is required" {
			t.Errorf("Failed message %q", m["message"])
		}
	}
	if d := strings.Join(append(w.OperatorDeletes("pods"), w.OperatorDeletes("persistentvolumeclaims")...), " "); d != "" {
		t.Errorf("deletes %q", d)
	}
	if len(w.NodeReplacements()) != 0 || w.DCCondition("ReplacingNodes") != "False" {
		t.Errorf("DC changed: %v %s", w.NodeReplacements(), w.DCCondition("ReplacingNodes"))
	}
}
