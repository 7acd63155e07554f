package cassoperator

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// TaskGVR is cass-operator's CassandraTask (apis/control/v1alpha1/cassandratask_types.go).
var TaskGVR = schema.GroupVersionResource{Group: "control.k8ssandra.io", Version: "v1alpha1", Resource: "cassandratasks"}

// listTasks lists the namespace's CassandraTasks; none on a server without the CRD
// (or without a dynamic client).
func (a *Adapter) listTasks(ctx context.Context, ns string) ([]unstructured.Unstructured, error) {
	if a.Dynamic == nil {
		return nil, nil
	}
	l, err := a.Dynamic.Resource(TaskGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list CassandraTasks: %w", err)
	}
	return l.Items, nil
}

// runningTasks lists the CassandraTasks on datacenter dc (the resource's name,
// spec.datacenter.name) that have not finished: no status.completionTime
// (cassandratask_types.go; the controller sets it when every job ended). A resize
// while one runs breaks it (cass-operator #902), so none may run when a scale starts.
// A server without the CRD has no tasks.
func (a *Adapter) runningTasks(ctx context.Context, ns, dc string) ([]string, error) {
	l, err := a.listTasks(ctx, ns)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range l {
		if running, what := taskRunning(&t, dc); running {
			out = append(out, what)
		}
	}
	sort.Strings(out)
	return out, nil
}

// taskRunning says whether t is an unfinished task on dc, and in words which.
func taskRunning(t *unstructured.Unstructured, dc string) (bool, string) {
	name, _, _ := unstructured.NestedString(t.Object, "spec", "datacenter", "name")
	if name != dc {
		return false, ""
	}
	if done, _, _ := unstructured.NestedString(t.Object, "status", "completionTime"); done != "" {
		return false, ""
	}
	jobs, _, _ := unstructured.NestedSlice(t.Object, "spec", "jobs")
	var cmds []string
	for _, j := range jobs {
		if m, ok := j.(map[string]any); ok {
			if c, ok := m["command"].(string); ok {
				cmds = append(cmds, c)
			}
		}
	}
	return true, fmt.Sprintf("CassandraTask %s (%s) has not finished: a resize while it runs breaks it (cass-operator #902)", t.GetName(), strings.Join(cmds, ","))
}

// Names of a CassandraTask the adapter reads (internal/controllers/control/
// cassandratask_controller.go; apis/cassandra/v1beta1/cassandradatacenter_types.go).
const (
	// NoCleanupAnnotation on a CassandraDatacenter stops the operator from creating a
	// cleanup task after a scale-up (reconcile_racks.go cleanupAfterScaling).
	NoCleanupAnnotation = "cassandra.datastax.com/no-cleanup"
	// TaskKind is the CassandraTask's kind.
	TaskKind = "CassandraTask"
)

// CreateTask implements operator.Tasks: a CassandraTask of one job, concurrencyPolicy
// Forbid (the controller's default too: cassandratask_controller.go setDefaults), on
// the datacenter resource t.DC, args.rack when t.Rack is set (jobs.go restartSts and
// genericPodFilter honour it), args.pod_name when t.Pod is (genericPodFilter: the job
// runs on that pod only), args.source_datacenter when t.SourceDC is, labelled with the
// operation's ID.
func (a *Adapter) CreateTask(ctx context.Context, ns string, t operator.TaskSpec) error {
	job := map[string]any{"name": t.Name, "command": t.Command}
	args := map[string]any{}
	if t.Rack != "" {
		args["rack"] = t.Rack
	}
	if t.Pod != "" {
		args["pod_name"] = t.Pod
	}
	// The rebuild job streams from args.source_datacenter (jobs.go callRebuild;
	// cassandratask_types.go JobArguments).
	if t.SourceDC != "" {
		args["source_datacenter"] = t.SourceDC
	}
	if len(args) > 0 {
		job["args"] = args
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": TaskGVR.GroupVersion().String(), "kind": TaskKind,
		"metadata": map[string]any{"name": t.Name, "namespace": ns,
			"labels": map[string]any{operator.TaskOperationLabel: t.OperationID}},
		"spec": map[string]any{
			"datacenter":        map[string]any{"name": t.DC, "namespace": ns},
			"concurrencyPolicy": "Forbid",
			"jobs":              []any{job},
		},
	}}
	_, err := a.Dynamic.Resource(TaskGVR).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("CassandraTask %s/%s: %w", ns, t.Name, operator.ErrTaskExists)
	}
	if err != nil {
		return fmt.Errorf("cannot create CassandraTask %s/%s: %w", ns, t.Name, err)
	}
	return nil
}

// GetTask implements operator.Tasks.
func (a *Adapter) GetTask(ctx context.Context, ns, name string) (*operator.Task, error) {
	u, err := a.Dynamic.Resource(TaskGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read CassandraTask %s/%s: %w", ns, name, err)
	}
	return taskOf(u), nil
}

