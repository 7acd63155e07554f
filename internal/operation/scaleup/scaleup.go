// Package scaleup is the scale-up operation: grow racks one node at a time, lowest new
// ordinal first (grow the StatefulSet by one, wait until the node joined), set the
// cluster resource's count, then optionally `nodetool cleanup` on the nodes that were
// there before.
package scaleup

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Name is the scale-up's kind in checkpoints.
const Name = "scale-up"

// Kind is the scale-up.
type Kind struct{ operation.Scale }

// Info implements operation.Kind.
func (Kind) Info() pub.Info {
	return pub.Info{
		Name:        Name,
		Checkpoint:  record.Schema{Version: 2, NewNodes: true, Steps: []string{StepGrowSTS, record.StepWaitJoined, steps.StepUpdateCluster, StepCleanup, record.StepPauseOperator, record.StepResumeOperator, record.StepRequestGrowth, record.StepCreateTask, record.StepWaitCleaned, record.StepWaitTaskDone, record.StepRecordThroughput, record.StepSetThroughput, record.StepRestoreThroughput}},
		StepsHeader: "Steps (one node at a time, lowest new ordinal first; each joins before the next):",
		ConfirmWord: "Scale up",
		Abort:       pub.Abort{Verb: "adding", Unit: "nodes", Past: "added", Assess: operation.WithPlanner(assess)},
	}
}

// Access implements operation.Kind.
func (Kind) Access(_ context.Context, env *pub.Env) ([]pub.Access, error) {
	if _, ok := env.Adapter.(operator.Scaler); ok {
		acc := operation.DrivenAccess(env.Cluster.Namespace, env.Adapter.GroupResource(), env.Adapter.CountWords())
		if ts, ok := env.Adapter.(operator.Tasks); ok && pub.KindRequestOf[Options](env.Request).Options.Cleanup {
			tr := ts.TaskResource()
			acc = append(acc, pub.Access{Group: tr.Group, Resource: tr.Resource, Verb: "create", Namespace: env.Cluster.Namespace, Why: "ask the operator for the cleanup"}, pub.Access{Group: tr.Group, Resource: tr.Resource, Verb: "get", Namespace: env.Cluster.Namespace, Why: "follow the cleanup task"})
		}
		return acc, nil
	}
	ns, cr := env.Cluster.Namespace, env.Adapter.GroupResource()
	acc := append(operation.CommonAccess(ns, cr, "write the checkpoint annotation and "+env.Adapter.CountWords()), pub.Access{Group: "apps", Resource: "statefulsets", Verb: "patch", Namespace: ns, Why: "grow the StatefulSet"}, pub.Access{Resource: "persistentvolumeclaims", Verb: "get", Namespace: ns, Why: "check no claim of a new pod is left over"})
	return operation.PauseAccess(acc, env.Request.Pause), nil
}

// Summary implements operation.Kind.
func (Kind) Summary(cp *record.Checkpoint) string {
	s := fmt.Sprintf("datacenter %s racks %s scaled to %d nodes (%d added)", cp.Target.DC, strings.Join(cp.Target.Racks, ","), cp.Target.Nodes, operation.CountSteps(cp, StepGrowSTS)+drivenAdded(cp))
	if c := operation.CountSteps(cp, StepCleanup); c > 0 {
		s += fmt.Sprintf(", nodetool cleanup on %d nodes", c)
	}
	if c := operation.CountSteps(cp, record.StepWaitCleaned); c > 0 {
		s += fmt.Sprintf(", cleaned up by task %s on %d nodes", steps.TaskOf(cp).Name, c)
	}
	return s
}

