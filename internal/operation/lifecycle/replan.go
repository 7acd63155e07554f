package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Replan answers a scale with the same target as the scale-down in flight but
// another --force: resuming the old plan would decommission with the old flag. When no
// node of the old plan is in the middle of leaving (each either removed in full or
// untouched, as abort checks it: the kind's Abort.Assess), the plan is made again from
// the real world with the new --force and replaces the old one in a guarded write (the
// old operation's pause of the operator carries over); otherwise it refuses and says so.
//
// The check is the kind's abort assessment: a kind whose command answers Replan must
// have one that refuses while a node is in the middle of a change.
func (l *Lifecycle) Replan(ctx context.Context, existing *record.Checkpoint, down pub.Kind, busy bool, req pub.Request, f StartFlags) error {
	assess := down.Info().Abort.Assess
	if assess == nil {
		return exit.Refusedf("operation %s cannot be planned again (a %s has no safe point but its start); nothing changed. Finish it first: %s",
			existing.OperationID, down.Info().Name, l.ResumeHint())
	}
	self := l.Self()
	existing, reason, err := l.acquire(ctx, existing, self, f.ForceTakeover)
	if err != nil {
		return err
	}
	was, want := forceWord(existing.Force), forceWord(req.Force)
	if _, err := assess(ctx, l.abortReads(), existing); err != nil {
		return exit.Refusedf("operation %s (same target) was planned %s; it cannot be made again %s while a node of it is being removed: %v. "+
			"Once resume finished the old plan (%s), run this scale again if nodes are still to go",
			existing.OperationID, was, want, err, was)
	}
	pause := existing.PausedOperator
	if pause == nil || !existing.Started(record.StepPauseOperator) {
		if pause, err = l.OperatorToPause(ctx, f.Operator, f.Pause); err != nil {
			return err
		}
	}
	if busy {
		if err := l.RefuseBusy(ctx); err != nil {
			return err
		}
	}
	l.keepThroughput(existing, &req.StreamThroughput)
	env := &pub.Env{Toolkit: l.Planner(), Cluster: l.Cluster, Adapter: l.Adapter,
		Request: req}
	env.Request.Pause = pause
	operation.PlannerOf(env).Holder = self
	if err := l.requireAccess(ctx, down, env); err != nil {
		return err
	}
	plan, err := down.Plan(ctx, env)
	var nothing *pub.ErrNothingToDo
	if errors.As(err, &nothing) || (err == nil && len(plan.CP.Nodes) == 0) {
		// Every node already left: only the end of the old plan remains, which
		// decommissions nothing (a plan settling the racks would forget its nodes).
		fmt.Fprintf(l.ErrOut, "Operation %s has no node left to decommission; resuming it.\n", existing.OperationID)
		return l.resume(ctx, existing, f.RunFlags)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(l.ErrOut, "Operation %s with the same target was planned %s and no node of it is leaving: making the plan again %s (same operation ID).\n",
		existing.OperationID, was, want)
	shown := l.shown("", down, plan, l.ResumeHint()+" --yes")
	shown.Findings = nil // as it always was: a re-plan shows its steps, not what its planning found
	l.UI.ShowPlan(shown)
	if err := l.UI.Confirm(down.Info().ConfirmWord); err != nil {
		return err
	}
	cp, err := l.replacePlan(ctx, existing, plan.CP, self, reason, fmt.Sprintf("re-planned %s: operation %s was planned %s", want, existing.OperationID, was))
	if err != nil {
		return err
	}
	return l.execute(ctx, cp, f.RunFlags)
}

// replacePlan takes the operation in flight over (a guarded write: it fails if anyone
// changed it since it was read), then replaces it by cp, the same operation planned
// again (why says so in its takeovers), at the next seq.
func (l *Lifecycle) replacePlan(ctx context.Context, existing, cp *record.Checkpoint, self record.Holder, reason, why string) (*record.Checkpoint, error) {
	now := l.Now().UTC()
	existing.TakeOver(self, now, reason)
	if err := l.Store.Save(ctx, existing); err != nil {
		if errors.Is(err, checkpoint.ErrLost) {
			return nil, exit.Refusedf("another run took operation %s over first: %v; nothing changed", existing.OperationID, err)
		}
		return nil, fmt.Errorf("cannot take over the checkpoint: %w; nothing changed", err)
	}
	// What the old plan set and the new one does not set again goes back first (its
	// records stay on the server until the new plan replaces them).
	if err := l.putBackThroughput(ctx, existing, steps.CarryThroughput(existing, cp)); err != nil {
		return nil, fmt.Errorf("%w; the old plan is kept (%s)", err, l.ResumeHint())
	}
	// It keeps its ID, which also names its hold on a shared operator pause
	// (kubectl-cassandra.io/paused-by, internal/checkpoint/pausedby.go).
	cp.OperationID = existing.OperationID
	cp.Seq = existing.Seq
	cp.Takeovers = append(existing.Takeovers, record.Takeover{From: existing.Holder, By: self, At: now, Reason: why})
	if err := l.Store.Save(ctx, cp); err != nil {
		if errors.Is(err, checkpoint.ErrLost) {
			return nil, exit.Refusedf("another run took operation %s over first: %v; nothing changed", existing.OperationID, err)
		}
		return nil, fmt.Errorf("cannot replace operation %s by the new plan: %w; nothing changed, the old plan is kept (%s)", existing.OperationID, err, l.ResumeHint())
	}
	return cp, nil
}

func forceWord(force bool) string {
	if force {
		return "with --force"
	}
	return "without --force"
}
