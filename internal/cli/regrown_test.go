package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// execCount is how often the plugin ran nodetool cmd on pod over the world's history.
func execCount(w *world.World, cmd, pod string) int {
	n := 0
	for _, ev := range w.History() {
		if ev.Kind == "exec" && ev.Verb == cmd && ev.Name == pod {
			n++
		}
	}
	return n
}

// deleteCounts counts the plugin's deletes of resource by name.
func deleteCounts(w *world.World, resource string) map[string]int {
	n := map[string]int{}
	for _, ev := range w.History() {
		if ev.Kind == "write" && ev.Resource == resource && ev.Verb == "delete" {
			n[ev.Name]++
		}
	}
	return n
}

// TestRegrownPodOnNewClaims (finding 2): a 4 → 1 scale-down stops right after node 2's
// decommission (node 3 removed in full, its claims deleted); the StatefulSet is then
// grown back to 4 (the paused operator scaled back up), which creates pod 3 again on
// new claims: a new node. resume must not shrink it away blindly: joined, it is
// decommissioned first (once); never joined (its pod never starts), it goes with its
// new claims. Both end at 1 node with no claim of ordinals 1..3 left.
func TestRegrownPodOnNewClaims(t *testing.T) {
	for _, tc := range []struct {
		name   string
		joined bool
	}{{"joined", true}, {"never joined", false}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := world.Opts{Nodes: 4}
			if !tc.joined {
				opts.PendingPods = []string{"demo-dc1-rack1-3"} // re-created, it is never scheduled
			}
			at := crashAfterDecommissionOf(t, opts, "demo-dc1-rack1-2", scaleTo(1)...)
			w := world.New(t, opts)
			if _, _, _, crashed := run(w, at, scaleTo(1)...); !crashed {
				t.Fatal("no crash")
			}
			const pod, claim = "demo-dc1-rack1-3", "data-demo-dc1-rack1-3"
			if w.PodUID(pod) != "" || strings.Contains(" "+strings.Join(w.PVCNames(), " ")+" ", " "+claim+" ") {
				t.Fatalf("crash point: node 3 not removed in full (pods %v, claims %v)", w.PodNames(), w.PVCNames())
			}
			w.SetReplicas("rack1", 4)
			if w.PodUID(pod) == "" || w.Incarnations("pvc", claim) != 2 {
				t.Fatalf("regrow: pod %s UID %q, claim %s created %d times", pod, w.PodUID(pod), claim, w.Incarnations("pvc", claim))
			}
			if nv, err := w.Cass.Node(pod); tc.joined && (err != nil || nv.PeerCode != "UN") {
				t.Fatalf("the regrown node did not join: %+v %v", nv, err)
			}
			oldDecommissions := execCount(w, "decommission", pod)

			_, stderr, code, _ := run(w, 0, resume...)
			if code != 0 {
				t.Fatalf("resume: exit %d\n%s", code, stderr)
			}
			w.AssertConsistentAt(1, "resumed after the regrow")
			for i := 1; i <= 3; i++ {
				c := fmt.Sprintf("data-demo-dc1-rack1-%d", i)
				if strings.Contains(" "+strings.Join(w.PVCNames(), " ")+" ", " "+c+" ") {
					t.Errorf("claim %s left behind", c)
				}
			}
			wantNew := 0
			if tc.joined {
				wantNew = 1
			}
			if got := execCount(w, "decommission", pod) - oldDecommissions; got != wantNew {
				t.Errorf("the regrown node of %s was decommissioned %d times, want %d\n%s", pod, got, wantNew, stderr)
			}
			for _, p := range []string{"demo-dc1-rack1-2", "demo-dc1-rack1-1"} {
				if n := execCount(w, "decommission", p); n != 1 {
					t.Errorf("%s decommissioned %d times, want once", p, n)
				}
			}
			// The old claim of ordinal 3 in the first run, its new one in the resume; the
			// others once each.
			if got, want := deleteCounts(w, "persistentvolumeclaims"), map[string]int{claim: 2, "data-demo-dc1-rack1-2": 1, "data-demo-dc1-rack1-1": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("claims deleted %v, want %v", got, want)
			}
			if !strings.Contains(stderr, "pod "+pod+" was re-created") {
				t.Errorf("resume does not say what it found on %s:\n%s", pod, stderr)
			}
		})
	}
}

// TestRegrownPodOnNewClaimsMidRun: the StatefulSet is grown back to 4 while the run
// goes on, right after node 3's claims were deleted (the paused operator scaled back up
// by hand): pod 3 comes back on new claims. The run (or the resume after it) removes
// that pod and its new claims too, judged from the claims that exist, not from the
// record's "claims deleted"; only claims of ordinals being removed, each with its UID.
func TestRegrownPodOnNewClaimsMidRun(t *testing.T) {
	for _, joined := range []bool{true, false} {
		t.Run(fmt.Sprint("joined=", joined), func(t *testing.T) { regrownMidRun(t, joined) })
	}
}

func regrownMidRun(t *testing.T, joined bool) {
	opts := world.Opts{Nodes: 4}
	if !joined {
		opts.PendingPods = []string{"demo-dc1-rack1-3"} // re-created, it is never scheduled
	}
	w := world.New(t, opts)
	const pod, claim = "demo-dc1-rack1-3", "data-demo-dc1-rack1-3"
	regrown := false
	_, stderr, code := runOnStderr(w, []string{"[OK] delete PVC " + claim}, func() {
		if !regrown {
			regrown = true
			w.SetReplicas("rack1", 4)
		}
	}, scaleTo(1)...)
	t.Logf("scale: exit %d: %s", code, shortLine(stderr, "Error"))
	if !regrown || w.Incarnations("pvc", claim) != 2 {
		t.Fatalf("regrow: done %v, claim %s created %d times", regrown, claim, w.Incarnations("pvc", claim))
	}
	if code != 0 {
		_, rerr, rcode, _ := run(w, 0, resume...)
		if rcode != 0 {
			t.Fatalf("resume: exit %d\n%s", rcode, rerr)
		}
	}
	w.AssertConsistentAt(1, "regrown mid-run")
	for i := 1; i <= 3; i++ {
		c := fmt.Sprintf("data-demo-dc1-rack1-%d", i)
		if strings.Contains(" "+strings.Join(w.PVCNames(), " ")+" ", " "+c+" ") {
			t.Errorf("claim %s left behind (claims %v)", c, w.PVCNames())
		}
	}
	if got, want := deleteCounts(w, "persistentvolumeclaims"), map[string]int{claim: 2, "data-demo-dc1-rack1-2": 1, "data-demo-dc1-rack1-1": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("claims deleted %v, want %v", got, want)
	}
}
