package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// Issue 25 item 6: a scale-down whose highest node is dead removes it with removenode
// from a live node (--remove-dead), never with a decommission.

const removedDeadPod = "demo-dc1-rack1-2"

// removeDeadWorld is a 3-node CassKop rack, the operator running, whose highest node's
// JVM is down (peers see it DN, its nodetool cannot connect); it returns its Host ID.
func removeDeadWorld(t *testing.T) (*world.World, string) {
	return removeDeadWorldRF(t, 2)
}

// removeDeadWorldRF is removeDeadWorld with keyspaces of replication factor rf.
func removeDeadWorldRF(t *testing.T, rf int) (*world.World, string) {
	t.Helper()
	w := world.New(t, world.Opts{Nodes: 3, Version: "4.1", Operator: true, RF: rf})
	n, err := w.Cass.Node(removedDeadPod)
	if err != nil {
		t.Fatal(err)
	}
	w.SetDown(removedDeadPod, true)
	return w, n.HostID
}

// removeDeadHistory: one removenode, on the rack's first pod, and no decommission; the
// StatefulSet shrunk once, the dead node's claim deleted once, the count written once,
// the operator paused and restored.
func removeDeadHistory() world.Expect {
	return world.Expect{
		Execs:      map[string]int{"removenode demo-dc1-rack1-0": 1},
		ExecKinds:  []string{"decommission", "removenode", "drain", "cleanup"},
		Replicas:   map[string][]int32{"demo-dc1-rack1": world.Down(3, 2)},
		PVCDeletes: []string{"data-" + removedDeadPod},
		Operator:   map[string][]int32{"casskop": {1, 0, 1}},
		SpecWrites: 1,
	}
}

// assertDeadRemoved: the dead Host ID is in no node's ring, the rack has 2 pods and
// claims, no checkpoint is left, the operator runs, nothing unsafe happened.
func assertDeadRemoved(t *testing.T, w *world.World, deadID, label string) {
	t.Helper()
	nodes, err := w.Cass.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.HostID == deadID && n.PeerCode != "" {
			t.Errorf("%s: the dead node %s is still in the ring (%s)", label, n.Pod, n.PeerCode)
		}
		if n.HostID != deadID && n.PeerCode != "" && n.PeerCode != "UN" {
			t.Errorf("%s: node %s is %s", label, n.Pod, n.PeerCode)
		}
		if n.DecommissionCalls > 0 {
			t.Errorf("%s: node %s got %d decommission calls", label, n.Pod, n.DecommissionCalls)
		}
	}
	if got := w.Replicas("rack1"); got != 2 {
		t.Errorf("%s: StatefulSet has %d replicas, want 2", label, got)
	}
	pods, pvcs := " "+strings.Join(w.PodNames(), " ")+" ", " "+strings.Join(w.PVCNames(), " ")+" "
	for i := 0; i < 3; i++ {
		pod := fmt.Sprintf("demo-dc1-rack1-%d", i)
		keep := i < 2
		if strings.Contains(pods, " "+pod+" ") != keep || strings.Contains(pvcs, " data-"+pod+" ") != keep {
			t.Errorf("%s: pod %s or its claim present, want %v (pods%s, claims%s)", label, pod, keep, pods, pvcs)
		}
	}
	if w.HasCheckpoint() {
		t.Errorf("%s: a checkpoint is left", label)
	}
	if r := w.DeploymentReplicas("casskop"); r != 1 {
		t.Errorf("%s: the operator has %d replicas, want 1 (restored)", label, r)
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("%s: unsafe actions: %s", label, strings.Join(v, "; "))
	}
}

func TestScaleDownRemoveDeadRemovesTheDeadNode(t *testing.T) {
	w, deadID := removeDeadWorld(t)
	stdout, stderr, code, _ := run(w, 0, scaleTo(2, "--remove-dead")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	assertDeadRemoved(t, w, deadID, "scale --remove-dead")
	w.AssertHistory(removeDeadHistory(), "scale --remove-dead")
}

func TestScaleDownRemoveDeadDryRunSaysHow(t *testing.T) {
	w, deadID := removeDeadWorld(t)
	stdout, stderr, code, _ := run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--remove-dead", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"nodetool removenode " + deadID + " on demo-dc1-rack1-0", "is dead", "re-streamed", "replication factor 1"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the plan does not say %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "nodetool decommission") {
		t.Errorf("the plan decommissions:\n%s", stdout)
	}
	if w.HasCheckpoint() {
		t.Error("a dry run wrote a checkpoint")
	}
}

