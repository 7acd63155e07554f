package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// recoveryScenarios are the cases of issue 23, "the world is the truth": the record and
// the world part ways, and the plugin plans from the world.
func recoveryScenarios() []scenario {
	return []scenario{
		{name: "record-wiped-then-scale-again", run: testRecordWipedThenScaleAgain},
		{name: "regrown-pod-then-resume", run: testRegrownPodThenResume},
		{name: "racks-at-different-sizes-grow-back", run: testRacksAtDifferentSizesGrowBack},
	}
}

// testRecordWipedThenScaleAgain (finding 1): a 3 -> 1 scale-down with the operator
// running; once the second node's decommission is recorded started, the checkpoint is
// removed with the real `kubectl annotate …-` (a GitOps sync would do the same). The run
// stops with exit 4 saying the record was removed, and nobody holds it. The same scale
// run again through kubectl sees the half-removed node (out of the ring, its pod and
// claims still there), finishes it without a second decommission, goes on to 1 node,
// takes the stale pause over and restores the operator; no paused-by entry is left.
func testRecordWipedThenScaleAgain(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ctx := context.Background()
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3)})
	d := startCassKopDeployment(t, ns)
	g := newPVCGuard(t, ns)
	second := fixture.PodName(cl.Name, "dc1", "rack1", 1)
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wiped := make(chan Result, 1)
	go func() {
		_ = watchCR(wctx, cl, opTimeout, func(cr *unstructured.Unstructured) bool {
			cp, ok, _ := parseCheckpoint(cr)
			if !ok {
				return false
			}
			for _, s := range cp.Steps {
				if startedKind("decommission", second)(s) {
					wiped <- kubectl(t, time.Minute, "annotate", "cassandraclusters.db.orange.com", "-n", ns, cl.Name, annCheckpoint+"-")
					return true
				}
			}
			return false
		})
	}()
	r := p.Wait(t, opTimeout)
	var ann Result
	select {
	case ann = <-wiped:
	default:
		t.Fatalf("the run ended before the second decommission started:\n%s", r)
	}
	require.Equal(t, exitOK, ann.Code, "kubectl annotate: %s", ann)
	require.Equal(t, exitInterrupted, r.Code, "the run whose record was removed stops with exit 4:\n%s", r)
	assert.Contains(t, r.Stderr, "was removed from CassandraCluster", "%s", r)
	assert.Contains(t, r.Stderr, "nobody holds it now", "%s", r)
	assert.NotContains(t, r.Stderr, "Another run holds", "%s", r)
	// The decommission that was sent finishes in Cassandra, whatever the plugin does.
	waitFor(t, second+" left the ring", opTimeout, func(context.Context) (bool, error) {
		n, err := cl.Sim.Node(second)
		if err != nil {
			return false, err
		}
		return n.Left, fmt.Errorf("mode %s", n.Mode)
	})

	r = cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	require.Equal(t, exitOK, r.Code, "the same scale again:\n%s", r)
	assert.Contains(t, r.Stdout+r.Stderr, "already left the ring", "%s", r)
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 3, to: 1})
	assertOperatorRestored(t, ns, d.Name)
	dep, err := suite.clients.Kube.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, dep.Annotations[record.PausedByAnnotation], "no operation holds the operator paused")
	summary.markConverged(t)
}
