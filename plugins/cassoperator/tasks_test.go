package cassoperator

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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
