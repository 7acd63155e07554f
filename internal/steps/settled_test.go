package steps

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// roundsSettler is an operator.Settler that says "not yet" until its last round, lists
// its own pods when it is not given them, and records what each round was given.
type roundsSettler struct {
	rounds int
	kept   []*corev1.PodList // per round: the list it was given (nil: it listed)
	lists  int
	// between runs in each round but the last, after the round's mark: the change
	// that wakes the wait.
	between func()
}

func (s *roundsSettler) Unsettled(_ context.Context, _, _, _ string, kept *corev1.PodList) (string, *corev1.PodList, error) {
	s.kept = append(s.kept, kept)
	l := kept
	if l == nil {
		s.lists++
		l = &corev1.PodList{}
	}
	if len(s.kept) == s.rounds {
		return "", l, nil
	}
	s.between()
	return `its progress is "Updating", not Ready`, l, nil
}

// TestSettleKeepsPodsWhileUnchanged: the settle wait's round that follows a change of
// the resource alone judges the pods it listed last (no LIST); after a pod changed, or
// without a feed, it lists them again.
func TestSettleKeepsPodsWhileUnchanged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, sw, n := setup(t, "4.1")
	sw.Scaler = readyScaler()
	// Long polls: only a change ends a wait before the test's own deadline.
	sw.Poll = time.Hour
	fw := fakeWatches{res: watch.NewFake(), tasks: watch.NewFake()}
	sw.Watches = fw
	f := NewEvidenceFeed(ctx, sw)
	if f == nil {
		t.Fatal("no feed")
	}
	defer f.Stop()
	res := &unstructured.Unstructured{}
	res.SetName(sw.CP.Cluster)
	// The pods' watch starts with the pods there (Added): those come before the test.
	for _, p := range []string{w.Pod("rack1", 0), w.Pod("rack1", 1), n.Pod} {
		for {
			changed, wake, _ := f.changedSince(0, []string{keyPod(p)})
			if changed {
				break
			}
			select {
			case <-wake:
			case <-ctx.Done():
				t.Fatalf("the pods' watch never listed %s", p)
			}
		}
	}

	// The operator's status changes (its progress goes Ready): the pods are kept.
	s := &roundsSettler{rounds: 3, between: func() { send(ctx, fw.res, res) }}
	sw.Settler = s
	if err := AwaitSettled(ctx, sw); err != nil {
		t.Fatal(err)
	}
	if s.lists != 1 || s.kept[0] != nil || s.kept[1] == nil || s.kept[2] != s.kept[1] {
		t.Fatalf("listed %d times, given %v: want one LIST, then the list kept", s.lists, s.kept)
	}

	// A pod changes between the rounds (a label, through the API server): listed again.
	s = &roundsSettler{rounds: 2, between: func() {
		p, err := w.Kube.CoreV1().Pods(w.NS).Get(ctx, n.Pod, metav1.GetOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		p.Labels["example.com/state"] = "Started"
		if _, err := w.Kube.CoreV1().Pods(w.NS).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
		}
	}}
	sw.Settler = s
	if err := AwaitSettled(ctx, sw); err != nil {
		t.Fatal(err)
	}
	if s.lists != 2 {
		t.Fatalf("listed %d times after a pod changed, want 2", s.lists)
	}

	// No feed: every round lists.
	f.Stop()
	sw.Poll = time.Millisecond
	s = &roundsSettler{rounds: 3, between: func() {}}
	sw.Settler = s
	if err := AwaitSettled(ctx, sw); err != nil {
		t.Fatal(err)
	}
	if s.lists != 3 {
		t.Fatalf("listed %d times without a feed, want 3", s.lists)
	}
}

// TestKeptPods: the last list only while unchanged.
func TestKeptPods(t *testing.T) {
	l := &corev1.PodList{}
	if keptPods(l, true) != l || keptPods(l, false) != nil || keptPods(nil, true) != nil {
		t.Fatal("keptPods")
	}
}
