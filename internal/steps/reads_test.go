package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/observation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// countExec counts nodetool calls, made from several goroutines too (reads ahead).
type countExec struct {
	inner nodetool.Execer
	mu    sync.Mutex
	n     int
}

func (c *countExec) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.inner.Exec(ctx, pod, argv)
}

// calls is how many nodetool calls were made.
func (c *countExec) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// setupCounted is setup (Cassandra 4.1) with the run's reads kept, as in a run, and its
// nodetool calls counted.
func setupCounted(t *testing.T) (*fakeworld.World, *World, record.Node, *countExec) {
	t.Helper()
	w, sw, n := setup(t, "4.1")
	sw.obs.SetUncached(false)
	ex := &countExec{inner: w}
	sw.Nodetool = nodetool.Client{Exec: ex}
	return w, sw, n, ex
}

// One step's Done, Safe and Recheck, asked back to back, share one read of the pod and
// one nodetool call (Recheck adds the ring read its safety needs, made now: safenow.go); once
// time passed (a poll sleep), the next answer reads again.
func TestObservationsServeUntilTimePasses(t *testing.T) {
	ctx := context.Background()
	w, sw, n, ex := setupCounted(t)
	st := &decommission{node: node{sw, n}}
	w.Kube.ClearActions()
	mustDone(t, st, false)
	if err := st.Safe(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Recheck(ctx); err != nil {
		t.Fatal(err)
	}
	// The pod GET, the list of ring readers; netstats and the ring read.
	if got := len(w.Kube.Actions()); got != 2 || ex.calls() != 2 {
		t.Fatalf("Done+Safe+Recheck: %d API requests and %d nodetool calls, want 2 and 2", got, ex.calls())
	}
	// The node goes down meanwhile: a kept answer must not hide it once time passed.
	_ = w.Cass.SetFault(n.Pod, sim.Fault{Down: true})
	if err := sw.sleep(ctx, 0); err != nil {
		t.Fatal(err)
	}
	sw.StallAfter = 20 * time.Millisecond
	if err := st.Safe(ctx); err == nil {
		t.Fatal("Safe answered from a read made before the sleep: the node is down")
	}
	if ex.calls() <= 2 {
		t.Fatalf("%d nodetool calls after the sleep, want more than 2", ex.calls())
	}
}

// An action the cache does not follow is forgotten by the engine; the StatefulSet
// shrink keeps the StatefulSet as its write returned it and forgets the pod.
func TestShrinkKeepsWhatItWrote(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	sw.obs.SetUncached(false)
	sw.left.set(n.Pod, true)
	st := &shrinkStatefulSet{node: node{sw, n}}
	if err := st.Safe(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.getPod(ctx, n.Pod); err != nil {
		t.Fatal(err)
	}
	if err := st.Do(ctx); err != nil {
		t.Fatal(err)
	}
	w.Kube.ClearActions()
	mustDone(t, st, true) // from the PATCH response: no GET
	if got := len(w.Kube.Actions()); got != 0 {
		t.Fatalf("%d requests after the shrink, want 0: %v", got, w.Kube.Actions())
	}
	// The pod was forgotten: the next question reads it (the fake controller removed it).
	if p, err := sw.getPod(ctx, n.Pod); err != nil || p != nil {
		t.Fatalf("pod after the shrink: %v, %v (want gone, read afresh)", p, err)
	}
	if got := len(w.Kube.Actions()); got != 1 {
		t.Fatalf("%d requests, want the pod's GET", got)
	}
}

// The shrink may start from the StatefulSet as last seen, however old, because its
// patch tests the count: a count changed meanwhile fails the write, and the next
// questions read afresh and refuse.
func TestShrinkFromLastSeenCount(t *testing.T) {
	ctx := context.Background()
	w, sw, n := setup(t, "4.1")
	sw.obs.SetUncached(false)
	sw.left.set(n.Pod, true)
	if _, err := sw.getSTS(ctx, n.StatefulSet); err != nil { // as the previous node's claims step does
		t.Fatal(err)
	}
	sw.Forget() // a decommission later
	// verify-left's read of the node, kept for the shrink: DECOMMISSIONED, so the pod
	// needs no judging (regrown.go).
	observation.Keep(&sw.obs, netstatsKind, n.Pod, nodetool.Netstats{Mode: pubnodetool.ModeDecommissioned})
	setReplicas(t, w, n.StatefulSet, 4)
	st := &shrinkStatefulSet{node: node{sw, n}}
	w.Kube.ClearActions()
	mustDone(t, st, false)
	if err := st.Safe(ctx); err != nil {
		t.Fatalf("Safe from the count last seen: %v", err)
	}
	if got := len(w.Kube.Actions()); got != 0 {
		t.Fatalf("Done+Safe made %d requests, want 0 (count last seen)", got)
	}
	err := st.Do(ctx)
	var rt *operation.Retryable
	if !errors.As(err, &rt) || !strings.Contains(err.Error(), "no longer has 3 replicas") {
		t.Fatalf("Do over a changed count: %v, want a retryable 'no longer has 3 replicas'", err)
	}
	if w.Replicas("rack1") != 4 {
		t.Fatalf("replicas %d: the failed patch changed them", w.Replicas("rack1"))
	}
	if err := st.Safe(ctx); err == nil || !strings.Contains(err.Error(), "not its highest ordinal") {
		t.Fatalf("Safe after the failed patch: %v, want a refusal read afresh", err)
	}
	// "Done" is never said from an old read.
	setReplicas(t, w, n.StatefulSet, 2)
	if _, err := sw.getSTS(ctx, n.StatefulSet); err != nil {
		t.Fatal(err)
	}
	sw.Forget()
	setReplicas(t, w, n.StatefulSet, 3)
	mustDone(t, st, false)
}

func setReplicas(t *testing.T, w *fakeworld.World, name string, r int32) {
	t.Helper()
	gvr := appsv1.SchemeGroupVersion.WithResource("statefulsets")
	obj, err := w.Kube.Tracker().Get(gvr, w.NS, name)
	if err != nil {
		t.Fatal(err)
	}
	sts := obj.(*appsv1.StatefulSet).DeepCopy()
	sts.Spec.Replicas = &r
	if err := w.Kube.Tracker().Update(gvr, sts, w.NS); err != nil {
		t.Fatal(err)
	}
}

// Waiting for a pod to go takes one request where the server streams a watch's initial
// state (the watch Done reads the pod from is the one Wait goes on with), and a GET then
// a watch where it does not.
func TestWaitPodGoneRequests(t *testing.T) {
	for _, noWatchList := range []bool{false, true} {
		t.Run(fmt.Sprintf("noWatchList=%v", noWatchList), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			w := fakeworld.New(t, fakeworld.Opts{Nodes: 3, NoWatchList: noWatchList})
			sw := &World{Kube: w.Kube, Namespace: w.NS, Reporter: nopReporter{}, Poll: time.Millisecond}
			n := record.Node{Pod: w.Pod("rack1", 2), PodUID: "pod-" + w.Pod("rack1", 2)}
			st := &waitPodGone{node: node{sw, n}}
			w.Kube.ClearActions()
			mustDone(t, st, false)
			errc := make(chan error, 1)
			go func() { errc <- st.Wait(ctx) }()
			// The fake server does not replay events from a resourceVersion: delete once
			// Wait's watch is open.
			watches := 1
			if noWatchList {
				watches = 2
			}
			waitFor(ctx, t, "Wait to open its watch", func() bool { return countVerb(w, "watch") >= watches })
			_ = w.Kube.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), w.NS, w.Pod("rack1", 1))
			_ = w.Kube.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), w.NS, n.Pod)
			if err := <-errc; err != nil {
				t.Fatalf("Wait: %v", err)
			}
			var verbs []string
			for _, a := range w.Kube.Actions() {
				if a.GetVerb() != "delete" {
					verbs = append(verbs, a.GetVerb())
				}
			}
			want := "watch"
			if noWatchList {
				want = "watch get watch" // the refused watch, then a GET and a watch from it
			}
			if strings.Join(verbs, " ") != want {
				t.Fatalf("requests %v, want %s", verbs, want)
			}
			// Once refused, the server is not asked again in this run.
			if noWatchList {
				w.Kube.ClearActions()
				sw.Forget()
				mustDone(t, st, true)
				if got := len(w.Kube.Actions()); got != 1 || w.Kube.Actions()[0].GetVerb() != "get" {
					t.Fatalf("after a refusal: %v, want one GET", w.Kube.Actions())
				}
			}
		})
	}
}