// Plan implements operation.Kind: grow the selected racks to Request.Nodes each, one
// node at a time, lowest new ordinal first, rack by rack: grow the StatefulSet by one,
// wait until the new node joined (pod Ready, node UN); then set the cluster resource's
// count; with Options.Cleanup, `nodetool cleanup` on every pre-existing node of the
// datacenter, one at a time.
func (k Kind) Plan(ctx context.Context, env *pub.Env) (*pub.Plan, error) {
	if sc, ok := env.Adapter.(operator.Scaler); ok {
		return k.planDriven(ctx, env, sc)
	}
	p, cl, req := operation.PlannerOf(env), env.Cluster, pub.KindRequestOf[Options](env.Request)
	plan, err := k.NewScalePlan(env)
	if err != nil {
		return nil, err
	}
	dc := plan.DC
	from := map[string]int{}
	var states []operation.RackNow
	grow := false
	for _, r := range plan.Racks {
		st, err := p.ReadCheckedRack(ctx, cl.Namespace, r, "scale-up")
		if err != nil {
			return nil, err
		}
		if st.Cur > req.Nodes {
			return nil, exit.Refusedf("rack %s has %d nodes, more than --nodes %d, while another rack has fewer: scale one way at a time (first kubectl cassandra scale %s --rack %s --nodes %d); nothing changed",
				r.Name, st.Cur, req.Nodes, cl.Name, r.Name, req.Nodes)
		}
		grow = grow || st.Cur < req.Nodes
		from[r.Name] = st.Cur
		states = append(states, st)
	}
	if !grow {
		return nil, &pub.ErrNothingToDo{Msg: fmt.Sprintf("every selected rack of datacenter %s already has %d nodes: nothing to do", dc.Name, req.Nodes)}
	}
	ring, _, err := p.ReadRing(ctx, cl, dc, states, "scale-up")
	if err != nil {
		return nil, err
	}
	newNodes, err := newNodes(ctx, env, states, req.Nodes)
	if err != nil {
		return nil, err
	}
	var cleanup []record.Node
	if req.Options.Cleanup {
		if cleanup, err = cleanupNodes(ctx, p, cl, dc, ring); err != nil {
			return nil, err
		}
	} else {
		plan.Warnings = append(plan.Warnings, "without --cleanup the existing nodes keep the data of the ranges the new nodes take over, until `nodetool cleanup` runs on each of them")
	}
	plan.CP = p.NewCheckpoint(cl, k, "scale", req.Request)
	plan.CP.Target = record.Target{DC: dc.Name, Racks: operation.RackNames(plan.Racks), Nodes: req.Nodes, From: from}
	plan.CP.Nodes = append(append([]record.Node{}, cleanup...), newNodes...)
	plan.CP.Steps = Steps(newNodes, cleanup, req.Pause != nil)
	if err := throttle(ctx, env, plan, dc, ring, newNodes); err != nil {
		return nil, err
	}
	plan.Warnings = append(plan.Warnings, operation.PauseWarnings(req.Pause, env.Adapter.Kind())...)
	return plan, nil
}

// newNodes plans the pods to create, refusing a seed among them or a claim of one left
// over.
func newNodes(ctx context.Context, env *pub.Env, states []operation.RackNow, nodes int) ([]record.Node, error) {
	p, cl := operation.PlannerOf(env), env.Cluster
	var out []record.Node
	for _, st := range states {
		for i := st.Cur; i < nodes; i++ {
			pod := topology.PodName(st.STS.Name, i)
			if cl.IsSeed(pod) {
				return nil, exit.Refusedf("%s; nothing changed", operation.SeedRefusal(env.Adapter, cl, pod, ""))
			}
			for _, tpl := range st.STS.Spec.VolumeClaimTemplates {
				name := tpl.Name + "-" + pod
				pvc, err := p.Claim(ctx, cl.Namespace, name)
				if err != nil {
					return nil, err
				}
				if pvc != nil {
					return nil, exit.Refusedf("PVC %s already exists (left over from an earlier scale-down?): the new pod %s would start on its data, and a decommissioned node refuses to start. "+
						"Delete it first if nothing needs it (kubectl delete pvc -n %s %s; kubectl cassandra repair-operator-state %s finds the ones an interrupted operator left); nothing changed",
						name, pod, cl.Namespace, name, cl.Name)
				}
			}
			out = append(out, record.Node{Pod: pod, Ordinal: i, DC: st.Rack.DC, Rack: st.Rack.Name, StatefulSet: st.STS.Name, New: true})
		}
	}
	return out, nil
}

// cleanupNodes is every node that was in the datacenter before: the new ones take
// ranges from all of them, whatever their rack.
func cleanupNodes(ctx context.Context, p *operation.Planner, cl topology.Cluster, dc topology.DC, ring pubnodetool.Ring) ([]record.Node, error) {
	var out []record.Node
	for _, r := range dc.Racks {
		st, err := p.ReadCheckedRack(ctx, cl.Namespace, r, "scale-up with --cleanup")
		if err != nil {
			return nil, err
		}
		for i := 0; i < st.Cur; i++ {
			pod := st.Pods[i]
			n := record.Node{Pod: pod.Name, PodUID: string(pod.UID), Ordinal: i, DC: r.DC, Rack: r.Name, StatefulSet: st.STS.Name, Address: pod.Status.PodIP}
			if row, ok := ring.ByAddress(pod.Status.PodIP); ok {
				n.HostID = row.HostID
			}
			out = append(out, n)
		}
	}
	return out, nil
}
