package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/steps"
)

const abortExample = `  # Drop a planned scale-down before any node started leaving (restores a paused operator)
  kubectl cassandra abort -n cassandra cassandra-demo

  # From a script
  kubectl cassandra abort cassandra-demo --yes -o json`

func newAbortCmd(o *Options) *cobra.Command {
	var yes, forceTakeover bool
	var out string
	cmd := &cobra.Command{
		Use:   "abort [CLUSTER]",
		Short: "Drop the operation in flight while no node has started leaving",
		Long: `Drop the operation recorded in the cluster's checkpoint, as long as no node has started
leaving: restore anything the plan paused (the operator Deployment) and clear the checkpoint.

A decommission cannot be cancelled once the node is LEAVING: then abort refuses, and resume is the
way to finish removing that node.

` + exit.Help,
		Example:           abortExample,
		GroupID:           groupOps,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.completeClusters,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(out, "text", "json", "yaml"); err != nil {
				return err
			}
			return o.runAbort(cmd.Context(), args, yes, forceTakeover, out)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "Do not ask for confirmation (required when stdin is not a terminal)")
	cmd.Flags().BoolVar(&forceTakeover, "force-takeover", false, "Take the operation over from a holder on another machine whose lease has not expired yet")
	addOutputFlag(cmd, &out, "text", "json", "yaml")
	return cmd
}

func (o *Options) runAbort(ctx context.Context, args []string, yes, forceTakeover bool, out string) error {
	s, err := o.open(ctx, args)
	if err != nil {
		return err
	}
	cp, err := s.store.Load(ctx)
	if err != nil {
		return checkpointError(s, err)
	}
	if cp == nil {
		msg := fmt.Sprintf("No operation in flight on CassandraCluster %s/%s: nothing to abort.", s.cluster.Namespace, s.cluster.Name)
		if out != "text" {
			return output.Print(o.Out, out, map[string]any{"result": "nothing-to-abort", "message": msg, "next": s.statusHint()})
		}
		fmt.Fprintln(o.Out, msg)
		return nil
	}
	self := o.self()
	cp, reason, err := o.acquire(ctx, s, cp, self, forceTakeover)
	if err != nil {
		return err
	}
	if cp.Kind != checkpoint.KindScaleDown {
		if err := o.refuseStarted(ctx, s, cp); err != nil {
			return err
		}
		fmt.Fprintf(o.ErrOut, "Aborting operation %s (%s, %s); nothing in the cluster was changed yet.\n", cp.OperationID, cp.Kind, operationTarget(cp.Kind, cp.Target))
	} else if err := o.refuseLeaving(ctx, s, cp); err != nil {
		return err
	} else {
		fmt.Fprintf(o.ErrOut, "Aborting operation %s (%s, datacenter %s racks %s -> %d nodes); no node has started leaving.\n",
			cp.OperationID, cp.Kind, cp.Target.DC, strings.Join(cp.Target.Racks, ","), cp.Target.Nodes)
	}
	if cp.PausedOperator != nil && cp.Started(checkpoint.StepPauseOperator) {
		fmt.Fprintf(o.ErrOut, "The operator Deployment %s/%s will be restored to %d replicas.\n", cp.PausedOperator.Namespace, cp.PausedOperator.Name, cp.PausedOperator.Replicas)
	}
	if err := o.confirm(yes, "Abort"); err != nil {
		return err
	}
	cp.TakeOver(self, o.Now().UTC(), reason)
	if err := s.store.Save(ctx, cp); err != nil {
		if errors.Is(err, checkpoint.ErrLost) {
			return exit.Refusedf("another run took operation %s over first: %v; nothing changed", cp.OperationID, err)
		}
		return fmt.Errorf("cannot take over the checkpoint: %w; nothing changed", err)
	}
	if cp.PausedOperator != nil && cp.Started(checkpoint.StepPauseOperator) {
		w := &steps.World{Kube: s.c.Kube, Namespace: cp.Namespace, CP: cp}
		if err := steps.RestoreOperator(ctx, w, *cp.PausedOperator); err != nil {
			return fmt.Errorf("cannot restore operator Deployment %s/%s: %w; the checkpoint is kept, run abort again", cp.PausedOperator.Namespace, cp.PausedOperator.Name, err)
		}
	}
	now := o.Now().UTC()
	summary := "aborted before any node started leaving"
	if cp.Kind != checkpoint.KindScaleDown {
		summary = "aborted before anything in the cluster changed"
	}
	last := checkpoint.LastOperation{OperationID: cp.OperationID, Kind: cp.Kind, Result: "aborted",
		Summary: summary, StartedBy: cp.StartedBy, StartedAt: cp.StartedAt, FinishedAt: now}
	if err := s.store.Finish(ctx, cp, last); err != nil {
		return fmt.Errorf("cannot clear the checkpoint: %w; run abort again", err)
	}
	if out != "text" {
		return output.Print(o.Out, out, map[string]any{"result": "aborted", "operationID": cp.OperationID, "next": s.statusHint()})
	}
	fmt.Fprintf(o.Out, "Aborted operation %s; the checkpoint is cleared.\n", cp.OperationID)
	return nil
}

// refuseLeaving refuses to abort once any planned node started leaving, by the
// checkpoint or by the real world.
func (o *Options) refuseLeaving(ctx context.Context, s *session, cp *checkpoint.Checkpoint) error {
	for _, st := range cp.Steps {
		if st.Kind == checkpoint.StepDecommission && st.State != checkpoint.StatePending {
			return exit.Refusedf("node %s may have started leaving (decommission %s at attempt %d): a decommission cannot be cancelled once it runs. "+
				"resume will finish removing it (wait until it left, shrink the StatefulSet, delete its PVCs) and continue the plan: %s",
				st.Pod, st.State, st.Attempts, s.resumeHint())
		}
	}
	for _, n := range cp.Nodes {
		ns, err := s.nt.Netstats(ctx, n.Pod)
		if err != nil {
			return exit.Refusedf("cannot read the state of %s (%v): abort needs to know no node is leaving; nothing changed", n.Pod, err)
		}
		if ns.Mode != nodetool.ModeNormal {
			return exit.Refusedf("node %s is %s: it cannot be brought back by abort; resume finishes removing it: %s", n.Pod, ns.Mode, s.resumeHint())
		}
	}
	return nil
}
