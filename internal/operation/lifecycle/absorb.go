package lifecycle

import (
	"context"
	"fmt"

	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// absorb plans a command that carries the operation in flight on (pub.InFlight
// Absorb: a repair of the operator's stuck state, then what is left of the scale that
// met it): the plan is made from the world with the old checkpoint in hand, shown,
// confirmed, and replaces the old one under its ID (a guarded write), then runs. A dry
// run changes nothing.
func (l *Lifecycle) Absorb(ctx context.Context, existing *record.Checkpoint, k pub.Kind, req pub.Request, f StartFlags) error {
	env := &pub.Env{Toolkit: l.Planner(), Cluster: l.Cluster, Adapter: l.Adapter, Request: req, InFlight: existing}
	if err := l.requireAccess(ctx, k, env); err != nil {
		return err
	}
	plan, err := k.Plan(ctx, env)
	if err != nil {
		return err
	}
	if f.DryRun {
		return l.Start(ctx, plan, f, l.ResumeHint()+" --yes")
	}
	self := l.Self()
	existing, reason, err := l.acquire(ctx, existing, self, f.ForceTakeover)
	if err != nil {
		return err
	}
	l.show("", k, plan, l.ResumeHint()+" --yes")
	if err := l.UI.Confirm(k.Info().ConfirmWord); err != nil {
		return err
	}
	cp, err := l.replacePlan(ctx, existing, plan.CP, self, reason, fmt.Sprintf("%s: carries on operation %s (%s) after the repair", k.Info().Name, existing.OperationID, existing.Kind))
	if err != nil {
		return err
	}
	return l.execute(ctx, cp, f.RunFlags)
}
