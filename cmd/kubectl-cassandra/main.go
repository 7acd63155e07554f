// Command kubectl-cassandra is the `kubectl cassandra` plugin: resumable rack operations
// on Apache Cassandra clusters run by Kubernetes operators.
package main

import (
	"os"

	_ "k8s.io/client-go/plugin/pkg/client/auth" // exec, oidc and cloud auth providers, as kubectl has

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.StdStreams()))
}
