package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/version"
)

const versionExample = `  # Print the plugin's version, commit and build date
  kubectl cassandra version

  # Also for scripts; includes the CassandraCluster API version when a cluster is reachable
  kubectl cassandra version -o json`

type versionReport struct {
	Plugin version.Info `json:"plugin"`
	// CRD is the served API version of the cluster resource (kind), when a cluster was
	// reachable.
	CRD  string `json:"crd,omitempty"`
	kind string
}

func newVersionCmd(o *Options) *cobra.Command {
	var output string
	var client bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin version (and the CassandraCluster API version when reachable)",
		Long: `Prints the plugin's version, commit and build date, and the served API version of the
cluster resource when a cluster is reachable within 3 s (an unreachable one is not an error).

Exit codes: 0 printed, 2 bad usage (an unknown -o).`,
		Example: versionExample,
		GroupID: groupOther,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "text", "json", "yaml"); err != nil {
				return err
			}
			rep := versionReport{Plugin: version.Get()}
			if !client {
				ctx, cancel := context.WithTimeout(cmd.Context(), 3*time.Second)
				defer cancel()
				rep.kind, rep.CRD = o.detectCRD(ctx)
			}
			switch output {
			case "json":
				b, _ := json.MarshalIndent(rep, "", "  ")
				fmt.Fprintln(o.Out, string(b))
			case "yaml":
				b, _ := yaml.Marshal(rep)
				fmt.Fprint(o.Out, string(b))
			default:
				fmt.Fprintf(o.Out, "kubectl-cassandra %s (commit %s, built %s, %s, %s)\n", rep.Plugin.Version, rep.Plugin.Commit, rep.Plugin.Date, rep.Plugin.GoVersion, rep.Plugin.Platform)
				if rep.CRD != "" {
					fmt.Fprintf(o.Out, "%s API: %s\n", rep.kind, rep.CRD)
				}
			}
			return nil
		},
	}
	addOutputFlag(cmd, &output, "text", "json", "yaml")
	cmd.Flags().BoolVar(&client, "client", false, "Do not contact the cluster")
	return cmd
}
