// Package stuck is how an operator adapter tells repair-operator-state
// (plugins/casskop/repair) where its own status says a decommission stands
// (plugins/casskop/repairstatus.go implements it). It imports neither the repair nor
// the steps, so the adapter can implement it without an import cycle (the steps' tests
// import the adapter).
package stuck

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Status is what the repair reads of the operator's own record of a cluster.
type Status interface {
	// Decommissions lists the racks whose status shows a decommission, with its phase.
	Decommissions(u *unstructured.Unstructured, cl topology.Cluster) []Decommission
	// NodeStatus is the Host ID and address the operator recorded for pod's node.
	NodeStatus(u *unstructured.Unstructured, pod string) (hostID, ip string, ok bool)
}

// Decommission is a rack's decommission as the operator's status shows it.
type Decommission struct {
	RackOperation
	Phase Phase
}

// Phase is where the operator's status says a decommission stands.
type Phase int

// Phases of a decommission in the operator's status. The repair finds a decommission
// stuck in each (plugins/casskop/repair/repair.go verifies it first).
const (
	// PhaseOther: nothing a repair looks at (e.g. a ToDo for another action).
	PhaseOther Phase = iota
	// PhaseOngoing: the operator runs it (CassKop: podLastOperation Ongoing). Stuck
	// when its pod is gone (CassKop #370): every reconcile fails reading the pod.
	PhaseOngoing
	// PhaseFinalizing: the node left; the operator finishes (CassKop: Finalizing).
	// Stuck when the pod is still there and the StatefulSet never shrunk: CassKop
	// waits for the pod to go, forever.
	PhaseFinalizing
	// PhaseToDo: not started as far as the status says, while the rack's last action
	// (a scale-down) is not done (CassKop: ToDo, cassandraLastAction ScaleDown). Stuck
	// when the decommission was fired (node LEAVING or DECOMMISSIONED): CassKop never
	// fires it again nor moves on.
	PhaseToDo
)
