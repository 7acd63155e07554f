package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	puboperation "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// Start starts a fresh plan: with DryRun it is only shown (UI.DryRun, nothing
// changed); else it is shown, confirmed, its checkpoint written (a create: it fails if
// another operation got there first) and its steps run. next is the command that runs
// it, for the dry run to say.
func (l *Lifecycle) Start(ctx context.Context, plan *puboperation.Plan, f StartFlags, next string) error {
	return l.start(ctx, plan, f, next, nil)
}

// start is Start with the pods whose ring the plan read (operation.Planner.RingReaders):
// the run asks them first.
func (l *Lifecycle) start(ctx context.Context, plan *puboperation.Plan, f StartFlags, next string, readers []string) error {
	k, err := l.Kinds.Of(plan.CP)
	if err != nil {
		return err
	}
	shown := l.shown("", k, plan, next)
	if f.DryRun {
		return l.UI.DryRun(shown)
	}
	l.UI.ShowPlan(shown)
	if err := l.UI.Confirm(k.Info().ConfirmWord); err != nil {
		return err
	}
	if err := l.Store.Create(ctx, plan.CP); err != nil {
		if errors.Is(err, checkpoint.ErrExists) {
			return exit.Refusedf("%v; see: %s", err, l.ResumeHint())
		}
		return fmt.Errorf("nothing changed: %w", err)
	}
	return l.executeReading(ctx, plan.CP, f.RunFlags, readers)
}
