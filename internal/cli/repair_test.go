package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

const stuckPod = "demo-dc1-rack1-2"

var repairArgs = []string{"repair-operator-state", "demo", "-n", "cassandra", "--yes"}

// casskopStatus is CassKop's status after it started scaling rack1 from 3 to 2: the
// rack's last action and pod operation as given, every node recorded.
func casskopStatus(w *world.World, opStatus string, pods []string) map[string]any {
	nodes := map[string]any{}
	for i := 0; i < 3; i++ {
		pod := fmt.Sprintf("demo-dc1-rack1-%d", i)
		nv, err := w.Cass.Node(pod)
		if err != nil {
			panic(err)
		}
		nodes[pod] = map[string]any{"hostId": nv.HostID, "nodeIp": nv.Address}
	}
	podList := []any{}
	for _, p := range pods {
		podList = append(podList, p)
	}
	return map[string]any{
		"phase": "Pending", "lastClusterAction": "ScaleDown", "lastClusterActionStatus": "ToDo",
		"cassandraRackStatus": map[string]any{"dc1-rack1": map[string]any{
			"phase":               "Pending",
			"cassandraLastAction": map[string]any{"name": "ScaleDown", "status": "ToDo", "startTime": "2026-01-01T00:00:00Z"},
			"podLastOperation":    map[string]any{"name": "decommission", "status": opStatus, "pods": podList, "podsOK": []any{}, "startTime": "2026-01-01T00:00:00Z"},
		}},
		"cassandraNodeStatus": nodes,
	}
}

// stuckWorld builds a 3-node rack that CassKop (stopped now) was scaling down to 2, left
// in one of the stuck states of docs/how-it-works/casskop.md §3.4.
func stuckWorld(t *testing.T, state string, statusSubresource bool) *world.World {
	t.Helper()
	opts := world.Opts{Nodes: 3, Operator: true, StatusSubresource: statusSubresource}
	if state == "todo-leaving" {
		opts.DecommissionTime = 300 * time.Millisecond
	}
	w := world.New(t, opts)
	makeStuck(t, w, state)
	return w
}

// makeStuck leaves w, a 3-node rack, in the stuck state CassKop (stopped now) left
// while scaling it down to 2.
func makeStuck(t *testing.T, w *world.World, state string) {
	t.Helper()
	w.SetNodesPerRack(2)
	decommission := func() {
		var out, errb strings.Builder
		if code := w.Cass.Run(context.Background(), stuckPod, []string{"decommission"}, &out, &errb); code != 0 {
			t.Fatalf("decommission: %d %s %s", code, out.String(), errb.String())
		}
	}
	switch state {
	case "ongoing-pod-gone": // #370: decommissioned, STS shrunk, pod gone, PVC left
		decommission()
		w.SetReplicas("rack1", 2)
		w.SetCRStatus(casskopStatus(w, "Ongoing", []string{stuckPod}))
	case "todo-shrunk": // decommissioned and shrunk by a run whose record is gone, status still ToDo
		decommission()
		w.SetReplicas("rack1", 2)
		w.SetCRStatus(casskopStatus(w, "ToDo", nil))
	case "finalizing-not-shrunk": // Finalizing persisted, the STS never shrunk
		decommission()
		w.SetCRStatus(casskopStatus(w, "Finalizing", []string{stuckPod}))
	case "todo-decommissioned": // decommission fired, status still ToDo
		decommission()
		w.SetCRStatus(casskopStatus(w, "ToDo", nil))
	case "todo-leaving": // fired and still running
		// Held streaming until it is seen LEAVING (no window to miss), then released:
		// it leaves within its DecommissionTime, while the test goes on.
		if err := w.Cass.SetFault(stuckPod, sim.Fault{HoldStreaming: true}); err != nil {
			t.Fatal(err)
		}
		go func() {
			var out, errb strings.Builder
			_ = w.Cass.Run(context.Background(), stuckPod, []string{"decommission"}, &out, &errb)
		}()
		for deadline := time.Now().Add(10 * time.Second); ; <-time.After(time.Millisecond) {
			if nv, _ := w.Cass.Node(stuckPod); nv.Mode == sim.ModeLeaving {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("never LEAVING")
			}
		}
		if err := w.Cass.UpdateFault(stuckPod, func(f *sim.Fault) { f.HoldStreaming = false }); err != nil {
			t.Fatal(err)
		}
		w.SetCRStatus(casskopStatus(w, "ToDo", nil))
	default:
		t.Fatalf("unknown state %s", state)
	}
}

