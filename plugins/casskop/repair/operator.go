package repair

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
)

// Operator is CassKop with the operation only it has, repair-operator-state: what
// cmd/kubectl-cassandra/main.go hands the CLI. The adapter itself (plugins/casskop)
// does not import the operation packages, so their tests can use it.
type Operator struct{ casskop.Plugin }

var _ operation.Offerer = Operator{}

// Kinds implements operation.Offerer.
func (Operator) Kinds() []operation.Kind { return []operation.Kind{Kind{}} }
