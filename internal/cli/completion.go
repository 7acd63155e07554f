package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// The kubectl completion shim: kubectl ≥1.26 runs `kubectl_complete-cassandra` to
// complete `kubectl cassandra …`.
const kubectlShim = `#!/usr/bin/env sh
# Completion for "kubectl cassandra": put this file on PATH as kubectl_complete-cassandra.
kubectl cassandra __complete "$@"
`

const completionExample = `  # Let kubectl complete "kubectl cassandra ..." (kubectl 1.26+)
  kubectl cassandra completion kubectl-shim > ~/.local/bin/kubectl_complete-cassandra
  chmod +x ~/.local/bin/kubectl_complete-cassandra

  # Completion for the kubectl-cassandra binary itself
  source <(kubectl-cassandra completion bash)`

func newCompletionCmd(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion kubectl-shim|bash|zsh|fish|powershell",
		Short: "Print the kubectl completion shim, or a shell completion script",
		Long: `Prints the kubectl completion shim (kubectl 1.26+ runs kubectl_complete-cassandra from PATH
to complete "kubectl cassandra ..."), or the completion script of the kubectl-cassandra binary
for bash, zsh, fish or powershell.

Exit codes: 0 printed, 2 bad usage (no shell, or an unknown one).`,
		Example:   completionExample,
		GroupID:   groupOther,
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs: []string{"kubectl-shim", "bash", "zsh", "fish", "powershell"},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "kubectl-shim":
				_, err := fmt.Fprint(o.Out, kubectlShim)
				return err
			case "bash":
				return root.GenBashCompletionV2(o.Out, true)
			case "zsh":
				return root.GenZshCompletion(o.Out)
			case "fish":
				return root.GenFishCompletion(o.Out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(o.Out)
			}
			return fmt.Errorf("unknown shell %q (want kubectl-shim, bash, zsh, fish or powershell)", args[0])
		},
	}
	return cmd
}

// completionContext bounds completion so an unreachable cluster never hangs the shell.
func completionContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, 3*time.Second)
}

// bounded runs a completion lookup with a deadline: discovery takes no context, so a
// hanging API server must not hang the shell; on timeout there are no candidates.
func bounded(cmd *cobra.Command, lookup func(ctx context.Context) []string) ([]string, cobra.ShellCompDirective) {
	ctx, cancel := completionContext(cmd)
	defer cancel()
	out := make(chan []string, 1)
	go func() { out <- lookup(ctx) }()
	select {
	case names := <-out:
		return names, cobra.ShellCompDirectiveNoFileComp
	case <-ctx.Done():
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeClusters lists the names of the clusters of every operator served; nothing
// (and no error spew) when the cluster is unreachable.
func (o *Options) completeClusters(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return bounded(cmd, func(ctx context.Context) []string {
		c, served, err := o.adapters(ctx)
		if err != nil {
			return nil
		}
		var names []string
		for _, a := range served {
			list, _ := a.List(ctx, o.namespace(c))
			for _, l := range list {
				names = append(names, l.Name)
			}
		}
		return names
	})
}

func (o *Options) completeTopology(cmd *cobra.Command, args []string, racks bool) ([]string, cobra.ShellCompDirective) {
	dc, _ := cmd.Flags().GetString("dc")
	return bounded(cmd, func(ctx context.Context) []string {
		s, err := o.open(ctx, args)
		if err != nil {
			return nil
		}
		if !racks {
			return s.cluster.DCNames()
		}
		return s.cluster.RackNames(dc)
	})
}

// completeRacks lists the racks of the cluster (of --dc when given).
func (o *Options) completeRacks(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	return o.completeTopology(cmd, args, true)
}

// completeDCs lists the datacenters of the cluster.
func (o *Options) completeDCs(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	return o.completeTopology(cmd, args, false)
}
