package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// Timing of every scale-down in the suite: a simulated decommission takes ~1 s, the plugin
// polls every 200 ms.
const (
	pollInterval = "200ms"
	opTimeout    = 4 * time.Minute // a whole plugin run, as a test deadline
)

// cmdAvailable caches `kubectl cassandra <cmd> --help` results: the CLI lands command by
// command, and a scenario whose command is missing is skipped, not failed.
var cmdAvailable sync.Map

func requireCommand(t *testing.T, cmd string) {
	t.Helper()
	requirePlugin(t)
	v, ok := cmdAvailable.Load(cmd)
	if !ok {
		r := kubectl(t, 30*time.Second, "cassandra", cmd, "--help")
		v = r.Code == 0 && !strings.Contains(r.Stdout+r.Stderr, "unknown command")
		cmdAvailable.Store(cmd, v)
	}
	if !v.(bool) {
		t.Skipf("`kubectl cassandra %s` is not implemented yet", cmd)
	}
}

// scaleArgs are the arguments of a scale-down of one rack to nodes.
func scaleArgs(cl *fixture.Cluster, dc, rack string, nodes int) []string {
	return append([]string{"scale", cl.Name, "--dc", dc, "--rack", rack, "--nodes", strconv.Itoa(nodes)}, runFlags...)
}

func resumeArgs(cl *fixture.Cluster) []string {
	return append([]string{"resume", cl.Name}, runFlags...)
}

// runFlags are the flags of every scale and resume: no prompt, fast polling, a per-step
// deadline well inside the test's, and a stall detection (re-issue a decommission stuck
// LEAVING without streams) scaled to the simulated 1-2 s decommissions.
var runFlags = []string{"--yes", "--poll-interval", pollInterval, "--timeout", "3m", "--stall-after", "5s"}

// resume runs `kubectl cassandra resume --yes` to completion and requires success.
func resume(t *testing.T, cl *fixture.Cluster) Result {
	t.Helper()
	summary.resumed()
	r := cassandra(t, cl.Namespace, opTimeout, resumeArgs(cl)...)
	require.Equal(t, exitOK, r.Code, "resume:\n%s", r)
	return r
}

// expectation is the end state of a scale-down of one rack.
type expectation struct {
	dc, rack string
	from, to int
	// decommissions is how many decommission attempts each removed node may have started
	// (1 without faults: one decommission per node, crashes included).
	decommissions int
	// exactAttempts: decommissions is exact, not a maximum.
	exactAttempts bool
	// result is the last operation's result ("" is "succeeded"; "aborted" for an abort
	// that finished a node and stopped there).
	result string
}

