package cli

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// Issue 15, "safe means safe now": the world changes between two steps of a run.

const rack1 = "demo-dc1-rack1-"

// onDelete calls fn once, right before the API server deletes the named object of
// resource (the change happens between two steps of the run).
func onDelete(w *world.World, resource, name string, fn func()) {
	done := false
	w.Kube.PrependReactor("delete", resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		if da, ok := a.(k8stesting.DeleteAction); ok && da.GetName() == name && !done {
			done = true
			fn()
		}
		return false, nil, nil
	})
}

// decommissions counts the decommission calls per pod in the world's exec log.
func decommissions(w *world.World) map[string]int {
	out := map[string]int{}
	for _, e := range w.ExecLog() {
		if f := strings.Fields(e); len(f) > 1 && f[1] == "decommission" {
			out[f[0]]++
		}
	}
	return out
}

func assertOneDecommissionEach(t *testing.T, w *world.World, pods ...string) {
	t.Helper()
	got := decommissions(w)
	for _, p := range pods {
		if got[p] != 1 {
			t.Errorf("pod %s: %d decommission calls, want exactly 1 (all: %v)", p, got[p], got)
		}
	}
	if len(got) != len(pods) {
		t.Errorf("decommissions %v, want one on each of %v", got, pods)
	}
}

// TestNodeDownStopsNextDecommission: node 0 goes DN after the first node left a 4→1
// scale-down; the second decommission does not start, the run waits, says which node,
// and stops with exit 4 after --stall-after. Node 0 back UN: resume finishes with
// exactly one decommission per node.
func TestNodeDownStopsNextDecommission(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 4, Version: "4.1"})
	onDelete(w, "persistentvolumeclaims", "data-"+rack1+"3", func() { w.SetDown(rack1+"0", true) })
	_, stderr, code, _ := run(w, 0, append(scale41, "--stall-after", "50ms")...)
	if code != 4 {
		t.Fatalf("exit %d, want 4\n%s", code, stderr)
	}
	for _, want := range []string{"node 10.244.0.11 of datacenter dc1 is DN", "nothing was done by this step", "kubectl cassandra resume"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	if got := decommissions(w); got[rack1+"2"] != 0 || got[rack1+"3"] != 1 {
		t.Fatalf("decommissions beside a down node: %v", got)
	}
	w.SetDown(rack1+"0", false)
	if _, stderr, code, _ := run(w, 0, resume...); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(1, "after node 0 came back")
	assertOneDecommissionEach(t, w, rack1+"3", rack1+"2", rack1+"1")
}

// TestJoiningNodeStopsNextDecommission: another node of the cluster is joining (UJ,
// someone else's scale-up in another datacenter): no decommission starts beside it.
func TestJoiningNodeStopsNextDecommission(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 4, Version: "4.1", JoinTime: time.Millisecond})
	onDelete(w, "persistentvolumeclaims", "data-"+rack1+"3", func() { w.AddJoiningNode("other-dc2-0", "dc2") })
	_, stderr, code, _ := run(w, 0, append(scale41, "--stall-after", "50ms")...)
	if code != 4 {
		t.Fatalf("exit %d, want 4\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "of datacenter dc2 is UJ (up, joining)") {
		t.Errorf("stderr does not name the joining node:\n%s", stderr)
	}
	if got := decommissions(w); got[rack1+"2"] != 0 {
		t.Fatalf("decommission beside a joining node: %v", got)
	}
	w.FinishJoining("other-dc2-0")
	if _, stderr, code, _ := run(w, 0, resume...); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(1, "after the join finished")
	assertOneDecommissionEach(t, w, rack1+"3", rack1+"2", rack1+"1")
}

// TestUnreadableRingWaits: a ring no node can read is unknown: the run waits and stops
// with exit 4, it does not act.
func TestUnreadableRingWaits(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2, Version: "4.1"})
	first := true
	w.Dyn.PrependReactor("patch", "cassandraclusters", func(k8stesting.Action) (bool, runtime.Object, error) {
		if first { // the checkpoint's first write: planning is over
			first = false
			for _, p := range []string{rack1 + "0", rack1 + "1"} { // status prints nothing anywhere
				_ = w.Cass.UpdateFault(p, func(f *sim.Fault) { f.EmptyRing = true })
			}
		}
		return false, nil, nil
	})
	_, stderr, code, _ := run(w, 0, append(scale41, "--stall-after", "50ms")...)
	if code != 4 || !strings.Contains(stderr, "the ring cannot be read") {
		t.Fatalf("exit %d, want 4 with the ring unknown\n%s", code, stderr)
	}
	if got := decommissions(w); len(got) != 0 {
		t.Fatalf("acted on an unknown ring: %v", got)
	}
}