func TestScaleDownDeadNodeWithoutRemoveDeadRefuses(t *testing.T) {
	w, _ := removeDeadWorld(t)
	_, stderr, code, _ := run(w, 0, scaleTo(2)...)
	if code != operation.ExitRefused {
		t.Fatalf("exit %d, want %d\n%s", code, operation.ExitRefused, stderr)
	}
	for _, want := range []string{"--remove-dead", "replace-node", "cannot be decommissioned", "nothing changed"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, stderr)
		}
	}
	if w.HasCheckpoint() || w.Replicas("rack1") != 3 {
		t.Error("the refusal changed something")
	}
}

// TestScaleDownRemoveDeadRefusesRF1: keyspaces with one replica would lose the dead
// node's data; without --force nothing changes.
func TestScaleDownRemoveDeadRefusesRF1(t *testing.T) {
	w, _ := removeDeadWorldRF(t, 1)
	_, stderr, code, _ := run(w, 0, scaleTo(2, "--remove-dead")...)
	if code != operation.ExitRefused || !strings.Contains(stderr, "replication factor 1") || !strings.Contains(stderr, "--force") {
		t.Fatalf("exit %d, want %d naming RF 1 and --force\n%s", code, operation.ExitRefused, stderr)
	}
	if w.HasCheckpoint() || w.Replicas("rack1") != 3 {
		t.Error("the refusal changed something")
	}
}

// TestScaleDownRemoveDeadDecommissionsALiveNode: a node that is UN is decommissioned, with
// --remove-dead too (nothing is dead: a warning says so).
func TestScaleDownRemoveDeadDecommissionsALiveNode(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Version: "4.1"})
	stdout, stderr, code, _ := run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--remove-dead", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout+stderr, "no node to remove is dead") || !strings.Contains(stdout, "nodetool decommission") || strings.Contains(stdout, "removenode") {
		t.Errorf("want a decommission and the warning:\n%s\n%s", stdout, stderr)
	}
}

// TestScaleDownRemoveDeadCrashMatrix kills the --remove-dead run right after each of
// its side effects in turn (API writes, the removenode exec), then resumes twice (the
// first resume crashes too): every case ends with the dead node removed once and its
// claim deleted once, after it left the ring.
func TestScaleDownRemoveDeadCrashMatrix(t *testing.T) {
	args := scaleTo(2, "--remove-dead")
	ref, _ := removeDeadWorld(t)
	if _, stderr, code, crashed := run(ref, 0, args...); code != 0 || crashed {
		t.Fatalf("reference run: code %d crashed %v\n%s", code, crashed, stderr)
	}
	points := ref.SideEffects()
	for k := 1; k <= points; k++ {
		w, deadID := removeDeadWorld(t)
		crashAndResume(t, w, k, args)
		label := fmt.Sprintf("crash after side effect %d of %d", k, points)
		assertDeadRemoved(t, w, deadID, label)
		w.AssertHistory(removeDeadHistory(), label)
	}
	t.Logf("%d crash points, each followed by a crashed and a clean resume", points)
}

// interruptDuringRemoval runs scale --remove-dead in w (whose removals take a while)
// and interrupts it (exit 4) once the dead node shows a removal under way (DL): the
// removenode call is cut, the removal goes on on its coordinator.
func interruptDuringRemoval(t *testing.T, w *world.World) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if n, err := w.Cass.Node(removedDeadPod); err == nil && n.PeerCode == "DL" {
				cancel()
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	_, stderr, code, _ := runCtx(ctx, w, 0, scaleTo(2, "--remove-dead")...)
	if code != exit.Interrupted {
		t.Fatalf("exit %d, want %d (interrupted during the removal)\n%s", code, exit.Interrupted, stderr)
	}
}

