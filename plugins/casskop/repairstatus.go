package casskop

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair/stuck"
)

var _ stuck.Status = (*Adapter)(nil)

// Decommissions lists the racks whose status.cassandraRackStatus shows a decommission,
// with where CassKop says it stands (repair-operator-state reads it).
func (a *Adapter) Decommissions(u *unstructured.Unstructured, cl topology.Cluster) []stuck.Decommission {
	var out []stuck.Decommission
	for _, ro := range RackOperations(u, cl) {
		if ro.Operation != OperationDecommission {
			continue
		}
		d := stuck.Decommission{RackOperation: ro}
		switch ro.Status {
		case StatusOngoing:
			d.Phase = stuck.PhaseOngoing
		case StatusFinalizing:
			d.Phase = stuck.PhaseFinalizing
		case StatusToDo:
			if ro.Action == ActionScaleDown && ro.ActionStatus != StatusDone {
				d.Phase = stuck.PhaseToDo
			}
		}
		out = append(out, d)
	}
	return out
}

// NodeStatus is what CassKop recorded about pod's node in status.cassandraNodeStatus.
func (a *Adapter) NodeStatus(u *unstructured.Unstructured, pod string) (hostID, ip string, ok bool) {
	return NodeStatus(u, pod)
}