// assertConverged checks the end state of a scale-down: the rack's StatefulSet and pods,
// the removed pods' PVCs gone and the others intact, the CR's nodesPerRacks, the
// checkpoint gone and last-operation written, each removed node decommissioned once and
// the kept ones untouched, other racks untouched, and `status -o json` reporting it.
func assertConverged(t *testing.T, cl *fixture.Cluster, g *pvcGuard, e expectation) {
	t.Helper()
	ctx := context.Background()
	kc := suite.clients.Kube
	ns := cl.Namespace
	if e.decommissions == 0 {
		e.decommissions, e.exactAttempts = 1, true
	}
	if e.result == "" {
		e.result = "succeeded"
	}
	// The StatefulSet controller updates readyReplicas shortly after the pod is gone, and
	// `status` reports that field: wait until the status caught up with the spec.
	stsName := fixture.StatefulSetName(cl.Name, e.dc, e.rack)
	waitFor(t, "statefulset "+stsName+" status settled", 30*time.Second, func(ctx context.Context) (bool, error) {
		sts, err := kc.AppsV1().StatefulSets(ns).Get(ctx, stsName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ok := sts.Status.ObservedGeneration == sts.Generation && sts.Status.Replicas == *sts.Spec.Replicas && sts.Status.ReadyReplicas == *sts.Spec.Replicas
		return ok, fmt.Errorf("spec %d, status replicas %d ready %d (observed generation %d/%d)", *sts.Spec.Replicas, sts.Status.Replicas, sts.Status.ReadyReplicas, sts.Status.ObservedGeneration, sts.Generation)
	})

	sts, err := kc.AppsV1().StatefulSets(ns).Get(ctx, fixture.StatefulSetName(cl.Name, e.dc, e.rack), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(e.to), *sts.Spec.Replicas, "statefulset replicas")

	sel := labels.SelectorFromSet(fixture.RackLabels(nil, cl.Name, e.dc, e.rack)).String()
	pods, err := kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	require.NoError(t, err)
	var podNames []string
	for _, p := range pods.Items {
		podNames = append(podNames, p.Name)
	}
	slices.Sort(podNames)
	var want []string
	for i := range e.to {
		want = append(want, fixture.PodName(cl.Name, e.dc, e.rack, i))
	}
	assert.Equal(t, want, podNames, "pods of the rack")

	// PVC deletion is asynchronous (pvc-protection finalizer): the plugin may return once
	// the delete is accepted, so wait for the objects to go, with a deadline.
	for _, p := range cl.RackPods(e.dc, e.rack) {
		for _, name := range p.PVCs {
			if p.Ordinal >= e.to {
				waitFor(t, "PVC "+name+" deleted", 30*time.Second, func(ctx context.Context) (bool, error) {
					_, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
					if apierrors.IsNotFound(err) {
						return true, nil
					}
					return false, fmt.Errorf("PVC %s still there (err=%v)", name, err)
				})
				continue
			}
			pvc, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
			if assert.NoError(t, err, "PVC %s of a kept pod", name) {
				assert.Nil(t, pvc.DeletionTimestamp, "PVC %s of a kept pod is not being deleted", name)
				assert.Equal(t, corev1.ClaimBound, pvc.Status.Phase, name)
			}
		}
	}

	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	n, err := fixture.NodesPerRacks(cr, e.dc)
	require.NoError(t, err)
	assert.Equal(t, int64(e.to), n, "CR nodesPerRacks for %s", e.dc)
	_, hasCP := cr.GetAnnotations()[annCheckpoint]
	assert.False(t, hasCP, "checkpoint annotation removed at the end")
	lo := lastOperation(t, cr)
	if assert.NotNil(t, lo, "%s written at the end", annLastOperation) {
		assert.NotEmpty(t, lo["operationID"], "last-operation operationID")
		assert.Equal(t, e.result, lo["result"], "last-operation result")
		assert.NotEmpty(t, lo["startedAt"], "last-operation startedAt")
		assert.NotEmpty(t, lo["finishedAt"], "last-operation finishedAt")
	}

	for _, p := range cl.Pods {
		v, err := cl.Sim.Node(p.Name)
		require.NoError(t, err)
		removed := p.DC == e.dc && p.Rack == e.rack && p.Ordinal >= e.to
		if removed {
			if e.exactAttempts {
				assert.Equal(t, e.decommissions, v.DecommissionsStarted, "decommissions started on %s (calls: %d)", p.Name, v.DecommissionCalls)
			} else {
				assert.LessOrEqual(t, v.DecommissionsStarted, e.decommissions, "decommissions started on %s (calls: %d)", p.Name, v.DecommissionCalls)
				assert.GreaterOrEqual(t, v.DecommissionsStarted, 1, "decommissions started on %s", p.Name)
			}
			assert.Equal(t, sim.ModeDecommissioned, v.Mode, "mode of removed node %s", p.Name)
		} else {
			assert.Equal(t, 0, v.DecommissionsStarted, "kept node %s was never decommissioned", p.Name)
			assert.Equal(t, sim.ModeNormal, v.Mode, "kept node %s", p.Name)
		}
	}

	// Other racks keep their replicas.
	for _, dc := range cl.Opts.DCs {
		for _, rack := range dc.Racks {
			if dc.Name == e.dc && rack == e.rack {
				continue
			}
			other, err := kc.AppsV1().StatefulSets(ns).Get(ctx, fixture.StatefulSetName(cl.Name, dc.Name, rack), metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, int32(dc.Nodes), *other.Spec.Replicas, "untouched rack %s-%s", dc.Name, rack)
		}
	}

	if g != nil {
		g.Check(t, cl)
	}
	assertStatusJSON(t, cl, e)
}

// statusJSON is the part of `kubectl cassandra status -o json` the suite checks.
type statusJSON struct {
	Cluster struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		UID       string `json:"uid"`
	} `json:"cluster"`
	Datacenters []struct {
		Name         string `json:"name"`
		NodesPerRack int    `json:"nodesPerRack"`
		Racks        []struct {
			Name          string `json:"name"`
			StatefulSet   string `json:"statefulSet"`
			Replicas      int    `json:"replicas"`
			ReadyReplicas int    `json:"readyReplicas"`
			Pods          []struct {
				Name      string `json:"name"`
				NodeState string `json:"nodeState"`
			} `json:"pods"`
			PVCs []struct {
				Name string `json:"name"`
			} `json:"pvcs"`
		} `json:"racks"`
	} `json:"datacenters"`
	Operation     *json.RawMessage `json:"operation"`
	LastOperation *struct {
		OperationID string `json:"operationID"`
		Result      string `json:"result"`
	} `json:"lastOperation"`
}

