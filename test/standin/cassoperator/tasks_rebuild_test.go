package cassoperator

import (
	"context"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// rebuildEnv is a datacenter of four nodes over two racks next to a source DC "src" of
// three nodes; every keyspace replicates to both, rebuilds take a minute.
func rebuildEnv(t *testing.T) *env {
	t.Helper()
	both := map[string]int{testDC: 3, "src": 3}
	e := newEnvWith(t, []string{"r1", "r2"}, 4, sim.Options{Version: sim.V41, RF: 3, RebuildTime: time.Minute,
		Replication: map[string]map[string]int{"app": both, "system_auth": both, "system_distributed": both, "system_traces": both}})
	for i, ip := range []string{"10.99.0.1", "10.99.0.2", "10.99.0.3"} {
		if err := e.cass.AddNode(sim.NodeSpec{Pod: "src-" + string(rune('a'+i)), Address: ip, DC: "src", Load: "1 GiB"}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) createRebuildTask(name, src string) {
	e.t.Helper()
	e.createRebuildTaskArgs(name, map[string]any{"source_datacenter": src})
}

func (e *env) createRebuildTaskArgs(name string, args map[string]any) {
	e.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": TaskGVR.GroupVersion().String(), "kind": "CassandraTask",
		"metadata": map[string]any{"name": name, "namespace": testNS},
		"spec": map[string]any{"datacenter": map[string]any{"name": testDC, "namespace": testNS},
			"concurrencyPolicy": "Forbid",
			"jobs":              []any{map[string]any{"name": name, "command": "rebuild", "args": args}}},
	}}
	if _, err := e.dyn.Resource(TaskGVR).Namespace(testNS).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) rebuildsStarted() map[string]int {
	e.t.Helper()
	out := map[string]int{}
	for _, r := range []string{"r1", "r2"} {
		for k := 0; k < 2; k++ {
			p := PodName(testCluster, testDC, r, k)
			v, err := e.cass.Node(p)
			if err != nil {
				e.t.Fatal(err)
			}
			out[p] = v.RebuildsStarted
		}
	}
	return out
}

// TestRebuildTask: the pods are rebuilt one at a time, rack by rack in name order,
// each through one management API rebuild job polled until COMPLETED; the task ends
// Complete with succeeded 4 and every node rebuilt exactly once.
func TestRebuildTask(t *testing.T) {
	e := rebuildEnv(t)
	cfg := e.cfg()
	cfg.RunTasks = true
	op := New(cfg)
	e.createRebuildTask("op-rebuild", "src")
	acts := e.run(op)
	want := []Action{ActTaskStart, ActTaskRunning, ActTaskPodStatuses}
	if !reflect.DeepEqual(acts, want) {
		t.Fatalf("actions %q, want %q", acts, want)
	}
	order := []string{PodName(testCluster, testDC, "r1", 0), PodName(testCluster, testDC, "r1", 1), PodName(testCluster, testDC, "r2", 0), PodName(testCluster, testDC, "r2", 1)}
	for i, pod := range order {
		tk := e.task("op-rebuild")
		if tk.pods[pod]["status"] != "RUNNING" || tk.pods[pod]["jobId"] == "" {
			t.Fatalf("step %d: pod statuses %v", i, tk.pods)
		}
		for _, other := range order {
			v, _ := e.cass.Node(other)
			if v.Rebuilding != (other == pod) {
				t.Fatalf("step %d: %s rebuilding %v", i, other, v.Rebuilding)
			}
		}
		// The job runs: passes wait.
		if acts := e.run(op); len(acts) != 0 {
			t.Fatalf("step %d: actions while the job runs %q", i, acts)
		}
		e.now = e.now.Add(time.Minute)
		acts := e.run(op)
		// One processRack patch completes the pod and starts the next of its rack; a
		// rack's last pod is completed alone, then the next rack starts (or the task ends).
		want := []Action{ActTaskPodStatuses}
		switch i {
		case 1:
			want = []Action{ActTaskPodStatuses, ActTaskPodStatuses}
		case len(order) - 1:
			want = []Action{ActTaskPodStatuses, ActTaskComplete}
		}
		if !reflect.DeepEqual(acts, want) {
			t.Fatalf("step %d: actions %q, want %q", i, acts, want)
		}
	}
	tk := e.task("op-rebuild")
	if !tk.done || tk.conds["Complete"] != "True" || tk.conds["Failed"] == "True" {
		t.Fatalf("task %+v", tk.conds)
	}
	if n, _, _ := unstructured.NestedInt64(tk.u.Object, "status", "succeeded"); n != 4 {
		t.Fatalf("succeeded %d", n)
	}
	for _, pod := range order {
		if tk.pods[pod]["status"] != "COMPLETED" {
			t.Fatalf("pod %s: %v", pod, tk.pods[pod])
		}
	}
	if got := e.rebuildsStarted(); !reflect.DeepEqual(got, map[string]int{order[0]: 1, order[1]: 1, order[2]: 1, order[3]: 1}) {
		t.Fatalf("rebuilds started %v", got)
	}
}

// TestRebuildTaskPodFails: a job that errors is retried once (the retry fetches only
// what the failed session had to bring), then the pod is ERROR with the job's error
// and the task ends Failed.
func TestRebuildTaskPodFails(t *testing.T) {
	e := rebuildEnv(t)
	bad := PodName(testCluster, testDC, "r1", 0)
	if err := e.cass.SetFault(bad, sim.Fault{RebuildFailures: 2}); err != nil {
		t.Fatal(err)
	}
	cfg := e.cfg()
	cfg.RunTasks = true
	op := New(cfg)
	e.createRebuildTask("op-rebuild", "src")
	for i := 0; i < 8 && !e.task("op-rebuild").done; i++ {
		e.run(op)
		e.now = e.now.Add(time.Minute)
	}
	tk := e.task("op-rebuild")
	if !tk.done || tk.conds["Failed"] != "True" {
		t.Fatalf("task %+v, pods %v", tk.conds, tk.pods)
	}
	if tk.pods[bad]["status"] != "ERROR" || tk.pods[bad]["error"] != "Error while rebuilding node: Stream failed" {
		t.Fatalf("bad pod %v", tk.pods[bad])
	}
	got := e.rebuildsStarted()
	if got[bad] != 2 {
		t.Fatalf("rebuilds started %v", got)
	}
	for p, n := range got {
		if p != bad && (n != 1 || tk.pods[p]["status"] != "COMPLETED") {
			t.Fatalf("pod %s: %v, %d rebuilds", p, tk.pods[p], n)
		}
	}
}

// TestRebuildTaskUnknownSourceDC: every job errors with the DC check's message.
func TestRebuildTaskUnknownSourceDC(t *testing.T) {
	e := rebuildEnv(t)
	cfg := e.cfg()
	cfg.RunTasks = true
	op := New(cfg)
	e.createRebuildTask("op-rebuild", "nope")
	e.run(op)
	tk := e.task("op-rebuild")
	if !tk.done || tk.conds["Failed"] != "True" {
		t.Fatalf("task %+v, pods %v", tk.conds, tk.pods)
	}
	for p, st := range tk.pods {
		if st["status"] != "ERROR" || st["error"] != "Provided datacenter 'nope' is not a valid datacenter, available datacenters are: "+testDC+",src" {
			t.Fatalf("pod %s: %v", p, st)
		}
	}
}

// TestRebuildTaskOnePod: a task naming a pod (args.pod_name, genericPodFilter) rebuilds
// that node only, once; with args.rack too, a pod of another rack matches nothing and
// the task completes at once with nothing done.
func TestRebuildTaskOnePod(t *testing.T) {
	e := rebuildEnv(t)
	cfg := e.cfg()
	cfg.RunTasks = true
	op := New(cfg)
	pod := PodName(testCluster, testDC, "r2", 1)
	e.createRebuildTaskArgs("a-rebuild", map[string]any{"source_datacenter": "src", "pod_name": pod})
	for i := 0; i < 8 && !e.task("a-rebuild").done; i++ {
		e.run(op)
		e.now = e.now.Add(time.Minute)
	}
	tk := e.task("a-rebuild")
	if !tk.done || tk.conds["Complete"] != "True" || tk.conds["Failed"] == "True" {
		t.Fatalf("task %+v, pods %v", tk.conds, tk.pods)
	}
	if len(tk.pods) != 1 || tk.pods[pod]["status"] != "COMPLETED" {
		t.Fatalf("pod statuses %v, want %s COMPLETED only", tk.pods, pod)
	}
	if n, _, _ := unstructured.NestedInt64(tk.u.Object, "status", "succeeded"); n != 1 {
		t.Fatalf("succeeded %d, want 1", n)
	}
	want := map[string]int{}
	for _, r := range []string{"r1", "r2"} {
		for k := 0; k < 2; k++ {
			want[PodName(testCluster, testDC, r, k)] = 0
		}
	}
	want[pod] = 1
	if got := e.rebuildsStarted(); !reflect.DeepEqual(got, want) {
		t.Fatalf("rebuilds started %v, want %v", got, want)
	}

	e.createRebuildTaskArgs("b-rebuild", map[string]any{"source_datacenter": "src", "pod_name": pod, "rack": "r1"})
	for i := 0; i < 4 && !e.task("b-rebuild").done; i++ {
		e.run(op)
	}
	tk = e.task("b-rebuild")
	if !tk.done || tk.conds["Failed"] == "True" || len(tk.pods) != 0 {
		t.Fatalf("task %+v, pods %v: want complete with no pod", tk.conds, tk.pods)
	}
	if got := e.rebuildsStarted(); !reflect.DeepEqual(got, want) {
		t.Fatalf("rebuilds started %v, want %v", got, want)
	}
}
