package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// scenario is one end-to-end case, run once per CassandraCluster CRD variant.
type scenario struct {
	name string
	run  func(t *testing.T, crd *fixture.CRDInfo)
	// group: the scenario is a set of subtests, each tracked in the summary on its own.
	group bool
}

// scenarios lists every CRD-dependent case; TestCassKop runs them against each CRD.
func scenarios() []scenario {
	return []scenario{
		{name: "fixture-ready", run: testFixtureReady},
		{name: "fixture-replace-by-hand", run: testFixtureReplaceByHand},
		{name: "nodetool-through-exec", run: testNodetoolThroughExec},
		{name: "guards-catch-violations", run: testGuardsCatchViolations},
		{name: "scale-2to1", run: testScale2to1},
		{name: "scale-4to1", run: testScale4to1},
		{name: "scale-one-dc-of-two", run: testScaleOneDCOfTwo},
		{name: "operator-paused-and-restored", run: testOperatorPausedAndRestored},
		{name: "refuse-casskop-busy", run: testRefuseCassKopBusy},
		{name: "refuse-not-enough-space", run: testRefuseNotEnoughSpace},
		{name: "sigint-then-resume", run: testSIGINTThenResume},
		{name: "crash-each-step-kind", run: testCrashEachStepKind, group: true},
		{name: "crash-random-moments", run: testCrashRandomMoments, group: true},
		{name: "crash-chain-resume", run: testCrashChain},
		{name: "fault-rf-refusal", run: testFaultRFRefusal},
		{name: "fault-stream-failure-retry", run: testFaultStreamFailureRetry},
		{name: "fault-restart-mid-decommission", run: testFaultRestartMidDecommission},
		{name: "fault-empty-ring", run: testFaultEmptyRing},
		{name: "fault-garbled-ring", run: testFaultGarbledRing},
		{name: "fault-exec-cut-mid-decommission", run: testFaultExecCut},
		{name: "fault-refusal-then-abort", run: testFaultRefusalThenAbort},
	}
}

// TestCassKop runs every scenario against each CassandraCluster CRD in turn (CassKop 2.1's
// and 2.3's when ../shared/casskop is there). The CRDs share one name, so a variant's CRD
// is deleted, and gone, before the next one is installed. Within a variant the scenarios
// run in parallel (go test -parallel, default GOMAXPROCS), each in its own namespace.
func TestCassKop(t *testing.T) {
	requireE2E(t)
	for _, v := range suite.crds {
		t.Run(v.Name, func(t *testing.T) {
			ctx := context.Background()
			t0 := time.Now()
			crd, err := suite.clients.InstallCRD(ctx, v)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("CRD %s installed in %s (status subresource: %v, served: %v)", v.Name, time.Since(t0).Round(time.Millisecond), crd.StatusSubres, crd.ServedVersions)
			t.Cleanup(func() {
				if err := suite.clients.UninstallCRD(context.Background()); err != nil {
					t.Errorf("removing CRD %s: %v", v.Name, err)
				}
			})
			for _, sc := range append(append(append(append(append(append(append(append(append(scenarios(), safetyScenarios()...), opsScenarios()...), changeScenarios()...), liveScenarios()...), toolsScenarios()...), recoveryScenarios()...), docsScenarios()...), removeDCScenarios()...), addDCScenarios()...) {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					if !sc.group {
						summary.track(t)
					}
					sc.run(t, crd)
				})
			}
		})
	}
}

// newCassKopCluster creates a CassKop-shaped cluster in ns (see fixture.NewCassKopCluster).
func newCassKopCluster(t *testing.T, ns string, crd *fixture.CRDInfo, o fixture.ClusterOptions) *fixture.Cluster {
	t.Helper()
	requireSim(t)
	t0 := time.Now()
	if o.StateDir == "" {
		o.StateDir = filepath.Join(suite.env.Dir, "sim", ns)
	}
	cl, err := suite.clients.NewCassKopCluster(context.Background(), ns, crd, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster %s/%s ready in %s: %d pods", ns, cl.Name, time.Since(t0).Round(time.Millisecond), len(cl.Pods))
	return cl
}
