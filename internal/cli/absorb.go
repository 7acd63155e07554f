package cli

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// absorb plans a command that carries the operation in flight on (pub.InFlight
// Absorb: a repair of the operator's stuck state, then what is left of the scale that
// met it): the plan is made from the world with the old checkpoint in hand, shown,
// confirmed, and replaces the old one under its ID (a guarded write), then runs. A dry
// run changes nothing.
func (o *Options) absorb(ctx context.Context, s *session, existing *checkpoint.Checkpoint, st *operationOptions) error {
	f := &st.flags
	env := &pub.Env{Toolkit: o.planner(s), Cluster: s.cluster, Adapter: s.adapter, Request: st.req, InFlight: existing}
	acc, err := st.kind.Access(ctx, env)
	if err != nil {
		return err
	}
	if err := operation.CheckAccess(ctx, s.c.Kube, acc); err != nil {
		return err
	}
	plan, err := st.kind.Plan(ctx, env)
	if err != nil {
		return err
	}
	if f.dryRun {
		return o.runPlan(ctx, s, plan, &f.runFlags, true, s.resumeHint()+" --yes")
	}
	self := o.self()
	existing, reason, err := o.acquire(ctx, s, existing, self, f.forceTakeover)
	if err != nil {
		return err
	}
	report := newPlanReport(st.kind, s.stepWorld(plan.CP, o.Now), plan.Warnings, false, s.resumeHint()+" --yes")
	report.Findings = plan.Findings
	o.showPlan(report, f.output)
	if err := o.confirm(f.yes, st.kind.Info().ConfirmWord); err != nil {
		return err
	}
	cp, err := o.replacePlan(ctx, s, existing, plan.CP, self, reason, fmt.Sprintf("%s: carries on operation %s (%s) after the repair", st.kind.Info().Name, existing.OperationID, existing.Kind))
	if err != nil {
		return err
	}
	return o.execute(ctx, s, cp, &f.runFlags)
}
