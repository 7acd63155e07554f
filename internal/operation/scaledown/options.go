package scaledown

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaleup"
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
