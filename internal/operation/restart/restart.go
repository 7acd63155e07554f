// Package restart is the rolling restart: for each pod of the selected racks, highest
// ordinal first, rack by rack, drain its node, delete the pod and wait until the new pod
// is Ready and its node UN.
package restart

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Kind is the rolling restart.
type Kind struct{}

// Info implements operation.Kind.
func (Kind) Info() pub.Info {
	return pub.Info{
		Name:        "restart",
		Checkpoint:  record.Schema{Version: 2, Steps: append([]string{StepDrain, StepDeletePod, StepWaitRestarted, record.StepPauseOperator, record.StepResumeOperator}, record.StepCreateTask, record.StepWaitTaskDone)},
		StepsHeader: "Steps (one pod at a time, highest ordinal first; every node UN before each pod):",
		ConfirmWord: "Restart",
		Abort:       pub.Abort{Verb: "restarting", Unit: "pods", Past: "restarted", Assess: operation.WithPlanner(assess)},
	}
}

// Access implements operation.Kind.
func (Kind) Access(_ context.Context, env *pub.Env) ([]pub.Access, error) {
	ns, cr := env.Cluster.Namespace, env.Adapter.GroupResource()
	if ts, ok := env.Adapter.(operator.Tasks); ok {
		return taskAccess(ns, env.Adapter, ts), nil
	}
	acc := append(operation.CommonAccess(ns, cr, "write the checkpoint annotation"), pub.Access{Resource: "pods", Verb: "delete", Namespace: ns, Why: "delete each drained pod"})
	return operation.PauseAccess(acc, env.Request.Pause), nil
}

// Summary implements operation.Kind.
func (Kind) Summary(cp *record.Checkpoint) string {
	return fmt.Sprintf("datacenter %s racks %s restarted (%d pods, one at a time)", cp.Target.DC, strings.Join(cp.Target.Racks, ","), operation.CountSteps(cp, StepWaitRestarted))
}

// Target implements operation.Kind.
func (Kind) Target(t record.Target) string {
	return fmt.Sprintf("datacenter %s racks %s, rolling restart", t.DC, strings.Join(t.Racks, ","))
}

// PlanLines implements operation.Kind.
func (Kind) PlanLines(cp *record.Checkpoint, _ []string) []string {
	var lines []string
	for _, rack := range cp.Target.Racks {
		lines = append(lines, fmt.Sprintf("  rack %s: restart %d pods", rack, cp.Target.From[rack]))
	}
	return lines
}

// Plan implements operation.Kind: a rolling restart of the selected racks (one rack, or every rack of a
// datacenter): for each pod, highest ordinal first, rack by rack, drain its node, delete
// the pod (UID precondition) and wait until the new pod is Ready and its node UN. Every
// pod must be Ready and every node of the datacenter Up/Normal now; the steps check it
// again before each pod.
//
// An operator that restarts pods itself when asked through a task (operator.Tasks:
// cass-operator) is asked instead (planTask); the others' restart is unchanged.
func (k Kind) Plan(ctx context.Context, env *pub.Env) (*pub.Plan, error) {
	if _, ok := env.Adapter.(operator.Tasks); ok {
		return k.planTask(ctx, env)
	}
	p, cl, req := operation.PlannerOf(env), env.Cluster, env.Request
	// A cluster of several datacenters needs the racks named; a CassandraDatacenter is
	// one (checked here, once the operator is known).
	if err := operation.RequireRack(req); err != nil {
		return nil, err
	}
	dc, racks, err := cl.Select(req.DC, req.Rack)
	if err != nil {
		return nil, exit.Usagef("%v", err)
	}
	plan := &pub.Plan{Cluster: cl, DC: dc, Racks: racks}
	from, states, err := readRacks(ctx, p, cl.Namespace, racks)
	if err != nil {
		return nil, err
	}
	if req.Pause != nil {
		// The operator is restored at the end only when the cluster resource and every
		// StatefulSet of the datacenter agree: check now that they do.
		var off []string
		for _, r := range dc.Racks {
			st, err := p.ReadCheckedRack(ctx, cl.Namespace, r, "restart")
			if err != nil {
				return nil, err
			}
			if st.Cur != r.Nodes {
				off = append(off, fmt.Sprintf("%s has %d for %d asked", st.STS.Name, st.Cur, r.Nodes))
			}
		}
		if len(off) > 0 {
			sort.Strings(off)
			return nil, exit.Refusedf("the %s asks for other counts than the StatefulSets of datacenter %s have (%s): the operator has a change pending, which it would make while pods restart; let it finish first (kubectl cassandra status %s); nothing changed",
				env.Adapter.Kind(), dc.Name, strings.Join(off, ", "), cl.Name)
		}
	}
	ring, reader, err := p.ReadRing(ctx, cl, dc, states, "restart")
	if err != nil {
		return nil, err
	}
	nodes, err := restartNodes(states, ring, reader)
	if err != nil {
		return nil, err
	}
	plan.CP = p.NewCheckpoint(cl, k, "restart", req)
	plan.CP.Target = record.Target{DC: dc.Name, Racks: operation.RackNames(racks), Nodes: max(dc.MaxNodes(), 1), RackNodes: dc.RackNodes(), From: from}
	plan.CP.Nodes = nodes
	plan.CP.Steps = Steps(nodes, req.Pause != nil)
	plan.Warnings = append(plan.Warnings, operation.PauseWarnings(req.Pause, env.Adapter.Kind())...)
	return plan, nil
}

