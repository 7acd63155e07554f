package scaledown

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaleup"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// Options are the scale command's own part of the request (pkg/operation.Request.Ext):
// a scale-down's, and the scale-up's it plans when the racks grow (planScale hands
// those to the scale-up).
type Options struct {
	// RemoveDead: a dead node among those removed is removed with nodetool removenode
	// from a live node instead of a decommission (--remove-dead).
	RemoveDead bool
	// Up are the scale-up's (--cleanup).
	Up scaleup.Options
}

// request is what was asked of a scale: the shared request and the command's own.
type request struct {
	pub.Request
	Options
}

// requestOf is req with the scale options it carries (none: the zero ones).
func requestOf(req pub.Request) request {
	r := request{Request: req}
	if o, ok := req.Ext.(*Options); ok && o != nil {
		r.Options = *o
	}
	return r
}
