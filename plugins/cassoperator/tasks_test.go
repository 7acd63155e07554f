package cassoperator

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

func task(name, dc, command string, done bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "control.k8ssandra.io/v1alpha1", "kind": "CassandraTask",
		"metadata": map[string]any{"name": name, "namespace": "ns"},
		"spec": map[string]any{"datacenter": map[string]any{"name": dc, "namespace": "ns"},
			"jobs": []any{map[string]any{"name": name + "-job", "command": command}}},
	}}
	if done {
		u.Object["status"] = map[string]any{"completionTime": "2026-12-05T10:00:00Z"}
	}
	return u
}

// TestBusyTasks: an unfinished CassandraTask on the datacenter makes it busy (a resize
// during a cleanup breaks it: cass-operator #902); finished ones and other
// datacenters' do not.
func TestBusyTasks(t *testing.T) {
	a, _, _ := fakeAdapter([]runtime.Object{task("clean", "dc1", "cleanup", false), task("old", "dc1", "restart", true), task("other", "dc2", "cleanup", false)})
	busy, err := a.BusyPods(context.Background(), "ns", "dc1")
	if err != nil {
		t.Fatal(err)
	}
	if len(busy) != 1 || !strings.Contains(busy[0], "CassandraTask clean (cleanup) has not finished") {
		t.Fatalf("busy = %q", busy)
	}
}

