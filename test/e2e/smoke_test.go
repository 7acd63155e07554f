package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// TestPluginRunsThroughKubectl: the real kubectl finds the freshly built plugin first on
// PATH and runs it (kubectl's plugin mechanism, not a direct call of the binary).
func TestPluginRunsThroughKubectl(t *testing.T) {
	requirePlugin(t)
	r := kubectl(t, 30*time.Second, "plugin", "list", "--name-only=false")
	want := filepath.Join(suite.pluginDir, "kubectl-cassandra")
	// kubectl lists every kubectl-cassandra on PATH in PATH order; ours must come first.
	var first string
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), "/kubectl-cassandra") {
			first = strings.TrimSpace(l)
			break
		}
	}
	assert.Equal(t, want, first, "kubectl plugin list:\n%s", r)

	r = kubectl(t, 30*time.Second, "cassandra", "version")
	require.Equal(t, exitOK, r.Code, "%s", r)
	assert.NotEmpty(t, strings.TrimSpace(r.Stdout), "version prints on stdout")

	r = kubectl(t, 30*time.Second, "cassandra", "no-such-command")
	assert.Equal(t, exitUsage, r.Code, "unknown command is a usage error:\n%s", r)
}

// testFixtureReady checks that the fixture is what CassKop would have made: names, labels,
// serviceName, container order, PVCs Bound with the rack labels, the idle CR status.
func testFixtureReady(t *testing.T, crd *fixture.CRDInfo) {
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{
		Name:        "cassandra-demo",
		DCs:         []fixture.DC{{Name: "dc1", Racks: []string{"rack1", "rack2"}, Nodes: 2}},
		Sidecar:     true,
		LogsStorage: true,
		Labels:      map[string]string{"cluster": "k8s.kaas"},
	})
	ctx := context.Background()
	kc := suite.clients.Kube

	for _, rack := range []string{"rack1", "rack2"} {
		name := "cassandra-demo-dc1-" + rack
		sts, err := kc.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		wantLabels := map[string]string{
			"app": "cassandracluster", "cassandracluster": "cassandra-demo", "dc-rack": "dc1-" + rack,
			"cassandraclusters.db.orange.com.dc": "dc1", "cassandraclusters.db.orange.com.rack": rack,
			"cluster": "k8s.kaas",
		}
		assert.Equal(t, wantLabels, sts.Labels)
		assert.Equal(t, wantLabels, sts.Spec.Selector.MatchLabels)
		assert.Equal(t, "cassandra-demo", sts.Spec.ServiceName)
		assert.Equal(t, int32(2), sts.Status.ReadyReplicas)
		var names []string
		for _, c := range sts.Spec.Template.Spec.Containers {
			names = append(names, c.Name)
		}
		assert.Equal(t, []string{"log-shipper", "cassandra"}, names, "sidecars come before cassandra")
		require.Len(t, sts.OwnerReferences, 1)
		assert.Equal(t, cl.UID, sts.OwnerReferences[0].UID)

		for i := range 2 {
			pod := fixture.PodName("cassandra-demo", "dc1", rack, i)
			p, err := kc.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, corev1.PodRunning, p.Status.Phase)
			assert.NotEmpty(t, p.Status.PodIP)
			assert.NotEmpty(t, p.Spec.NodeName)
			for _, pvc := range []string{"data-" + pod, "cassandra-logs-" + pod} {
				c, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{})
				require.NoError(t, err)
				assert.Equal(t, corev1.ClaimBound, c.Status.Phase, pvc)
				assert.Equal(t, wantLabels, c.Labels, pvc)
			}
		}
	}
	_, err := kc.CoreV1().Services(ns).Get(ctx, "cassandra-demo", metav1.GetOptions{})
	require.NoError(t, err, "headless service")

	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	phase, _, _ := unstructured.NestedString(cr.Object, "status", "phase")
	assert.Equal(t, "Running", phase, "status written through the right path for %s", crd.Variant.Name)
	last, _, _ := unstructured.NestedString(cr.Object, "status", "cassandraRackStatus", "dc1-rack2", "cassandraLastAction", "status")
	assert.Equal(t, "Done", last)
	n, err := fixture.NodesPerRacks(cr, "dc1")
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)

	// CassKop 2.1 serves v1alpha1 too (same schema): the same object reads back there.
	if len(crd.ServedVersions) > 1 {
		gvr := fixture.CassandraClusterGVR
		gvr.Version = "v1alpha1"
		old, err := suite.clients.Dyn.Resource(gvr).Namespace(ns).Get(ctx, "cassandra-demo", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, cr.GetUID(), old.GetUID())
	}
}

