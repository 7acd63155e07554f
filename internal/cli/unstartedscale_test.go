package cli

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// TestScaleDownTakesAwayNeverStartedPod (the dead end "abort a two-rack scale-up with a
// Pending pod/record-wiped@1"): a two-rack scale-up (--dc, 1 -> 2 per rack) leaves
// rack1's new pod Pending; abort's record is wiped right after its first write, so no
// operation is left to take the pod away and the operator stays paused. The same
// datacenter scaled to 1 plans from the world: the pod never started and the ring has no
// node on it, so it is taken away without a decommission (rack1's StatefulSet shrunk
// 2 -> 1, its claim deleted with its UID), the cluster resource set, the stale pause
// taken over and the operator restored: 1 -> 0 -> 1 over the whole story.
func TestScaleDownTakesAwayNeverStartedPod(t *testing.T) {
	const pending = "demo-dc1-rack1-1"
	w := world.New(t, world.Opts{Nodes: 1, Racks: []string{"rack1", "rack2"}, Topology: true, Operator: true, PendingPods: []string{pending}})
	op := w.RecordReplicas("casskop")
	scaleDC := func(n int) []string {
		return []string{"scale", "demo", "-n", "cassandra", "--dc", "dc1", "--nodes", fmt.Sprint(n), "--yes", "--stall-after", "50ms"}
	}
	wipedAbortOfPendingScaleUp(t, w)
	claim := "data-" + pending
	pvcUID := func(name string) string {
		c, err := w.Kube.CoreV1().PersistentVolumeClaims(w.NS).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || c.DeletionTimestamp != nil {
			return ""
		}
		return string(c.UID)
	}
	uid := pvcUID(claim)
	if w.PodUID(pending) == "" || uid == "" {
		t.Fatalf("the pending pod %s or its claim was not created (pods %v)", pending, w.PodNames())
	}

	stdout, stderr, code, _ := run(w, 0, scaleDC(1)...)
	if code != 0 {
		t.Fatalf("scale --dc dc1 --nodes 1: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout+stderr, "never started") {
		t.Errorf("the plan does not say the pod never started:\n%s%s", stdout, stderr)
	}
	w.AssertConsistentAt(1, "a never-started pod taken away by a scale")
	if problems := w.DeadEnd("casskop"); len(problems) > 0 {
		t.Errorf("still a dead end: %s", strings.Join(problems, "; "))
	}
	if got := deleteCounts(w, "persistentvolumeclaims"); !reflect.DeepEqual(got, map[string]int{claim: 1}) {
		t.Errorf("claims deleted %v, want %s once", got, claim)
	}
	if pvcUID(claim) == uid {
		t.Errorf("claim %s (UID %s) is still there", claim, uid)
	}
	for _, cmd := range []string{"decommission", "netstats", "info"} {
		if n := execCount(w, cmd, pending); n != 0 {
			t.Errorf("nodetool %s ran %d times in the never-started pod", cmd, n)
		}
	}
	var sts []string
	for _, ev := range w.History() {
		if ev.Kind == "write" && ev.Resource == "statefulsets" {
			sts = append(sts, fmt.Sprintf("%s %d->%d", ev.Name, ev.Before, ev.After))
		}
	}
	// rack1 grown by the scale-up, shrunk by the scale; rack2 never touched.
	if want := []string{"demo-dc1-rack1 1->2", "demo-dc1-rack1 2->1"}; !reflect.DeepEqual(sts, want) {
		t.Errorf("StatefulSet writes %v, want %v", sts, want)
	}
	t.Logf("scale:\n%s%s", stderr, stdout)
	assertHistory(t, op, "a never-started pod taken away by a scale", 1, 0, 1)
	assertNoHolders(t, w, "a never-started pod taken away by a scale")
}

// pendingWorld is two racks of one node whose rack1 pod 1, once created, stays Pending.
func pendingWorld(t *testing.T) *world.World {
	return world.New(t, world.Opts{Nodes: 1, Racks: []string{"rack1", "rack2"}, Topology: true, Operator: true, PendingPods: []string{"demo-dc1-rack1-1"}})
}

// wipedAbortOfPendingScaleUp brings w to the dead end: a two-rack scale-up (--dc, 1 ->
// 2) stopped while rack1's new pod stays Pending, then abort's record wiped right after
// its first write.
func wipedAbortOfPendingScaleUp(t *testing.T, w *world.World) {
	t.Helper()
	up := append([]string{"scale", "demo", "-n", "cassandra", "--dc", "dc1", "--nodes", "2", "--yes"}, searchFlags...)
	if _, stderr, code := runUntilStderr(w, "not scheduled", up...); code != exit.Interrupted {
		t.Fatalf("scale-up: exit %d\n%s", code, stderr)
	}
	w.ChangeAfter(1, world.RecordWiped())
	_, _, _, _ = run(w, 0, abortDemo...)
	w.PutBack()
	if problems := w.DeadEnd("casskop"); len(problems) == 0 {
		t.Fatalf("the wiped abort left no dead end to get out of")
	}
}

// TestScaleDownNeverStartedPodCrashes: the scale that takes a never-started pod away
// (TestScaleDownTakesAwayNeverStartedPod) crashed right after each of its side effects;
// the SRE's recovery (resume, abort when resume stops, the scale again when no record
// is left) reaches a consistent cluster with the operator restored, and nothing is
// ever decommissioned in the pod.
func TestScaleDownNeverStartedPodCrashes(t *testing.T) {
	const pending = "demo-dc1-rack1-1"
	down := append([]string{"scale", "demo", "-n", "cassandra", "--dc", "dc1", "--nodes", "1", "--yes"}, searchFlags...)
	ref := pendingWorld(t)
	wipedAbortOfPendingScaleUp(t, ref)
	if _, stderr, code, _ := run(ref, 0, down...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	effects := ref.SideEffects()
	if effects < 4 {
		t.Fatalf("the reference run made %d side effects", effects)
	}
	for k := 1; k < effects; k++ {
		w := pendingWorld(t)
		wipedAbortOfPendingScaleUp(t, w)
		_, stderr, _, crashed := run(w, k, down...)
		if !crashed {
			t.Fatalf("@%d: no crash\n%s", k, stderr)
		}
		log, problems := recoverFromDeadEnd(w, down, false)
		if len(problems) > 0 {
			t.Errorf("@%d: no way forward: %s\nthe command:\n%s\nthe recovery:\n%s", k, strings.Join(problems, "; "), stderr, log)
		}
		if n := execCount(w, "decommission", pending); n != 0 {
			t.Errorf("@%d: the never-started pod's node was decommissioned %d times", k, n)
		}
	}
}

// TestAbortScaleDownWithNeverStartedPod: abort of the scale that takes a never-started
// pod away, crashed after each side effect. Until the pod and its claims are gone, abort
// finishes taking it away first (no decommission: no node ran on it), then stops; once
// they are, abort counts it removed. Each abort ends with the cluster consistent.
func TestAbortScaleDownWithNeverStartedPod(t *testing.T) {
	down := append([]string{"scale", "demo", "-n", "cassandra", "--dc", "dc1", "--nodes", "1", "--yes"}, searchFlags...)
	ref := pendingWorld(t)
	wipedAbortOfPendingScaleUp(t, ref)
	if _, stderr, code, _ := run(ref, 0, down...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	effects := ref.SideEffects()
	finished := 0
	for k := 1; k < effects; k++ {
		w := pendingWorld(t)
		wipedAbortOfPendingScaleUp(t, w)
		_, _, _, _ = run(w, k, down...)
		stdout, stderr, code, _ := run(w, 0, abortDemo...)
		if code != 0 {
			t.Errorf("@%d: abort: exit %d\n%s%s", k, code, stdout, stderr)
		}
		if strings.Contains(stderr, "abort first finishes removing it") {
			finished++
		}
		if problems := w.DeadEnd("casskop"); len(problems) > 0 {
			t.Errorf("@%d: abort succeeded but: %s\n%s%s", k, strings.Join(problems, "; "), stderr, stdout)
		}
		t.Logf("@%d: abort exit %d: %s", k, code, lastLine(stderr))
	}
	if finished == 0 {
		t.Errorf("abort never found the pod being taken away")
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
