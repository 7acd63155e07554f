package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
)

// operationTarget says what an operation does to which racks, for status and refusals.
// A scale says "datacenter DC racks R -> N nodes" (as it always did).
func operationTarget(kind string, t checkpoint.Target) string {
	racks := strings.Join(t.Racks, ",")
	switch kind {
	case checkpoint.KindRestart:
		return fmt.Sprintf("datacenter %s racks %s, rolling restart", t.DC, racks)
	case checkpoint.KindRepairOperator:
		return fmt.Sprintf("datacenter %s racks %s, repair of CassKop's stuck status", t.DC, racks)
	}
	return fmt.Sprintf("datacenter %s racks %s -> %d nodes", t.DC, racks, t.Nodes)
}

// stepsHeader introduces the step list of a plan.
func stepsHeader(kind string) string {
	switch kind {
	case checkpoint.KindScaleUp:
		return "Steps (one node at a time, lowest new ordinal first; each joins before the next):"
	case checkpoint.KindRestart:
		return "Steps (one pod at a time, highest ordinal first; every node UN before each pod):"
	case checkpoint.KindRepairOperator:
		return "Steps (each re-checked against the cluster right before it runs):"
	}
	return "Steps (one node at a time, highest ordinal first):"
}

// kindStepDescription says in words what a step of a scale-up, restart or repair does.
func kindStepDescription(cp *checkpoint.Checkpoint, s checkpoint.Step) string {
	n, _ := cp.Node(s.Pod)
	switch s.Kind {
	case checkpoint.StepGrowSTS:
		return fmt.Sprintf("grow StatefulSet %s to %d replicas (creates pod %s)", n.StatefulSet, n.Ordinal+1, n.Pod)
	case checkpoint.StepWaitJoined:
		return fmt.Sprintf("wait until pod %s is Ready and its node UN (bootstrap finished)", n.Pod)
	case checkpoint.StepCleanup:
		return fmt.Sprintf("nodetool cleanup on %s (a run interrupted during it cleans that node again on resume: harmless)", n.Pod)
	case checkpoint.StepDrain:
		return fmt.Sprintf("nodetool drain on %s (Host ID %s), once every node is UN", n.Pod, n.HostID)
	case checkpoint.StepDeletePod:
		return fmt.Sprintf("delete pod %s (UID %s); StatefulSet %s creates it again", n.Pod, n.PodUID, n.StatefulSet)
	case checkpoint.StepWaitRestarted:
		return fmt.Sprintf("wait until pod %s is back (new UID), Ready, and its node UN", n.Pod)
	case checkpoint.StepOperatorStatus:
		return fmt.Sprintf("set CassKop's status of rack %s-%s: podLastOperation Done (podsOK [%s]), cassandraLastAction Done", n.DC, n.Rack, n.Pod)
	}
	return s.ID
}

// printKindHeader prints the per-rack lines of a plan that is not a scale.
func printKindHeader(w io.Writer, r planReport) {
	switch r.Kind {
	case checkpoint.KindRestart:
		for _, rack := range r.Racks {
			fmt.Fprintf(w, "  rack %s: restart %d pods\n", rack, r.From[rack])
		}
	case checkpoint.KindRepairOperator:
		if len(r.Findings) > 0 {
			fmt.Fprintln(w, "Found (verified against the cluster):")
			for _, f := range r.Findings {
				fmt.Fprintf(w, "  - %s\n", f)
			}
		}
	}
}

// confirmWord is the question asked before creating a checkpoint of kind.
func confirmWord(kind string) string {
	switch kind {
	case checkpoint.KindScaleUp:
		return "Scale up"
	case checkpoint.KindRestart:
		return "Restart"
	case checkpoint.KindRepairOperator:
		return "Repair"
	}
	return "Scale down"
}

// runPlan shows a fresh plan (and stops there with --dry-run), asks, writes the
// checkpoint and runs it: the common end of restart and repair-operator-state.
func (o *Options) runPlan(ctx context.Context, s *session, plan *operation.Plan, f *runFlags, dryRun bool, next string) error {
	report := newPlanReport(plan.CP, plan.Warnings, dryRun, next)
	report.Findings = plan.Findings
	if dryRun {
		if f.output != "text" {
			return output.Print(o.Out, f.output, report)
		}
		o.printPlanText(o.Out, report, "Plan (dry run, nothing changed)")
		fmt.Fprintf(o.Out, "To run it: %s\n", next)
		return nil
	}
	if f.output == "text" {
		o.printPlanText(o.Out, report, "Plan")
	} else {
		fmt.Fprintln(o.ErrOut, "Plan:")
		o.printPlanText(o.ErrOut, report, "Plan")
	}
	if err := o.confirm(f.yes, confirmWord(plan.CP.Kind)); err != nil {
		return err
	}
	if err := s.store.Create(ctx, plan.CP); err != nil {
		if errors.Is(err, checkpoint.ErrExists) {
			return exit.Refusedf("%v; see: %s", err, s.resumeHint())
		}
		return fmt.Errorf("nothing changed: %w", err)
	}
	return o.execute(ctx, s, plan.CP, f)
}

// nothingToDo prints a planner's "nothing to do" answer (exit 0).
func (o *Options) nothingToDo(s *session, out string, msg string) error {
	if out != "text" {
		return output.Print(o.Out, out, map[string]any{"result": "nothing-to-do", "message": msg, "next": s.statusHint()})
	}
	fmt.Fprintln(o.Out, msg)
	return nil
}

// refuseOtherInFlight refuses a new operation while another is in flight.
func refuseOtherInFlight(s *session, cp *checkpoint.Checkpoint) error {
	return exit.Refusedf("operation %s (%s, %s, started by %s at %s) is in flight on %s; finish it first: %s",
		cp.OperationID, cp.Kind, operationTarget(cp.Kind, cp.Target), cp.StartedBy, cp.StartedAt.Format(time.RFC3339), s.cluster.Name, s.resumeHint())
}

// refuseStarted refuses to abort a scale-up, restart or repair once it changed the
// cluster (any step past pausing the operator started): resume finishes it.
func (o *Options) refuseStarted(ctx context.Context, s *session, cp *checkpoint.Checkpoint) error {
	for _, st := range cp.Steps {
		if st.Kind == checkpoint.StepPauseOperator || st.State == checkpoint.StatePending {
			continue
		}
		return exit.Refusedf("operation %s (%s) has started changing the cluster (step %s is %s): abort cannot undo that; resume finishes it: %s",
			cp.OperationID, cp.Kind, st.ID, st.State, s.resumeHint())
	}
	if cp.Kind == checkpoint.KindRestart {
		// A drain whose step was never recorded (it cannot happen, but a drained node
		// must not be left behind by an abort).
		for _, n := range cp.Nodes {
			ns, err := s.nt.Netstats(ctx, n.Pod)
			if err != nil {
				return exit.Refusedf("cannot read the state of %s (%v): abort needs to know no node is drained; nothing changed", n.Pod, err)
			}
			if ns.Mode == nodetool.ModeDrained {
				return exit.Refusedf("node %s is DRAINED: resume restarts it: %s", n.Pod, s.resumeHint())
			}
		}
	}
	return nil
}
