package scaleup

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
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// planDriven plans a scale-up on an operator that scales its datacenters itself
// (operator.Scaler): one size step per new node, in the operator's order, each joined
// (pod Ready, node UN) before the next is asked for.
func (k Kind) planDriven(ctx context.Context, env *pub.Env, sc operator.Scaler) (*operation.Plan, error) {
	p, cl, req := operation.PlannerOf(env), env.Cluster, requestOf(env.Request)
	tasks, hasTasks := env.Adapter.(operator.Tasks)
	if req.Cleanup && !hasTasks {
		return nil, exit.Usagef("--cleanup is not offered for %s (it runs no cleanup task the plugin can ask for); nothing changed", env.Adapter.Title())
	}
	dc, size, wanted, err := operation.DrivenTarget(cl, req.Request, sc)
	if err != nil {
		return nil, err
	}
	_, selected, err := cl.Select(req.DC, req.Rack)
	if err != nil {
		return nil, exit.Usagef("%v", err)
	}
	from, states := map[string]int{}, []operation.RackNow{}
	sts := map[string]string{}
	for _, r := range dc.Racks {
		st, err := p.ReadCheckedRack(ctx, cl.Namespace, r, "scale-up")
		if err != nil {
			return nil, err
		}
		if st.Cur > wanted[r.Name] {
			return nil, exit.Refusedf("rack %s has %d nodes and size %d gives it %d (%s): the racks are not as the operator splits them (is it still resizing? kubectl cassandra status %s); nothing changed",
				r.Name, st.Cur, size, wanted[r.Name], topology.CountsText(wanted), cl.Name)
		}
		from[r.Name], sts[r.Name] = st.Cur, st.STS.Name
		states = append(states, st)
	}
	ring, _, err := p.ReadRing(ctx, cl, dc, states, "scale-up")
	if err != nil {
		return nil, err
	}
	moves, err := sc.Additions(dc, from, size)
	if err != nil {
		return nil, exit.Refusedf("%v; nothing changed", err)
	}
	var nodes []checkpoint.Node
	next := map[string]int{}
	for r, n := range from {
		next[r] = n
	}
	for _, m := range moves {
		pod := topology.PodName(sts[m.Rack], next[m.Rack])
		if pod != m.Pod {
			return nil, exit.Refusedf("the operator would create pod %s where StatefulSet %s's next pod is %s; nothing changed", m.Pod, sts[m.Rack], pod)
		}
		if err := noLeftoverClaims(ctx, env, states, m.Rack, pod); err != nil {
			return nil, err
		}
		nodes = append(nodes, checkpoint.Node{Pod: pod, Ordinal: next[m.Rack], DC: dc.Name, Rack: m.Rack, StatefulSet: sts[m.Rack], New: true, Size: m.Size})
		next[m.Rack]++
	}
	plan := &operation.Plan{Cluster: cl, DC: dc, Racks: dc.Racks}
	plan.CP = p.NewCheckpoint(cl, k, "scale", req.Request)
	plan.CP.Target = checkpoint.Target{DC: dc.Name, Racks: operation.RackNames(selected), Nodes: req.Nodes, From: from, RackNodes: wanted, Size: size}
	var cleanup []checkpoint.Node
	if req.Cleanup {
		if cleanup, err = cleanupNodes(ctx, p, cl, dc, ring); err != nil {
			return nil, err
		}
		// The order the operator's cleanup job takes them in: racks by name, then pods by
		// name (internal/controllers/control/cassandratask_controller.go reconcileEveryPodTask).
		sort.SliceStable(cleanup, func(i, j int) bool {
			if cleanup[i].Rack != cleanup[j].Rack {
				return cleanup[i].Rack < cleanup[j].Rack
			}
			return cleanup[i].Pod < cleanup[j].Pod
		})
	}
	plan.CP.Nodes = append(append([]checkpoint.Node{}, cleanup...), nodes...)
	for _, n := range nodes {
		plan.CP.Steps = append(plan.CP.Steps, checkpoint.PendingStep(steps.StepRequestGrowth, n.Pod), checkpoint.PendingStep(steps.StepWaitJoined, n.Pod))
	}
	plan.CP.Steps = append(plan.CP.Steps, CleanupTaskSteps(cleanup)...)
	// The operator bootstraps, the plugin still sets and restores the sources' limits.
	if err := throttle(ctx, env, plan, dc, ring, nodes); err != nil {
		return nil, err
	}
	w, err := cleanupWarning(ctx, env, tasks, hasTasks, req.Cleanup, plan.CP)
	if err != nil {
		return nil, err
	}
	plan.Warnings = append(plan.Warnings, w)
	return plan, nil
}

// CleanupTaskSteps lists the steps of a scale-up's --cleanup on an operator with tasks
// (operator.Tasks): after the last new node joined, create the operation's cleanup task,
// wait until it reports each pre-existing pod COMPLETED, then until it finished well.
// None without cleanup nodes.
func CleanupTaskSteps(cleanup []checkpoint.Node) []checkpoint.Step {
	if len(cleanup) == 0 {
		return nil
	}
	out := []checkpoint.Step{checkpoint.PendingStep(steps.StepCreateTask, "")}
	for _, n := range cleanup {
		out = append(out, checkpoint.PendingStep(steps.StepWaitCleaned, n.Pod))
	}
	return append(out, checkpoint.PendingStep(steps.StepWaitTaskDone, ""))
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
func cleanupWarning(ctx context.Context, env *pub.Env, tasks operator.Tasks, hasTasks, cleanup bool, cp *checkpoint.Checkpoint) (string, error) {
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
func drivenAdded(cp *checkpoint.Checkpoint) int {
	return operation.CountSteps(cp, steps.StepRequestGrowth)
}
