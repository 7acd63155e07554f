package scaleup

import pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"

// Options are a scale-up's own part of the request (pkg/operation.Request.Ext): the
// scale command binds them (internal/operation/scaledown/command.go).
type Options struct {
	// Cleanup: run nodetool cleanup on the pre-existing nodes afterwards (--cleanup).
	Cleanup bool
}

// request is what was asked of a scale-up: the shared request and the kind's own.
type request struct {
	pub.Request
	Options
}

// requestOf is req with the scale-up's options it carries (none: the zero ones, as a
// grow-back asks).
func requestOf(req pub.Request) request {
	r := request{Request: req}
	if o, ok := req.Ext.(*Options); ok && o != nil {
		r.Options = *o
	}
	return r
}