// assertRepaired: the rack is at 2 nodes with no leftover of pod 2, CassKop's status says
// the decommission is done, the operator runs again and the operation finished.
func assertRepaired(t *testing.T, w *world.World, label string) {
	t.Helper()
	if w.Replicas("rack1") != 2 || w.PodUID(stuckPod) != "" {
		t.Errorf("%s: replicas %d, pod %s UID %q", label, w.Replicas("rack1"), stuckPod, w.PodUID(stuckPod))
	}
	for _, pvc := range w.PVCNames() {
		if pvc == "data-"+stuckPod {
			t.Errorf("%s: PVC %s left", label, pvc)
		}
	}
	nv, _ := w.Cass.Node(stuckPod)
	if nv.DecommissionsStarted != 1 || !nv.Left {
		t.Errorf("%s: node %s: %d decommissions, left %v", label, stuckPod, nv.DecommissionsStarted, nv.Left)
	}
	st := w.CR().Object["status"].(map[string]any)
	rs := st["cassandraRackStatus"].(map[string]any)["dc1-rack1"].(map[string]any)
	po := rs["podLastOperation"].(map[string]any)
	la := rs["cassandraLastAction"].(map[string]any)
	if po["status"] != "Done" || fmt.Sprint(po["podsOK"]) != "["+stuckPod+"]" || fmt.Sprint(po["pods"]) != "[]" || po["endTime"] == nil ||
		la["status"] != "Done" || st["lastClusterActionStatus"] != "Done" || po["name"] != "decommission" || la["name"] != "ScaleDown" {
		b, _ := json.Marshal(st)
		t.Errorf("%s: status not repaired: %s", label, b)
	}
	if w.DeploymentReplicas("casskop") != 1 {
		t.Errorf("%s: operator not restored", label)
	}
	if ann := w.CR().GetAnnotations(); ann["kubectl-cassandra.io/checkpoint"] != "" || ann["kubectl-cassandra.io/last-operation"] == "" {
		t.Errorf("%s: checkpoint left or no last operation: %v", label, ann)
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("%s: violations %v", label, v)
	}
}

// statusWrites lists how the status was written: "status" for the /status subresource,
// "main" for a merge patch of the main resource carrying status.
func statusWrites(w *world.World) []string {
	var out []string
	for _, a := range w.Dyn.Actions() {
		p, ok := a.(k8stesting.PatchAction)
		if !ok {
			continue
		}
		var body map[string]any
		_ = json.Unmarshal(p.GetPatch(), &body)
		if _, ok := body["status"]; !ok {
			continue
		}
		if p.GetSubresource() == "status" {
			out = append(out, "status")
		} else {
			out = append(out, "main")
		}
	}
	return out
}

var stuckStates = []string{"ongoing-pod-gone", "finalizing-not-shrunk", "todo-decommissioned", "todo-leaving", "todo-shrunk"}

// TestRepairOperatorState repairs each stuck state against both CRDs: the 2026 one with
// a status subresource (the status goes through /status) and the 2022 one without (a
// merge patch of the main resource).
func TestRepairOperatorState(t *testing.T) {
	for _, state := range stuckStates {
		for _, sub := range []bool{true, false} {
			name := fmt.Sprintf("%s/subresource=%v", state, sub)
			t.Run(name, func(t *testing.T) {
				w := stuckWorld(t, state, sub)
				before := snapshot(t, w)
				stdout, stderr, code, _ := run(w, 0, "repair-operator-state", "demo", "-n", "cassandra", "--dry-run")
				if code != 0 || snapshot(t, w) != before || !strings.Contains(stdout, "Found (verified against the cluster):") {
					t.Fatalf("dry run: exit %d\n%s\n%s", code, stdout, stderr)
				}
				how := "merge patch of the CassandraCluster"
				if sub {
					how = "/status subresource"
				}
				if !strings.Contains(stdout, how) {
					t.Fatalf("dry run does not say the status goes through the %s:\n%s", how, stdout)
				}
				stdout, stderr, code, _ = run(w, 0, repairArgs...)
				if code != 0 {
					t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
				}
				assertRepaired(t, w, name)
				want := "main"
				if sub {
					want = "status"
				}
				if got := statusWrites(w); len(got) != 1 || got[0] != want {
					t.Fatalf("status writes %v, want one through %s", got, want)
				}
				// Nothing stuck any more.
				stdout, _, code, _ = run(w, 0, repairArgs...)
				if code != 0 || !strings.Contains(stdout, "shows no stuck decommission") {
					t.Fatalf("second run: %d\n%s", code, stdout)
				}
			})
		}
	}
}

