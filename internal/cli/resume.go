package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
)

const resumeExample = `  # Continue whatever operation is in flight on the only cluster of the namespace
  kubectl cassandra resume -n cassandra

  # From a script
  kubectl cassandra resume cassandra-demo --yes -o json`

// resumeOptions are resume's flags and arguments (Complete / Validate / Run, as every
// command's).
type resumeOptions struct {
	clusterArg
	flags runFlags
}

// Validate checks -o and --progress (bad usage, nothing changed).
func (r *resumeOptions) Validate() error { return r.flags.validate() }

// Run continues the operation in flight, or says there is none.
func (r *resumeOptions) Run(ctx context.Context, o *Options) error {
	f := &r.flags
	s, cp, err := o.openInFlight(ctx, r.args)
	if err != nil {
		o.reapAfterGone(ctx, err)
		return err
	}
	l := o.lifecycle(s, f)
	l.ReapGone(ctx, cp, "")
	if cp == nil {
		msg := fmt.Sprintf("No operation in flight on %s %s/%s: nothing to resume.", s.adapter.Kind(), s.cluster.Namespace, s.cluster.Name)
		last, _ := s.store.LastOperation(ctx)
		if f.output != "text" {
			return output.Print(o.Out, f.output, map[string]any{"result": "nothing-to-resume", "message": msg, "lastOperation": last, "next": s.statusHint()})
		}
		fmt.Fprintln(o.Out, msg)
		if last != nil {
			fmt.Fprintf(o.Out, "Last operation: %s %s %s at %s (%s)\n", last.OperationID, last.Kind, last.Result, last.FinishedAt.Format(time.RFC3339), last.Summary)
		}
		return nil
	}
	return l.Resume(ctx, cp, f.run())
}

func newResumeCmd(o *Options) *cobra.Command {
	r := &resumeOptions{}
	cmd := &cobra.Command{
		Use:   "resume [CLUSTER]",
		Short: "Continue the operation recorded in the cluster's checkpoint",
		Long: o.words().Replace(`Continue the operation recorded in the {Kind}'s checkpoint annotation, from any
machine. The checkpoint says what was planned; whether each step is done is asked of the real
world (API objects and nodetool), so steps that already happened are not repeated.

` + exit.Help),
		Example:           resumeExample,
		GroupID:           groupOps,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.completeClusters,
		RunE:              o.runE(r),
	}
	r.flags.add(cmd)
	return cmd
}
