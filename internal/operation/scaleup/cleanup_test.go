package scaleup

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// drivenAdapter is the neutral adapter as an operator that scales its datacenters
// itself and runs tasks (as cass-operator does): it splits a size over the racks, the
// first ones taking one more, and adds each node to the rack with the fewest, in spec
// order. Only what a plan asks of it is implemented (the embedded Scaler is nil).
type drivenAdapter struct {
	*fakeadapter.Adapter
	operator.Scaler
	autoTasks
}

func (drivenAdapter) Split(dc topology.DC, size int) map[string]int {
	out := map[string]int{}
	for i, r := range dc.Racks {
		out[r.Name] = size / len(dc.Racks)
		if i < size%len(dc.Racks) {
			out[r.Name]++
		}
	}
	return out
}

func (drivenAdapter) Additions(dc topology.DC, from map[string]int, total int) ([]operator.Move, error) {
	now, size := map[string]int{}, 0
	for r, n := range from {
		now[r], size = n, size+n
	}
	var moves []operator.Move
	for ; size < total; size++ {
		next := dc.Racks[0]
		for _, r := range dc.Racks {
			if now[r.Name] < now[next.Name] {
				next = r
			}
		}
		moves = append(moves, operator.Move{Rack: next.Name, Pod: topology.PodName(next.StatefulSet, now[next.Name]), Size: size + 1})
		now[next.Name]++
	}
	return moves, nil
}

// TestDrivenCleanupPlan: a scale-up 2 -> 4 with --cleanup on an operator that scales
// itself and runs tasks asks for each node, then creates the operation's cleanup task
// and waits for each pre-existing pod (racks by name, then pods by name) and the task's
// end.
func TestDrivenCleanupPlan(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 1, Racks: []string{"r2", "r1"}})
	a := drivenAdapter{Adapter: w.Adapter(), autoTasks: autoTasks{auto: true}}
	cl, _, err := a.Get(ctx, w.NS, w.Name)
	if err != nil {
		t.Fatal(err)
	}
	env := &pub.Env{Toolkit: &operation.Planner{Client: w.Kube, Nodetool: nodetool.Client{Exec: w}}, Cluster: cl, Adapter: a,
		Request: pub.Request{Nodes: 4, Ext: &Options{Cleanup: true}}}
	p, err := (Kind{}).Plan(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range p.CP.Steps {
		ids = append(ids, s.ID)
	}
	want := []string{"request-growth/fake-demo-dc1-r2-1", "wait-joined/fake-demo-dc1-r2-1", "request-growth/fake-demo-dc1-r1-1", "wait-joined/fake-demo-dc1-r1-1",
		"create-task", "wait-cleaned/fake-demo-dc1-r1-0", "wait-cleaned/fake-demo-dc1-r2-0", "wait-task-done"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("steps %q\nwant %q", ids, want)
	}
	if task := steps.TaskOf(p.CP); task.Name != p.CP.OperationID+"-cleanup" || task.Command != "cleanup" || task.Rack != "" || task.DC != w.Name {
		t.Fatalf("task %+v", task)
	}
	if !strings.Contains(strings.Join(p.Warnings, "\n"), "also creates a cleanup task of its own") {
		t.Fatalf("warnings %q", p.Warnings)
	}
	if err := checkpoint.Validate(p.CP, "", checkpoint.Schemas{Name: (Kind{}).Info().Checkpoint}); err != nil {
		t.Fatalf("the checkpoint does not validate: %v", err)
	}
	// Without --cleanup: no task steps, and the plan says the operator cleans up itself.
	env.Request.Ext = &Options{Cleanup: false}
	p, err = (Kind{}).Plan(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.CP.Steps) != 4 || !strings.Contains(strings.Join(p.Warnings, "\n"), "the plugin does not track it") {
		t.Fatalf("steps %v, warnings %q", p.CP.Steps, p.Warnings)
	}
}
