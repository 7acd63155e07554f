package scaleup

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter"
)

// TestCleanupTaskSteps: the cleanup task is created once, each pre-existing pod waited
// for, then the task's end; nothing without cleanup nodes.
func TestCleanupTaskSteps(t *testing.T) {
	if s := CleanupTaskSteps(nil); s != nil {
		t.Fatalf("no cleanup: %v", s)
	}
	var ids []string
	for _, s := range CleanupTaskSteps([]record.Node{{Pod: "a-0"}, {Pod: "b-0"}}) {
		ids = append(ids, s.ID)
	}
	if want := []string{"create-task", "wait-cleaned/a-0", "wait-cleaned/b-0", "wait-task-done"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("steps %q, want %q", ids, want)
	}
}

type autoTasks struct{ auto bool }

func (autoTasks) CreateTask(context.Context, string, operator.TaskSpec) error      { return nil }
func (autoTasks) DeleteTask(context.Context, string, string, string, string) error { return nil }
func (autoTasks) GetTask(context.Context, string, string) (*operator.Task, error) {
	return nil, nil
}
func (a autoTasks) AutoCleanup(context.Context, string, string) (bool, error) { return a.auto, nil }
func (autoTasks) ListTasks(context.Context, string, string) ([]*operator.Task, error) {
	return nil, nil
}

func (autoTasks) TaskResource() schema.GroupResource {
	return schema.GroupResource{Group: "fake.kubectl-cassandra.test", Resource: "faketasks"}
}

// TestCleanupWarning: the plan says who cleans up, by --cleanup and the operator's own
// cleanup (no-cleanup annotation).
func TestCleanupWarning(t *testing.T) {
	env := &pub.Env{Cluster: topology.Cluster{Namespace: "ns", Name: "dc1"}, Adapter: &fakeadapter.Adapter{}}
	cp := &record.Checkpoint{OperationID: "scale-1", Cluster: "dc1"}
	for _, c := range []struct {
		auto, cleanup bool
		want          string
	}{
		{true, true, "task scale-1-cleanup runs after them"},
		{false, true, "annotated no-cleanup"},
		{true, false, "the plugin does not track it"},
		{false, false, "keep the data"},
	} {
		got, err := cleanupWarning(context.Background(), env, autoTasks{c.auto}, true, c.cleanup, cp)
		if err != nil || !strings.Contains(got, c.want) {
			t.Errorf("auto %v cleanup %v: %q %v, want %q", c.auto, c.cleanup, got, err, c.want)
		}
	}
}
