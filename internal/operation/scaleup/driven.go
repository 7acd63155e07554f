package scaleup

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// planDriven plans a scale-up on an operator that scales its datacenters itself
// (operator.Scaler): one size step per new node, in the operator's order, each joined
// (pod Ready, node UN) before the next is asked for.
func (k Kind) planDriven(ctx context.Context, env *operation.Env, sc operator.Scaler) (*operation.Plan, error) {
	p, cl, req := env.Planner, env.Cluster, env.Request
	if req.Cleanup {
		return nil, exit.Usagef("--cleanup is not offered for %s yet (it would run as a CassandraTask); run a cleanup task after the scale-up; nothing changed", env.Adapter.Title())
	}
	dc, size, wanted, err := operation.DrivenTarget(cl, req, sc)
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
	if _, _, err := p.ReadRing(ctx, cl, dc, states, "scale-up"); err != nil {
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
	plan.Warnings = append(plan.Warnings, "the existing nodes keep the data of the ranges the new nodes take over until a cleanup runs on each of them (a CassandraTask of command cleanup)")
	plan.CP = p.NewCheckpoint(cl, k, "scale", req)
	plan.CP.Target = checkpoint.Target{DC: dc.Name, Racks: operation.RackNames(selected), Nodes: req.Nodes, From: from, RackNodes: wanted, Size: size}
	plan.CP.Nodes = nodes
	for _, n := range nodes {
		plan.CP.Steps = append(plan.CP.Steps, checkpoint.PendingStep(steps.StepRequestGrowth, n.Pod), checkpoint.PendingStep(checkpoint.StepWaitJoined, n.Pod))
	}
	return plan, nil
}

// noLeftoverClaims refuses a new pod whose claim is left over: it would start on the
// data of a decommissioned node (cass-operator's stuck state C/D leaves one).
func noLeftoverClaims(ctx context.Context, env *operation.Env, states []operation.RackNow, rack, pod string) error {
	for _, st := range states {
		if st.Rack.Name != rack {
			continue
		}
		for _, tpl := range st.STS.Spec.VolumeClaimTemplates {
			name := tpl.Name + "-" + pod
			pvc, err := env.Planner.Claim(ctx, env.Cluster.Namespace, name)
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
