package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/restart"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaleup"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

var (
	scaleUp3   = []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "3", "--cleanup", "--yes"}
	restartR1  = []string{"restart", "demo", "-n", "cassandra", "--rack", "rack1", "--yes"}
	statusDemo = []string{"status", "demo", "-n", "cassandra"}
)

// TestStatusShowsEveryKind: status names the operation in flight, whatever its kind,
// in text and JSON.
func TestStatusShowsEveryKind(t *testing.T) {
	cases := []struct {
		name  string
		opts  world.Opts
		setup func(t *testing.T, w *world.World)
		kind  string
		text  string
	}{
		{"scale-up", world.Opts{Nodes: 1}, func(t *testing.T, w *world.World) { run(w, 4, scaleUp3...) }, scaleup.Name, "datacenter dc1 racks rack1 -> 3 nodes, step"},
		{"restart", world.Opts{Nodes: 3}, func(t *testing.T, w *world.World) { run(w, 4, restartR1...) }, restart.Kind{}.Info().Name, "datacenter dc1 racks rack1, rolling restart, step"},
		{"repair", world.Opts{}, nil, repair.Name, "datacenter dc1 racks rack1, repair of CassKop's stuck status, step"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w *world.World
			if tc.kind == repair.Name {
				w = stuckWorld(t, "ongoing-pod-gone", true)
				run(w, 4, repairArgs...)
			} else {
				w = world.New(t, tc.opts)
				tc.setup(t, w)
			}
			cp := loadCP(t, w)
			if cp == nil || cp.Kind != tc.kind || cp.SchemaVersion != 2 {
				t.Fatalf("checkpoint %+v", cp)
			}
			stdout, _, code, _ := run(w, 0, statusDemo...)
			if code != 0 || !strings.Contains(stdout, tc.kind+" "+cp.OperationID+", "+tc.text) || !strings.Contains(stdout, "Next: kubectl cassandra resume -n cassandra demo") {
				t.Fatalf("status:\n%s", stdout)
			}
			stdout, _, _, _ = run(w, 0, append(statusDemo, "-o", "json")...)
			var rep struct {
				Operation struct{ Kind, ID string } `json:"operation"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Operation.Kind != tc.kind || rep.Operation.ID != cp.OperationID {
				t.Fatalf("status JSON %v:\n%s", err, stdout)
			}
			if _, stderr, code, _ := run(w, 0, resume...); code != 0 {
				t.Fatalf("resume: %d\n%s", code, stderr)
			}
		})
	}
}

func TestAbortOtherKinds(t *testing.T) {
	// A scale-up whose only change is the paused operator: aborted, operator restored.
	w := world.New(t, world.Opts{Nodes: 1, Operator: true})
	for k := 1; ; k++ {
		w = world.New(t, world.Opts{Nodes: 1, Operator: true})
		if _, _, _, crashed := run(w, k, scaleUp3...); !crashed || k > 10 {
			t.Fatal("the operator was never paused")
		}
		if w.DeploymentReplicas("casskop") == 0 {
			break
		}
	}
	stdout, stderr, code, _ := run(w, 0, "abort", "demo", "-n", "cassandra", "--yes")
	if code != 0 || !strings.Contains(stdout, "Aborted operation") || !strings.Contains(stderr, "nothing in the cluster was changed yet") {
		t.Fatalf("abort: %d\n%s\n%s", code, stdout, stderr)
	}
	if loadCP(t, w) != nil || w.DeploymentReplicas("casskop") != 1 || w.Replicas("rack1") != 1 {
		t.Fatal("abort did not restore everything")
	}
	// A restart that drained a node: refused, resume finishes it.
	w = world.New(t, world.Opts{Nodes: 3})
	before := podUIDs(w, rack1Pods)
	for k := 1; ; k++ {
		w = world.New(t, world.Opts{Nodes: 3})
		before = podUIDs(w, rack1Pods)
		run(w, k, restartR1...)
		if nv, _ := w.Cass.Node("demo-dc1-rack1-2"); nv.Drains == 1 || k > 10 {
			break
		}
	}
	_, stderr, code, _ = run(w, 0, "abort", "demo", "-n", "cassandra", "--yes")
	if code != operation.ExitRefused || !strings.Contains(stderr, "resume finishes it") && !strings.Contains(stderr, "is DRAINED: resume restarts it") {
		t.Fatalf("abort of a started restart: %d\n%s", code, stderr)
	}
	if _, stderr, code, _ := run(w, 0, resume...); code != 0 {
		t.Fatalf("resume: %d\n%s", code, stderr)
	}
	w.AssertRestarted(rack1Pods, before, "after refused abort")
}

// TestSameCommandResumesOtherKinds: running the same scale-up or restart again after a
// crash resumes it; another operation is refused with a pointer to resume.
func TestSameCommandResumesOtherKinds(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 1})
	if _, _, _, crashed := run(w, 5, scaleUp3...); !crashed {
		t.Fatal("no crash")
	}
	_, stderr, code, _ := run(w, 0, restartR1...)
	if code != operation.ExitRefused || !strings.Contains(stderr, "(scale-up, datacenter dc1 racks rack1 -> 3 nodes") || !strings.Contains(stderr, "kubectl cassandra resume -n cassandra demo") {
		t.Fatalf("restart during a scale-up: %d\n%s", code, stderr)
	}
	_, stderr, code, _ = run(w, 0, scaleUp3...)
	if code != 0 || !strings.Contains(stderr, "resuming it") {
		t.Fatalf("same scale-up: %d\n%s", code, stderr)
	}
	w.AssertScaledUp(3, "same scale-up again")

	w = world.New(t, world.Opts{Nodes: 3})
	before := podUIDs(w, rack1Pods)
	if _, _, _, crashed := run(w, 6, restartR1...); !crashed {
		t.Fatal("no crash")
	}
	_, stderr, code, _ = run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "3", "--yes")
	if code != operation.ExitRefused || !strings.Contains(stderr, "rolling restart") {
		t.Fatalf("scale during a restart: %d\n%s", code, stderr)
	}
	_, stderr, code, _ = run(w, 0, restartR1...)
	if code != 0 || !strings.Contains(stderr, "resuming it") {
		t.Fatalf("same restart: %d\n%s", code, stderr)
	}
	w.AssertRestarted(rack1Pods, before, "same restart again")
}

// TestInterruptRestart: Ctrl-C in the middle of a rack exits 4 with the checkpoint
// saved; resume finishes the rack without restarting a pod twice.
func TestInterruptRestart(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, StartTime: 5 * time.Millisecond})
	before := podUIDs(w, rack1Pods)
	ctx, cancel := context.WithCancel(context.Background())
	w.OnSideEffect = func(n int) {
		if n == 12 {
			cancel()
		}
	}
	_, stderr, code, _ := runCtx(ctx, w, 0, restartR1...)
	w.OnSideEffect = nil
	if code != exit.Interrupted || !strings.Contains(stderr, "run: kubectl cassandra resume -n cassandra demo") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if cp := loadCP(t, w); cp == nil || cp.Holder.ReleasedAt == nil {
		t.Fatalf("checkpoint missing or not released: %+v", cp)
	}
	if _, stderr, code, _ := run(w, 0, resume...); code != 0 {
		t.Fatalf("resume: %d\n%s", code, stderr)
	}
	w.AssertRestarted(rack1Pods, before, "interrupted restart")
}

// TestScaleUpStuckJoinReported: a node that does not finish joining is reported, after
// --stall-after, with where it is stuck and what to check; the run keeps waiting (here
// until interrupted, as soon as the report is written: no wall-clock deadline); once the
// node joins, resume finishes.
func TestScaleUpStuckJoinReported(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 1, JoinTime: time.Millisecond, JoinFails: []string{"demo-dc1-rack1-1"}})
	_, stderr, code := runUntilStderr(w, "still waiting after", "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--yes", "--stall-after", "20ms")
	if code != exit.Interrupted || !strings.Contains(stderr, "still waiting after") || !strings.Contains(stderr, "node demo-dc1-rack1-1 is UJ: joining") ||
		!strings.Contains(stderr, "kubectl logs -n cassandra demo-dc1-rack1-1 -c cassandra") || !strings.Contains(stderr, "kubectl cassandra resume -n cassandra demo") {
		t.Fatalf("stuck join: %d\n%s", code, stderr)
	}
	if err := w.Cass.UpdateFault("demo-dc1-rack1-1", func(f *sim.Fault) { f.JoinFails = false }); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code, _ := run(w, 0, resume...); code != 0 {
		t.Fatalf("resume: %d\n%s", code, stderr)
	}
	w.AssertScaledUp(2, "after the join completed")
}