// TestRepairRefusesUnverified: what the real world does not confirm is not repaired,
// and nothing changes.
func TestRepairRefusesUnverified(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, w *world.World)
		msg   string
	}{
		{"pod gone but node in the ring", func(t *testing.T, w *world.World) {
			w.SetReplicas("rack1", 2) // pod removed before any decommission
			w.SetCRStatus(casskopStatus(w, "Ongoing", []string{stuckPod}))
		}, "is still in the ring"},
		{"finalizing but node normal", func(t *testing.T, w *world.World) {
			w.SetCRStatus(casskopStatus(w, "Finalizing", []string{stuckPod}))
		}, "is NORMAL, not DECOMMISSIONED"},
		{"claim used by a pod", func(t *testing.T, w *world.World) {
			var out, errb strings.Builder
			_ = w.Cass.Run(context.Background(), stuckPod, []string{"decommission"}, &out, &errb)
			w.SetReplicas("rack1", 2)
			w.SetCRStatus(casskopStatus(w, "Ongoing", []string{stuckPod}))
			w.MountClaim("demo-dc1-rack1-0", "data-"+stuckPod)
		}, "PVC data-demo-dc1-rack1-2 is used by pod demo-dc1-rack1-0"},
		{"no node record", func(t *testing.T, w *world.World) {
			var out, errb strings.Builder
			_ = w.Cass.Run(context.Background(), stuckPod, []string{"decommission"}, &out, &errb)
			w.SetReplicas("rack1", 2)
			st := casskopStatus(w, "Ongoing", []string{stuckPod})
			delete(st, "cassandraNodeStatus")
			w.SetCRStatus(st)
		}, "does not say which node it was"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := world.New(t, world.Opts{Nodes: 3, Operator: true})
			w.SetNodesPerRack(2)
			tc.setup(t, w)
			before := snapshot(t, w)
			_, stderr, code, _ := run(w, 0, repairArgs...)
			if code != operation.ExitRefused || !strings.Contains(stderr, tc.msg) || !strings.Contains(stderr, "nothing changed") {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if w.SideEffects() != 0 || snapshot(t, w) != before {
				t.Fatal("something changed")
			}
		})
	}
	// Not stuck: CassKop is working on it (pod exists, Ongoing).
	w := world.New(t, world.Opts{Nodes: 3})
	w.SetCRStatus(casskopStatus(w, "Ongoing", []string{stuckPod}))
	stdout, _, code, _ := run(w, 0, repairArgs...)
	if code != 0 || !strings.Contains(stdout, "CassKop is decommissioning demo-dc1-rack1-2") || w.SideEffects() != 0 {
		t.Fatalf("not stuck: %d\n%s", code, stdout)
	}
}

// TestRepairCrashMatrix kills the repair after every API write and nodetool exec with a
// side effect, then resumes (once crashed again, then cleanly): every case ends
// repaired, with the node decommissioned once and the status written once.
func TestRepairCrashMatrix(t *testing.T) {
	total := 0
	for _, state := range []string{"ongoing-pod-gone", "finalizing-not-shrunk", "todo-decommissioned"} {
		for _, sub := range []bool{true, false} {
			ref := stuckWorld(t, state, sub)
			if _, stderr, code, _ := run(ref, 0, repairArgs...); code != 0 {
				t.Fatalf("%s reference: %d\n%s", state, code, stderr)
			}
			points := ref.SideEffects()
			for k := 1; k <= points; k++ {
				label := fmt.Sprintf("%s/sub=%v crash %d/%d", state, sub, k, points)
				w := stuckWorld(t, state, sub)
				if _, stderr, _, crashed := run(w, k, repairArgs...); !crashed {
					t.Fatalf("%s: not reached\n%s", label, stderr)
				}
				second := 1 + (k*7)%5
				if _, stderr, code, crashed := run(w, second, "resume", "demo", "-n", "cassandra", "--yes"); !crashed && code != 0 {
					t.Fatalf("%s: resume (crash at %d) exited %d\n%s", label, second, code, stderr)
				}
				if _, stderr, code, crashed := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); crashed || code != 0 {
					t.Fatalf("%s: final resume exited %d\n%s", label, code, stderr)
				}
				assertRepaired(t, w, label)
				if got := statusWrites(w); len(got) != 1 {
					t.Errorf("%s: %d status writes, want 1", label, len(got))
				}
				total++
			}
		}
	}
	t.Logf("repair crash matrix: %d crash points, all repaired", total)
}

var _ = unstructured.Unstructured{}