// TestScaleDownRemoveDeadResumeWaitsForTheRunningRemoval: a run interrupted while its
// removenode runs leaves the removal to its coordinator; resume finds it in process
// (removenode status) and waits for it: removenode ran once.
func TestScaleDownRemoveDeadResumeWaitsForTheRunningRemoval(t *testing.T) {
	w, deadID := removeDeadWorldTimed(t)
	interruptDuringRemoval(t, w)
	var out strings.Builder
	w.Cass.Run(context.Background(), "demo-dc1-rack1-0", []string{"removenode", "status"}, &out, io.Discard)
	if !strings.Contains(out.String(), "Removing token") {
		t.Fatalf("the removal is not in process on the coordinator after the interrupt: %s", out.String())
	}
	if _, stderr, code, _ := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 {
		t.Fatalf("resume exited %d\n%s", code, stderr)
	}
	assertDeadRemoved(t, w, deadID, "resumed during the removal")
	w.AssertHistory(removeDeadHistory(), "resumed during the removal")
}

// TestScaleDownRemoveDeadCoordinatorRestartedIssuesAgain: the coordinator's JVM
// restarted while it removed the node, dropping the removal (peers may keep the node
// DL): resume finds no removal in process and issues it again, once.
func TestScaleDownRemoveDeadCoordinatorRestartedIssuesAgain(t *testing.T) {
	w, deadID := removeDeadWorldTimed(t)
	interruptDuringRemoval(t, w)
	w.SetDown("demo-dc1-rack1-0", true)
	w.SetDown("demo-dc1-rack1-0", false)
	if _, stderr, code, _ := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 {
		t.Fatalf("resume exited %d\n%s", code, stderr)
	}
	assertDeadRemoved(t, w, deadID, "coordinator restarted")
	e := removeDeadHistory()
	e.Execs["removenode demo-dc1-rack1-0"] = 2
	w.AssertHistory(e, "coordinator restarted")
}

// removeDeadWorldTimed is removeDeadWorld whose removal takes a while.
func removeDeadWorldTimed(t *testing.T) (*world.World, string) {
	t.Helper()
	w := world.New(t, world.Opts{Nodes: 3, Version: "4.1", Operator: true, RF: 2, DecommissionTime: 600 * time.Millisecond})
	n, err := w.Cass.Node(removedDeadPod)
	if err != nil {
		t.Fatal(err)
	}
	w.SetDown(removedDeadPod, true)
	return w, n.HostID
}

// TestScaleDownRemoveDeadRefusedOnCassOperator: cass-operator removes nodes itself, by
// decommission only: --remove-dead is refused, naming why and replace-node.
func TestScaleDownRemoveDeadRefusedOnCassOperator(t *testing.T) {
	w := drivenWorld(t, 3)
	_, stderr, code, _ := drun(w, 0, append(scaleDC(2), "--remove-dead")...)
	if code != operation.ExitRefused || !strings.Contains(stderr, "--remove-dead is not possible") || !strings.Contains(stderr, "replace-node") {
		t.Fatalf("exit %d, want %d naming why and replace-node\n%s", code, operation.ExitRefused, stderr)
	}
	if w.SideEffects() != 0 {
		t.Error("the refusal changed something")
	}
}

// TestScaleDownRemoveDeadAfterAbort: a plan made while its node was alive meets it
// dead before its decommission was sent. abort leaves it untouched (its nodetool
// silent, DN on a peer: nothing is leaving), and scale --remove-dead then removes it.
func TestScaleDownRemoveDeadAfterAbort(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Version: "4.1", Operator: true, RF: 2})
	n, err := w.Cass.Node(removedDeadPod)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, crashed := run(w, 1, scaleTo(2)...); !crashed {
		t.Fatal("crash point 1 not reached")
	}
	w.SetDown(removedDeadPod, true)
	stdout, stderr, code, _ := run(w, 0, abortDemo...)
	if code != 0 || !strings.Contains(stdout+stderr, "is dead") {
		t.Fatalf("abort: exit %d, want 0 with a note that the node is dead\n%s\n%s", code, stdout, stderr)
	}
	if _, stderr, code, _ := run(w, 0, scaleTo(2, "--remove-dead")...); code != 0 {
		t.Fatalf("scale --remove-dead after the abort: exit %d\n%s", code, stderr)
	}
	assertDeadRemoved(t, w, n.HostID, "after abort")
}

