package e2e

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// addDCScenarios are add-dc's cases on CassKop: dc1 running, dc2 added; CassKop played
// by the chart's Deployment and fixture.CassKopDCAdder (it creates a datacenter's
// StatefulSets once the datacenter is in spec.topology), new nodes started by the
// fixture.SimController. Registered in suite_test.go.
func addDCScenarios() []scenario {
	return []scenario{
		{name: "add-dc-standin", run: testAddDCStandIn},
	}
}

// dcAddition is one cluster of one datacenter with CassKop running and the pods the
// StatefulSet controller creates started as Cassandra nodes.
type dcAddition struct {
	cl      *fixture.Cluster
	op      string
	casskop *fixture.CassKopDCAdder
	sc      *fixture.SimController
}

func newDCAddition(t *testing.T, crd *fixture.CRDInfo, o fixture.SimOptions) *dcAddition {
	t.Helper()
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{
		DCs: []fixture.DC{{Name: "dc1", Racks: []string{"rack1", "rack2"}, Nodes: 1}},
		Sim: o,
	})
	op := startOperator(t, ns, crd)
	sc := startSimController(t, cl)
	ck := cl.StartCassKopDCAdder(op.Name)
	t.Cleanup(ck.Stop)
	return &dcAddition{cl: cl, op: op.Name, casskop: ck, sc: sc}
}

// testAddDCStandIn checks the stand-in the add-dc scenarios stand on: dc2 (racks r1 r2,
// one node each) appended to the topology by the CassKop adapter's AddDatacenter, on
// the real API server, gets one StatefulSet per rack, created once, whose pods turn
// Ready, whose racks' status goes Initializing then Running, and whose nodes join the
// ring UN in dc2 holding no data (no keyspace replicates to dc2).
func testAddDCStandIn(t *testing.T, crd *fixture.CRDInfo) {
	x := newDCAddition(t, crd, fixture.SimOptions{})
	cl, ns := x.cl, x.cl.Namespace
	ctx := context.Background()
	a := &casskop.Adapter{Clients: operator.Clients{Dynamic: suite.clients.Dyn, Kube: suite.clients.Kube}, Version: "v2"}
	want := operator.NewDatacenter{Name: "dc2", Racks: []string{"r1", "r2"}, NodesPerRack: 1}
	require.NoError(t, a.AddDatacenter(ctx, ns, cl.Name, string(cl.UID), "op-e2e", want))
	ok, err := a.AdditionRequested(ctx, ns, cl.Name, want)
	require.NoError(t, err)
	require.True(t, ok, "dc2 in the topology")

	kc := suite.clients.Kube
	var pods []string
	for _, r := range want.Racks {
		name := fixture.StatefulSetName(cl.Name, "dc2", r)
		pods = append(pods, name+"-0")
		waitFor(t, "StatefulSet "+name+" ready", 2*time.Minute, func(ctx context.Context) (bool, error) {
			s, err := kc.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return s.Status.ReadyReplicas == 1, fmt.Errorf("%d ready", s.Status.ReadyReplicas)
		})
	}
	waitFor(t, "dc2's racks Running", time.Minute, func(context.Context) (bool, error) {
		i := x.casskop.Initializing()
		return len(i) == 0, fmt.Errorf("initializing: %v", i)
	})
	waitFor(t, "dc2's nodes started", time.Minute, func(context.Context) (bool, error) {
		for _, p := range pods {
			if _, err := cl.Sim.Node(p); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	assert.Empty(t, casskop.Busy(cr), "CassKop idle once dc2's racks run")
	assert.ElementsMatch(t, []string{"StatefulSet " + cl.Name + "-dc2-r1", "StatefulSet " + cl.Name + "-dc2-r2"}, x.casskop.Created(), "each rack's StatefulSet created once")
	assert.Empty(t, x.casskop.Violations())
	assert.NoError(t, x.casskop.Err())

	r := cassandra(t, ns, time.Minute, "nodetool", podsOf(cl, "dc1")[0].Name, "--", "status")
	require.Equal(t, exitOK, r.Code, "%s", r)
	require.Contains(t, r.Stdout, "Datacenter: dc2", "%s", r.Stdout)
	for i, p := range pods {
		pod, err := kc.CoreV1().Pods(ns).Get(ctx, p, metav1.GetOptions{})
		require.NoError(t, err)
		assert.True(t, podReady(pod), "pod %s Ready", p)
		v, err := cl.Sim.Node(p)
		require.NoError(t, err)
		assert.Equal(t, "dc2", v.DC, "%s", p)
		assert.Equal(t, want.Racks[i], v.Rack, "%s", p)
		assert.Equal(t, fixture.EmptyNodeLoad, v.Load, "%s joined holding no data", p)
		assert.Regexp(t, `UN\s+`+regexp.QuoteMeta(pod.Status.PodIP)+`\s`, r.Stdout, "%s UN in the ring", p)
	}
	summary.markConverged(t)
}

// podReady: the pod's Ready condition is true.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
