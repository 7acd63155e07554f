package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
)

const restartExample = `  # Restart every pod of rack rack1, one at a time, highest ordinal first
  kubectl cassandra restart -n cassandra cassandra-demo --rack rack1

  # Every rack of datacenter dc1, rack by rack
  kubectl cassandra restart cassandra-demo --dc dc1

  # Show the exact plan and change nothing
  kubectl cassandra restart cassandra-demo --rack rack1 --dry-run -o json`

type restartFlags struct {
	opFlags
	dc, rack string
}

func newRestartCmd(o *Options) *cobra.Command {
	f := &restartFlags{}
	cmd := &cobra.Command{
		Use:   "restart [CLUSTER] --rack RACK | --dc DC",
		Short: "Restart a rack's pods one at a time (drain, delete, wait until UN), resumably",
		Long: `Restart the pods of a rack (or of every rack of a datacenter) one at a time, highest ordinal
first: check that every node of the datacenter is UN, nodetool drain the node, delete its pod (with
a UID precondition), and wait until the StatefulSet's new pod (a new UID) is Ready and its node UN;
then the next pod.

Every step is written to a checkpoint annotation on the CassandraCluster before it runs. If the
run is interrupted, "kubectl cassandra resume" finishes it from any machine, in the middle of a
rack too: a pod that was already restarted (its UID changed) is not restarted again.

CLUSTER is the CassandraCluster's name; it may be left out when the namespace holds one.

` + exit.Help,
		Example:           restartExample,
		GroupID:           groupOps,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.completeClusters,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.runFlags.validate(); err != nil {
				return err
			}
			if f.rack == "" && f.dc == "" {
				return exit.Usagef("name the rack with --rack (or a whole datacenter with --dc)")
			}
			return o.runRestart(cmd.Context(), args, f)
		},
	}
	cmd.Flags().StringVar(&f.rack, "rack", "", "Rack to restart")
	cmd.Flags().StringVar(&f.dc, "dc", "", "Datacenter of the rack (required when the rack name exists in several); alone: every rack of the datacenter")
	f.opFlags.add(cmd, "Print the plan and change nothing", "the operation")
	_ = cmd.RegisterFlagCompletionFunc("rack", o.completeRacks)
	_ = cmd.RegisterFlagCompletionFunc("dc", o.completeDCs)
	return cmd
}

func (o *Options) runRestart(ctx context.Context, args []string, f *restartFlags) error {
	s, err := o.open(ctx, args)
	if err != nil {
		return err
	}
	dc, racks, serr := s.cluster.Select(f.dc, f.rack)
	return o.startOperation(ctx, s, &start{
		kind: o.Kinds.MustKind(checkpoint.KindRestart), req: operation.Request{DC: f.dc, Rack: f.rack}, flags: &f.opFlags, busy: true,
		inFlight: func(existing *checkpoint.Checkpoint) error {
			if existing.Kind == checkpoint.KindRestart && serr == nil && existing.SameRacks(dc.Name, operation.RackNames(racks)) {
				fmt.Fprintf(o.ErrOut, "Operation %s with the same target is in flight; resuming it.\n", existing.OperationID)
				return o.resumeCheckpoint(ctx, s, existing, &f.runFlags)
			}
			return o.refuseOtherInFlight(s, existing)
		},
		next: func(plan *operation.Plan) string {
			next := fmt.Sprintf("kubectl cassandra restart -n %s %s --dc %s", s.cluster.Namespace, s.cluster.Name, plan.DC.Name)
			if f.rack != "" {
				next += " --rack " + f.rack
			}
			return next + " --yes"
		},
	})
}
