package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	cassop "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	coop "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
)

// dc2Manifest is the user's CassandraDatacenter dc2 of cluster: two racks, one node
// each, the storage of the fixture's datacenters.
func dc2Manifest(cluster string) string {
	return fmt.Sprintf(`apiVersion: cassandra.datastax.com/v1beta1
kind: CassandraDatacenter
metadata:
  name: dc2
spec:
  clusterName: %s
  serverType: cassandra
  serverVersion: "4.1.5"
  managementApiAuth:
    insecure: {}
  size: 2
  racks:
  - name: r1
  - name: r2
  storageConfig:
    cassandraDataVolumeClaimSpec:
      storageClassName: standard
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 10Gi
`, cluster)
}

// addDCWorld is namespace ns with dc1 (two nodes, simulated with so, the stand-in operator running), the
// stand-in ready to reconcile dc2 once created, and the add-dc command line of dc2.
func addDCWorld(t *testing.T, so fixture.SimOptions) (ns string, dc1, dc2 *fixture.Datacenter, args func(extra ...string) []string) {
	t.Helper()
	ns = newNamespace(t)
	dc1 = newCassOpDC(t, ns, fixture.DatacenterOptions{Name: "dc1", Size: 2, Sim: so})
	dc2, err := dc1.ExpectDatacenter(context.Background(), "dc2", []string{"r1", "r2"})
	require.NoError(t, err)
	t.Cleanup(dc2.Stop)
	file := filepath.Join(t.TempDir(), "dc2.yaml")
	require.NoError(t, os.WriteFile(file, []byte(dc2Manifest(dc1.ClusterName)), 0o600))
	args = func(extra ...string) []string {
		return append(append([]string{"add-dc", dc1.Name, "-f", file}, extra...), runFlags...)
	}
	return ns, dc1, dc2, args
}

