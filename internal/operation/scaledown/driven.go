package scaledown

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// planDriven plans a scale-down on an operator that scales its datacenters itself
// (operator.Scaler, cass-operator): the operator removes the nodes, in its own order,
// one per size step; the plan names each, checks what the operator does not (every
// node UN, room for the data, the replication factors: cass-operator forces the
// decommission past Cassandra's own check) and asks for one node at a time.
func (k Kind) planDriven(ctx context.Context, env *pub.Env, sc operator.Scaler) (*pub.Plan, error) {
	p, cl, req := operation.PlannerOf(env), env.Cluster, pub.KindRequestOf[Options](env.Request)
	if req.Options.RemoveDead {
		return nil, removeDeadNotDriven(env)
	}
	d, err := operation.NewDrivenScale(cl, req.Request, sc)
	if err != nil {
		return nil, err
	}
	// The ring and keyspace reads start now, beside the racks' reads, from the pod the
	// reader most likely is (ordinal 0 of the first rack that keeps nodes); early
	// reads anew from the reader when that guess was wrong or its read failed.
	early := newEarly(ctx, p, likelyReader(d.DC, d.Wanted))
	from, states, err := readDrivenRacks(ctx, p, cl.Namespace, d.DC)
	if err != nil {
		return nil, err
	}
	if err := drivenRemovalNeeded(d, from, cl.Name); err != nil {
		return nil, err
	}
	moves, err := sc.Removals(d.DC, from, d.Size)
	if err != nil {
		return nil, exit.Refusedf("%v; nothing changed", err)
	}
	unready, err := deferUnready(cl.Namespace, states, func(r string) int { return d.Wanted[r] })
	if err != nil {
		return nil, err
	}
	reader := drivenReader(states, d.Wanted)
	pf := &preflight{p: p, ns: cl.Namespace, states: states, racks: d.Wanted, claims: map[string]*corev1.PersistentVolumeClaim{},
		reader: reader, unready: unready, left: map[string]bool{}}
	pf.listClaims(ctx)
	ring, err := early.ring(ctx, reader, cl, d.DC)
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
	plan := &pub.Plan{Cluster: cl, DC: d.DC, Racks: d.DC.Racks, Warnings: warnings}
	if err := pf.checks(ctx, plan, ring, nodes, reader, early.describeFrom(ctx, reader), req.Force); err != nil {
		return nil, err
	}
	plan.CP = p.NewCheckpoint(cl, k, "scale", req.Request)
	plan.CP.Target = d.Target(req.Request, from)
	plan.CP.Nodes = nodes
	plan.CP.Steps = drivenSteps(nodes)
	plan.Findings = append(plan.Findings, leftFindings(nodes, pf.left)...)
	// The operator decommissions, the plugin still sets and restores the limits around it.
	if err := throttle(ctx, env, plan, ring, reader, nil); err != nil {
		return nil, err
	}
	return plan, nil
}

// removeDeadNotDriven refuses --remove-dead where the operator removes the nodes.
func removeDeadNotDriven(env *pub.Env) error {
	cl := env.Cluster
	return exit.Refusedf("--remove-dead is not possible with %s: it removes the datacenter's nodes itself, through the size, and only by decommission "+
		"(asked of the leaving pod's management API, which a dead node does not answer); it has no removenode, and a StatefulSet shrunk by hand is grown back by it. "+
		"Replace the dead node instead (kubectl cassandra replace-node -n %s %s --pod POD); nothing changed", env.Adapter.Title(), cl.Namespace, cl.Name)
}

// readDrivenRacks reads every rack of the datacenter: its count now (from) and its
// StatefulSet and pods.
func readDrivenRacks(ctx context.Context, p *operation.Planner, ns string, dc topology.DC) (map[string]int, []operation.RackNow, error) {
	from, states := map[string]int{}, []operation.RackNow{}
	for _, r := range dc.Racks {
		st, err := p.ReadRack(ctx, ns, r)
		if err != nil {
			return nil, nil, err
		}
		from[r.Name] = st.Cur
		states = append(states, st)
	}
	return from, states, nil
}

// drivenRemovalNeeded says whether the racks' counts now (from) are above the asked
// size as the operator splits it: a smaller total is a scale-up, the same split is
// nothing to do, a rack below its share is not split as the operator does.
func drivenRemovalNeeded(d operation.DrivenScale, from map[string]int, cluster string) error {
	total := 0
	for _, n := range from {
		total += n
	}
	switch {
	case total < d.Size:
		return &operation.ErrScaleUp{Msg: fmt.Sprintf("datacenter %s has %d nodes and size %d is larger", d.DC.Name, total, d.Size)}
	case total == d.Size && sameSplit(from, d.Wanted):
		return &pub.ErrNothingToDo{Msg: fmt.Sprintf("datacenter %s already has %d nodes (%s): nothing to do", d.DC.Name, d.Size, topology.CountsText(from))}
	}
	for r, n := range from {
		if n < d.Wanted[r] {
			return d.NotSplit(r, n, cluster)
		}
	}
	return nil
}

// likelyReader is the pod drivenReader picks when the first rack that keeps nodes has
// pods: its ordinal 0, named before the racks are read.
func likelyReader(dc topology.DC, wanted map[string]int) string {
	for _, r := range dc.Racks {
		if wanted[r.Name] > 0 {
			return topology.PodName(r.StatefulSet, 0)
		}
	}
	return ""
}

// drivenReader is the pod nodetool is asked on: the first pod of the first rack that
// keeps nodes; "" when none does.
func drivenReader(states []operation.RackNow, wanted map[string]int) string {
	for _, st := range states {
		if st.Cur > 0 && wanted[st.Rack.Name] > 0 {
			return st.Pods[0].Name
		}
	}
	return ""
}

// leftFindings names the planned nodes that already left the ring.
func leftFindings(nodes []record.Node, left map[string]bool) []string {
	var out []string
	for _, n := range nodes {
		if left[n.Pod] {
			out = append(out, leftFinding(n.Pod))
		}
	}
	return out
}

// inOperatorOrder is the planned nodes in the order the operator removes them, each
// with the size that asks for it; the two lists must name the same pods.
func inOperatorOrder(planned []record.Node, moves []operator.Move) ([]record.Node, error) {
	byPod := map[string]record.Node{}
	for _, n := range planned {
		byPod[n.Pod] = n
	}
	if len(moves) != len(planned) {
		return nil, exit.Refusedf("the operator would remove %d nodes and the racks' counts say %d: the world is not as the operator splits it; nothing changed", len(moves), len(planned))
	}
	var out []record.Node
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
func drivenSteps(nodes []record.Node) []record.Step {
	var out []record.Step
	for _, n := range nodes {
		for _, k := range []string{record.StepRequestRemoval, record.StepWaitLeaving, record.StepVerifyLeft, record.StepWaitPodGone, record.StepWaitClaimsGone, record.StepWaitReleased} {
			out = append(out, checkpoint.PendingStep(k, n.Pod))
		}
	}
	return out
}

func sameSplit(a, b map[string]int) bool { return maps.Equal(a, b) }
