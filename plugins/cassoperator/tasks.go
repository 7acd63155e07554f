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
)

// TaskGVR is cass-operator's CassandraTask (apis/control/v1alpha1/cassandratask_types.go).
var TaskGVR = schema.GroupVersionResource{Group: "control.k8ssandra.io", Version: "v1alpha1", Resource: "cassandratasks"}

// runningTasks lists the CassandraTasks on datacenter dc (the resource's name,
// spec.datacenter.name) that have not finished: no status.completionTime
// (cassandratask_types.go; the controller sets it when every job ended). A resize
// while one runs breaks it (cass-operator #902), so none may run when a scale starts.
// A server without the CRD has no tasks.
func (a *Adapter) runningTasks(ctx context.Context, ns, dc string) ([]string, error) {
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
	var out []string
	for _, t := range l.Items {
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

// Related implements operator.Related: the CassandraTasks on the datacenter, for report.
func (a *Adapter) Related(ctx context.Context, ns, name string) (map[string][]unstructured.Unstructured, error) {
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
	var out []unstructured.Unstructured
	for _, t := range l.Items {
		if dc, _, _ := unstructured.NestedString(t.Object, "spec", "datacenter", "name"); dc == name {
			out = append(out, t)
		}
	}
	return map[string][]unstructured.Unstructured{"CassandraTask": out}, nil
}
