package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	coop "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
)

// testCassOpDeleteDC: a CassandraDatacenter deleted without decommission-on-delete, on
// a real API server: its finalizer holds it while the stand-in's ProcessDeletion sets
// every StatefulSet to 0 with no decommission, deletes the claims once no pod mounts
// them and removes the finalizer; the API server then deletes it and the garbage
// collector its StatefulSets. The nodes were never decommissioned: down, not left.
func testCassOpDeleteDC(t *testing.T) {
	ns := newNamespace(t)
	dc := newCassOpDC(t, ns, fixture.DatacenterOptions{Racks: []string{"r1", "r2"}, Size: 2})
	ctx := context.Background()
	res := suite.clients.Dyn.Resource(fixture.CassandraDatacenterGVR).Namespace(ns)
	require.NoError(t, res.Delete(ctx, dc.Name, metav1.DeleteOptions{}))
	err := fixture.WaitFor(ctx, "CassandraDatacenter, StatefulSets and claims gone", 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if _, err := res.Get(ctx, dc.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("CassandraDatacenter still there (%v); the stand-in waits: %s", err, dc.Operator.Waiting())
		}
		sl, err := suite.clients.Kube.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{LabelSelector: dc.Selector()})
		if err != nil || len(sl.Items) > 0 {
			return false, fmt.Errorf("StatefulSets left: %d (%v)", len(sl.Items), err)
		}
		cl, err := suite.clients.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: dc.Selector()})
		if err != nil || len(cl.Items) > 0 {
			return false, fmt.Errorf("claims left: %d (%v)", len(cl.Items), err)
		}
		return true, nil
	})
	require.NoError(t, err, "actions %q, last step error %v", dc.Operator.Actions(), dc.Operator.LastError())
	assert.Equal(t, 2, countActions(dc.Operator, coop.ActScaleToZero), "both StatefulSets set to 0: %q", dc.Operator.Actions())
	assert.Equal(t, 1, countActions(dc.Operator, coop.ActRemoveFinalizer), "%q", dc.Operator.Actions())
	assert.Zero(t, countActions(dc.Operator, coop.ActDecommission), "no decommission: %q", dc.Operator.Actions())
	for _, p := range dc.Pods {
		v, err := dc.Sim.Node(p.Name)
		if err != nil {
			continue // detached once its claim went (a ring member with no data)
		}
		assert.Zero(t, v.DecommissionCalls, "node %s never decommissioned", p.Name)
		assert.False(t, v.Left, "node %s did not leave", p.Name)
	}
	assert.NoError(t, dc.RunErr())
	summary.markConverged(t)
}
