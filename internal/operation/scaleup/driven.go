package scaleup

import (
	"context"
	"fmt"
	"maps"
	"sort"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// planDriven plans a scale-up on an operator that scales its datacenters itself
// (operator.Scaler): one size step per new node, in the operator's order, each joined
// (pod Ready, node UN) before the next is asked for.
func (k Kind) planDriven(ctx context.Context, env *pub.Env, sc operator.Scaler) (*pub.Plan, error) {
	tasks, hasTasks := env.Adapter.(operator.Tasks)
	p, cl, req := operation.PlannerOf(env), env.Cluster, pub.KindRequestOf[Options](env.Request)
	if req.Options.Cleanup && !hasTasks {
		return nil, exit.Usagef("--cleanup is not offered for %s (it runs no cleanup task the plugin can ask for); nothing changed", env.Adapter.Title())
	}
	d, err := operation.NewDrivenScale(cl, req.Request, sc)
	if err != nil {
		return nil, err
	}
	from, states, sts, err := readGrowingRacks(ctx, p, cl, d)
	if err != nil {
		return nil, err
	}
	ring, _, err := p.ReadRing(ctx, cl, d.DC, states, "scale-up")
	if err != nil {
		return nil, err
	}
	moves, err := sc.Additions(d.DC, from, d.Size)
	if err != nil {
		return nil, exit.Refusedf("%v; nothing changed", err)
	}
	nodes, err := drivenNewNodes(ctx, env, states, d.DC, from, sts, moves)
	if err != nil {
		return nil, err
	}
	plan := &pub.Plan{Cluster: cl, DC: d.DC, Racks: d.DC.Racks}
	plan.CP = p.NewCheckpoint(cl, k, "scale", req.Request)
	plan.CP.Target = d.Target(req.Request, from)
	var cleanup []record.Node
	if req.Options.Cleanup {
		if cleanup, err = cleanupNodes(ctx, p, cl, d.DC, ring); err != nil {
			return nil, err
		}
		inCleanupTaskOrder(cleanup)
	}
	plan.CP.Nodes = append(append([]record.Node{}, cleanup...), nodes...)
	plan.CP.Steps = drivenGrowthSteps(nodes, cleanup)
	// The operator bootstraps, the plugin still sets and restores the sources' limits.
	if err := throttle(ctx, env, plan, d.DC, ring, nodes); err != nil {
		return nil, err
	}
	w, err := cleanupWarning(ctx, env, tasks, hasTasks, req.Options.Cleanup, plan.CP)
	if err != nil {
		return nil, err
	}
	plan.Warnings = append(plan.Warnings, w)
	return plan, nil
}

// readGrowingRacks reads every rack of the datacenter, checked for a scale-up: its
// count now (from), its StatefulSet's name and its pods. A rack above its share of the
// size is not split as the operator does.
func readGrowingRacks(ctx context.Context, p *operation.Planner, cl topology.Cluster, d operation.DrivenScale) (map[string]int, []operation.RackNow, map[string]string, error) {
	from, states, sts := map[string]int{}, []operation.RackNow{}, map[string]string{}
	for _, r := range d.DC.Racks {
		st, err := p.ReadCheckedRack(ctx, cl.Namespace, r, "scale-up")
		if err != nil {
			return nil, nil, nil, err
		}
		if st.Cur > d.Wanted[r.Name] {
			return nil, nil, nil, d.NotSplit(r.Name, st.Cur, cl.Name)
		}
		from[r.Name], sts[r.Name] = st.Cur, st.STS.Name
		states = append(states, st)
	}
	return from, states, sts, nil
}

// drivenNewNodes is the nodes the operator's additions create, each the next pod of its
// rack's StatefulSet: refused where the operator would create another pod, or where the
// new pod's claim is left over.
func drivenNewNodes(ctx context.Context, env *pub.Env, states []operation.RackNow, dc topology.DC, from map[string]int, sts map[string]string, moves []operator.Move) ([]record.Node, error) {
	var nodes []record.Node
	next := maps.Clone(from)
	for _, m := range moves {
		pod := topology.PodName(sts[m.Rack], next[m.Rack])
		if pod != m.Pod {
			return nil, exit.Refusedf("the operator would create pod %s where StatefulSet %s's next pod is %s; nothing changed", m.Pod, sts[m.Rack], pod)
		}
		if err := noLeftoverClaims(ctx, env, states, m.Rack, pod); err != nil {
			return nil, err
		}
		nodes = append(nodes, record.Node{Pod: pod, Ordinal: next[m.Rack], DC: dc.Name, Rack: m.Rack, StatefulSet: sts[m.Rack], New: true, Size: m.Size})
		next[m.Rack]++
	}
	return nodes, nil
}

// inCleanupTaskOrder sorts the nodes as the operator's cleanup job takes them: racks by
// name, then pods by name (internal/controllers/control/cassandratask_controller.go
// reconcileEveryPodTask).
func inCleanupTaskOrder(cleanup []record.Node) {
	sort.SliceStable(cleanup, func(i, j int) bool {
		if cleanup[i].Rack != cleanup[j].Rack {
			return cleanup[i].Rack < cleanup[j].Rack
		}
		return cleanup[i].Pod < cleanup[j].Pod
	})
}

// drivenGrowthSteps lists a driven scale-up's steps: for each new node, ask for it and
// wait until it joined; then the cleanup task's, if any.
func drivenGrowthSteps(nodes, cleanup []record.Node) []record.Step {
	var out []record.Step
	for _, n := range nodes {
		out = append(out, checkpoint.PendingStep(record.StepRequestGrowth, n.Pod), checkpoint.PendingStep(record.StepWaitJoined, n.Pod))
	}
	return append(out, CleanupTaskSteps(cleanup)...)
}

// CleanupTaskSteps lists the steps of a scale-up's --cleanup on an operator with tasks
// (operator.Tasks): after the last new node joined, create the operation's cleanup task,
// wait until it reports each pre-existing pod COMPLETED, then until it finished well.
// None without cleanup nodes.
func CleanupTaskSteps(cleanup []record.Node) []record.Step {
	if len(cleanup) == 0 {
		return nil
	}
	out := []record.Step{checkpoint.PendingStep(record.StepCreateTask, "")}
	for _, n := range cleanup {
		out = append(out, checkpoint.PendingStep(record.StepWaitCleaned, n.Pod))
	}
	return append(out, checkpoint.PendingStep(record.StepWaitTaskDone, ""))
}

// cleanupWarning says who cleans up the pre-existing nodes after a driven scale-up.
// cass-operator creates a cleanup task of its own (cleanup-<unix seconds>) each time it
// finishes adding nodes, unless the resource is annotated no-cleanup
// (pkg/reconciliation/reconcile_racks.go cleanupAfterScaling, createCleanupTask); the
// plugin asks for one node at a time, so it makes one per node, and does not track
// them: their names are not known before they exist. With --cleanup the plugin creates
// its own task, named after the operation (a resumed run finds it), once after the last
// node, and verifies every pre-existing pod COMPLETED in it; its concurrencyPolicy
// Forbid runs it after the operator's own ones, on nodes they already cleaned
// (Cassandra's cleanup skips the SSTables that hold no range the node lost).
func cleanupWarning(ctx context.Context, env *pub.Env, tasks operator.Tasks, hasTasks, cleanup bool, cp *record.Checkpoint) (string, error) {
	auto := false
	if hasTasks {
		var err error
		if auto, err = tasks.AutoCleanup(ctx, env.Cluster.Namespace, env.Cluster.Name); err != nil {
			return "", err
		}
	}
	title := env.Adapter.Title()
	switch {
	case cleanup && auto:
		return fmt.Sprintf("%s also creates a cleanup task of its own after each node it adds (not tracked); the plugin's task %s runs after them (concurrencyPolicy Forbid) and is the one verified: every pre-existing pod COMPLETED", title, steps.TaskOf(cp).Name), nil
	case cleanup:
		return fmt.Sprintf("the datacenter is annotated no-cleanup: %s runs no cleanup of its own; the plugin's task %s cleans every pre-existing node after the last new node joined", title, steps.TaskOf(cp).Name), nil
	case auto:
		return fmt.Sprintf("%s creates a cleanup task of its own after each node it adds (named cleanup-<time>); the plugin does not track it: see kubectl get %s -n %s. With --cleanup the plugin runs one of its own after the last node and verifies it", title, tasks.TaskResource(), env.Cluster.Namespace), nil
	}
	return "the existing nodes keep the data of the ranges the new nodes take over until a cleanup runs on each of them (a CassandraTask of command cleanup; or run the scale with --cleanup)", nil
}

// noLeftoverClaims refuses a new pod whose claim is left over: it would start on the
// data of a decommissioned node (cass-operator's stuck state C/D leaves one).
func noLeftoverClaims(ctx context.Context, env *pub.Env, states []operation.RackNow, rack, pod string) error {
	for _, st := range states {
		if st.Rack.Name != rack {
			continue
		}
		for _, tpl := range st.STS.Spec.VolumeClaimTemplates {
			name := tpl.Name + "-" + pod
			pvc, err := operation.PlannerOf(env).Claim(ctx, env.Cluster.Namespace, name)
			if err != nil {
				return err
			}
			if pvc != nil {
				return exit.Refusedf("PVC %s already exists (left over from an earlier scale-down): the new pod %s would start on its data, and a decommissioned node refuses to start. "+
					"Run: kubectl cassandra repair-operator-state -n %s %s (it verifies the node is out of the ring, then deletes it); nothing changed", name, pod, env.Cluster.Namespace, env.Cluster.Name)
			}
		}
	}
	return nil
}

// drivenAdded counts the nodes a driven scale-up added (the summary line).
func drivenAdded(cp *record.Checkpoint) int {
	return operation.CountSteps(cp, record.StepRequestGrowth)
}
