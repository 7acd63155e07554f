package scaledown

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// planDriven plans a scale-down on an operator that scales its datacenters itself
// (operator.Scaler, cass-operator): the operator removes the nodes, in its own order,
// one per size step; the plan names each, checks what the operator does not (every
// node UN, room for the data, the replication factors: cass-operator forces the
// decommission past Cassandra's own check) and asks for one node at a time.
func (k Kind) planDriven(ctx context.Context, env *pub.Env, sc operator.Scaler) (*operation.Plan, error) {
	p, cl, req := operation.PlannerOf(env), env.Cluster, requestOf(env.Request)
	if req.RemoveDead {
		return nil, exit.Refusedf("--remove-dead is not possible with %s: it removes the datacenter's nodes itself, through the size, and only by decommission "+
			"(asked of the leaving pod's management API, which a dead node does not answer); it has no removenode, and a StatefulSet shrunk by hand is grown back by it. "+
			"Replace the dead node instead (kubectl cassandra replace-node -n %s %s --pod POD); nothing changed", env.Adapter.Title(), cl.Namespace, cl.Name)
	}
	dc, size, wanted, err := operation.DrivenTarget(cl, req.Request, sc)
	if err != nil {
		return nil, err
	}
	_, selected, err := cl.Select(req.DC, req.Rack)
	if err != nil {
		return nil, exit.Usagef("%v", err)
	}
	from, states, total := map[string]int{}, []operation.RackNow{}, 0
	for _, r := range dc.Racks {
		st, err := p.ReadRack(ctx, cl.Namespace, r)
		if err != nil {
			return nil, err
		}
		from[r.Name], total = st.Cur, total+st.Cur
		states = append(states, st)
	}
	switch {
	case total < size:
		return nil, &operation.ErrScaleUp{Msg: fmt.Sprintf("datacenter %s has %d nodes and size %d is larger", dc.Name, total, size)}
	case total == size && sameSplit(from, wanted):
		return nil, &operation.ErrNothingToDo{Msg: fmt.Sprintf("datacenter %s already has %d nodes (%s): nothing to do", dc.Name, size, topology.CountsText(from))}
	}
	for r, n := range from {
		if n < wanted[r] {
			return nil, exit.Refusedf("rack %s has %d nodes and size %d gives it %d (%s): the racks are not as the operator splits them (is it still resizing? kubectl cassandra status %s); nothing changed",
				r, n, size, wanted[r], topology.CountsText(wanted), cl.Name)
		}
	}
	moves, err := sc.Removals(dc, from, size)
	if err != nil {
		return nil, exit.Refusedf("%v; nothing changed", err)
	}
	unready, err := deferUnready(cl.Namespace, states, func(r string) int { return wanted[r] })
	if err != nil {
		return nil, err
	}
	reader := ""
	for _, st := range states {
		if st.Cur > 0 && wanted[st.Rack.Name] > 0 {
			reader = st.Pods[0].Name
			break
		}
	}
	early := newEarly(ctx, p, reader)
	pf := &preflight{p: p, ns: cl.Namespace, states: states, racks: wanted, claims: map[string]*corev1.PersistentVolumeClaim{},
		reader: reader, unready: unready, left: map[string]bool{}}
	pf.listClaims(ctx)
	ring, err := early.ring(ctx, reader, cl, dc)
	if err != nil {
		return nil, err
	}
	planned, warnings, err := pf.leaving(ctx, ring)
	if err != nil {
		return nil, err
	}
	nodes, err := inOperatorOrder(planned, moves)
	if err != nil {
		return nil, err
	}
	plan := &operation.Plan{Cluster: cl, DC: dc, Racks: dc.Racks, Warnings: warnings}
	if err := pf.checks(ctx, plan, ring, nodes, reader, early.describeFrom(ctx, reader), req.Force); err != nil {
		return nil, err
	}
	plan.CP = p.NewCheckpoint(cl, k, "scale", req.Request)
	plan.CP.Target = checkpoint.Target{DC: dc.Name, Racks: operation.RackNames(selected), Nodes: req.Nodes, From: from, RackNodes: wanted, Size: size}
	plan.CP.Nodes = nodes
	plan.CP.Steps = drivenSteps(nodes)
	for _, n := range nodes {
		if pf.left[n.Pod] {
			plan.Findings = append(plan.Findings, leftFinding(n.Pod))
		}
	}
	// The operator decommissions, the plugin still sets and restores the limits around it.
	if err := throttle(ctx, env, plan, ring, reader, nil); err != nil {
		return nil, err
	}
	return plan, nil
}

// inOperatorOrder is the planned nodes in the order the operator removes them, each
// with the size that asks for it; the two lists must name the same pods.
func inOperatorOrder(planned []checkpoint.Node, moves []operator.Move) ([]checkpoint.Node, error) {
	byPod := map[string]checkpoint.Node{}
	for _, n := range planned {
		byPod[n.Pod] = n
	}
	if len(moves) != len(planned) {
		return nil, exit.Refusedf("the operator would remove %d nodes and the racks' counts say %d: the world is not as the operator splits it; nothing changed", len(moves), len(planned))
	}
	var out []checkpoint.Node
	for _, m := range moves {
		n, ok := byPod[m.Pod]
		if !ok {
			return nil, exit.Refusedf("the operator would remove pod %s, which is not among the highest ordinals of its rack; nothing changed", m.Pod)
		}
		n.Size = m.Size
		out = append(out, n)
	}
	return out, nil
}

// drivenSteps lists a driven scale-down's steps: for each node in the operator's
// order, ask for it, wait until it is leaving, verify it left, wait for the pod, its
// claims and the operator's status entry to go. Nothing is paused, resized or deleted
// by the plugin itself.
func drivenSteps(nodes []checkpoint.Node) []checkpoint.Step {
	var out []checkpoint.Step
	for _, n := range nodes {
		for _, k := range []string{steps.StepRequestRemoval, steps.StepWaitLeaving, steps.StepVerifyLeft, steps.StepWaitPodGone, steps.StepWaitClaimsGone, steps.StepWaitReleased} {
			out = append(out, checkpoint.PendingStep(k, n.Pod))
		}
	}
	return out
}

func sameSplit(a, b map[string]int) bool { return maps.Equal(a, b) }
