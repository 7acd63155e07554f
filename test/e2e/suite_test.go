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
}

// scenarios lists every CRD-dependent case; TestCassKop runs them against each CRD.
func scenarios() []scenario {
	return []scenario{
		{"fixture-ready", testFixtureReady},
		{"nodetool-through-exec", testNodetoolThroughExec},
		{"scale-2to1", testScale2to1},
		{"scale-4to1", testScale4to1},
		{"scale-one-dc-of-two", testScaleOneDCOfTwo},
		{"refuse-operator-running", testRefuseOperatorRunning},
		{"refuse-casskop-busy", testRefuseCassKopBusy},
		{"sigint-then-resume", testSIGINTThenResume},
		{"crash-each-step-kind", testCrashEachStepKind},
		{"crash-random-moments", testCrashRandomMoments},
		{"crash-chain-resume", testCrashChain},
		{"fault-rf-refusal", testFaultRFRefusal},
		{"fault-stream-failure-retry", testFaultStreamFailureRetry},
		{"fault-restart-mid-decommission", testFaultRestartMidDecommission},
		{"fault-empty-ring", testFaultEmptyRing},
		{"fault-exec-cut-mid-decommission", testFaultExecCut},
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
			for _, sc := range scenarios() {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
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
