package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

var scale41 = []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--yes"}
var resume = []string{"resume", "demo", "-n", "cassandra", "--yes"}

func loadCP(t *testing.T, w *world.World) *record.Checkpoint {
	t.Helper()
	v, ok := w.CR().GetAnnotations()[checkpoint.Annotation]
	if !ok {
		return nil
	}
	cp, err := checkpoint.Decode(v, "", testKinds())
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

func TestInterruptExitsFourAndResumeFinishes(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3})
	ctx, cancel := context.WithCancel(context.Background())
	w.OnSideEffect = func(n int) {
		if n == 6 {
			cancel() // Ctrl-C right after the 6th write
		}
	}
	_, stderr, code, _ := runCtx(ctx, w, 0, scale41...)
	w.OnSideEffect = nil
	if code != exit.Interrupted {
		t.Fatalf("exit %d, want 4\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "interrupted during ") || !strings.Contains(stderr, "run: kubectl cassandra resume -n cassandra demo") {
		t.Fatalf("no resume hint:\n%s", stderr)
	}
	cp := loadCP(t, w)
	if cp == nil || cp.Holder.ReleasedAt == nil {
		t.Fatalf("checkpoint missing or not released: %+v", cp)
	}
	_, stderr, code, _ = run(w, 0, resume...)
	if code != 0 {
		t.Fatalf("resume exit %d\n%s", code, stderr)
	}
	w.AssertConverged(1, "after interrupt")
}

func TestDryRunChangesNothing(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Operator: true})
	before := snapshot(t, w)
	stdout, stderr, code, _ := run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--dry-run", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if w.SideEffects() != 0 || snapshot(t, w) != before {
		t.Fatal("dry run changed something")
	}
	var plan planReport
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if !plan.DryRun || len(plan.Nodes) != 2 || plan.Nodes[0].Pod != "demo-dc1-rack1-2" || plan.Steps[0].Kind != record.StepPauseOperator ||
		plan.Steps[len(plan.Steps)-1].Kind != record.StepResumeOperator || !strings.HasPrefix(plan.Next, "kubectl cassandra scale") {
		t.Fatalf("unexpected plan: %+v", plan)
	}
}

func TestTenConcurrentRunsOneActs(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3})
	var wg sync.WaitGroup
	codes := make([]int, 10)
	errs := make([]string, 10)
	for i := range codes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			args := scale41
			if i%2 == 1 {
				args = resume
			}
			_, errs[i], codes[i], _ = run(w, 0, args...)
		}(i)
	}
	wg.Wait()
	acted := 0
	for i, c := range codes {
		switch c {
		case 0:
			if !strings.Contains(errs[i], "[..] decommission") && !strings.Contains(errs[i], "nothing") && errs[i] != "" {
				// a resume that found nothing, or the run that acted
			}
			if strings.Contains(errs[i], "[..] decommission") {
				acted++
			}
		case operation.ExitRefused:
		default:
			t.Errorf("run %d: exit %d\n%s", i, c, errs[i])
		}
	}
	if acted != 1 {
		t.Fatalf("%d runs decommissioned, want exactly 1\n%s", acted, strings.Join(errs, "\n----\n"))
	}
	w.AssertConverged(1, "ten concurrent runs")
}

