// Package kinds is the table of the operation kinds this plugin offers: one line per
// kind, one package each under internal/operation (an operator's own kinds live
// with its adapter, under plugins/).
package kinds

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/adddc"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/removedc"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/replacenode"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/restart"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaledown"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaleup"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// Registry returns the table of every operation kind: the ones every operator gets,
// and extra, the ones the operators this build supports offer (operation.Offered;
// cmd/kubectl-cassandra/main.go composes the operators).
func Registry(extra ...pub.Kind) operation.Registry {
	return operation.NewRegistry(append([]pub.Kind{
		scaledown.Kind{},
		scaleup.Kind{},
		restart.Kind{},
		replacenode.Kind{},
		adddc.Kind{},
		removedc.Kind{},
	}, extra...)...)
}