// assertStatusJSON checks that `status -o json` reports the end state: the rack at its
// new size with the kept pods UN and their PVCs, no operation in flight, the last one
// succeeded.
func assertStatusJSON(t *testing.T, cl *fixture.Cluster, e expectation) {
	t.Helper()
	r := cassandra(t, cl.Namespace, time.Minute, "status", cl.Name, "-o", "json")
	require.Equal(t, exitOK, r.Code, "%s", r)
	var st statusJSON
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &st), "status -o json is JSON:\n%s", r.Stdout)
	assert.Equal(t, cl.Name, st.Cluster.Name)
	assert.Equal(t, string(cl.UID), st.Cluster.UID)
	assert.Nil(t, st.Operation, "no operation in flight")
	if assert.NotNil(t, st.LastOperation, "lastOperation reported") {
		assert.Equal(t, e.result, st.LastOperation.Result)
	}
	found := false
	for _, dc := range st.Datacenters {
		if dc.Name != e.dc {
			continue
		}
		assert.Equal(t, e.to, dc.NodesPerRack, "status: nodesPerRack of %s", e.dc)
		for _, rack := range dc.Racks {
			if rack.Name != e.rack {
				continue
			}
			found = true
			assert.Equal(t, fixture.StatefulSetName(cl.Name, e.dc, e.rack), rack.StatefulSet)
			assert.Equal(t, e.to, rack.Replicas, "status: replicas")
			assert.Equal(t, e.to, rack.ReadyReplicas, "status: ready replicas")
			var pods, pvcs []string
			for _, p := range rack.Pods {
				pods = append(pods, p.Name)
				assert.Equal(t, "UN", p.NodeState, "status: node state of %s", p.Name)
			}
			for _, p := range rack.PVCs {
				pvcs = append(pvcs, p.Name)
			}
			var wantPods, wantPVCs []string
			for _, p := range cl.RackPods(e.dc, e.rack) {
				if p.Ordinal < e.to {
					wantPods = append(wantPods, p.Name)
					wantPVCs = append(wantPVCs, p.PVCs...)
				}
			}
			assert.ElementsMatch(t, wantPods, pods, "status: pods of the rack")
			assert.ElementsMatch(t, wantPVCs, pvcs, "status: PVCs of the rack")
		}
	}
	assert.True(t, found, "status reports rack %s-%s:\n%s", e.dc, e.rack, r.Stdout)
}

func oneRack(nodes int) []fixture.DC {
	return []fixture.DC{{Name: "dc1", Racks: []string{"rack1"}, Nodes: nodes}}
}

// testScale2to1: the smallest scale-down, count at DC level, with a sidecar (an exec
// without -c cassandra would run in the wrong container) and a logs PVC per pod.
func testScale2to1(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2), NodesAtDCLevel: true, Sidecar: true, LogsStorage: true})
	g := newPVCGuard(t, ns)
	r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	t.Logf("scale 2->1 took %s", r.Duration.Round(time.Millisecond))
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 2, to: 1})
	assert.ElementsMatch(t, cl.Pods[1].PVCs, g.Deleted(), "exactly the removed pod's PVCs were deleted")
	summary.markConverged(t)
}

// testScale4to1: three nodes, one at a time, highest ordinal first, count in
// spec.nodesPerRacks.
func testScale4to1(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(4)})
	g := newPVCGuard(t, ns)
	// Record the order in which nodes are decommissioned, from the checkpoint.
	var order []string
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = watchCR(ctx, cl, opTimeout, func(cr *unstructured.Unstructured) bool {
			cp, ok, _ := parseCheckpoint(cr)
			if !ok {
				return false
			}
			mu.Lock()
			defer mu.Unlock()
			for _, s := range cp.Steps {
				if s.Kind == "decommission" && s.State != "pending" && !slices.Contains(order, s.Pod) {
					order = append(order, s.Pod)
				}
			}
			return false
		})
	}()
	r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	t.Logf("scale 4->1 took %s", r.Duration.Round(time.Millisecond))
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 4, to: 1})
	mu.Lock()
	seen := slices.Clone(order)
	mu.Unlock()
	// The watch may miss a step that was started and done between two of its events,
	// but whatever it saw must be in descending ordinal order.
	want := []string{fixture.PodName(cl.Name, "dc1", "rack1", 3), fixture.PodName(cl.Name, "dc1", "rack1", 2), fixture.PodName(cl.Name, "dc1", "rack1", 1)}
	var filtered []string
	for _, w := range want {
		if slices.Contains(seen, w) {
			filtered = append(filtered, w)
		}
	}
	assert.Equal(t, filtered, seen, "nodes decommissioned highest ordinal first")
	summary.markConverged(t)
}

// testScaleOneDCOfTwo: both DCs share spec.nodesPerRacks = 2; shrinking dc1's rack must
// leave dc2 at 2 nodes, in the StatefulSet and in what the CR says for dc2.
func testScaleOneDCOfTwo(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{
		DCs: []fixture.DC{{Name: "dc1", Racks: []string{"rack1"}, Nodes: 2}, {Name: "dc2", Racks: []string{"rack1"}, Nodes: 2}},
	})
	g := newPVCGuard(t, ns)
	r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 2, to: 1})
	cr, err := cl.Get(context.Background())
	require.NoError(t, err)
	n2, err := fixture.NodesPerRacks(cr, "dc2")
	require.NoError(t, err)
	assert.Equal(t, int64(2), n2, "dc2's effective nodesPerRacks unchanged")
	summary.markConverged(t)
}