func TestLockRules(t *testing.T) {
	// A crashed run on this host: its process is gone, resume takes over at once.
	w := world.New(t, world.Opts{Nodes: 2})
	if _, _, _, crashed := run(w, 3, scale41...); !crashed {
		t.Fatal("no crash")
	}
	if _, stderr, code, _ := run(w, 0, resume...); code != 0 {
		t.Fatalf("resume after crash: %d\n%s", code, stderr)
	}
	// The takeover is recorded in the last checkpoint write before it was cleared: check it
	// on a crashed resume instead.
	w = world.New(t, world.Opts{Nodes: 2})
	run(w, 3, scale41...)
	run(w, 1, resume...)
	cp := loadCP(t, w)
	if cp == nil || len(cp.Takeovers) != 1 || !strings.Contains(cp.Takeovers[0].Reason, "is gone") {
		t.Fatalf("takeover not recorded: %+v", cp)
	}

	// A holder on another host with a running lease: --force-takeover takes it at once.
	w = world.New(t, world.Opts{Nodes: 2})
	run(w, 3, scale41...)
	cp = loadCP(t, w)
	now := time.Now().UTC()
	cp.Holder = record.Holder{Host: "laptop", PID: 42, Session: "x", LeaseSeconds: 3600, RenewedAt: &now}
	b, _ := json.Marshal(cp)
	setAnnotation(t, w, checkpoint.Annotation, string(b))
	_, stderr, code, _ := run(w, 0, append(resume, "--force-takeover")...)
	if code != 0 {
		t.Fatalf("force takeover: %d\n%s", code, stderr)
	}
	w.AssertConverged(1, "force takeover")

	// A holder on another host whose lease expired: taken over without a flag.
	w = world.New(t, world.Opts{Nodes: 2})
	run(w, 3, scale41...)
	cp = loadCP(t, w)
	old := time.Now().UTC().Add(-time.Hour)
	cp.Holder = record.Holder{Host: "laptop", PID: 42, Session: "x", LeaseSeconds: 60, RenewedAt: &old}
	cp.UpdatedAt = old
	b, _ = json.Marshal(cp)
	setAnnotation(t, w, checkpoint.Annotation, string(b))
	if _, stderr, code, _ := run(w, 0, resume...); code != 0 || !strings.Contains(stderr, "[OK]") {
		t.Fatalf("expired lease: %d\n%s", code, stderr)
	}
	w.AssertConverged(1, "expired lease")

	// A live process on this host: refused, nothing changed.
	w = world.New(t, world.Opts{Nodes: 2})
	run(w, 3, scale41...)
	cp = loadCP(t, w)
	pid := w.StartProcess()
	cp.Holder = record.Holder{Host: "test-host", PID: pid, Session: "live", LeaseSeconds: 60}
	b, _ = json.Marshal(cp)
	setAnnotation(t, w, checkpoint.Annotation, string(b))
	before := snapshot(t, w)
	_, stderr, code, _ = run(w, 0, resume...)
	if code != operation.ExitRefused || !strings.Contains(stderr, fmt.Sprintf("(pid %d) (a live process on this host)", pid)) || snapshot(t, w) != before {
		t.Fatalf("live holder: %d\n%s", code, stderr)
	}
}

func TestAbort(t *testing.T) {
	// Before any node started leaving: the operator is restored, the checkpoint cleared.
	var w *world.World
	for k := 1; ; k++ { // crash right after the write that paused the operator
		w = world.New(t, world.Opts{Nodes: 3, Operator: true})
		if _, _, _, crashed := run(w, k, scale41...); !crashed || k > 10 {
			t.Fatal("the operator was never paused")
		}
		if w.DeploymentReplicas("casskop") == 0 {
			break
		}
	}
	stdout, stderr, code, _ := run(w, 0, "abort", "demo", "-n", "cassandra", "--yes")
	if code != 0 || !strings.Contains(stdout, "Aborted operation") {
		t.Fatalf("abort: %d\n%s\n%s", code, stdout, stderr)
	}
	if loadCP(t, w) != nil || w.DeploymentReplicas("casskop") != 1 || len(w.PodNames()) != 4 {
		t.Fatalf("abort left: checkpoint %v, operator %d, pods %v", loadCP(t, w) != nil, w.DeploymentReplicas("casskop"), w.PodNames())
	}
	if !strings.Contains(w.CR().GetAnnotations()[checkpoint.LastOperationAnnotation], `"result":"aborted"`) {
		t.Fatal("no aborted record")
	}
	// Once a decommission started, abort finishes that node's removal, then stops.
	w = world.New(t, world.Opts{Nodes: 3})
	run(w, 3, scale41...)
	stdout, stderr, code, _ = run(w, 0, "abort", "demo", "-n", "cassandra", "--yes")
	if code != 0 || !strings.Contains(stderr, "abort first finishes removing it") || !strings.Contains(stdout, "aborted after removing 1 of 2 nodes") {
		t.Fatalf("abort after decommission: %d\n%s\n%s", code, stdout, stderr)
	}
	w.AssertConsistentAt(2, "abort after a decommission started")
}

