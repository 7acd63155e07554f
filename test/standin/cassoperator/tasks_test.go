package cassoperator

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// createTask creates a CassandraTask as the plugin writes it (plugins/cassoperator
// CreateTask): one job, concurrencyPolicy Forbid, args.rack when rack is set.
func (e *env) createTask(name, command, rack string) {
	e.t.Helper()
	job := map[string]any{"name": name, "command": command}
	if rack != "" {
		job["args"] = map[string]any{"rack": rack}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": TaskGVR.GroupVersion().String(), "kind": "CassandraTask",
		"metadata": map[string]any{"name": name, "namespace": testNS},
		"spec": map[string]any{"datacenter": map[string]any{"name": testDC, "namespace": testNS},
			"concurrencyPolicy": "Forbid", "jobs": []any{job}},
	}}
	if _, err := e.dyn.Resource(TaskGVR).Namespace(testNS).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) task(name string) taskView {
	e.t.Helper()
	u, err := e.dyn.Resource(TaskGVR).Namespace(testNS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return readTask(u)
}

func (e *env) uidsOf(pods ...string) map[string]string {
	out := map[string]string{}
	for _, p := range pods {
		if pp := e.pod(p); pp != nil {
			out[p] = string(pp.UID)
		}
	}
	return out
}

// TestRestartTask: a restart task of one rack rolls that rack's StatefulSet only: each
// pod re-created, highest ordinal first, one at a time, each started again by the
// operator; the task ends Complete (no Running condition: restart leaves the job loop
// before it) with its completionTime and succeeded; no podStatuses.
func TestRestartTask(t *testing.T) {
	e := newEnv(t, []string{"r1", "r2"}, 4)
	cfg := e.cfg()
	cfg.RunTasks = true
	op := New(cfg)
	r1 := []string{PodName(testCluster, testDC, "r1", 0), PodName(testCluster, testDC, "r1", 1)}
	r2 := []string{PodName(testCluster, testDC, "r2", 0), PodName(testCluster, testDC, "r2", 1)}
	before1, before2 := e.uidsOf(r1...), e.uidsOf(r2...)
	e.createTask("op-restart", "restart", "r1")
	acts := e.run(op)
	if want := []string{r1[1], r1[0]}; !reflect.DeepEqual(e.rolled, want) {
		t.Fatalf("rolled %q, want %q (actions %q)", e.rolled, want, acts)
	}
	after1 := e.uidsOf(r1...)
	for _, p := range r1 {
		if after1[p] == "" || after1[p] == before1[p] {
			t.Fatalf("pod %s not re-created (%s -> %s)", p, before1[p], after1[p])
		}
		if pp := e.pod(p); pp.Labels[LabelNodeState] != StateStarted {
			t.Fatalf("pod %s is %s", p, pp.Labels[LabelNodeState])
		}
		if n, _ := e.node(p); !n.Running {
			t.Fatalf("node %s not running", p)
		}
	}
	if !reflect.DeepEqual(e.uidsOf(r2...), before2) {
		t.Fatal("rack r2 was restarted too")
	}
	tk := e.task("op-restart")
	if !tk.done || tk.conds["Complete"] != "True" || tk.conds["Failed"] == "True" || tk.conds["Running"] == "True" || len(tk.pods) != 0 {
		t.Fatalf("task %+v", tk)
	}
	if n, _, _ := unstructured.NestedInt64(tk.u.Object, "status", "succeeded"); n != 2 {
		t.Fatalf("succeeded %d", n)
	}
	if tk.u.GetLabels()[TaskStatusLabel] != TaskCompleted {
		t.Fatalf("labels %v", tk.u.GetLabels())
	}
}

// TestCleanupTask: a cleanup task runs on every pod of the DC, rack by rack, one pod at
// a time (RUNNING then COMPLETED), then ends Complete with Running False.
func TestCleanupTask(t *testing.T) {
	e := newEnv(t, []string{"r1", "r2"}, 4)
	cfg := e.cfg()
	cfg.RunTasks = true
	op := New(cfg)
	e.createTask("op-cleanup", "cleanup", "")
	acts := e.run(op)
	tk := e.task("op-cleanup")
	if !tk.done || tk.conds["Complete"] != "True" || tk.conds["Running"] != "False" || tk.conds["Failed"] == "True" {
		t.Fatalf("task %+v (actions %q)", tk.conds, acts)
	}
	if len(tk.pods) != 4 {
		t.Fatalf("pod statuses %v", tk.pods)
	}
	for p, st := range tk.pods {
		if st["status"] != "COMPLETED" {
			t.Fatalf("pod %s: %v", p, st)
		}
	}
	// Start, Running, then per rack one patch per processRack: start pod 0; complete pod
	// 0 and start pod 1; complete pod 1 (the rack is done); then the end.
	want := []Action{ActTaskStart, ActTaskRunning, ActTaskPodStatuses, ActTaskPodStatuses, ActTaskPodStatuses, ActTaskPodStatuses, ActTaskPodStatuses, ActTaskPodStatuses, ActTaskComplete}
	if !reflect.DeepEqual(acts, want) {
		t.Fatalf("actions %q, want %q", acts, want)
	}
}

// TestTasksForbid: with concurrencyPolicy Forbid a second task starts only once the
// first completed.
func TestTasksForbid(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 2)
	cfg := e.cfg()
	cfg.RunTasks = true
	op := New(cfg)
	e.createTask("a-cleanup", "cleanup", "")
	e.createTask("b-restart", "restart", "")
	acts := e.run(op)
	firstDone := slices.Index(acts, ActTaskComplete)
	starts := 0
	for i, a := range acts {
		if a == ActTaskStart {
			if starts++; starts == 2 && i < firstDone {
				t.Fatalf("second task started before the first completed: %q", acts)
			}
		}
	}
	if starts != 2 || !e.task("a-cleanup").done || !e.task("b-restart").done {
		t.Fatalf("actions %q", acts)
	}
}

