package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// replanForce answers a scale with the same target as the scale-down in flight but
// another --force: resuming the old plan would decommission with the old flag. When no
// node of the old plan is in the middle of leaving (each either removed in full or
// untouched, as abort checks it: the kind's Abort.Assess), the plan is made again from
// the real world with the new --force and replaces the old one in a guarded write (the
// old operation's pause of the operator carries over); otherwise it refuses and says so.
//
// The check is the kind's abort assessment: a kind whose command answers Replan must
// have one that refuses while a node is in the middle of a change.
func (o *Options) replanForce(ctx context.Context, s *session, existing *checkpoint.Checkpoint, st *operationOptions) error {
	req, f, down := st.req, &st.flags, st.kind
	assess := down.Info().Abort.Assess
	if assess == nil {
		return exit.Refusedf("operation %s cannot be planned again (a %s has no safe point but its start); nothing changed. Finish it first: %s",
			existing.OperationID, down.Info().Name, s.resumeHint())
	}
	self := o.self()
	existing, reason, err := o.acquire(ctx, s, existing, self, f.forceTakeover)
	if err != nil {
		return err
	}
	was, want := forceWord(existing.Force), forceWord(req.Force)
	if _, err := assess(ctx, o.abortReads(s), existing); err != nil {
		return exit.Refusedf("operation %s (same target) was planned %s; it cannot be made again %s while a node of it is being removed: %v. "+
			"Once resume finished the old plan (%s), run this scale again if nodes are still to go",
			existing.OperationID, was, want, err, was)
	}
	pause := existing.PausedOperator
	if pause == nil || !existing.Started(steps.StepPauseOperator) {
		if pause, err = o.operatorToPause(ctx, s, f.operator, f.pause); err != nil {
			return err
		}
	}
	if st.cmd.Busy {
		if err := o.refuseBusy(ctx, s); err != nil {
			return err
		}
	}
	o.keepThroughput(existing, &req.StreamThroughput)
	env := &pub.Env{Toolkit: o.planner(s), Cluster: s.cluster, Adapter: s.adapter,
		Request: req}
	env.Request.Pause = pause
	operation.PlannerOf(env).Holder = self
	acc, err := down.Access(ctx, env)
	if err != nil {
		return err
	}
	if err := operation.CheckAccess(ctx, s.c.Kube, acc); err != nil {
		return err
	}
	plan, err := down.Plan(ctx, env)
	var nothing *operation.ErrNothingToDo
	if errors.As(err, &nothing) || (err == nil && len(plan.CP.Nodes) == 0) {
		// Every node already left: only the end of the old plan remains, which
		// decommissions nothing (a plan settling the racks would forget its nodes).
		fmt.Fprintf(o.ErrOut, "Operation %s has no node left to decommission; resuming it.\n", existing.OperationID)
		return o.resumeCheckpoint(ctx, s, existing, &f.runFlags)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.ErrOut, "Operation %s with the same target was planned %s and no node of it is leaving: making the plan again %s (same operation ID).\n",
		existing.OperationID, was, want)
	report := newPlanReport(down, s.stepWorld(plan.CP, o.Now), plan.Warnings, false, s.resumeHint()+" --yes")
	o.showPlan(report, f.output)
	if err := o.confirm(f.yes, down.Info().ConfirmWord); err != nil {
		return err
	}
	cp, err := o.replacePlan(ctx, s, existing, plan.CP, self, reason, fmt.Sprintf("re-planned %s: operation %s was planned %s", want, existing.OperationID, was))
	if err != nil {
		return err
	}
	return o.execute(ctx, s, cp, &f.runFlags)
}

// replacePlan takes the operation in flight over (a guarded write: it fails if anyone
// changed it since it was read), then replaces it by cp, the same operation planned
// again (why says so in its takeovers), at the next seq.
func (o *Options) replacePlan(ctx context.Context, s *session, existing, cp *checkpoint.Checkpoint, self checkpoint.Holder, reason, why string) (*checkpoint.Checkpoint, error) {
	now := o.Now().UTC()
	existing.TakeOver(self, now, reason)
	if err := s.store.Save(ctx, existing); err != nil {
		if errors.Is(err, checkpoint.ErrLost) {
			return nil, exit.Refusedf("another run took operation %s over first: %v; nothing changed", existing.OperationID, err)
		}
		return nil, fmt.Errorf("cannot take over the checkpoint: %w; nothing changed", err)
	}
	// What the old plan set and the new one does not set again goes back first (its
	// records stay on the server until the new plan replaces them).
	if err := o.putBackThroughput(ctx, s, existing, steps.CarryThroughput(existing, cp)); err != nil {
		return nil, fmt.Errorf("%w; the old plan is kept (%s)", err, s.resumeHint())
	}
	// It keeps its ID, which also names its hold on a shared operator pause
	// (kubectl-cassandra.io/paused-by, internal/checkpoint/pausedby.go).
	cp.OperationID = existing.OperationID
	cp.Seq = existing.Seq
	cp.Takeovers = append(existing.Takeovers, checkpoint.Takeover{From: existing.Holder, By: self, At: now, Reason: why})
	if err := s.store.Save(ctx, cp); err != nil {
		if errors.Is(err, checkpoint.ErrLost) {
			return nil, exit.Refusedf("another run took operation %s over first: %v; nothing changed", existing.OperationID, err)
		}
		return nil, fmt.Errorf("cannot replace operation %s by the new plan: %w; nothing changed, the old plan is kept (%s)", existing.OperationID, err, s.resumeHint())
	}
	return cp, nil
}

func forceWord(force bool) string {
	if force {
		return "with --force"
	}
	return "without --force"
}
