package lifecycle

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// growBack is abort's planned, consistent end for racks left at sizes the operator
// cannot keep (a two-rack scale-down stopped between its racks, Cassandra refusing the
// second rack's node): the smaller racks are grown back to the largest by a scale-up
// planned from the world, which replaces the checkpoint under the same operation ID (it
// keeps the operation's hold on a paused operator, and its restore gives the operator
// back at the end). Nothing is decommissioned.
func (l *Lifecycle) growBack(ctx context.Context, cp *record.Checkpoint, self record.Holder, reason string, u *unequalRacks, f RunFlags) error {
	k, g := l.grower()
	if g == nil {
		return exit.Refusedf("this build cannot grow racks (no scale-up kind); nothing changed: %v", u)
	}
	pause := cp.PausedOperator
	if pause == nil {
		var err error
		if pause, err = l.OperatorToPause(ctx, "", true); err != nil {
			return err
		}
	}
	env := &pub.Env{Toolkit: l.Planner(), Cluster: l.Cluster, Adapter: l.Adapter,
		Request: g.GrowRequest(u.dc, u.largest)}
	env.Request.Pause = pause
	operation.PlannerOf(env).Holder = self
	if err := l.requireAccess(ctx, k, env); err != nil {
		return err
	}
	plan, err := k.Plan(ctx, env)
	if err != nil {
		return fmt.Errorf("cannot plan growing the racks of datacenter %s back to %d nodes: %w; nothing changed", u.dc, u.largest, err)
	}
	fmt.Fprintf(l.ErrOut, "Aborting operation %s by growing the smaller racks of datacenter %s back to %d nodes, the size the operator can keep (same operation ID).\n", cp.OperationID, u.dc, u.largest)
	shown := l.shown("", k, plan, l.ResumeHint()+" --yes")
	shown.Findings = nil // as it always was
	l.UI.ShowPlan(shown)
	if err := l.UI.Confirm("Grow back"); err != nil {
		return err
	}
	next, err := l.replacePlan(ctx, cp, plan.CP, self, reason, fmt.Sprintf("abort --grow-back: operation %s (%s) ends by growing datacenter %s's racks back to %d", cp.OperationID, cp.Kind, u.dc, u.largest))
	if err != nil {
		return err
	}
	return l.execute(ctx, next, f)
}

// grower is a kind that grows a datacenter's racks to a size (scale-up): abort
// --grow-back plans with it.
type grower interface {
	GrowRequest(dc string, nodes int) pub.Request
}

// grower is the first registered kind that grows racks (nil: none).
func (l *Lifecycle) grower() (pub.Kind, grower) {
	for _, k := range l.Kinds.All() {
		if g, ok := k.(grower); ok {
			return k, g
		}
	}
	return nil, nil
}

// growBackSeed is the operator's refusal of the first pod grow-back would create that
// it lists as a seed (steps.SeedLister: such a pod would skip bootstrap, and the
// grow-back's plan refuses it); "" when there is none, or the list cannot be read (the
// plan reads it again).
func (l *Lifecycle) growBackSeed(ctx context.Context, cp *record.Checkpoint, racks []topology.Rack, counts map[string]int, largest int) string {
	sl, ok := l.stepWorld(cp).Spec.(steps.SeedLister)
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
