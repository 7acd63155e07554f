// Command kcass-cliruntime-lister is the bare lister (kcass-bare-lister) with kubectl's
// standard flags from cli-runtime, as the plugin takes them (genericclioptions
// ConfigFlags, on a pflag set). Linking cli-runtime brings client-go's whole API scheme
// and the resource builder's dependencies, whose package initialisation every run pays:
// this is the least a plugin built on cli-runtime pays to start. make bench runs it as
// the plugin kubectl-kcassclirt.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/bench/lister"
)

func main() {
	flags := genericclioptions.NewConfigFlags(true)
	fs := pflag.NewFlagSet("kcass-cliruntime-lister", pflag.ExitOnError)
	flags.AddFlags(fs)
	_ = fs.Parse(os.Args[1:])
	cfg, err := flags.ToRESTConfig()
	if err == nil {
		ns, _, nerr := flags.ToRawKubeConfigLoader().Namespace()
		if err = nerr; err == nil {
			err = lister.List(context.Background(), cfg, ns, os.Stdout)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kcass-cliruntime-lister:", err)
		os.Exit(1)
	}
}
