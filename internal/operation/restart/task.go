package restart

import (
	"context"
	"fmt"
	"sort"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TaskSteps lists the steps of a restart the operator runs as a task of its own
// (operator.Tasks): create the task, then for each node in the order the operator
// restarts them, wait until its pod is re-created, Ready and its node UN; then wait
// until the task finished well.
func TaskSteps(nodes []record.Node) []record.Step {
	out := []record.Step{checkpoint.PendingStep(record.StepCreateTask, "")}
	for _, n := range nodes {
		out = append(out, checkpoint.PendingStep(StepWaitRestarted, n.Pod))
	}
	return append(out, checkpoint.PendingStep(record.StepWaitTaskDone, ""))
}

// planTask plans a restart on an operator that restarts pods itself when asked through
// a task (cass-operator's CassandraTask of command restart): the plugin never deletes a
// pod nor pauses the operator; it creates the task (named after the operation, so a
// resumed run finds it) and verifies each pod in the world. Preflight: every node UN,
// and, when the operator reports its progress (operator.Scaler), the datacenter Ready,
// not stopped, not resizing, not blocked. (The CLI has refused already an operator
// that does not run and an unfinished task on the datacenter: BusyPods.)
//
// The order is the operator's: its restart job rolls the datacenter's StatefulSets one
// at a time, sorted by name (internal/controllers/control/jobs.go restartSts; only the
// rack's with args.rack), and the StatefulSet controller's rolling update re-creates
// their pods from the highest ordinal down, one at a time.
func (k Kind) planTask(ctx context.Context, env *pub.Env) (*pub.Plan, error) {
	p, cl, req := operation.PlannerOf(env), env.Cluster, env.Request
	dc, racks, err := cl.Select(req.DC, req.Rack)
	if err != nil {
		return nil, exit.Usagef("%v", err)
	}
	if sc, ok := env.Adapter.(operator.Scaler); ok {
		pr, err := sc.Progress(ctx, cl.Namespace, cl.Name, dc.Name, "")
		if err != nil {
			return nil, err
		}
		if why := notSettled(pr); why != "" {
			return nil, exit.Refusedf("datacenter %s: %s; a restart starts only on a settled datacenter (kubectl cassandra status %s); nothing changed", dc.Name, why, cl.Name)
		}
	}
	from, states, err := readRacks(ctx, p, cl.Namespace, racks)
	if err != nil {
		return nil, err
	}
	ring, reader, err := p.ReadRing(ctx, cl, dc, states, "restart")
	if err != nil {
		return nil, err
	}
	sort.SliceStable(states, func(i, j int) bool { return states[i].STS.Name < states[j].STS.Name })
	nodes, err := restartNodes(states, ring, reader)
	if err != nil {
		return nil, err
	}
	plan := &pub.Plan{Cluster: cl, DC: dc, Racks: racks}
	plan.CP = p.NewCheckpoint(cl, k, "restart", req)
	plan.CP.Target = record.Target{DC: dc.Name, Racks: operation.RackNames(racks), Nodes: max(dc.MaxNodes(), 1), RackNodes: dc.RackNodes(), From: from}
	plan.CP.Nodes = nodes
	plan.CP.Steps = TaskSteps(nodes)
	plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s restarts the pods itself (task %s); the plugin deletes no pod and never pauses it. Each node is drained by its pod's preStop hook (the management API's drain), not by the plugin",
		env.Adapter.Title(), steps.TaskOf(plan.CP).Name))
	return plan, nil
}

// notSettled says why the operator's progress forbids a restart now ("" when it does
// not).
func notSettled(p operator.Progress) string {
	switch {
	case p.Stopped:
		return "it is stopped (spec.stopped)"
	case p.Blocked != "":
		return "the operator says it cannot go on: " + p.Blocked
	case p.ScalingUp || p.ScalingDown:
		return "the operator is resizing it"
	case !p.Ready:
		return "the operator does not report it Ready"
	}
	return ""
}

// taskAccess is what a restart through a task uses: the resource (its checkpoint and
// progress), the tasks, the pods (list, nodetool for the ring) and StatefulSets, read
// only. No pod is deleted, no Deployment patched.
func taskAccess(ns string, a operator.Adapter, ts operator.Tasks) []pub.Access {
	cr, tr := a.GroupResource(), ts.TaskResource()
	return []pub.Access{
		{Group: cr.Group, Resource: cr.Resource, Verb: "get", Namespace: ns, Why: "read the datacenter, its progress and the checkpoint"},
		{Group: cr.Group, Resource: cr.Resource, Verb: "patch", Namespace: ns, Why: "write the checkpoint annotation"},
		{Group: tr.Group, Resource: tr.Resource, Verb: "create", Namespace: ns, Why: "ask the operator for the restart"},
		{Group: tr.Group, Resource: tr.Resource, Verb: "get", Namespace: ns, Why: "follow the task"},
		{Resource: "pods", Verb: "list", Namespace: ns, Why: "find the racks' pods"},
		{Resource: "pods", Subresource: "exec", Verb: "create", Namespace: ns, Why: "run nodetool"},
		{Group: "apps", Resource: "statefulsets", Verb: "get", Namespace: ns, Why: "read the racks' StatefulSets"},
		{Group: "apps", Resource: "deployments", Verb: "list", Why: "check the operator runs (it is the one that acts)"},
	}
}

// taskRunning is abort's refusal while the operation's restart task may still be
// restarting pods: abort drops the checkpoint, not the operator's task, which would
// go on restarting pods unwatched. Nil when the operation has no task, its create did
// not start, or the task finished or is gone.
func taskRunning(ctx context.Context, r operation.AbortReads, cp *record.Checkpoint) error {
	st, ok := cp.Step(record.StepCreateTask)
	if !ok || st.State == record.StatePending {
		return nil
	}
	name := steps.TaskOf(cp).Name
	if r.Tasks == nil {
		return exit.Refusedf("operation %s asked the operator for task %s, and this build cannot read it: abort needs to know it finished; nothing changed", cp.OperationID, name)
	}
	t, err := r.Tasks.GetTask(ctx, cp.Namespace, name)
	switch {
	case err != nil:
		return exit.Refusedf("%v: abort needs to know task %s finished; nothing changed", err, name)
	case t == nil || t.Finished:
		return nil
	}
	return exit.Refusedf("the operator's task %s has not finished: it goes on restarting pods whatever abort does. Wait for it (%s), or delete the task first (kubectl delete %s -n %s %s: the pod being restarted still comes back), then run abort again",
		name, r.ResumeHint, r.Tasks.TaskResource().String(), cp.Namespace, name)
}
