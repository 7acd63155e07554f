package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/topology"
)

const repairExample = `  # Find CassKop stuck after an interrupted decommission, verify, show the plan, repair
  kubectl cassandra repair-operator-state -n cassandra cassandra-demo

  # Only show what is stuck and the plan
  kubectl cassandra repair-operator-state cassandra-demo --dry-run -o json`

type repairFlags struct {
	runFlags
	dryRun   bool
	pause    bool
	operator string
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
			if err := checkOutput(f.output, "text", "json", "yaml"); err != nil {
				return err
			}
			if err := f.checkProgress(); err != nil {
				return err
			}
			return o.runRepair(cmd.Context(), args, f)
		},
	}
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "Print what is stuck and the plan, and change nothing")
	cmd.Flags().BoolVar(&f.pause, "pause-operator", true, "Pause a running CassKop operator (scale its Deployment to 0) during the repair and restore it at the end; with false, refuse while it runs")
	cmd.Flags().StringVar(&f.operator, "operator", "", "The operator Deployment to pause, as NAMESPACE/NAME (default: found by its labels or WATCH_NAMESPACE)")
	f.runFlags.add(cmd)
	return cmd
}

func (o *Options) runRepair(ctx context.Context, args []string, f *repairFlags) error {
	s, err := o.open(ctx, args)
	if err != nil {
		return err
	}
	existing, err := s.store.Load(ctx)
	if err != nil {
		return checkpointError(s, err)
	}
	if existing != nil {
		if existing.Kind == checkpoint.KindRepairOperator {
			fmt.Fprintf(o.ErrOut, "Repair %s is in flight; resuming it.\n", existing.OperationID)
			return o.resumeCheckpoint(ctx, s, existing, &f.runFlags)
		}
		return refuseOtherInFlight(s, existing)
	}
	pause, err := o.operatorToPause(ctx, s, f.operator, f.pause)
	if err != nil {
		return err
	}
	repairer, ok := s.adapter.(operator.StatusRepair)
	if !ok {
		return exit.Refusedf("the %s operator keeps no status that an interrupted operation can leave stuck: nothing to repair; nothing changed", s.adapter.Name())
	}
	statusSub, err := repairer.StatusSubresource(ctx)
	if err != nil {
		return fmt.Errorf("cannot tell whether the CassandraCluster CRD has a status subresource: %w; nothing changed", err)
	}
	if err := operation.CheckAccess(ctx, s.c.Kube, operation.NeededAccessFor(checkpoint.KindRepairOperator, s.cluster.Namespace, s.adapter.GroupResource().Group, s.adapter.GroupResource().Resource, statusSub, pause)); err != nil {
		return err
	}
	_, u, err := s.adapter.Get(ctx, s.cluster.Namespace, s.cluster.Name)
	if err != nil {
		return fmt.Errorf("cannot read CassandraCluster %s/%s: %w", s.cluster.Namespace, s.cluster.Name, err)
	}
	planner := &operation.Planner{Kube: s.c.Kube, Nodetool: s.nt, Now: o.Now, Holder: o.self()}
	plan, err := planner.RepairOperator(ctx, s.cluster, u, operation.Request{Pause: pause})
	var nothing *operation.ErrNothingToDo
	if errors.As(err, &nothing) {
		return o.nothingToDo(s, f.output, nothing.Msg)
	}
	if err != nil {
		return err
	}
	how := "a merge patch of the CassandraCluster (its CRD has no status subresource)"
	if statusSub {
		how = "the /status subresource of the CassandraCluster"
	}
	plan.Findings = append(plan.Findings, "the status will be written through "+how)
	next := fmt.Sprintf("kubectl cassandra repair-operator-state -n %s %s --yes", s.cluster.Namespace, s.cluster.Name)
	return o.runPlan(ctx, s, plan, &f.runFlags, f.dryRun, next)
}

func rackNamesOf(racks []topology.Rack) []string {
	var names []string
	for _, r := range racks {
		names = append(names, r.Name)
	}
	return names
}
