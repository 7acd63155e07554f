package operation

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/topology"
)

// Restart plans a rolling restart of the selected racks (one rack, or every rack of a
// datacenter): for each pod, highest ordinal first, rack by rack, drain its node, delete
// the pod (UID precondition) and wait until the new pod is Ready and its node UN. Every
// pod must be Ready and every node of the datacenter Up/Normal now; the steps check it
// again before each pod.
func (p *Planner) Restart(ctx context.Context, cl topology.Cluster, req Request) (*Plan, error) {
	dc, racks, err := cl.Select(req.DC, req.Rack)
	if err != nil {
		return nil, exit.Usagef("%v", err)
	}
	plan := &Plan{Cluster: cl, DC: dc, Racks: racks}
	from := map[string]int{}
	var states []rackNow
	for _, r := range racks {
		st, err := p.readRack(ctx, cl.Namespace, r, "restart")
		if err != nil {
			return nil, err
		}
		if st.cur == 0 {
			return nil, exit.Refusedf("rack %s has no pod to restart; nothing changed", r.Name)
		}
		from[r.Name] = st.cur
		states = append(states, st)
	}
	if req.Pause != nil {
		// The operator is restored at the end only when the cluster resource and every
		// StatefulSet of the datacenter agree: check now that they do.
		var off []string
		for _, r := range dc.Racks {
			st, err := p.readRack(ctx, cl.Namespace, r, "restart")
			if err != nil {
				return nil, err
			}
			if st.cur != dc.NodesPerRack {
				off = append(off, fmt.Sprintf("%s has %d", st.sts.Name, st.cur))
			}
		}
		if len(off) > 0 {
			sort.Strings(off)
			return nil, exit.Refusedf("the CassandraCluster asks for %d nodes per rack in datacenter %s but %s: the operator has a change pending, which it would make while pods restart; let it finish first (kubectl cassandra status %s); nothing changed",
				dc.NodesPerRack, dc.Name, strings.Join(off, ", "), cl.Name)
		}
	}
	ring, reader, err := p.readRing(ctx, cl, dc, states, "restart")
	if err != nil {
		return nil, err
	}
	var nodes []checkpoint.Node
	for _, st := range states {
		for i := st.cur - 1; i >= 0; i-- {
			pod := st.pods[i]
			row, ok := ring.ByAddress(pod.Status.PodIP)
			if !ok {
				return nil, exit.Refusedf("the node of pod %s (%s) is not in the ring read from %s; nothing changed", pod.Name, pod.Status.PodIP, reader)
			}
			nodes = append(nodes, checkpoint.Node{Pod: pod.Name, PodUID: string(pod.UID), Ordinal: i, DC: st.rack.DC, Rack: st.rack.Name,
				StatefulSet: st.sts.Name, HostID: row.HostID, Address: pod.Status.PodIP})
		}
	}
	plan.CP = p.newCheckpoint(cl, checkpoint.KindRestart, "restart", req)
	plan.CP.Target = checkpoint.Target{DC: dc.Name, Racks: rackNames(racks), Nodes: max(dc.NodesPerRack, 1), From: from}
	plan.CP.Nodes = nodes
	plan.CP.Steps = checkpoint.RestartSteps(nodes, req.Pause != nil)
	plan.Warnings = append(plan.Warnings, unmanagedWarnings(req.Pause)...)
	return plan, nil
}
