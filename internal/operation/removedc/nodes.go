package removedc

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// readRacks reads each rack's StatefulSet and pods; a StatefulSet already gone counts
// as an empty rack (the operator deleted it).
func readRacks(ctx context.Context, p *operation.Planner, ns string, racks []topology.Rack) ([]operation.RackNow, error) {
	var out []operation.RackNow
	for _, r := range racks {
		n, err := p.Replicas(ctx, ns, r.StatefulSet)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			out = append(out, operation.RackNow{Rack: r})
			continue
		}
		st, err := p.ReadRack(ctx, ns, r)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// planNodes plans every node of the racks, highest ordinal first across the racks:
// each pod Ready, its node found in the ring by address, or already out of it (then
// the node itself gives its Host ID, and the decommission finds it done).
func planNodes(ctx context.Context, p *operation.Planner, states []operation.RackNow, ring pubnodetool.Ring) ([]record.Node, error) {
	var nodes []record.Node
	for _, st := range states {
		for i := st.Cur - 1; i >= 0; i-- {
			pod, ok := st.Pods[i]
			if !ok {
				return nil, exit.Refusedf("pod %s-%d of rack %s does not exist (its StatefulSet asks for %d): wait until it is back and run remove-dc again; nothing changed", st.STS.Name, i, st.Rack.Name, st.Cur)
			}
			if pod.DeletionTimestamp != nil || !kube.PodReady(&pod) {
				return nil, exit.Refusedf("pod %s is not Ready: every node of the datacenter must decommission; wait until it is Ready and run remove-dc again; nothing changed", pod.Name)
			}
			n := record.Node{Pod: pod.Name, PodUID: string(pod.UID), Ordinal: i, DC: st.Rack.DC, Rack: st.Rack.Name,
				StatefulSet: st.STS.Name, Address: pod.Status.PodIP}
			if row, ok := ring.ByAddress(pod.Status.PodIP); ok && row.HostID != "" {
				n.HostID = row.HostID
			} else {
				id, err := p.HostID(ctx, pod.Name)
				if err != nil {
					return nil, exit.Refusedf("the node of pod %s is not in the ring and cannot say its Host ID (%v); nothing changed", pod.Name, err)
				}
				n.HostID = id
			}
			for _, tpl := range st.STS.Spec.VolumeClaimTemplates {
				name := tpl.Name + "-" + pod.Name
				pvc, err := p.Claim(ctx, st.STS.Namespace, name)
				if err != nil {
					return nil, fmt.Errorf("cannot read PVC %s: %w", name, err)
				}
				if pvc != nil {
					n.PVCs = append(n.PVCs, record.PVC{Name: name, UID: string(pvc.UID)})
				}
			}
			nodes = append(nodes, n)
		}
	}
	sortRemovals(nodes)
	return nodes, nil
}
