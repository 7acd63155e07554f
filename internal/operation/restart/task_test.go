package restart

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"reflect"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// tasksAdapter is an adapter that offers operator.Tasks (the plan only asks whether it
// does: the steps use it).
type tasksAdapter struct{ *fakeadapter.Adapter }

func (tasksAdapter) CreateTask(context.Context, string, operator.TaskSpec) error      { return nil }
func (tasksAdapter) DeleteTask(context.Context, string, string, string, string) error { return nil }
func (tasksAdapter) GetTask(context.Context, string, string) (*operator.Task, error) {
	return nil, nil
}
func (tasksAdapter) AutoCleanup(context.Context, string, string) (bool, error) { return true, nil }
func (tasksAdapter) ListTasks(context.Context, string, string) ([]*operator.Task, error) {
	return nil, nil
}

func (tasksAdapter) TaskResource() schema.GroupResource {
	return schema.GroupResource{Group: "fake.kubectl-cassandra.test", Resource: "faketasks"}
}

func plan(t *testing.T, tasks bool) *record.Checkpoint {
	t.Helper()
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 3, Racks: []string{"rack1", "rack2"}})
	a := w.Adapter()
	cl, _, err := a.Get(ctx, w.NS, w.Name)
	if err != nil {
		t.Fatal(err)
	}
	var ad operator.Adapter = a
	if tasks {
		ad = tasksAdapter{a}
	}
	env := &pub.Env{Toolkit: &operation.Planner{Client: w.Kube, Nodetool: nodetool.Client{Exec: w}}, Cluster: cl, Adapter: ad,
		Request: pub.Request{DC: "dc1", Rack: "rack2"}}
	p, err := (Kind{}).Plan(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	return p.CP
}

// TestTaskPlan: on an operator with tasks, a restart of a rack is one task named after
// the operation (args.rack), each pod waited for in the operator's order (highest
// ordinal first), then the task's end; no drain, no pod delete, no pause.
func TestTaskPlan(t *testing.T) {
	cp := plan(t, true)
	var ids []string
	for _, s := range cp.Steps {
		ids = append(ids, s.ID)
	}
	want := []string{"create-task", "wait-restarted/fake-demo-dc1-rack2-2", "wait-restarted/fake-demo-dc1-rack2-1", "wait-restarted/fake-demo-dc1-rack2-0", "wait-task-done"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("steps %q, want %q", ids, want)
	}
	task := steps.TaskOf(cp)
	if task.Name != cp.OperationID+"-restart" || task.Command != "restart" || task.Rack != "rack2" || task.DC != cp.Cluster || task.OperationID != cp.OperationID {
		t.Fatalf("task %+v (operation %s)", task, cp.OperationID)
	}
	for _, n := range cp.Nodes {
		if n.PodUID == "" || n.HostID == "" {
			t.Fatalf("node %+v: no UID or Host ID to verify the restart against", n)
		}
	}
	if cp.PausedOperator != nil {
		t.Fatal("a task restart pauses no operator")
	}
	if err := checkpoint.Validate(cp, "", checkpoint.Schemas{"restart": (Kind{}).Info().Checkpoint}); err != nil {
		t.Fatalf("the checkpoint does not validate: %v", err)
	}
}

// TestPlanWithoutTasksUnchanged: an operator without tasks (as CassKop) restarts as before.
func TestPlanWithoutTasksUnchanged(t *testing.T) {
	cp := plan(t, false)
	if cp.Steps[0].ID != "drain/fake-demo-dc1-rack2-2" || cp.Steps[1].ID != "delete-pod/fake-demo-dc1-rack2-2" {
		t.Fatalf("steps %+v", cp.Steps[:2])
	}
}
