package cli

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// crashAtRestore runs args in fresh worlds, killed right after side effect k for
// k = 1, 2, ... until the side effect the run died after is the operator's restore (a
// write of its Deployment back to 1): with pods that take time to start, the number of
// side effects before it varies from run to run.
func crashAtRestore(t *testing.T, opts world.Opts, args []string) (*world.World, int) {
	t.Helper()
	// The count of side effects before the restore varies by one or two between runs
	// (a wait may find its pod already there), so a search that only moves forward can
	// step over the restore: once a run shows the restore done, the crash points just
	// before are tried again a few times.
	for k := 1; k < 200; k++ {
		w, landed, passed := crashRestoreAt(t, opts, args, k)
		if landed {
			return w, k
		}
		if !passed {
			continue
		}
		for try := 0; try < 5; try++ {
			for j := max(1, k-2); j <= k; j++ {
				if w, landed, _ := crashRestoreAt(t, opts, args, j); landed {
					return w, j
				}
			}
		}
	}
	t.Fatal("no crash point at the operator restore")
	return nil, 0
}

// crashRestoreAt runs args crashing at side effect k: landed when the crash came right
// after the restore's write, passed when the restore was written before the end.
func crashRestoreAt(t *testing.T, opts world.Opts, args []string, k int) (w *world.World, landed, passed bool) {
	t.Helper()
	w = world.New(t, opts)
	_, stderr, code, crashed := run(w, k, args...)
	if !crashed && code != 0 {
		t.Fatalf("crash point %d: the run failed (%d)\n%s", k, code, stderr)
	}
	h := w.History()
	for i, e := range h {
		if e.Kind == "write" && e.Resource == "deployments" && e.After == 1 {
			return w, crashed && i == len(h)-1, true
		}
	}
	return w, false, false
}

// TestResumeAfterOperatorRestore kills each kind of operation right after the write
// that restored the operator, before the restore's done mark and the checkpoint's
// removal reached the server; the resume must finish without pausing the operator
// again: its replica history is exactly 1 -> 0 -> 1 (it was 1 -> 0 -> 1 -> 0 -> 1 for
// a scale-down, whose pause step did not know the restore had run).
func TestResumeAfterOperatorRestore(t *testing.T) {
	cases := []struct {
		name string
		opts world.Opts
		args []string
	}{
		{name: "scale-down", opts: world.Opts{Nodes: 3, Operator: true}, args: []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--yes"}},
		{name: "scale-up", opts: world.Opts{Nodes: 1, Operator: true}, args: []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--yes"}},
		{name: "restart", opts: world.Opts{Nodes: 2, Operator: true, StartTime: time.Millisecond}, args: []string{"restart", "demo", "-n", "cassandra", "--rack", "rack1", "--yes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, k := crashAtRestore(t, tc.opts, tc.args)
			if cp := loadCP(t, w); cp == nil {
				t.Fatal("the crashed run left no checkpoint")
			}
			if _, stderr, code, crashed := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 || crashed {
				t.Fatalf("resume: code %d\n%s", code, stderr)
			}
			if got := w.OperatorReplicas("casskop"); !reflect.DeepEqual(got, []int32{1, 0, 1}) {
				t.Fatalf("operator replica history %v, want [1 0 1]", got)
			}
			if loadCP(t, w) != nil {
				t.Fatal("checkpoint left after the resume")
			}
			t.Logf("crash after the operator restore (side effect %d), resumed: operator history 1 -> 0 -> 1", k)
		})
	}
}

// addClusterIn adds a CassandraCluster ns/name (no pods: only listed) to the fake world.
func addClusterIn(t *testing.T, w *world.World, ns, name string) {
	t.Helper()
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "db.orange.com/v2", "kind": "CassandraCluster",
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": "cc-" + ns + "-" + name, "resourceVersion": "1"},
		"spec":     map[string]any{"nodesPerRacks": int64(1)},
	}}
	if err := w.Dyn.Tracker().Add(cr); err != nil {
		t.Fatal(err)
	}
}