func TestCassandraFaults(t *testing.T) {
	t.Run("rf refusal", func(t *testing.T) {
		w := world.New(t, world.Opts{Nodes: 3})
		_ = w.Cass.SetFault("demo-dc1-rack1-2", sim.Fault{RefuseRF: true})
		_, stderr, code, _ := run(w, 0, scale41...)
		if code != operation.ExitRefused || !strings.Contains(stderr, "Not enough live nodes to maintain replication factor") || !strings.Contains(stderr, "then run: kubectl cassandra resume") {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if n, _ := w.Cass.Node("demo-dc1-rack1-2"); n.DecommissionsStarted != 0 || len(w.PodNames()) != 3 {
			t.Fatal("something was removed")
		}
		_ = w.Cass.SetFault("demo-dc1-rack1-2", sim.Fault{})
		if _, stderr, code, _ := run(w, 0, resume...); code != 0 {
			t.Fatalf("resume after fixing: %d\n%s", code, stderr)
		}
		w.AssertConverged(1, "rf refusal then fixed")
	})
	t.Run("stream failure retried", func(t *testing.T) {
		w := world.New(t, world.Opts{Nodes: 2, DecommissionTime: 40 * time.Millisecond})
		_ = w.Cass.SetFault("demo-dc1-rack1-1", sim.Fault{StreamFailures: 1})
		_, stderr, code, _ := run(w, 0, scale41...)
		if code != 0 || !strings.Contains(stderr, "Stream failed") {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		n, _ := w.Cass.Node("demo-dc1-rack1-1")
		if n.DecommissionsStarted != 2 {
			t.Fatalf("decommissions started %d, want 2 (failed + retry)", n.DecommissionsStarted)
		}
	})
	t.Run("node restarted mid-decommission", func(t *testing.T) {
		// The decommission is held streaming until the node is restarted under it, so
		// the restart cannot miss its window, then released for the retry.
		w := world.New(t, world.Opts{Nodes: 2})
		if err := w.Cass.SetFault("demo-dc1-rack1-1", sim.Fault{HoldStreaming: true}); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			// Released in any case, so that a run that never got there cannot hang.
			defer func() { _ = w.Cass.UpdateFault("demo-dc1-rack1-1", func(f *sim.Fault) { f.HoldStreaming = false }) }()
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); <-time.After(time.Millisecond) {
				if n, _ := w.Cass.Node("demo-dc1-rack1-1"); n.Mode == sim.ModeLeaving {
					_ = w.Cass.Restart("demo-dc1-rack1-1")
					return
				}
			}
		}()
		_, stderr, code, _ := run(w, 0, scale41...)
		<-done
		if code != 0 || !strings.Contains(stderr, "is still NORMAL after the decommission call") {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if n, _ := w.Cass.Node("demo-dc1-rack1-1"); n.DecommissionsStarted != 2 || !n.Left {
			t.Fatalf("node: %+v", n)
		}
	})
	t.Run("empty ring is not left", func(t *testing.T) {
		w := world.New(t, world.Opts{Nodes: 2})
		// Decommission happens, then the remaining node's ring reads come back empty: the
		// run must wait (never shrink), and proceed once the ring is readable again, which
		// it is once the run said it waits for it (not after a sleep).
		w.OnSideEffect = func(n int) {
			if n == 3 { // right after the decommission exec
				_ = w.Cass.SetFault("demo-dc1-rack1-0", sim.Fault{EmptyRing: true})
			}
		}
		_, stderr, code := runOnStderr(w, []string{"nodetool printed no ring", "ring unreadable"}, func() {
			_ = w.Cass.SetFault("demo-dc1-rack1-0", sim.Fault{})
		}, scale41...)
		w.OnSideEffect = nil
		if code != 0 || !strings.Contains(stderr, "nodetool printed no ring") && !strings.Contains(stderr, "ring unreadable") {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		w.AssertConverged(1, "empty ring")
	})
}

func TestForceSkipsReplicationCheck(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2, RF: 2})
	stdout, stderr, code, _ := run(w, 0, append(scale41, "--force")...)
	if code != 0 || !strings.Contains(stdout, "--force skips Cassandra's replication check") || !strings.Contains(stdout, "nodetool decommission --force") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	w.AssertConverged(1, "forced")
}
