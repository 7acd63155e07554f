package operation

import (
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Request is what the user asked for.
type Request struct {
	DC    string
	Rack  string
	Nodes int
	Force bool
	// Pause, when set, is the operator Deployment to pause for the operation.
	Pause *record.PausedOperator
	// Cleanup (scale-up): run nodetool cleanup on the pre-existing nodes afterwards.
	Cleanup bool
	// RemoveDead (scale-down): a dead node among those removed is removed with
	// nodetool removenode from a live node instead of a decommission.
	RemoveDead bool
	// StreamThroughput is --stream-throughput as given ("" when not): the rate set on
	// the nodes that stream while they do.
	StreamThroughput string
	// Pod (replace-node) is the pod whose dead node is replaced; Address, when set, is
	// the dead node's address (--address: the ring has several candidates); AllowSeed
	// lets a seed's node be replaced.
	Pod, Address string
	AllowSeed    bool
}

// Plan is a checkpoint ready to be written, plus what the user should know about it.
type Plan struct {
	CP       *record.Checkpoint
	Cluster  topology.Cluster
	DC       topology.DC
	Racks    []topology.Rack
	Warnings []string
	// Findings are what the planner found in the real world that the plan acts on
	// (repair-operator-state: the stuck states, verified).
	Findings []string
}

// ErrNothingToDo is a plan's answer when the world already is what was asked: the
// command says Msg and exits 0.
type ErrNothingToDo struct{ Msg string }

func (e *ErrNothingToDo) Error() string { return e.Msg }

// Access is one permission the plan needs (checked before planning, and listed when
// missing).
type Access struct {
	Group, Resource, Subresource, Verb, Namespace, Why string
}

func (a Access) String() string {
	r := a.Resource
	if a.Group != "" {
		r += "." + a.Group
	}
	if a.Subresource != "" {
		r += "/" + a.Subresource
	}
	return fmt.Sprintf("%s %s in namespace %s (%s)", a.Verb, r, a.Namespace, a.Why)
}