// setOperatorContainer gives the fake operator Deployment a CassKop container with the
// given WATCH_NAMESPACE (nil: unset, every namespace).
func setOperatorContainer(t *testing.T, w *world.World, watch *corev1.EnvVar) {
	t.Helper()
	gvr := appsv1.SchemeGroupVersion.WithResource("deployments")
	obj, err := w.Kube.Tracker().Get(gvr, w.NS, "casskop")
	if err != nil {
		t.Fatal(err)
	}
	d := obj.(*appsv1.Deployment).DeepCopy()
	c := corev1.Container{Name: "casskop", Image: "ghcr.io/cscetbon/casskop:2.3.4", Command: []string{"casskop"}}
	if watch != nil {
		c.Env = []corev1.EnvVar{*watch}
	}
	d.Spec.Template.Spec.Containers = []corev1.Container{c}
	if err := w.Kube.Tracker().Update(gvr, d, w.NS); err != nil {
		t.Fatal(err)
	}
}

// TestUnmanagedWarning: the plan names every other CassandraCluster the paused operator
// manages: all namespaces' when WATCH_NAMESPACE is empty, its own namespace's when the
// chart sets it to that; when listing across namespaces is forbidden it says it cannot
// name them, and the plan goes on.
func TestUnmanagedWarning(t *testing.T) {
	dry := []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--dry-run"}
	setup := func(t *testing.T) *world.World {
		w := world.New(t, world.Opts{Nodes: 2, Operator: true})
		addClusterIn(t, w, "cassandra", "other")
		addClusterIn(t, w, "payments", "ledger")
		return w
	}
	t.Run("every namespace", func(t *testing.T) {
		w := setup(t)
		setOperatorContainer(t, w, nil)
		stdout, stderr, code, _ := run(w, 0, dry...)
		stderr = stdout + stderr
		for _, want := range []string{"CassandraCluster cassandra/other is also managed by cassandra/casskop", "CassandraCluster payments/ledger is also managed by cassandra/casskop"} {
			if code != 0 || !strings.Contains(stderr, want) {
				t.Fatalf("code %d, no %q in:\n%s", code, want, stderr)
			}
		}
	})
	t.Run("own namespace", func(t *testing.T) {
		w := setup(t)
		setOperatorContainer(t, w, &corev1.EnvVar{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}})
		stdout, stderr, code, _ := run(w, 0, dry...)
		stderr = stdout + stderr
		if code != 0 || !strings.Contains(stderr, "cassandra/other is also managed") || strings.Contains(stderr, "payments/ledger") {
			t.Fatalf("code %d:\n%s", code, stderr)
		}
	})
	t.Run("listing forbidden", func(t *testing.T) {
		w := setup(t)
		setOperatorContainer(t, w, nil)
		w.Dyn.PrependReactor("list", "cassandraclusters", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetNamespace() == "" {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "db.orange.com", Resource: "cassandraclusters"}, "", errors.New("no"))
			}
			return false, nil, nil
		})
		stdout, stderr, code, _ := run(w, 0, dry...)
		stderr = stdout + stderr
		if code != 0 || !strings.Contains(stderr, "cannot be named: it manages every namespace and listing CassandraClusters there is forbidden to you") {
			t.Fatalf("code %d:\n%s", code, stderr)
		}
	})
}