// testCassOpAddDC: add-dc dc1 -f dc2.yaml on a one-datacenter cluster whose operator is
// the stand-in (it reconciles dc2 once the plugin creates it: StatefulSets, pods, nodes
// joining dc1's ring owning nothing). --dry-run creates nothing; the run with
// --alter-keyspaces creates dc2 once (with the operation's mark), gives every keyspace
// replicas in dc2 (one ALTER each), and has each node of dc2 rebuilt from dc1 by
// exactly one rebuild task naming its pod, each node rebuilt once; the checkpoint on
// dc1 is gone at the end, dc1 untouched.
func testCassOpAddDC(t *testing.T) {
	requireCommand(t, "add-dc")
	ctx := context.Background()
	ns, dc1, dc2, args := addDCWorld(t, fixture.SimOptions{})
	res := suite.clients.Dyn.Resource(fixture.CassandraDatacenterGVR).Namespace(ns)
	before, err := dc1.ReadSimSchema()
	require.NoError(t, err)

	r := cassandra(t, ns, opTimeout, args("--dry-run")...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	_, err = res.Get(ctx, "dc2", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "--dry-run created no CassandraDatacenter dc2 (err=%v)", err)

	// No --cql-secret: the simulated nodes have no PasswordAuthenticator (as remove-dc's).
	r = cassandra(t, ns, opTimeout, args("--alter-keyspaces")...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	t.Logf("add-dc on cass-operator (2 nodes) took %s", r.Duration.Round(time.Millisecond))
	assert.NotContains(t, r.Stdout+r.Stderr, fixture.SuperuserPassword, "the password never shows")

	assertDC2Added(t, ns, dc1, dc2, before)
	summary.markConverged(t)
}

// assertDC2Added checks the end of an add-dc of dc2: dc2 carries the operation's
// mark, dc1 no checkpoint and a record, its size untouched; every keyspace that
// replicated to dc1 replicates to dc2 as many times (one ALTER each since before);
// dc2's nodes are UN in dc1's ring, each rebuilt once, by exactly one rebuild task
// naming its pod, from dc1, completed; nobody decommissioned anything.
func assertDC2Added(t *testing.T, ns string, dc1, dc2 *fixture.Datacenter, before fixture.SimSchema) {
	t.Helper()
	ctx := context.Background()
	res := suite.clients.Dyn.Resource(fixture.CassandraDatacenterGVR).Namespace(ns)
	u, err := res.Get(ctx, "dc2", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Contains(t, u.GetAnnotations()[cassop.AddDCMarkAnnotation], `"operationID"`, "dc2 carries the operation's mark")
	got, err := dc1.Get(ctx)
	require.NoError(t, err)
	assert.NotContains(t, got.GetAnnotations(), annCheckpoint, "no checkpoint left on dc1")
	assert.Contains(t, got.GetAnnotations(), annLastOperation, "a last-operation record on dc1")
	n, err := dc1.Size(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "dc1's size untouched")

	// Every keyspace that replicated to dc1 replicates to dc2: one ALTER each.
	sc, err := dc1.ReadSimSchema()
	require.NoError(t, err)
	altered := 0
	for ks, rf := range before.Keyspaces {
		if rf["dc1"] == 0 {
			continue
		}
		altered++
		assert.Equal(t, rf["dc1"], sc.Keyspaces[ks]["dc2"], "keyspace %s: replicas in dc2 (as many as in dc1)", ks)
	}
	assert.Equal(t, before.Version+altered, sc.Version, "one ALTER per keyspace")

	// dc2's nodes are UN in dc1's ring.
	pods := []string{dc2.PodName("r1", 0), dc2.PodName("r2", 0)}
	r := cassandra(t, ns, time.Minute, "nodetool", dc1.Pods[0].Name, "--", "status")
	require.Equal(t, exitOK, r.Code, "%s", r)
	assert.Contains(t, r.Stdout, "Datacenter: dc2", "%s", r.Stdout)
	for _, p := range pods {
		v, err := dc1.Sim.Node(p)
		if assert.NoError(t, err, p) {
			assert.Equal(t, "dc2", v.DC, p)
			assert.Equal(t, "UN", v.PeerCode, p)
			assert.True(t, strings.Contains(r.Stdout, "UN  "+v.Address+" "), "dc1's ring lists %s UN (%s):\n%s", p, v.Address, r.Stdout)
			assert.Equal(t, 1, v.RebuildsStarted, "rebuilds of %s", p)
			assert.NotEqual(t, sim.EmptyNodeLoad, v.Load, "%s holds its share after the rebuild", p)
		}
	}

	// Each pod of dc2 rebuilt by exactly one rebuild task naming it, from dc1, completed.
	tl, err := suite.clients.Dyn.Resource(coop.TaskGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	per := map[string]int{}
	for _, tk := range tl.Items {
		jobs, _, _ := unstructured.NestedSlice(tk.Object, "spec", "jobs")
		if len(jobs) != 1 {
			continue
		}
		job, _ := jobs[0].(map[string]any)
		if job["command"] != "rebuild" {
			continue
		}
		pod, _, _ := unstructured.NestedString(job, "args", "pod_name")
		src, _, _ := unstructured.NestedString(job, "args", "source_datacenter")
		dc, _, _ := unstructured.NestedString(tk.Object, "spec", "datacenter", "name")
		done, _, _ := unstructured.NestedString(tk.Object, "status", "completionTime")
		assert.Equal(t, "dc1", src, "task %s's source", tk.GetName())
		assert.Equal(t, "dc2", dc, "task %s's datacenter", tk.GetName())
		assert.NotEmpty(t, done, "task %s completed", tk.GetName())
		per[pod]++
	}
	assert.Equal(t, map[string]int{pods[0]: 1, pods[1]: 1}, per, "rebuild tasks per pod")

	assert.Zero(t, countActions(dc1.Operator, coop.ActDecommission), "dc1's operator decommissioned nothing: %q", dc1.Operator.Actions())
	assert.Equal(t, 2, countActions(dc2.Operator, coop.ActCreateStatefulSet), "dc2's StatefulSets created once each: %q", dc2.Operator.Actions())
	assert.NoError(t, dc1.RunErr())
	assert.NoError(t, dc2.RunErr())
}

// testCassOpAddDCStopResume: without --alter-keyspaces the run stops (exit 3) once dc2
// joined, the checkpoint kept on dc1, naming each ALTER KEYSPACE to run; nothing is
// rebuilt. A resume before they are applied stops the same way. Once the user ran
// them (cqlsh in a pod of dc1), resume rebuilds each node of dc2 once, through one
// rebuild task per pod, and ends.
func testCassOpAddDCStopResume(t *testing.T) {
	requireCommand(t, "add-dc")
	requireCommand(t, "resume")
	ctx := context.Background()
	ns, dc1, dc2, args := addDCWorld(t, fixture.SimOptions{})
	before, err := dc1.ReadSimSchema()
	require.NoError(t, err)
	want := 0
	for _, rf := range before.Keyspaces {
		if rf["dc1"] > 0 {
			want++
		}
	}
	pods := []string{dc2.PodName("r1", 0), dc2.PodName("r2", 0)}
	notRebuilt := func(when string) {
		t.Helper()
		for _, p := range pods {
			v, err := dc1.Sim.Node(p)
			if assert.NoError(t, err, p) {
				assert.Equal(t, "UN", v.PeerCode, "%s: %s joined", when, p)
				assert.Zero(t, v.RebuildsStarted, "%s: %s not rebuilt", when, p)
			}
		}
		tl, err := suite.clients.Dyn.Resource(coop.TaskGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		assert.Empty(t, tl.Items, "%s: no task", when)
		got, err := dc1.Get(ctx)
		require.NoError(t, err)
		assert.Contains(t, got.GetAnnotations(), annCheckpoint, "%s: the checkpoint is kept on dc1", when)
	}

	r := cassandra(t, ns, opTimeout, args()...)
	require.Equal(t, exitRefused, r.Code, "%s", r)
	seen := map[string]bool{}
	var stmts []string
	for _, s := range regexp.MustCompile(`ALTER KEYSPACE [^;]*;`).FindAllString(r.Stdout+r.Stderr, -1) {
		if !seen[s] {
			seen[s] = true
			stmts = append(stmts, s)
		}
	}
	require.Len(t, stmts, want, "one statement per keyspace of dc1: %s", r)
	for _, s := range stmts {
		assert.Contains(t, s, "'dc2'", s)
	}
	notRebuilt("stopped for the keyspaces")

	r = cassandra(t, ns, opTimeout, cassOpResumeArgs(dc1)...)
	require.Equal(t, exitRefused, r.Code, "resume before the statements ran: %s", r)
	notRebuilt("resumed before the statements")

	for _, s := range stmts {
		r := kubectl(t, 30*time.Second, "-n", ns, "exec", dc1.Pods[0].Name, "-c", "cassandra", "--", "cqlsh", "-e", s)
		require.Equal(t, exitOK, r.Code, "%s", r)
	}
	r = cassandra(t, ns, opTimeout, cassOpResumeArgs(dc1)...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	assertDC2Added(t, ns, dc1, dc2, before)
	summary.markConverged(t)
}

// testCassOpAddDCKillResume: the plugin is SIGKILLed while the first node of dc2 is
// really rebuilding (its rebuild task runs, the simulated node streams for 3 s);
// resume finds the task of that pod running, waits for it rather than asking again,
// and finishes: each pod rebuilt once, through one task, as an uninterrupted run.
func testCassOpAddDCKillResume(t *testing.T) {
	requireCommand(t, "add-dc")
	requireCommand(t, "resume")
	ns, dc1, dc2, args := addDCWorld(t, fixture.SimOptions{RebuildTime: 3 * time.Second})
	before, err := dc1.ReadSimSchema()
	require.NoError(t, err)
	p := startCassandra(t, ns, args("--alter-keyspaces")...)
	pods := []string{dc2.PodName("r1", 0), dc2.PodName("r2", 0)}
	killed := ""
	waitFor(t, "a node of dc2 rebuilding", opTimeout, func(context.Context) (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("the plugin ended before a rebuild started:\n%s", p.Stderr())
		}
		for _, pod := range pods {
			if v, err := dc1.Sim.Node(pod); err == nil && v.Rebuilding {
				killed = pod
				return true, nil
			}
		}
		return false, fmt.Errorf("no node of dc2 rebuilding yet")
	})
	p.Kill(t)
	summary.crash("add-dc rebuild")
	t.Logf("SIGKILL during the rebuild of %s", killed)
	got, err := dc1.Get(context.Background())
	require.NoError(t, err)
	require.Contains(t, got.GetAnnotations(), annCheckpoint, "checkpoint kept by the crash")
	r := cassandra(t, ns, opTimeout, cassOpResumeArgs(dc1)...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	t.Logf("resume took %s", r.Duration.Round(time.Millisecond))
	assertDC2Added(t, ns, dc1, dc2, before)
	summary.markConverged(t)
}