// taskStatusLabel is the label the task controller sets when it starts a task
// (active), then when it ends it (completed) (cassandratask_controller.go).
const taskStatusLabel = "control.k8ssandra.io/status"

// DeleteTask implements operator.Tasks: a delete with the UID and resourceVersion read
// as preconditions, so that only the task as judged goes (the controller's start is an
// Update of the task, which changes its resourceVersion before any job runs).
func (a *Adapter) DeleteTask(ctx context.Context, ns, name, uid, resourceVersion string) error {
	pre := metav1.Preconditions{}
	if uid != "" {
		pre.UID = (*types.UID)(&uid)
	}
	if resourceVersion != "" {
		pre.ResourceVersion = &resourceVersion
	}
	err := a.Dynamic.Resource(TaskGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &pre})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return fmt.Errorf("CassandraTask %s/%s: %w (%v)", ns, name, operator.ErrTaskChanged, err)
	}
	if err != nil {
		return fmt.Errorf("cannot delete CassandraTask %s/%s: %w", ns, name, err)
	}
	return nil
}

// taskOf maps a CassandraTask (cassandratask_types.go) onto operator.Task.
func taskOf(u *unstructured.Unstructured) *operator.Task {
	t := &operator.Task{Name: u.GetName(), UID: string(u.GetUID()), ResourceVersion: u.GetResourceVersion(),
		OperationID: u.GetLabels()[operator.TaskOperationLabel], Pods: map[string]operator.TaskPod{}}
	t.DC, _, _ = unstructured.NestedString(u.Object, "spec", "datacenter", "name")
	if jobs, _, _ := unstructured.NestedSlice(u.Object, "spec", "jobs"); len(jobs) > 0 {
		if m, ok := jobs[0].(map[string]any); ok {
			t.Command, _, _ = unstructured.NestedString(m, "command")
			t.Rack, _, _ = unstructured.NestedString(m, "args", "rack")
			t.Pod, _, _ = unstructured.NestedString(m, "args", "pod_name")
			t.SourceDC, _, _ = unstructured.NestedString(m, "args", "source_datacenter")
		}
	}
	start, _, _ := unstructured.NestedString(u.Object, "status", "startTime")
	done, _, _ := unstructured.NestedString(u.Object, "status", "completionTime")
	// The controller's first write to a task it starts is its status label, then
	// startTime (cassandratask_controller.go Reconcile).
	_, labelled := u.GetLabels()[taskStatusLabel]
	t.Started, t.Finished = start != "" || labelled, done != ""
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["status"] != "True" {
			continue
		}
		switch m["type"] {
		case "Complete":
			t.Complete = true
		case "Running":
			t.Running = true
		case "Failed":
			t.Failed = true
			t.Message, _ = m["message"].(string)
		}
	}
	pods, _, _ := unstructured.NestedMap(u.Object, "status", "podStatuses")
	for pod, v := range pods {
		m, _ := v.(map[string]any)
		st, _ := m["status"].(string)
		e, _ := m["error"].(string)
		t.Pods[pod] = operator.TaskPod{Status: st, Error: e}
	}
	return t
}

// AutoCleanup implements operator.Tasks: the operator creates a cleanup task after each
// scale-up unless the resource is annotated no-cleanup (reconcile_racks.go
// cleanupAfterScaling: metav1.HasAnnotation, whatever the value).
func (a *Adapter) AutoCleanup(ctx context.Context, ns, name string) (bool, error) {
	u, err := a.get(ctx, ns, name)
	if err != nil {
		return false, err
	}
	_, off := u.GetAnnotations()[NoCleanupAnnotation]
	return !off, nil
}

// Related implements operator.Related: the CassandraTasks on the datacenter, for report.
func (a *Adapter) Related(ctx context.Context, ns, name string) (map[string][]unstructured.Unstructured, error) {
	l, err := a.listTasks(ctx, ns)
	if err != nil {
		return nil, err
	}
	var out []unstructured.Unstructured
	for _, t := range l {
		if dc, _, _ := unstructured.NestedString(t.Object, "spec", "datacenter", "name"); dc == name {
			out = append(out, t)
		}
	}
	return map[string][]unstructured.Unstructured{"CassandraTask": out}, nil
}

// TaskResource implements operator.Tasks.
func (a *Adapter) TaskResource() schema.GroupResource { return TaskGVR.GroupResource() }

// ListTasks implements operator.Tasks: the CassandraTasks whose spec.datacenter.name is
// dc. A server without the CRD has none.
func (a *Adapter) ListTasks(ctx context.Context, ns, dc string) ([]*operator.Task, error) {
	l, err := a.listTasks(ctx, ns)
	if err != nil {
		return nil, err
	}
	var out []*operator.Task
	for i := range l {
		if t := taskOf(&l[i]); t.DC == dc {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