// TestScaleDownRemoveDeadSetsNoThroughputOnTheDeadNode: a dead node streams nothing
// (the others stream its ranges) and its limiter cannot be read: --stream-throughput
// sets nothing for it, and says so.
func TestScaleDownRemoveDeadSetsNoThroughputOnTheDeadNode(t *testing.T) {
	w, deadID := removeDeadWorld(t)
	stdout, stderr, code, _ := run(w, 0, scaleTo(2, "--remove-dead", "--stream-throughput", "100MiB/s")...)
	if code != 0 || !strings.Contains(stdout+stderr, "removed by removenode") {
		t.Fatalf("exit %d, want 0 with the no-stream warning\n%s", code, stderr)
	}
	assertDeadRemoved(t, w, deadID, "--stream-throughput")
}

// TestScaleDownRemoveDeadThenDecommission: 4 -> 2 with the highest node dead: it is
// removed with removenode, then the next one decommissioned as usual. With the dead
// node below a live one, the plan is refused (the decommission would meet it DN).
func TestScaleDownRemoveDeadThenDecommission(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 4, Version: "4.1", Operator: true, RF: 2})
	dead, err := w.Cass.Node("demo-dc1-rack1-3")
	if err != nil {
		t.Fatal(err)
	}
	w.SetDown(dead.Pod, true)
	if _, stderr, code, _ := run(w, 0, scaleTo(2, "--remove-dead")...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	nodes, _ := w.Cass.Nodes()
	for _, n := range nodes {
		if n.PeerCode != "" && (n.Pod == dead.Pod || n.Pod == "demo-dc1-rack1-2") {
			t.Errorf("node %s is still in the ring (%s)", n.Pod, n.PeerCode)
		}
	}
	w.AssertHistory(world.Expect{
		Execs:      map[string]int{"removenode demo-dc1-rack1-0": 1, "decommission demo-dc1-rack1-2": 1},
		ExecKinds:  []string{"decommission", "removenode"},
		Replicas:   map[string][]int32{"demo-dc1-rack1": world.Down(4, 2)},
		PVCDeletes: []string{"data-demo-dc1-rack1-3", "data-demo-dc1-rack1-2"},
		Operator:   map[string][]int32{"casskop": {1, 0, 1}},
		SpecWrites: 1,
	}, "4 -> 2")
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("unsafe actions: %s", strings.Join(v, "; "))
	}

	w2 := world.New(t, world.Opts{Nodes: 4, Version: "4.1", RF: 2})
	w2.SetDown("demo-dc1-rack1-2", true)
	_, stderr, code, _ := run(w2, 0, scaleTo(2, "--remove-dead")...)
	if code != operation.ExitRefused || !strings.Contains(stderr, "above it") {
		t.Fatalf("dead node below a live one: exit %d, want %d\n%s", code, operation.ExitRefused, stderr)
	}
}

// TestScaleDownRemoveDeadPodNotReady: the dead node's pod is what a real dead node
// leaves, not Ready and its container crash-looping: it is removed the same way (no
// nodetool asked of it: no container runs).
func TestScaleDownRemoveDeadPodNotReady(t *testing.T) {
	w, deadID := removeDeadWorld(t)
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	obj, err := w.Kube.Tracker().Get(gvr, w.NS, removedDeadPod)
	if err != nil {
		t.Fatal(err)
	}
	p := obj.(*corev1.Pod).DeepCopy()
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "cassandra", RestartCount: 7,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
	if err := w.Kube.Tracker().Update(gvr, p, w.NS); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code, _ := run(w, 0, scaleTo(2)...); code != operation.ExitRefused || !strings.Contains(stderr, "--remove-dead") {
		t.Fatalf("without --remove-dead: exit %d, want %d naming it\n%s", code, operation.ExitRefused, stderr)
	}
	if _, stderr, code, _ := run(w, 0, scaleTo(2, "--remove-dead")...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	assertDeadRemoved(t, w, deadID, "pod not Ready")
	w.AssertHistory(removeDeadHistory(), "pod not Ready")
}
