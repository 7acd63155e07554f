package steps

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
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
	sw.Scaler = readyScaler{}
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
