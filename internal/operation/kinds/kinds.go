// Package kinds is the table of the operation kinds this plugin offers: one line per
// kind, one package each under internal/operation.
package kinds

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/repair"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/restart"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaledown"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaleup"
)

// Registry returns the table of every operation kind.
func Registry() operation.Registry {
	return operation.NewRegistry(
		scaledown.Kind{},
		scaleup.Kind{},
		restart.Kind{},
		repair.Kind{},
	)
}