// assess is abort's check (operation.Abort) for a restart, which stops between two
// pods: it refuses unless every planned pod is Ready with its node NORMAL (none drained,
// none on its way back); a pod whose UID changed since the plan counts as restarted.
func assess(ctx context.Context, r operation.AbortReads, cp *record.Checkpoint) (pub.Progress, error) {
	p := pub.Progress{Total: len(cp.Nodes)}
	if err := taskRunning(ctx, r, cp); err != nil {
		return p, err
	}
	for _, n := range cp.Nodes {
		pod, err := r.Pod(ctx, cp.Namespace, n.Pod)
		if err != nil {
			return p, exit.Refusedf("%v: abort needs to know every pod is back; nothing changed", err)
		}
		if pod == nil || pod.DeletionTimestamp != nil || !kube.PodReady(pod) {
			return p, exit.Refusedf("pod %s is being restarted (not back and Ready yet): wait until it is Ready and its node UN, then run abort again (or resume, which waits for it): %s", n.Pod, r.ResumeHint)
		}
		ns, err := r.Nodetool.Netstats(ctx, n.Pod)
		if err != nil {
			return p, exit.Refusedf("cannot read the state of %s (%v): abort needs to know no node is drained; nothing changed", n.Pod, err)
		}
		switch ns.Mode {
		case pubnodetool.ModeNormal:
		case pubnodetool.ModeDrained, pubnodetool.ModeDraining:
			return p, exit.Refusedf("node %s is %s: resume restarts it: %s", n.Pod, ns.Mode, r.ResumeHint)
		default:
			return p, exit.Refusedf("node %s is %s, not NORMAL: wait until it is, then run abort again (or resume): %s", n.Pod, ns.Mode, r.ResumeHint)
		}
		if string(pod.UID) != n.PodUID {
			p.Done++
		}
	}
	return p, nil
}

// readRacks reads the racks to restart, each with every pod Running and Ready and at
// least one pod; from is each rack's replicas.
func readRacks(ctx context.Context, p *operation.Planner, ns string, racks []topology.Rack) (map[string]int, []operation.RackNow, error) {
	from := map[string]int{}
	var states []operation.RackNow
	for _, r := range racks {
		st, err := p.ReadCheckedRack(ctx, ns, r, "restart")
		if err != nil {
			return nil, nil, err
		}
		if st.Cur == 0 {
			return nil, nil, exit.Refusedf("rack %s has no pod to restart; nothing changed", r.Name)
		}
		from[r.Name] = st.Cur
		states = append(states, st)
	}
	return from, states, nil
}

// restartNodes are the racks' pods, highest ordinal first, rack by rack, each with its
// node from ring (read from reader); a pod whose node the ring does not list is refused.
func restartNodes(states []operation.RackNow, ring pubnodetool.Ring, reader string) ([]record.Node, error) {
	var nodes []record.Node
	for _, st := range states {
		for i := st.Cur - 1; i >= 0; i-- {
			pod := st.Pods[i]
			row, ok := ring.ByAddress(pod.Status.PodIP)
			if !ok {
				return nil, exit.Refusedf("the node of pod %s (%s) is not in the ring read from %s; nothing changed", pod.Name, pod.Status.PodIP, reader)
			}
			nodes = append(nodes, record.Node{Pod: pod.Name, PodUID: string(pod.UID), Ordinal: i, DC: st.Rack.DC, Rack: st.Rack.Name,
				StatefulSet: st.STS.Name, HostID: row.HostID, Address: pod.Status.PodIP})
		}
	}
	return nodes, nil
}
