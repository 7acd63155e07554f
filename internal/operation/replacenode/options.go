package replacenode

import pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"

// Options are a replace's own part of the request (pkg/operation.Request.Ext), bound
// by its command's flags.
type Options struct {
	// Pod is the pod whose dead node is replaced (--pod); Address, when set, is the dead
	// node's address (--address: the ring has several candidates); AllowSeed lets a
	// seed's node be replaced (--allow-seed).
	Pod, Address string
	AllowSeed    bool
}

// request is what was asked of a replace: the shared request and the kind's own.
type request struct {
	pub.Request
	Options
}

// requestOf is req with the replace's options it carries (none: the zero ones).
func requestOf(req pub.Request) request {
	r := request{Request: req}
	if o, ok := req.Ext.(*Options); ok && o != nil {
		r.Options = *o
	}
	return r
}