// testNodetoolThroughExec: `kubectl exec <pod> -c cassandra -- nodetool status` goes
// through the apiserver to kwok, which runs the simulated nodetool as that pod's node.
func testNodetoolThroughExec(t *testing.T, crd *fixture.CRDInfo) {
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{
		DCs: []fixture.DC{{Name: "dc1", Racks: []string{"rack1"}, Nodes: 3}}, Sidecar: true,
	})
	r := kubectl(t, 30*time.Second, "-n", ns, "exec", cl.Pods[0].Name, "-c", "cassandra", "--", "env", "LANG=C", "nodetool", "status")
	require.Equal(t, 0, r.Code, "%s", r)
	assert.Contains(t, r.Stdout, "Datacenter: dc1")
	for _, p := range cl.Pods {
		line := lineWith(r.Stdout, p.IP)
		if assert.NotEmpty(t, line, "node %s (%s) in the ring:\n%s", p.Name, p.IP, r.Stdout) {
			assert.True(t, strings.HasPrefix(line, "UN "), "node %s is UN: %q", p.Name, line)
			assert.Contains(t, line, p.HostID)
			assert.Contains(t, line, "rack1")
		}
	}
	// The node answering is the pod's own: netstats is local.
	r = kubectl(t, 30*time.Second, "-n", ns, "exec", cl.Pods[1].Name, "-c", "cassandra", "--", "nodetool", "netstats")
	require.Equal(t, 0, r.Code, "%s", r)
	assert.True(t, strings.HasPrefix(r.Stdout, "Mode: NORMAL"), "netstats: %q", r.Stdout)

	// A failing nodetool makes kubectl fail with its stderr (kwok does not pass the exit
	// code through; see hack/testenv).
	r = kubectl(t, 30*time.Second, "-n", ns, "exec", cl.Pods[0].Name, "-c", "cassandra", "--", "nodetool", "no-such-command")
	assert.NotEqual(t, 0, r.Code, "%s", r)
}

// lineWith returns the first line of s with a whitespace-separated field equal to field,
// trimmed ("" if none). Exact fields: 10.244.0.2 must not match 10.244.0.21.
func lineWith(s, field string) string {
	for _, l := range strings.Split(s, "\n") {
		for _, f := range strings.Fields(l) {
			if f == field {
				return strings.TrimSpace(l)
			}
		}
	}
	return ""
}

// testGuardsCatchViolations proves that the end-state checks can fail: a PVC deleted
// under a live pod is reported by the PVC guard, and one deleted after its pod is not.
func testGuardsCatchViolations(t *testing.T, crd *fixture.CRDInfo) {
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
	g := newPVCGuard(t, ns)
	ctx := context.Background()
	kc := suite.clients.Kube
	// Live pod: pvc-protection keeps the PVC Terminating, the guard must flag it.
	require.NoError(t, kc.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "data-"+cl.Pods[0].Name, metav1.DeleteOptions{}))
	// Pod gone first (scale the StatefulSet down by hand), then its PVC: allowed.
	r := kubectl(t, time.Minute, "-n", ns, "scale", "statefulset", fixture.StatefulSetName(cl.Name, "dc1", "rack1"), "--replicas=1")
	require.Equal(t, 0, r.Code, "%s", r)
	waitFor(t, cl.Pods[1].Name+" gone", time.Minute, func(ctx context.Context) (bool, error) {
		_, err := kc.CoreV1().Pods(ns).Get(ctx, cl.Pods[1].Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
	require.NoError(t, kc.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "data-"+cl.Pods[1].Name, metav1.DeleteOptions{}))
	v := g.violations(t, cl)
	require.Len(t, v, 1, "violations: %v", v)
	assert.Contains(t, v[0], "data-"+cl.Pods[0].Name)
	assert.Contains(t, v[0], "while its pod "+cl.Pods[0].Name+" existed")
}
