// Command kubectl-cassandra is the `kubectl cassandra` plugin: resumable rack operations
// on Apache Cassandra clusters run by Kubernetes operators.
package main

import (
	"os"

	_ "k8s.io/client-go/plugin/pkg/client/auth" // exec, oidc and cloud auth providers, as kubectl has

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cli"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
	cassrepair "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator/repair"
)

// main is the composition root: it hands the CLI the operators this build supports (one
// adapter package each), with the operation kinds only they offer (CassKop: its
// repair-operator-state, one each). cass-operator scales its datacenters itself (operator.Scaler). The CLI and
// everything under internal/ know them only through pkg/: pkg/operator for an adapter,
// pkg/operation for an operator's own kinds.
func main() {
	os.Exit(cli.Main(os.Args[1:], cli.StdStreams(), repair.Operator{Plugin: casskop.Plugin{}}, cassrepair.Operator{Plugin: cassoperator.Plugin{}}))
}
