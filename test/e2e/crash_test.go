package e2e

import (
	"context"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

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
					found <- s // before the kill: whoever sees p end also sees s
					_ = p.cmd.Process.Signal(syscall.SIGKILL)
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
		// Our own SIGKILL also ends p: both cases can be ready at once.
		select {
		case s := <-found:
			return s, true
		default:
			return Step{}, false
		}
	case <-time.After(opTimeout):
		t.Fatalf("no matching step within %s; plugin stderr so far:\n%s", opTimeout, p.Stderr())
		return Step{}, false
	}
}

// evidentKinds are the step kinds the engine records "started" in memory only (their
// effect is visible in the world, or they do not act): the checkpoint shows them started
// only when a later write carries it. A run is in one of them when its progress output
// says so.
var evidentKinds = map[string]bool{"verify-left": true, "shrink-statefulset": true, "wait-pod-gone": true, "delete-pvcs": true, "update-cluster": true}

// startedLine matches the progress line the plugin prints when it starts a step of kind
// (on pod, or on any pod when pod is ""): "[..] <the step's description>".
func startedLine(kind, pod string) func(line string) bool {
	anyPod := `\S+`
	if pod != "" {
		anyPod = regexp.QuoteMeta(pod)
	}
	var re string
	switch kind {
	case "verify-left":
		re = `verify ` + anyPod + ` left the ring`
	case "shrink-statefulset":
		if pod == "" {
			re = `shrink StatefulSet \S+ to \d+ replicas`
		} else {
			i := strings.LastIndex(pod, "-")
			re = `shrink StatefulSet ` + regexp.QuoteMeta(pod[:i]) + ` to ` + pod[i+1:] + ` replicas`
		}
	case "wait-pod-gone":
		re = `wait until pod ` + anyPod + ` is gone`
	case "delete-pvcs":
		re = `delete (PVC \S*` + anyPod + `|the PVCs of ` + anyPod + `)`
	case "update-cluster":
		re = `set \S+ nodesPerRacks of datacenter \S+ to \d+`
	default:
		panic("no progress line known for step kind " + kind)
	}
	rx := regexp.MustCompile(`\[\.\.\] ` + re)
	return func(line string) bool { return rx.MatchString(line) }
}

// killAtStart SIGKILLs p as soon as it starts a step of kind (on pod, or any pod): for
// the steps written "started" before they act, when the checkpoint shows it; for the
// evident ones, when the progress output shows it (the kill then lands right before or
// right after the step's action).
func killAtStart(t *testing.T, p *Proc, cl *fixture.Cluster, kind, pod string) (Step, bool) {
	t.Helper()
	if !evidentKinds[kind] {
		return killWhen(t, p, cl, startedKind(kind, pod))
	}
	match := startedLine(kind, pod)
	deadline := time.After(opTimeout)
	for {
		out, grew := p.stderr.changed()
		for _, line := range strings.Split(out, "\n") {
			if match(line) {
				_ = p.cmd.Process.Signal(syscall.SIGKILL)
				p.Wait(t, 30*time.Second)
				return Step{ID: kind + "/" + pod, Kind: kind, Pod: pod}, true
			}
		}
		select {
		case <-grew:
		case <-p.Done():
			// It may have printed the line and ended in the same instant.
			if slices.ContainsFunc(strings.Split(p.Stderr(), "\n"), match) {
				return Step{ID: kind + "/" + pod, Kind: kind, Pod: pod}, false
			}
			return Step{}, false
		case <-deadline:
			t.Fatalf("no %s started within %s; plugin stderr so far:\n%s", kind, opTimeout, p.Stderr())
			return Step{}, false
		}
	}
}

// killInDecommission SIGKILLs p while a node is really leaving: the checkpoint shows its
// decommission started and the simulated node is decommissioning (the nodetool call
// reached Cassandra). A crash right after "started" may come before the exec; this one
// cuts the exec, and the node goes on leaving without the plugin.
func killInDecommission(t *testing.T, p *Proc, cl *fixture.Cluster, pod string) (Step, bool) {
	t.Helper()
	var step Step
	found := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = watchCR(ctx, cl, opTimeout, func(cr *unstructured.Unstructured) bool {
			cp, ok, _ := parseCheckpoint(cr)
			if !ok {
				return false
			}
			for _, s := range cp.Steps {
				if startedKind("decommission", pod)(s) {
					step = s
					close(found)
					return true
				}
			}
			return false
		})
	}()
	select {
	case <-found:
	case <-p.Done():
		return Step{}, false
	case <-time.After(opTimeout):
		t.Fatalf("no decommission started within %s:\n%s", opTimeout, p.Stderr())
	}
	waitDecommissioning(t, cl, step.Pod, p)
	p.Kill(t)
	return step, true
}

