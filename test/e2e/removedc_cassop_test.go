package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	coop "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
)

// testCassOpRemoveDC: two CassandraDatacenters of one cluster sharing one simulated ring
// (fixture.DatacenterOptions.Ring), each played by its stand-in operator; every keyspace
// replicates to both. remove-dc dc2 without --alter-keyspaces is refused naming the
// statements; with it the plugin drops dc2 from each keyspace once, annotates dc2
// decommission-on-delete and deletes it, and the operator decommissions each node of
// dc2 once (never the plugin): dc2's resource, StatefulSets and claims go, dc1's ring
// lists no node of dc2, dc1 is untouched.
func testCassOpRemoveDC(t *testing.T) {
	requireCommand(t, "remove-dc")
	ns := newNamespace(t)
	both := map[string]int{"dc1": 1, "dc2": 1}
	repl := map[string]map[string]int{}
	for _, ks := range replicatedKeyspaces {
		repl[ks] = both
	}
	dc1 := newCassOpDC(t, ns, fixture.DatacenterOptions{Name: "dc1", Size: 2, Sim: fixture.SimOptions{Replication: repl}})
	dc2 := newCassOpDC(t, ns, fixture.DatacenterOptions{Name: "dc2", Size: 2, Ring: dc1})
	// No --cql-secret: the simulated nodes have no PasswordAuthenticator (sim
	// Options.CQLAuth), and cqlsh reading its cqlshrc from stdin to its end never ends
	// over kwok's exec (the stdin's end does not reach the command).
	args := func(extra ...string) []string {
		return append(append([]string{"remove-dc", dc2.Name, "--dc", dc2.Name}, extra...), runFlags...)
	}

	r := cassandra(t, ns, opTimeout, args()...)
	require.Equal(t, exitRefused, r.Code, "%s", r)
	for _, ks := range replicatedKeyspaces {
		assert.Contains(t, r.Stderr, "ALTER KEYSPACE "+ks+" WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '1'};", "%s", r)
	}
	sc, err := dc1.ReadSimSchema()
	require.NoError(t, err)
	assert.Equal(t, 0, sc.Version, "no ALTER on a refusal")

	r = cassandra(t, ns, opTimeout, args("--alter-keyspaces")...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	t.Logf("remove-dc on cass-operator (2 nodes) took %s", r.Duration.Round(time.Millisecond))
	assert.NotContains(t, r.Stdout+r.Stderr, fixture.SuperuserPassword, "the password never shows")

	ctx := context.Background()
	kc := suite.clients.Kube
	res := suite.clients.Dyn.Resource(fixture.CassandraDatacenterGVR).Namespace(ns)
	_, err = res.Get(ctx, dc2.Name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "CassandraDatacenter dc2 gone (err=%v)", err)
	// Garbage collection of the StatefulSets follows the resource's deletion.
	waitFor(t, "dc2's StatefulSets and claims gone", time.Minute, func(ctx context.Context) (bool, error) {
		sl, err := kc.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{LabelSelector: dc2.Selector()})
		if err != nil || len(sl.Items) > 0 {
			return false, fmt.Errorf("StatefulSets left: %d (%v)", len(sl.Items), err)
		}
		cl, err := kc.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: dc2.Selector()})
		if err != nil || len(cl.Items) > 0 {
			return false, fmt.Errorf("claims left: %d (%v)", len(cl.Items), err)
		}
		return true, nil
	})
	n, err := dc1.Size(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "dc1's size untouched")
	assert.Zero(t, countActions(dc1.Operator, coop.ActDecommission), "dc1's operator decommissioned nothing: %q", dc1.Operator.Actions())

	// Each node of dc2 decommissioned once, by the operator: the sim forgets a node once
	// its claim is deleted, keeping its last view.
	forgotten := dc2.Forgotten()
	for _, p := range dc2.Pods {
		views := forgotten[p.Name]
		if v, err := dc2.Sim.Node(p.Name); err == nil {
			views = append(views, v) // not forgotten (yet): its node is still in the store
		}
		if assert.Len(t, views, 1, "one node of %s", p.Name) {
			assert.Equal(t, 1, views[0].DecommissionsStarted, "decommissions of %s (calls %d)", p.Name, views[0].DecommissionCalls)
		}
	}
	for _, p := range dc1.Pods {
		v, err := dc1.Sim.Node(p.Name)
		require.NoError(t, err)
		assert.Zero(t, v.DecommissionCalls, "dc1's %s never decommissioned", p.Name)
	}

	sc, err = dc1.ReadSimSchema()
	require.NoError(t, err)
	assert.Equal(t, len(replicatedKeyspaces), sc.Version, "one ALTER per keyspace")
	for ks, rf := range sc.Keyspaces {
		assert.NotContains(t, rf, "dc2", "keyspace %s no longer replicates to dc2", ks)
	}
	r = cassandra(t, ns, time.Minute, "nodetool", dc1.Pods[0].Name, "--", "status")
	require.Equal(t, exitOK, r.Code, "%s", r)
	assert.NotContains(t, r.Stdout, "Datacenter: dc2", "%s", r.Stdout)
	for _, p := range dc2.Pods {
		assert.False(t, strings.Contains(r.Stdout, " "+p.IP+" "), "dc1's ring lists %s (%s):\n%s", p.Name, p.IP, r.Stdout)
	}
	assert.NoError(t, dc1.RunErr())
	assert.NoError(t, dc2.RunErr())
	summary.markConverged(t)
}
