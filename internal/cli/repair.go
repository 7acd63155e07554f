package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
)

const repairExample = `  # Find CassKop stuck after an interrupted decommission, verify, show the plan, repair
  kubectl cassandra repair-operator-state -n cassandra cassandra-demo

  # Only show what is stuck and the plan
  kubectl cassandra repair-operator-state cassandra-demo --dry-run -o json`

type repairFlags struct {
	opFlags
}

func newRepairCmd(o *Options) *cobra.Command {
	f := &repairFlags{}
	cmd := &cobra.Command{
		Use:   "repair-operator-state [CLUSTER]",
		Short: "Un-stick CassKop after an interrupted decommission (verified, planned, resumable)",
		Long: `Find the states in which CassKop stays stuck after an interrupted decommission, in the
CassandraCluster's status, and repair them:

  - podLastOperation decommission Ongoing while its pod is gone (CassKop #370): once its node is
    confirmed out of the ring and no pod uses its PVCs, delete the leftover PVCs;
  - Finalizing while the StatefulSet was never shrunk: once the node is confirmed DECOMMISSIONED
    and out of the ring, shrink the StatefulSet, wait for the pod to go, delete its PVCs;
  - ToDo although the decommission was fired (node LEAVING or DECOMMISSIONED): wait until the
    node left, then the same;

then set the rack's status so that CassKop continues: podLastOperation Done (podsOK [pod]) and
cassandraLastAction Done. The status is written through the /status subresource when the CRD has
one (CassKop 2.3+), else with a merge patch of the CassandraCluster (the 2022 CRD has none).

Everything is verified against the cluster before the plan is shown, and again right before each
step. The operator is paused meanwhile (it would write its own status over the repair) and
restored at the end. An interrupted repair is finished with "kubectl cassandra resume".

` + exit.Help,
		Example:           repairExample,
		GroupID:           groupOps,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.completeClusters,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.runFlags.validate(); err != nil {
				return err
			}
			return o.runRepair(cmd.Context(), args, f)
		},
	}
	f.opFlags.add(cmd, "Print what is stuck and the plan, and change nothing", "the repair")
	return cmd
}

func (o *Options) runRepair(ctx context.Context, args []string, f *repairFlags) error {
	s, err := o.open(ctx, args)
	if err != nil {
		return err
	}
	return o.startOperation(ctx, s, &start{
		kind: o.Kinds.MustKind(checkpoint.KindRepairOperator), flags: &f.opFlags,
		inFlight: func(existing *checkpoint.Checkpoint) error {
			if existing.Kind == checkpoint.KindRepairOperator {
				fmt.Fprintf(o.ErrOut, "Repair %s is in flight; resuming it.\n", existing.OperationID)
				return o.resumeCheckpoint(ctx, s, existing, &f.runFlags)
			}
			return o.refuseOtherInFlight(s, existing)
		},
		next: func(*operation.Plan) string {
			return fmt.Sprintf("kubectl cassandra repair-operator-state -n %s %s --yes", s.cluster.Namespace, s.cluster.Name)
		},
	})
}
