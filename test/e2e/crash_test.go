package e2e

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// killWhen SIGKILLs p as soon as the checkpoint shows a step matching pred (the kill is
// sent from the watch callback, milliseconds after the plugin wrote the step). It returns
// the step, or ok=false if the process ended first (its result is then in p.Wait).
func killWhen(t *testing.T, p *Proc, cl *fixture.Cluster, pred func(Step) bool) (Step, bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	found := make(chan Step, 1)
	go func() {
		_ = watchCR(ctx, cl, opTimeout, func(cr *unstructured.Unstructured) bool {
			cp, ok, err := parseCheckpoint(cr)
			if err != nil || !ok {
				return false
			}
			for _, s := range cp.Steps {
				if pred(s) {
					_ = p.cmd.Process.Signal(syscall.SIGKILL)
					found <- s
					return true
				}
			}
			return false
		})
	}()
	select {
	case s := <-found:
		p.Wait(t, 30*time.Second)
		return s, true
	case <-p.Done():
		return Step{}, false
	case <-time.After(opTimeout):
		t.Fatalf("no matching step within %s; plugin stderr so far:\n%s", opTimeout, p.Stderr())
		return Step{}, false
	}
}

// startedKind matches a step of the given kind in state "started"; with pod != "" only
// that pod's step.
func startedKind(kind, pod string) func(Step) bool {
	return func(s Step) bool {
		return s.Kind == kind && s.State == "started" && (pod == "" || s.Pod == pod)
	}
}

// crashThenResume SIGKILLs a 4->1 scale-down when trigger matches, then resumes it and
// checks that it converged without deleting a live pod's PVC or decommissioning twice.
func crashThenResume(t *testing.T, crd *fixture.CRDInfo, label string, trigger func(p *Proc, cl *fixture.Cluster) (string, bool)) {
	converged := false
	summary.track(t, &converged)
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(4), LogsStorage: true})
	g := newPVCGuard(t, ns)
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	at, killed := trigger(p, cl)
	if !killed {
		r := p.Wait(t, opTimeout)
		t.Fatalf("the plugin ended before the crash point (%s):\n%s", label, r)
	}
	summary.crash(label)
	cp, hasCP := readCheckpoint(t, cl)
	t.Logf("SIGKILL at %s; checkpoint present: %v", at, hasCP)
	if hasCP {
		assert.Equal(t, string(cl.UID), cp.ClusterUID, "checkpoint tied to the CR's UID")
		resume(t, cl)
	} else {
		// The kill landed after the plugin finished (possible only at the very end).
		t.Logf("the crash landed after the checkpoint was removed; nothing to resume")
	}
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 4, to: 1})
	converged = !t.Failed()
}

// testCrashEachStepKind crashes a 4->1 scale-down once in every step kind, each time in
// a fresh cluster, at the moment the checkpoint says the step started. The pod whose step
// triggers the crash varies (first, second, third node removed) so that the crash does
// not always hit the same position of the plan.
func testCrashEachStepKind(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
	for i, kind := range stepKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			pod := ""
			if kind != "update-cluster" {
				pod = fixture.PodName("cassandra-e2e", "dc1", "rack1", 3-i%3)
			}
			crashThenResume(t, crd, kind, func(p *Proc, cl *fixture.Cluster) (string, bool) {
				s, ok := killWhen(t, p, cl, startedKind(kind, pod))
				return s.ID, ok
			})
		})
	}
}

// testCrashRandomMoments crashes 4->1 scale-downs after random delays, wherever the
// plugin happens to be. KCASS_E2E_SEED replays a run.
func testCrashRandomMoments(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("KCASS_E2E_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		seed = v
	}
	t.Logf("random crash seed: %d (KCASS_E2E_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for i := range 3 {
		// A 4->1 run lasts ~3 x (decommission 1 s + a few API round trips).
		delay := 300*time.Millisecond + time.Duration(rng.Int64N(int64(6*time.Second)))
		t.Run("delay-"+strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			crashThenResume(t, crd, "random", func(p *Proc, cl *fixture.Cluster) (string, bool) {
				// The crash moment is the point of the test, not a wait for a state.
				timer := time.NewTimer(delay)
				defer timer.Stop()
				select {
				case <-timer.C:
				case <-p.Done():
					return "", false
				}
				at := "before any step"
				if cp, ok := readCheckpoint(t, cl); ok {
					if s, ok := cp.Started(); ok {
						at = s.ID
					}
				}
				_ = p.cmd.Process.Signal(syscall.SIGKILL)
				p.Wait(t, 30*time.Second)
				return "random " + delay.Round(time.Millisecond).String() + " (~" + at + ")", true
			})
		})
	}
}

// testCrashChain crashes one 4->1 scale-down over and over: the scale is killed in its
// first decommission, then each resume is killed in the next step kind, until a resume
// finishes. Resume must pick up from any checkpoint, including one left by a resume.
func testCrashChain(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
	converged := false
	summary.track(t, &converged)
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(4)})
	g := newPVCGuard(t, ns)
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	crashes := 0
	for i, kind := range append(stepKinds[:len(stepKinds):len(stepKinds)], "decommission", "verify-left") {
		s, killed := killWhen(t, p, cl, startedKind(kind, ""))
		if !killed {
			r := p.Wait(t, time.Minute)
			require.Equal(t, exitOK, r.Code, "run %d ended before reaching %s:\n%s", i, kind, r)
			t.Logf("run %d finished before reaching %s", i, kind)
			break
		}
		crashes++
		summary.crash(kind)
		t.Logf("crash %d: SIGKILL at %s", crashes, s.ID)
		if _, ok := readCheckpoint(t, cl); !ok {
			break
		}
		summary.resumed()
		p = startCassandra(t, ns, resumeArgs(cl)...)
	}
	if !p.Exited() {
		r := p.Wait(t, opTimeout)
		require.Equal(t, exitOK, r.Code, "last resume:\n%s", r)
	}
	if _, ok := readCheckpoint(t, cl); ok {
		resume(t, cl)
	}
	assert.GreaterOrEqual(t, crashes, 4, "the chain injected crashes in most step kinds")
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 4, to: 1})
	converged = !t.Failed()
}

// testSIGINTThenResume: Ctrl-C in the middle of a scale-down exits 4 with the resume
// command on stderr and the checkpoint kept; that command then finishes the job.
func testSIGINTThenResume(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
	converged := false
	summary.track(t, &converged)
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(4)})
	g := newPVCGuard(t, ns)
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	second := fixture.PodName(cl.Name, "dc1", "rack1", 2)
	var sent atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = watchCR(ctx, cl, opTimeout, func(cr *unstructured.Unstructured) bool {
			cp, ok, _ := parseCheckpoint(cr)
			if !ok {
				return false
			}
			for _, s := range cp.Steps {
				if startedKind("decommission", second)(s) {
					sent.Store(true)
					_ = p.cmd.Process.Signal(syscall.SIGINT)
					return true
				}
			}
			return false
		})
	}()
	r := p.Wait(t, opTimeout)
	require.True(t, sent.Load(), "the run ended before the second decommission:\n%s", r)
	assert.Equal(t, exitInterrupted, r.Code, "%s", r)
	assert.Contains(t, r.Stderr, "interrupted during", "%s", r)
	assert.Contains(t, r.Stderr, "kubectl cassandra resume -n "+ns+" "+cl.Name, "%s", r)
	cp, ok := readCheckpoint(t, cl)
	require.True(t, ok, "checkpoint kept after an interruption")
	t.Logf("interrupted with checkpoint %s", cp.OperationID)
	resume(t, cl)
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 4, to: 1})
	converged = !t.Failed()
}