// holdPod puts a finalizer on a pod so that, once deleted, it stays Terminating until the
// returned release is called (also called when the test ends, so that the namespace can
// go away).
func holdPod(t *testing.T, ns, pod string) (release func()) {
	t.Helper()
	pods := suite.clients.Kube.CoreV1().Pods(ns)
	_, err := pods.Patch(context.Background(), pod, types.MergePatchType, []byte(`{"metadata":{"finalizers":["kubectl-cassandra.io/e2e-hold"]}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	var once sync.Once
	release = func() {
		once.Do(func() {
			// The fixture's pods have no other finalizer: clearing the list is enough.
			_, err := pods.Patch(context.Background(), pod, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("releasing pod %s: %v", pod, err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// startedKind matches a step of the given kind in state "started"; with pod != "" only
// that pod's step.
func startedKind(kind, pod string) func(Step) bool {
	return func(s Step) bool {
		return s.Kind == kind && s.State == "started" && (pod == "" || s.Pod == pod)
	}
}

// crashCase is one crash of a 4->1 scale-down.
type crashCase struct {
	label string
	// operator runs a CassKop operator Deployment, which the plugin pauses and restores
	// (the plan then has pause-operator and resume-operator steps).
	operator bool
	// decommissionTime of the simulated nodes (default 1s).
	decommissionTime time.Duration
	// trigger waits for the crash point and SIGKILLs p; it returns where the crash hit,
	// or false if p ended first. It may run and kill intermediate resumes itself.
	trigger func(t *testing.T, p *Proc, cl *fixture.Cluster) (string, bool)
	// prepare runs before the scale-down starts, afterCrash before the resume.
	prepare, afterCrash func(t *testing.T, cl *fixture.Cluster)
}

// crashThenResume starts a 4->1 scale-down, crashes it at c.trigger, then resumes it and
// checks that it converged: no PVC of a live pod deleted, one decommission per node, the
// operator (if any) restored.
func crashThenResume(t *testing.T, crd *fixture.CRDInfo, c crashCase) {
	summary.track(t)
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(4), LogsStorage: true,
		Sim: fixture.SimOptions{DecommissionTime: c.decommissionTime}})
	var op *appsv1.Deployment
	if c.operator {
		op = startOperator(t, ns, crd)
	}
	g := newPVCGuard(t, ns)
	if c.prepare != nil {
		c.prepare(t, cl)
	}
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	at, killed := c.trigger(t, p, cl)
	if !killed {
		r := p.Wait(t, opTimeout)
		t.Fatalf("the plugin ended before the crash point (%s):\n%s", c.label, r)
	}
	summary.crash(c.label)
	if c.afterCrash != nil {
		c.afterCrash(t, cl)
	}
	cp, hasCP := readCheckpoint(t, cl)
	t.Logf("SIGKILL at %s; checkpoint present: %v", at, hasCP)
	if hasCP {
		assert.Equal(t, string(cl.UID), cp.ClusterUID, "checkpoint tied to the CR's UID")
		resume(t, cl)
	} else if cr, err := cl.Get(context.Background()); err == nil && lastOperation(t, cr) == nil {
		// The kill landed before the plan was written: nothing changed, so the user's
		// recovery is to run the same command again.
		t.Logf("the crash landed before the checkpoint was written; running the scale again")
		r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
		require.Equal(t, exitOK, r.Code, "%s", r)
	} else {
		// The kill landed after the plugin finished (possible only at the very end).
		t.Logf("the crash landed after the checkpoint was removed; nothing to resume")
	}
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 4, to: 1})
	if op != nil {
		assertOperatorRestored(t, ns, op.Name)
	}
	summary.markConverged(t)
}

// crashKinds are the step kinds crashed in, in plan order: with an operator running, the
// plan starts by pausing it and ends by restoring it.
var crashKinds = append(append([]string{"pause-operator"}, fixture.StepKinds...), "resume-operator")

// testCrashEachStepKind crashes a 4->1 scale-down once in every step kind, each time in a
// fresh cluster with a CassKop operator running, at the moment the checkpoint says the step
// started. The pod whose step triggers the crash varies (first, second, third node
// removed) so that the crash does not always hit the same position of the plan.
func testCrashEachStepKind(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
	for i, kind := range crashKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			pod := ""
			if slices.Contains(fixture.StepKinds[:5], kind) {
				pod = fixture.PodName("cassandra-e2e", "dc1", "rack1", 3-i%3)
			}
			c := crashCase{label: kind, operator: true}
			c.trigger = func(t *testing.T, p *Proc, cl *fixture.Cluster) (string, bool) {
				s, ok := killAtStart(t, p, cl, kind, pod)
				return s.ID, ok
			}
			if kind == "wait-pod-gone" {
				// kwok removes a deleted pod at once, so wait-pod-gone is usually already
				// true when first checked. A finalizer makes the pod linger as a real one
				// does for its grace period (CassKop gives Cassandra 1800 s).
				var release func()
				c.prepare = func(t *testing.T, cl *fixture.Cluster) { release = holdPod(t, cl.Namespace, pod) }
				c.afterCrash = func(*testing.T, *fixture.Cluster) { release() }
			}
			if kind == "verify-left" {
				// nodetool decommission blocks until the node is DECOMMISSIONED, so in a
				// smooth run verify-left is already true when it is first checked, and never
				// "started". It runs (and waits) when the decommission call ended early: crash
				// in the decommission, resume while the node is still LEAVING, crash that
				// resume in verify-left.
				c.decommissionTime = 4 * time.Second
				c.trigger = func(t *testing.T, p *Proc, cl *fixture.Cluster) (string, bool) {
					if _, ok := killInDecommission(t, p, cl, pod); !ok {
						return "", false
					}
					summary.crash("decommission")
					summary.resumed()
					p2 := startCassandra(t, cl.Namespace, resumeArgs(cl)...)
					s, ok := killAtStart(t, p2, cl, kind, pod)
					if !ok {
						r := p2.Wait(t, opTimeout)
						t.Fatalf("the resume ended before verify-left started:\n%s", r)
					}
					return s.ID, ok
				}
			}
			crashThenResume(t, crd, c)
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
		// A 4->1 run lasts at least 3 x decommission (1 s) plus API round trips: a delay
		// under 3.3 s always lands inside it.
		delay := 300*time.Millisecond + time.Duration(rng.Int64N(int64(3*time.Second)))
		t.Run("delay-"+strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			crashThenResume(t, crd, crashCase{label: "random", trigger: func(t *testing.T, p *Proc, cl *fixture.Cluster) (string, bool) {
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
			}})
		})
	}
}

// testCrashChain crashes one 4->1 scale-down over and over, with a CassKop operator
// running: the scale is killed while pausing the operator, then each resume is killed in
// the next step kind of the plan, until a resume finishes. Resume must pick up from any
// checkpoint, including one left by a killed resume. Decommissions take 3 s so that a
// resume started after a crash in a decommission finds the node still LEAVING and has to
// wait in verify-left.
func testCrashChain(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(4), Sim: fixture.SimOptions{DecommissionTime: 3 * time.Second}})
	op := startOperator(t, ns, crd)
	g := newPVCGuard(t, ns)
	// The first pod to go lingers (see holdPod) until the crash in wait-pod-gone.
	release := holdPod(t, ns, fixture.PodName(cl.Name, "dc1", "rack1", 3))
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	var hit []string
	for i, kind := range crashKinds {
		var s Step
		var killed bool
		if kind == "decommission" {
			// Crash with the node really leaving, so that the next resume has to wait for
			// it in verify-left (the next crash point).
			s, killed = killInDecommission(t, p, cl, "")
		} else {
			s, killed = killAtStart(t, p, cl, kind, "")
		}
		if !killed {
			r := p.Wait(t, time.Minute)
			require.Equal(t, exitOK, r.Code, "run %d ended before reaching %s:\n%s", i, kind, r)
			t.Logf("run %d finished before reaching %s", i, kind)
			break
		}
		hit = append(hit, kind)
		summary.crash(kind)
		if kind == "wait-pod-gone" {
			release()
		}
		t.Logf("crash %d: SIGKILL at %s", len(hit), s.ID)
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
	t.Logf("crashed in: %v", hit)
	for _, k := range crashKinds {
		assert.Contains(t, hit, k, "the chain crashed once in every step kind")
	}
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 4, to: 1})
	assertOperatorRestored(t, ns, op.Name)
	summary.markConverged(t)
}

// testSIGINTThenResume: Ctrl-C in the middle of a scale-down exits 4 with the resume
// command on stderr and the checkpoint kept; that command then finishes the job.
func testSIGINTThenResume(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "resume")
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
	summary.markConverged(t)
}