// TestSharedPauseTwoClusters: one operator serves two clusters. An operation on the
// other cluster holds it paused; a scale-down of demo joins the pause and, at its end,
// leaves it paused for the other; the other's restore then revives it. And the reverse:
// demo paused it first, the other joined while demo's run was dead; demo's resume
// ends without reviving the operator in the middle of the other operation.
func TestSharedPauseTwoClusters(t *testing.T) {
	scale := []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--yes"}
	other := record.PauseHolder{OperationID: "scale-other", Namespace: "payments", Cluster: "ledger", Replicas: 1}
	otherWorld := func(w *world.World) (*steps.World, record.PausedOperator) {
		op := record.PausedOperator{Namespace: w.NS, Name: "casskop", UID: "dep-casskop", Replicas: 1}
		return &steps.World{Kube: w.Kube, Namespace: "payments", CP: &record.Checkpoint{OperationID: other.OperationID, Namespace: "payments", Cluster: "ledger", PausedOperator: &op}}, op
	}
	holdersOf := func(t *testing.T, w *world.World) []string {
		obj, _ := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), w.NS, "casskop")
		hs, err := record.PauseHolders(obj.(*appsv1.Deployment).Annotations)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hs {
			ids = append(ids, h.OperationID)
		}
		return ids
	}
	t.Run("joins", func(t *testing.T) {
		w := world.New(t, world.Opts{Nodes: 3, Operator: true})
		w.AddClusterWithOperation(other.Namespace, other.Cluster, other.OperationID)
		w.PauseDeployment("casskop", []record.PauseHolder{other})
		stdout, stderr, code, _ := run(w, 0, scale...)
		stderr = stdout + stderr
		if code != 0 || !strings.Contains(stderr, "is already paused by operation scale-other on payments/ledger: this operation joins the pause") {
			t.Fatalf("code %d:\n%s", code, stderr)
		}
		w.AssertConverged(1, "joined")
		if got := w.DeploymentReplicas("casskop"); got != 0 || !reflect.DeepEqual(holdersOf(t, w), []string{"scale-other"}) {
			t.Fatalf("after demo's scale-down: operator at %d held by %v, want 0 held by [scale-other]", got, holdersOf(t, w))
		}
		sw, op := otherWorld(w)
		if _, err := steps.RestoreOperator(context.Background(), sw, op, true); err != nil {
			t.Fatal(err)
		}
		if got := w.DeploymentReplicas("casskop"); got != 1 || len(holdersOf(t, w)) != 0 {
			t.Fatalf("after the other's restore: operator at %d held by %v", got, holdersOf(t, w))
		}
		// Demo joined (0 -> 0) and left (0 -> 0); the other restored (0 -> 1).
		if got := w.OperatorReplicas("casskop"); !reflect.DeepEqual(got, []int32{0, 0, 0, 1}) {
			t.Fatalf("operator writes %v", got)
		}
	})
	t.Run("other joins while demo is dead", func(t *testing.T) {
		ref := world.New(t, world.Opts{Nodes: 3, Operator: true})
		if _, stderr, code, _ := run(ref, 0, scale...); code != 0 {
			t.Fatalf("reference: %d\n%s", code, stderr)
		}
		pausedAt := 0
		for i, ev := range ref.History() {
			if ev.Kind == "write" && ev.Resource == "deployments" && pausedAt == 0 {
				pausedAt = i + 1
			}
		}
		w := world.New(t, world.Opts{Nodes: 3, Operator: true})
		w.AddClusterWithOperation(other.Namespace, other.Cluster, other.OperationID)
		if _, _, _, crashed := run(w, pausedAt+2, scale...); !crashed {
			t.Fatal("no crash")
		}
		// The other operation joins, as its run would (internal/steps PauseOperator).
		obj, _ := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), w.NS, "casskop")
		hs, err := record.PauseHolders(obj.(*appsv1.Deployment).Annotations)
		if err != nil || len(hs) != 1 || w.DeploymentReplicas("casskop") != 0 {
			t.Fatalf("demo's pause: holders %v (%v)", hs, err)
		}
		w.PauseDeployment("casskop", append(hs, other))
		sw, op := otherWorld(w)
		if _, stderr, code, _ := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 {
			t.Fatalf("resume: %d\n%s", code, stderr)
		}
		w.AssertConverged(1, "resumed")
		if got := w.DeploymentReplicas("casskop"); got != 0 || !reflect.DeepEqual(holdersOf(t, w), []string{"scale-other"}) {
			t.Fatalf("demo's end revived the operator in the middle of the other operation: at %d, held by %v", got, holdersOf(t, w))
		}
		if _, err := steps.RestoreOperator(context.Background(), sw, op, true); err != nil {
			t.Fatal(err)
		}
		if got := w.DeploymentReplicas("casskop"); got != 1 {
			t.Fatalf("after the other's restore: operator at %d", got)
		}
	})
	t.Run("no pause refused while held", func(t *testing.T) {
		w := world.New(t, world.Opts{Nodes: 3, Operator: true})
		w.AddClusterWithOperation(other.Namespace, other.Cluster, other.OperationID)
		w.PauseDeployment("casskop", []record.PauseHolder{other})
		_, stderr, code, _ := run(w, 0, append(scale, "--pause-operator=false")...)
		if code != operation.ExitRefused || !strings.Contains(stderr, "is paused by operation scale-other on payments/ledger, which restores it when it ends") {
			t.Fatalf("code %d:\n%s", code, stderr)
		}
	})
}