// TestCreateAndGetTask: the task is written as cass-operator reads it (one job, args.rack,
// concurrencyPolicy Forbid, the operation label); a second create says it exists; the
// status is read back (conditions, podStatuses).
func TestCreateAndGetTask(t *testing.T) {
	ctx := context.Background()
	a, dyn, _ := fakeAdapter(nil)
	spec := operator.TaskSpec{Name: "restart-1-restart", DC: "dc1", Command: "restart", Rack: "r1", OperationID: "restart-1"}
	if err := a.CreateTask(ctx, "ns", spec); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateTask(ctx, "ns", spec); !errors.Is(err, operator.ErrTaskExists) {
		t.Fatalf("second create: %v", err)
	}
	u, err := dyn.Resource(TaskGVR).Namespace("ns").Get(ctx, spec.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p, _, _ := unstructured.NestedString(u.Object, "spec", "concurrencyPolicy"); p != "Forbid" {
		t.Fatalf("concurrencyPolicy %q", p)
	}
	u.Object["status"] = map[string]any{"startTime": "2026-12-05T10:00:00Z", "completionTime": "2026-12-05T10:05:00Z",
		"conditions":  []any{map[string]any{"type": "Complete", "status": "True"}, map[string]any{"type": "Failed", "status": "True", "message": "1 pods failed during processing"}},
		"podStatuses": map[string]any{"p0": map[string]any{"status": "COMPLETED"}, "p1": map[string]any{"status": "ERROR", "error": "boom"}}}
	if _, err := dyn.Resource(TaskGVR).Namespace("ns").Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := a.GetTask(ctx, "ns", spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	want := &operator.Task{Name: spec.Name, DC: "dc1", Command: "restart", Rack: "r1", OperationID: "restart-1", Started: true, Finished: true,
		Complete: true, Failed: true, Message: "1 pods failed during processing",
		Pods: map[string]operator.TaskPod{"p0": {Status: "COMPLETED"}, "p1": {Status: "ERROR", Error: "boom"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if none, err := a.GetTask(ctx, "ns", "absent"); none != nil || err != nil {
		t.Fatalf("absent: %v %v", none, err)
	}
}

// TestRebuildTask: a rebuild names its pod and source datacenter in the job's args
// (JobArguments pod_name, source_datacenter), read back as written.
func TestRebuildTask(t *testing.T) {
	ctx := context.Background()
	a, dyn, _ := fakeAdapter(nil)
	spec := operator.TaskSpec{Name: "add-1-rebuild-p0", DC: "dc2", Command: operator.TaskRebuild, Pod: "c-dc2-a-sts-0", SourceDC: "dc1", OperationID: "add-1"}
	if err := a.CreateTask(ctx, "ns", spec); err != nil {
		t.Fatal(err)
	}
	u, err := dyn.Resource(TaskGVR).Namespace("ns").Get(ctx, spec.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, _ := unstructured.NestedSlice(u.Object, "spec", "jobs")
	wantJob := map[string]any{"name": spec.Name, "command": "rebuild", "args": map[string]any{"pod_name": "c-dc2-a-sts-0", "source_datacenter": "dc1"}}
	if len(jobs) != 1 || !reflect.DeepEqual(jobs[0], wantJob) {
		t.Fatalf("jobs %v, want [%v]", jobs, wantJob)
	}
	ts, err := a.ListTasks(ctx, "ns", "dc2")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].Command != "rebuild" || ts[0].Pod != spec.Pod || ts[0].SourceDC != "dc1" || ts[0].OperationID != "add-1" {
		t.Fatalf("tasks %+v", ts)
	}
}

// TestAutoCleanup: the operator cleans up after a scale-up unless no-cleanup is set.
func TestAutoCleanup(t *testing.T) {
	u := dc("ns", "dc1", map[string]any{"clusterName": "c", "size": int64(3)})
	off := dc("ns", "dc2", map[string]any{"clusterName": "c", "size": int64(3)})
	off.SetAnnotations(map[string]string{NoCleanupAnnotation: ""})
	a, _, _ := fakeAdapter([]runtime.Object{u, off})
	for name, want := range map[string]bool{"dc1": true, "dc2": false} {
		got, err := a.AutoCleanup(context.Background(), "ns", name)
		if err != nil || got != want {
			t.Fatalf("%s: %v %v, want %v", name, got, err, want)
		}
	}
}

// TestListTasks: the datacenter's tasks, finished or not, by name; others' are left out.
func TestListTasks(t *testing.T) {
	a, _, _ := fakeAdapter([]runtime.Object{task("b", "dc1", "cleanup", false), task("a", "dc1", "restart", true), task("other", "dc2", "cleanup", false)})
	ts, err := a.ListTasks(context.Background(), "ns", "dc1")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Name != "a" || !ts[0].Finished || ts[1].Name != "b" || ts[1].Finished || ts[1].Command != "cleanup" {
		t.Fatalf("tasks %+v", ts)
	}
}

// TestTaskStartedAndDeleteTask: a task the controller labelled is started (its first
// write), Running from its condition; DeleteTask sends the UID and resourceVersion read
// as preconditions, and a Conflict (or NotFound) is ErrTaskChanged.
func TestTaskStartedAndDeleteTask(t *testing.T) {
	ctx := context.Background()
	u := task("r-replacenode", "dc1", "replacenode", false)
	u.SetLabels(map[string]string{taskStatusLabel: "active", operator.TaskOperationLabel: "r"})
	u.SetUID("uid-1")
	u.SetResourceVersion("7")
	u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Running", "status": "True"}}}
	a, dyn, _ := fakeAdapter([]runtime.Object{u})
	got, err := a.GetTask(ctx, "ns", u.GetName())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Started || !got.Running || got.UID != "uid-1" || got.ResourceVersion != "7" {
		t.Fatalf("got %+v, want started, running, uid-1 at version 7", got)
	}
	if err := a.DeleteTask(ctx, "ns", u.GetName(), "uid-1", "7"); err != nil {
		t.Fatal(err)
	}
	var del k8stesting.DeleteAction
	for _, ac := range dyn.Actions() {
		if d, ok := ac.(k8stesting.DeleteAction); ok {
			del = d
		}
	}
	pre := del.GetDeleteOptions().Preconditions
	if pre == nil || pre.UID == nil || string(*pre.UID) != "uid-1" || pre.ResourceVersion == nil || *pre.ResourceVersion != "7" {
		t.Fatalf("delete preconditions %+v, want UID uid-1 and resourceVersion 7", pre)
	}
	if err := a.DeleteTask(ctx, "ns", u.GetName(), "uid-1", "7"); !errors.Is(err, operator.ErrTaskChanged) {
		t.Fatalf("delete of a task gone: %v, want ErrTaskChanged", err)
	}
	dyn.PrependReactor("delete", "cassandratasks", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(TaskGVR.GroupResource(), u.GetName(), errors.New("Precondition failed"))
	})
	if err := a.DeleteTask(ctx, "ns", u.GetName(), "uid-1", "7"); !errors.Is(err, operator.ErrTaskChanged) {
		t.Fatalf("delete refused by a precondition: %v, want ErrTaskChanged", err)
	}
}
