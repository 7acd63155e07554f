package cli

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaleup"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// growBack is abort's planned, consistent end for racks left at sizes the operator
// cannot keep (a two-rack scale-down stopped between its racks, Cassandra refusing the
// second rack's node): the smaller racks are grown back to the largest by a scale-up
// planned from the world, which replaces the checkpoint under the same operation ID (it
// keeps the operation's hold on a paused operator, and its restore gives the operator
// back at the end). Nothing is decommissioned.
func (o *Options) growBack(ctx context.Context, s *session, cp *checkpoint.Checkpoint, self checkpoint.Holder, reason string, u *unequalRacks, f *runFlags) error {
	k, ok := o.Kinds.Kind(scaleup.Name)
	if !ok {
		return exit.Refusedf("this build cannot grow racks (no %s kind); nothing changed: %v", scaleup.Name, u)
	}
	pause := cp.PausedOperator
	if pause == nil {
		var err error
		if pause, err = o.operatorToPause(ctx, s, "", true); err != nil {
			return err
		}
	}
	env := &pub.Env{Toolkit: o.planner(s), Cluster: s.cluster, Adapter: s.adapter,
		Request: operation.Request{DC: u.dc, Nodes: u.largest, Pause: pause}}
	operation.PlannerOf(env).Holder = self
	acc, err := k.Access(ctx, env)
	if err != nil {
		return err
	}
	if err := operation.CheckAccess(ctx, s.c.Kube, acc); err != nil {
		return err
	}
	plan, err := k.Plan(ctx, env)
	if err != nil {
		return fmt.Errorf("cannot plan growing the racks of datacenter %s back to %d nodes: %w; nothing changed", u.dc, u.largest, err)
	}
	fmt.Fprintf(o.ErrOut, "Aborting operation %s by growing the smaller racks of datacenter %s back to %d nodes, the size the operator can keep (same operation ID).\n", cp.OperationID, u.dc, u.largest)
	report := newPlanReport(k, s.stepWorld(plan.CP, o.Now), plan.Warnings, false, s.resumeHint()+" --yes")
	o.showPlan(report, f.output)
	if err := o.confirm(f.yes, "Grow back"); err != nil {
		return err
	}
	next, err := o.replacePlan(ctx, s, cp, plan.CP, self, reason, fmt.Sprintf("abort --grow-back: operation %s (%s) ends by growing datacenter %s's racks back to %d", cp.OperationID, cp.Kind, u.dc, u.largest))
	if err != nil {
		return err
	}
	return o.execute(ctx, s, next, f)
}

// growBackSeed is the operator's refusal of the first pod grow-back would create that
// it lists as a seed (steps.SeedLister: such a pod would skip bootstrap, and the
// grow-back's plan refuses it); "" when there is none, or the list cannot be read (the
// plan reads it again).
func (o *Options) growBackSeed(ctx context.Context, s *session, cp *checkpoint.Checkpoint, racks []topology.Rack, counts map[string]int, largest int) string {
	sl, ok := s.stepWorld(cp, o.Now).Spec.(steps.SeedLister)
	if !ok {
		return ""
	}
	for _, r := range racks {
		for i := counts[r.Name]; i < largest; i++ {
			pod := topology.PodName(r.StatefulSet, i)
			if e, err := sl.SeedEntry(ctx, pod); err == nil && e != "" {
				return sl.SeedRefusal(cp.Namespace, cp.Cluster, pod, e)
			}
		}
	}
	return ""
}
