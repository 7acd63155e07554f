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
	// StreamThroughput is --stream-throughput as given ("" when not): the rate set on
	// the nodes that stream while they do.
	StreamThroughput string
	// Ext is the kind's own part of the request, a value of the kind's own type its
	// command's Flags bind (replace-node: the pod whose node is replaced); nil when the
	// kind has none or it was asked otherwise than by its command (its zero value).
	Ext any
}

// KindRequest is a request with its kind's own part, of the kind's type O, read out of Ext.
type KindRequest[O any] struct {
	Request
	Options O
}

// KindRequestOf is req with the kind's own part it carries (none: the zero O, as when the
// kind was asked otherwise than by its command, e.g. a grow-back's scale-up).
func KindRequestOf[O any](req Request) KindRequest[O] {
	a := KindRequest[O]{Request: req}
	if o, ok := req.Ext.(*O); ok && o != nil {
		a.Options = *o
	}
	return a
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
