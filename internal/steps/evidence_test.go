package steps

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// fakeWatches serves the resource's and the tasks' watches from fakes the test drives.
type fakeWatches struct{ res, tasks *watch.FakeWatcher }

func (f fakeWatches) WatchResource(context.Context, string, string) (watch.Interface, error) {
	return f.res, nil
}

func (f fakeWatches) WatchTasks(context.Context, string) (watch.Interface, error) {
	return f.tasks, nil
}

// send delivers a change on a fake watch without blocking the test (the feed reads it).
func send(ctx context.Context, fw *watch.FakeWatcher, o *unstructured.Unstructured) {
	go func() {
		select {
		case <-ctx.Done():
		default:
			fw.Modify(o)
		}
	}()
}

// TestEvidenceFeed: a wait on the feed ends when an object it reads changes (the
// resource, its pod), not when another does (a task of another name), and a wait does
// not miss a change that came between its round of reads and its wait. No feed without
// an operator that acts and can be watched.
func TestEvidenceFeed(t *testing.T) {
	w, sw, n := setup(t, "4.1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if NewEvidenceFeed(ctx, sw) != nil {
		t.Fatal("a feed without an operator that acts")
	}
	sw.Scaler = readyScaler()
	if NewEvidenceFeed(ctx, sw) != nil {
		t.Fatal("a feed without watches")
	}
	// Long polls: only a change ends a wait before the test's own deadline.
	sw.Poll = time.Hour
	fw := fakeWatches{res: watch.NewFake(), tasks: watch.NewFake()}
	sw.Watches, sw.Tasks = fw, &fakeTasks{}
	f := NewEvidenceFeed(ctx, sw)
	if f == nil {
		t.Fatal("no feed")
	}
	defer f.Stop()
	obj := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetName(name)
		return u
	}

	// The change comes between the round's reads (mark) and the wait: seen.
	since := sw.markEvidence()
	send(ctx, fw.res, obj(sw.CP.Cluster))
	if err := sw.awaitEvidence(ctx, since, sw.poll(), 0, keyResource); err != nil {
		t.Fatalf("the resource's change did not end the wait: %v", err)
	}

	// A task of another name changes: a wait on the resource and the pod is not ended.
	since = sw.markEvidence()
	send(ctx, fw.tasks, obj("other-task"))
	for {
		changed, wake, _ := f.changedSince(since, []string{keyTask("other-task")})
		if changed {
			break
		}
		select {
		case <-wake:
		case <-ctx.Done():
			t.Fatal("the task's change was never seen")
		}
	}
	if changed, _, _ := f.changedSince(since, []string{keyResource, keyTask("the-operations-task")}); changed {
		t.Fatal("another task's change counts as the resource's or the operation's task's")
	}

	// The pod changes (the operator's label, through the API server): the wait ends.
	go func() {
		p, err := w.Kube.CoreV1().Pods(w.NS).Get(ctx, n.Pod, metav1.GetOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		p.Labels["example.com/state"] = "Decommissioning"
		if _, err := w.Kube.CoreV1().Pods(w.NS).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
		}
	}()
	if err := sw.awaitEvidence(ctx, since, sw.poll(), 0, keyPod(n.Pod)); err != nil {
		t.Fatalf("the pod's change did not end the wait: %v", err)
	}
}

// waitingSignal is a reporter that says each time a wait reports itself waiting.
type waitingSignal struct {
	nopReporter
	waits chan string
}

func (r waitingSignal) Waiting(_ string, what string, _ time.Duration) { r.waits <- what }

// TestWaitLeavingFirstRoundReadsNothing: right after the request, the engine's Done
// read the node; the wait's first round, with no change of the resource or the pod seen
// since, asks nothing of the node (it would only compete with the operator). The next
// change starts a round that reads it, and the node leaving ends the wait: two mode
// reads in all, not three.
func TestWaitLeavingFirstRoundReadsNothing(t *testing.T) {
	w, sw, n := setup(t, "4.1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sw.Scaler, sw.Poll = readyScaler(), time.Hour
	fw := fakeWatches{res: watch.NewFake(), tasks: watch.NewFake()}
	sw.Watches, sw.Tasks = fw, &fakeTasks{}
	c := &commandCounter{inner: w, calls: map[string]int{}}
	sw.Nodetool = nodetool.Client{Exec: c}
	rep := waitingSignal{waits: make(chan string, 16)}
	sw.Reporter = rep
	f := NewEvidenceFeed(ctx, sw)
	defer f.Stop()
	// The fake watches start with the pods as they are: seen before the step reads.
	for {
		changed, wake, _ := f.changedSince(0, []string{keyPod(n.Pod)})
		if changed {
			break
		}
		<-wake
	}
	st := &waitLeaving{driven: driven{node{sw, n}}}
	mustDone(t, st, false)
	done := make(chan error, 1)
	go func() { done <- st.Wait(ctx) }()
	select {
	case <-rep.waits:
	case err := <-done:
		t.Fatalf("the wait ended before the node left: %v", err)
	}
	if got := c.count(); got != 1 {
		t.Fatalf("mode reads by Done and the wait's first round: %d, want 1 (Done's)", got)
	}
	_ = w.Cass.SetFault(n.Pod, sim.Fault{HoldStreaming: true})
	w.StartDecommission(n.Pod)
	u := &unstructured.Unstructured{}
	u.SetName(sw.CP.Cluster)
	send(ctx, fw.res, u)
	if err := <-done; err != nil {
		t.Fatalf("wait: %v", err)
	}
	if got := c.count(); got != 2 {
		t.Fatalf("mode reads in all: %d, want 2", got)
	}
}