// TestPodRecreatedMidPlan: a planned pod is evicted and re-created (new UID, same claim,
// same Host ID) while the run works on an earlier node: the run carries on with it,
// records the new UID, and deletes no claim of a live pod.
func TestPodRecreatedMidPlan(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Version: "4.1"})
	onDelete(w, "persistentvolumeclaims", "data-"+rack1+"2", func() { w.RecreatePod(rack1 + "1") })
	_, stderr, code, _ := run(w, 0, scale41...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "pod "+rack1+"1 was re-created") {
		t.Errorf("stderr does not report the re-created pod:\n%s", stderr)
	}
	w.AssertConverged(1, "pod re-created mid-plan")
	assertOneDecommissionEach(t, w, rack1+"2", rack1+"1")
	if v := w.PVCDeletesOfLivePods(); len(v) > 0 {
		t.Fatalf("claims of live pods deleted: %v", v)
	}
}

// TestPodRecreatedThenResume: the run stops (node 0 down) after a planned pod was
// re-created; the resumed run adopts the new pod, writes its UID in the checkpoint, and
// finishes. Resume used to refuse forever ("pod is gone but node is still in the ring").
func TestPodRecreatedThenResume(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Version: "4.1"})
	onDelete(w, "persistentvolumeclaims", "data-"+rack1+"2", func() {
		w.RecreatePod(rack1 + "1")
		w.SetDown(rack1+"0", true)
	})
	_, stderr, code, _ := run(w, 0, append(scale41, "--stall-after", "50ms")...)
	if code != 4 {
		t.Fatalf("exit %d, want 4\n%s", code, stderr)
	}
	newUID := w.PodUID(rack1 + "1")
	if newUID == "pod-"+rack1+"1" {
		t.Fatal("the pod was not re-created")
	}
	cp := loadCP(t, w)
	if n, _ := cp.Node(rack1 + "1"); n.PodUID != newUID {
		t.Errorf("checkpoint names UID %s for %s, want the new %s", n.PodUID, rack1+"1", newUID)
	}
	w.SetDown(rack1+"0", false)
	if _, stderr, code, _ := run(w, 0, resume...); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(1, "resume after a re-created pod")
	assertOneDecommissionEach(t, w, rack1+"2", rack1+"1")
	if v := w.PVCDeletesOfLivePods(); len(v) > 0 {
		t.Fatalf("claims of live pods deleted: %v", v)
	}
}

// TestIPv6ScaleUpAndRestart: pods with IPv6 addresses (kubelet short form, Cassandra's
// full form) are recognised: the scale-up sees its new node join, the restart finds
// every node in the ring and sees each back.
func TestIPv6ScaleUpAndRestart(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 1, IPv6: true, JoinTime: 10 * time.Millisecond, Operator: true})
	if ip := w.PodIP(rack1 + "0"); ip != "fd00:10:244::b" {
		t.Fatalf("pod IP %q, want the short form", ip)
	}
	if _, stderr, code, _ := run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--cleanup", "--yes", "--stall-after", "5s"); code != 0 {
		t.Fatalf("IPv6 scale-up: exit %d\n%s", code, stderr)
	}
	w.AssertScaledUp(2, "IPv6 scale-up")
	pods := []string{rack1 + "0", rack1 + "1"}
	before := podUIDs(w, pods)
	if _, stderr, code, _ := run(w, 0, "restart", "demo", "-n", "cassandra", "--rack", "rack1", "--yes"); code != 0 {
		t.Fatalf("IPv6 restart: exit %d\n%s", code, stderr)
	}
	w.AssertRestarted(pods, before, "IPv6 restart")
}

