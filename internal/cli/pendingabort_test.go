package cli

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// TestAbortTwoRackScaleUpPendingPod (finding 6): a two-rack scale-up (--dc, 1 -> 2 per
// rack) whose rack1 pod stays Pending (never scheduled) is stopped while it waits.
// abort must end it where the world is consistent: the pending pod never started, so
// its node never joined (checked in the ring) and it holds no data; abort takes it away
// (rack1 back to 1, its claim deleted) and restores the operator. Nothing decommissioned.
func TestAbortTwoRackScaleUpPendingPod(t *testing.T) {
	const pending = "demo-dc1-rack1-1"
	w := world.New(t, world.Opts{Nodes: 1, Racks: []string{"rack1", "rack2"}, Topology: true, Operator: true, PendingPods: []string{pending}})
	op := w.RecordReplicas("casskop")
	scaleDC := []string{"scale", "demo", "-n", "cassandra", "--dc", "dc1", "--nodes", "2", "--yes", "--stall-after", "50ms"}
	if _, stderr, code := runUntilStderr(w, "not scheduled", scaleDC...); code != exit.Interrupted {
		t.Fatalf("scale-up: exit %d\n%s", code, stderr)
	}
	if w.PodUID(pending) == "" {
		t.Fatalf("the pending pod %s was not created (pods %v)", pending, w.PodNames())
	}
	stdout, stderr, code, _ := run(w, 0, abortDemo...)
	if code != 0 {
		t.Fatalf("abort: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, pending) {
		t.Errorf("abort does not name the pending pod it takes away:\n%s", stderr)
	}
	w.AssertConsistentAt(1, "aborted with a pending pod")
	if got, want := deleteCounts(w, "persistentvolumeclaims"), map[string]int{"data-" + pending: 1}; len(got) != 1 || got["data-"+pending] != want["data-"+pending] {
		t.Errorf("claims deleted %v, want %v", got, want)
	}
	if n := execCount(w, "decommission", pending); n != 0 {
		t.Errorf("the pending pod's node was decommissioned %d times", n)
	}
	// Each StatefulSet write as planned: rack1 grown by the scale-up, shrunk by abort;
	// rack2 never touched.
	var sts []string
	for _, ev := range w.History() {
		if ev.Kind == "write" && ev.Resource == "statefulsets" {
			sts = append(sts, fmt.Sprintf("%s %d->%d", ev.Name, ev.Before, ev.After))
		}
	}
	if want := []string{"demo-dc1-rack1 1->2", "demo-dc1-rack1 2->1"}; !reflect.DeepEqual(sts, want) {
		t.Errorf("StatefulSet writes %v, want %v", sts, want)
	}
	if !strings.Contains(stdout, "aborted after adding 0 of 2 nodes") {
		t.Errorf("abort's summary:\n%s", stdout)
	}
	t.Logf("abort:\n%s%s", stderr, stdout)
	assertHistory(t, op, "aborted with a pending pod", 1, 0, 1)
	assertNoHolders(t, w, "aborted with a pending pod")
}
