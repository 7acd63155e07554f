// Command kcass-bare-lister is the cold-start yardstick the benchmark issue names: a bare
// client-go binary that lists the CassandraClusters of one namespace and prints them as
// YAML. It loads its kubeconfig with clientcmd alone (no cli-runtime, no typed
// clientset), so it shows the least a Go client pays to start on this machine. make bench
// runs it directly and through kubectl (as the plugin kubectl-kcassbare).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/bench/lister"
)

func main() {
	ns := flag.String("n", "default", "namespace")
	flag.Parse()
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err == nil {
		err = lister.List(context.Background(), cfg, *ns, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kcass-bare-lister:", err)
		os.Exit(1)
	}
}