// TestIPv6FreeSpaceChecked: the scale-down's free-space check finds the remaining
// nodes' Load by their IPv6 address (it was skipped with a warning).
func TestIPv6FreeSpaceChecked(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, IPv6: true})
	stdout, stderr, code, _ := run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "free space not checked") {
		t.Fatalf("free-space check skipped on IPv6:\n%s\n%s", stdout, stderr)
	}
	if _, stderr, code, _ := run(w, 0, scale41...); code != 0 {
		t.Fatalf("IPv6 scale-down: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(1, "IPv6 scale-down")
}

// TestScaleUpRefusesListedSeed: a pod CassKop still lists in status.seedlist would start
// as a seed and not bootstrap: refused at planning (exit 3, nothing changed), and right
// before the grow step when the entry appeared after planning.
func TestScaleUpRefusesListedSeed(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 1, Operator: true})
	w.SetSeedlist(rack1+"0", rack1+"1")
	_, stderr, code, _ := run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--yes")
	if code != 3 || !strings.Contains(stderr, "pod "+rack1+"1 is listed as a seed") || !strings.Contains(stderr, "nothing changed") {
		t.Fatalf("exit %d, want 3 with the seed named\n%s", code, stderr)
	}
	if w.Replicas("rack1") != 1 || w.SideEffects() != 0 {
		t.Fatalf("refusal changed something: replicas %d, side effects %d", w.Replicas("rack1"), w.SideEffects())
	}

	// Listed after planning (when the operator is paused): the grow step refuses, and
	// resume finishes once the entry is gone.
	w2 := world.New(t, world.Opts{Nodes: 1, Operator: true})
	first := true
	w2.Kube.PrependReactor("*", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if v := a.GetVerb(); first && (v == "patch" || v == "update") {
			first = false
			w2.SetSeedlist(rack1+"0", rack1+"1")
		}
		return false, nil, nil
	})
	_, stderr, code, _ = run(w2, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--yes")
	if code != 3 || !strings.Contains(stderr, "pod "+rack1+"1 is listed as a seed") || !strings.Contains(stderr, "was not grown") {
		t.Fatalf("grow: exit %d, want 3 with the seed named\n%s", code, stderr)
	}
	if w2.Replicas("rack1") != 1 {
		t.Fatalf("grown beside a listed seed: replicas %d", w2.Replicas("rack1"))
	}
	w2.SetSeedlist(rack1 + "0")
	if _, stderr, code, _ := run(w2, 0, resume...); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	w2.AssertScaledUp(2, "after the seed entry was removed")
}

// TestDeletingClusterRefused: a CassandraCluster being deleted is refused at planning
// and at resume (exit 3, nothing changed).
func TestDeletingClusterRefused(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3})
	w.MarkDeleting()
	_, stderr, code, _ := run(w, 0, scale41...)
	if code != 3 || !strings.Contains(stderr, "is being deleted") {
		t.Fatalf("scale: exit %d, want 3\n%s", code, stderr)
	}
	if w.SideEffects() != 0 {
		t.Fatalf("%d side effects on a cluster being deleted", w.SideEffects())
	}

	// Deleted while an operation is in flight: resume refuses.
	w2 := world.New(t, world.Opts{Nodes: 3})
	if _, _, _, crashed := run(w2, 1, scale41...); !crashed {
		t.Fatal("the run did not stop at its first side effect")
	}
	w2.MarkDeleting()
	_, stderr, code, _ = run(w2, 0, resume...)
	if code != 3 || !strings.Contains(stderr, "refusing to resume") {
		t.Fatalf("resume: exit %d, want 3\n%s", code, stderr)
	}
}

// TestDeletedMidRunStopsBeforeNextAction: the cluster resource is deleted while the run
// goes on; the checkpoint write before the next decommission returns it with its
// deletionTimestamp, and the run stops there (exit 3) without calling it.
func TestDeletedMidRunStopsBeforeNextAction(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Version: "4.1"})
	onDelete(w, "persistentvolumeclaims", "data-"+rack1+"2", w.MarkDeleting)
	_, stderr, code, _ := run(w, 0, scale41...)
	if code != 3 || !strings.Contains(stderr, "is being deleted") {
		t.Fatalf("exit %d, want 3\n%s", code, stderr)
	}
	if got := decommissions(w); got[rack1+"1"] != 0 || got[rack1+"2"] != 1 {
		t.Fatalf("decommissions %v: none may start once the cluster is being deleted", got)
	}
}
