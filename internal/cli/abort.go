package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/lifecycle"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
)

const abortExample = `  # Stop the operation in flight at a safe point: the cluster resource is set to what the
  # racks have, a paused operator is restored, the checkpoint cleared
  kubectl cassandra abort -n cassandra cassandra-demo

  # From a script
  kubectl cassandra abort cassandra-demo --yes -o json`

// abortOptions are abort's flags and arguments (Complete / Validate / Run, as every
// command's).
type abortOptions struct {
	clusterArg
	// flags are a run's: abort --grow-back runs a plan.
	flags    runFlags
	growBack bool
}

// Validate checks -o and --progress (bad usage, nothing changed).
func (a *abortOptions) Validate() error { return a.flags.validate() }

func newAbortCmd(o *Options) *cobra.Command {
	a := &abortOptions{}
	cmd := &cobra.Command{
		Use:   "abort [CLUSTER]",
		Short: "Stop the operation in flight at a safe point, leaving the cluster consistent",
		Long: o.words().Replace(`Stop the operation recorded in the cluster's checkpoint where it stands, at any safe point:
between two nodes of a scale-down (or after a decommission Cassandra refused), anywhere in a
scale-up, between two pods of a restart. Abort sets the {Kind}'s {Count} to what
the racks' StatefulSets have, restores anything the plan paused (the operator Deployment), clears
the checkpoint and records the last operation as "aborted after removing k of n nodes" (or added,
or restarted pods). Every write is guarded, and the checkpoint is re-read before each one.

A decommission cannot be cancelled once the node is LEAVING: abort then first finishes removing
that node (it waits until the node left, then takes its pod and claims away, never starting a
removal of its own), and stops the operation there; so it does for a node half removed (left, its
pod or claims still there). Abort refuses while a pod is drained or on its way back, or the
datacenter's racks have sizes its {Count} cannot hold: it says which rack to finish first, and offers --grow-back,
which ends the operation by growing the smaller racks back to the largest (a scale-up planned
from the world under the same operation, the operator restored at its end).

` + exit.Help),
		Example:           abortExample,
		GroupID:           groupOps,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.completeClusters,
		RunE:              o.runE(a),
	}
	a.flags.add(cmd)
	cmd.Flags().BoolVar(&a.growBack, "grow-back", false, "When the racks were left at sizes the operator cannot keep, end the operation by growing the smaller racks back to the largest (a planned scale-up under the same operation) instead of refusing")
	return cmd
}

// Run stops the operation in flight at a safe point (see the command's help): the
// lifecycle's Abort does it, and Run says how it ended.
func (a *abortOptions) Run(ctx context.Context, o *Options) error {
	out := a.flags.output
	s, cp, err := o.openInFlight(ctx, a.args)
	if err != nil {
		o.reapAfterGone(ctx, err)
		return err
	}
	l := o.lifecycle(s, &a.flags)
	l.ReapGone(ctx, cp, "")
	if cp == nil {
		msg := fmt.Sprintf("No operation in flight on %s %s/%s: nothing to abort.", s.adapter.Kind(), s.cluster.Namespace, s.cluster.Name)
		if out != "text" {
			return output.Print(o.Out, out, map[string]any{"result": "nothing-to-abort", "message": msg, "next": s.statusHint()})
		}
		fmt.Fprintln(o.Out, msg)
		return nil
	}
	done, err := l.Abort(ctx, cp, lifecycle.AbortFlags{RunFlags: a.flags.run(), GrowBack: a.growBack})
	if err != nil || done == nil {
		return err // done nil: grown back, a run that said its end
	}
	if out != "text" {
		return output.Print(o.Out, out, map[string]any{"result": "aborted", "operationID": done.OperationID, "summary": done.Summary, "next": s.statusHint()})
	}
	fmt.Fprintf(o.Out, "Aborted operation %s (%s); the checkpoint is cleared.\n", done.OperationID, done.Summary)
	return nil
}