// TestTasksNotRunWithoutRunTasks: without Config.RunTasks tasks are created, never run
// (the stand-in's earlier behaviour, which its other tests rely on).
func TestTasksNotRunWithoutRunTasks(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 2)
	op := New(e.cfg())
	e.createTask("op-cleanup", "cleanup", "")
	if acts := e.run(op); len(acts) != 0 {
		t.Fatalf("actions %q", acts)
	}
	if tk := e.task("op-cleanup"); tk.active || tk.start != "" {
		t.Fatalf("task %+v", tk)
	}
}

// failingCleaner is the sim with a cleanup that fails on one pod.
type failingCleaner struct {
	*sim.Store
	bad   string
	calls map[string]int
}

func (f *failingCleaner) Cleanup(pod string) error {
	f.calls[pod]++
	if pod == f.bad {
		return errors.New("cleanup failed: no space left")
	}
	return nil
}

// TestCleanupTaskPodFails: a cleanup that fails is retried once (WAITING), then the pod
// is ERROR and the task ends Complete and Failed, naming how many pods failed.
func TestCleanupTaskPodFails(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	bad := PodName(testCluster, testDC, "r1", 1)
	fc := &failingCleaner{Store: e.cass, bad: bad, calls: map[string]int{}}
	cfg := e.cfg()
	cfg.RunTasks, cfg.Cass = true, fc
	e.createTask("op-cleanup", "cleanup", "")
	e.run(New(cfg))
	tk := e.task("op-cleanup")
	if !tk.done || tk.conds["Complete"] != "True" || tk.conds["Failed"] != "True" {
		t.Fatalf("task %+v", tk.conds)
	}
	if tk.pods[bad]["status"] != "ERROR" || fc.calls[bad] != 2 {
		t.Fatalf("bad pod %v, %d calls", tk.pods[bad], fc.calls[bad])
	}
	if n, _, _ := unstructured.NestedInt64(tk.u.Object, "status", "failed"); n != 1 {
		t.Fatalf("failed %d", n)
	}
	for _, p := range []string{PodName(testCluster, testDC, "r1", 0), PodName(testCluster, testDC, "r1", 2)} {
		if tk.pods[p]["status"] != "COMPLETED" || fc.calls[p] != 1 {
			t.Fatalf("pod %s: %v, %d calls", p, tk.pods[p], fc.calls[p])
		}
	}
}
