package lifecycle

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// TestReapPauseOfGoneCluster: an operator paused for an operation whose cluster is gone
// is restored to the replicas its holder recorded, its holder removed, once; the
// reaping says so. A second reaping finds nothing to do.
func TestReapPauseOfGoneCluster(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 1, Operator: true})
	l, _, errOut := newLifecycle(t, w)
	pausedForGone(t, w, "gone")
	deps := w.Kube.AppsV1().Deployments(w.NS)
	l.ReapAfterGone(ctx, w.NS, "gone")
	if got := w.DeploymentReplicas(fakeworld.OperatorName); got != 1 {
		t.Errorf("operator at %d replicas, want 1 restored\n%s", got, errOut)
	}
	d, err := deps.Get(ctx, fakeworld.OperatorName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hs, _ := record.PauseHolders(d.Annotations); len(hs) != 0 {
		t.Errorf("holders left: %v", hs)
	}
	said := errOut.String()
	if !strings.Contains(said, "was paused for operations that are gone") || !strings.Contains(said, "op-gone") {
		t.Errorf("the reaping said %q", said)
	}
	errOut.Reset()
	l.ReapAfterGone(ctx, w.NS, "gone")
	// The history: 1 before, the test's pause to 0, the one restore to 1.
	if got := w.OperatorReplicas(fakeworld.OperatorName); errOut.Len() != 0 || !slices.Equal(got, []int32{1, 0, 1}) {
		t.Errorf("replicas over the writes %v, want [1 0 1] (one restore); the second reaping said %q", got, errOut)
	}
}

// pausedForGone pauses w's operator (0 replicas, 1 recorded) for operation op-gone on
// cluster, which no checkpoint holds: a pause its reaper takes back.
func pausedForGone(t *testing.T, w *fakeworld.World, cluster string) {
	t.Helper()
	ctx := context.Background()
	deps := w.Kube.AppsV1().Deployments(w.NS)
	d, err := deps.Get(ctx, fakeworld.OperatorName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zero := int32(0)
	d.Spec.Replicas = &zero
	d.Annotations = map[string]string{record.PausedByAnnotation: `[{"operationID":"op-gone","namespace":"` + w.NS + `","cluster":"` + cluster + `","replicas":1}]`}
	if _, err := deps.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