func countVerb(w *fakeworld.World, verb string) int {
	n := 0
	for _, a := range w.Kube.Actions() {
		if a.GetVerb() == verb {
			n++
		}
	}
	return n
}

// gateExec holds every nodetool call until the gate opens, counting them.
type gateExec struct {
	inner nodetool.Execer
	gate  chan struct{}
	mu    sync.Mutex
	n     int
}

func (g *gateExec) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	g.mu.Lock()
	g.n++
	g.mu.Unlock()
	<-g.gate
	return g.inner.Exec(ctx, pod, argv)
}

func (g *gateExec) calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// A read started ahead (prefetchNext) serves the step that asks next instead of being
// repeated.
func TestReadUnderWayIsJoined(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, sw, n := setup(t, "4.1")
	sw.obs.SetUncached(false)
	g := &gateExec{inner: w, gate: make(chan struct{})}
	sw.Nodetool = nodetool.Client{Exec: g}
	sw.CP.Steps = append(checkpoint.NodeSteps(append([]record.Node{{Pod: w.Pod("rack1", 3)}}, sw.CP.Nodes...), record.StepDecommission, record.StepVerifyLeft, record.StepShrinkSTS, record.StepWaitPodGone, record.StepDeletePVCs), checkpoint.PendingStep(StepUpdateCluster, ""))
	if got := sw.nextDecommission(w.Pod("rack1", 3)); got != n.Pod {
		t.Fatalf("next decommission after rack1-3: %q, want %s", got, n.Pod)
	}
	// Started from a wait whose context ends at once (as the engine's does).
	wctx, wcancel := context.WithCancel(ctx)
	sw.prefetchNext(wctx, w.Pod("rack1", 3))
	waitFor(ctx, t, "the prefetch to call nodetool", func() bool { return g.calls() > 0 })
	wcancel()
	done := make(chan error, 1)
	go func() {
		_, err := (&decommission{node: node{sw, n}}).Done(ctx)
		done <- err
	}()
	close(g.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if g.calls() != 1 {
		t.Fatalf("%d nodetool calls, want the prefetch's one", g.calls())
	}
}

// Once the pod is gone, the claims step's reads (its claims for Done, the StatefulSet
// for Safe's guard) start at once, ahead of the step, and serve it without a second read.
func TestClaimsReadAhead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, sw, n := setup(t, "4.1")
	sw.obs.SetUncached(false)
	got := countGets(w, "persistentvolumeclaims", "statefulsets")
	sw.prefetchClaims(ctx, n)
	waitFor(ctx, t, "the claim and the StatefulSet to be read ahead", func() bool {
		return got("persistentvolumeclaims") == 1 && got("statefulsets") == 1
	})
	if _, err := (&deletePVCs{node: node{sw, n}}).Done(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := (&shrinkStatefulSet{node: node{sw, n}}).replicas(ctx); err != nil {
		t.Fatal(err)
	}
	if p, st := got("persistentvolumeclaims"), got("statefulsets"); p != 1 || st != 1 {
		t.Fatalf("GETs: %d of the claim, %d of the StatefulSet; want one each (the reads ahead)", p, st)
	}
}

// countGets counts the GETs the fake API server answers for each of resources.
func countGets(w *fakeworld.World, resources ...string) func(resource string) int {
	var mu sync.Mutex
	gets := map[string]int{}
	for _, res := range resources {
		w.Kube.PrependReactor("get", res, func(k8stesting.Action) (bool, runtime.Object, error) {
			mu.Lock()
			defer mu.Unlock()
			gets[res]++
			return false, nil, nil
		})
	}
	return func(res string) int {
		mu.Lock()
		defer mu.Unlock()
		return gets[res]
	}
}

// waitFor polls cond until it holds, failing the test when ctx ends first.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// The ring readers are listed from the API server's watch cache (resourceVersion "0"):
// the list only names pods to ask, and a consistent list right after the checkpoint's
// write waited for that cache. The ring itself is read from the node, and a reader that
// does not answer makes the read fail, never the ring safe; the fallback over every
// Ready pod (ringExcept) stays a consistent list.
func TestRingReadersListedFromTheWatchCache(t *testing.T) {
	ctx := context.Background()
	w, sw, _ := setup(t, "4.1")
	lists := func() []string {
		var rvs []string
		for _, a := range w.Kube.Actions() {
			if l, ok := a.(k8stesting.ListActionImpl); ok && l.GetResource().Resource == "pods" {
				rvs = append(rvs, fmt.Sprintf("%q", l.ListOptions.ResourceVersion))
			}
		}
		return rvs
	}
	w.Kube.ClearActions()
	if _, err := sw.readRing(ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(lists(), ","); got != `"0"` {
		t.Fatalf("the ring readers' list: resourceVersions %s, want one list from the cache (\"0\")", got)
	}
	w.Kube.ClearActions()
	if _, _, err := sw.ringExcept(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(lists(), ","); got != `""` {
		t.Fatalf("the fallback's list: resourceVersions %s, want one consistent list (\"\")", got)
	}
}

// A ring read started ahead for one step's recheck (recheckAhead) is taken up by that
// step's recheck only: another step's check reads the ring anew, and a pause drops it.
func TestRecheckReadAheadServesItsStepOnly(t *testing.T) {
	ctx := context.Background()
	_, sw, _, ex := setupCounted(t)
	calls := ex.calls
	sw.recheckAhead(ctx, "request-removal-a")
	if _, _, err := sw.freshRing(ctx, "request-removal-b", ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sw.freshRing(ctx, "request-removal-a", ""); err != nil {
		t.Fatal(err)
	}
	if got := calls(); got != 2 {
		t.Fatalf("%d ring reads, want 2: step b reads anew, step a takes up its read ahead", got)
	}
	// Taken up once: a second check of the same step reads again.
	if _, _, err := sw.freshRing(ctx, "request-removal-a", ""); err != nil {
		t.Fatal(err)
	}
	if got := calls(); got != 3 {
		t.Fatalf("%d ring reads, want 3", got)
	}
	// A pause (a sleep forgets) drops a read started before it.
	sw.recheckAhead(ctx, "request-removal-a")
	if err := sw.sleep(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sw.freshRing(ctx, "request-removal-a", ""); err != nil {
		t.Fatal(err)
	}
	if got := calls(); got != 5 {
		t.Fatalf("%d ring reads, want 5: the read ahead of the pause is not taken up", got)
	}
}

// The plan's ring readers seeded into the run (SeedReaders) are asked first, with no
// list of the pods; a planned pod among them is left out, and a seed that does not
// answer is passed over for the pods a list names.
func TestSeededReadersAskedFirst(t *testing.T) {
	ctx := context.Background()
	w, sw, n, ex := setupCounted(t)
	reader := w.Pod("rack1", 0)
	sw.SeedReaders([]string{n.Pod, reader})
	w.Kube.ClearActions()
	_, from, err := sw.freshRing(ctx, "request-removal-a", "")
	if err != nil {
		t.Fatal(err)
	}
	if from != reader || ex.calls() != 1 || len(w.Kube.Actions()) != 0 {
		t.Fatalf("ring read from %s with %d nodetool calls and API requests %v; want %s, 1 call, no pod list", from, ex.calls(), w.Kube.Actions(), reader)
	}

	// The seed stops answering: the pods outside the plan are listed and the next asked.
	w, sw, n, _ = setupCounted(t)
	_ = w.Cass.SetFault(reader, sim.Fault{Down: true})
	sw.SeedReaders([]string{reader})
	_, from, err = sw.freshRing(ctx, "request-removal-a", "")
	if err != nil {
		t.Fatal(err)
	}
	if from == reader || from == n.Pod {
		t.Fatalf("ring read from %s; want a pod outside the plan that answers", from)
	}
}
