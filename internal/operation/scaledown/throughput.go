package scaledown

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// throttle adds --stream-throughput to a planned scale-down: the leaving node is the
// one sender of its decommission, so its limiter alone is set, recorded first and put
// back after (docs/how-it-works/streaming.md §1.7). Each node's Load from the ring read is
// what it streams (the plan shows the time at the rate beside the default's).
// A dead node (dead, removed with removenode) sends nothing: the remaining nodes stream
// its ranges from the other replicas, and its own limiter cannot even be read.
func throttle(ctx context.Context, env *pub.Env, plan *pub.Plan, ring pubnodetool.Ring, reader string, dead map[string]bool) error {
	if env.Request.StreamThroughput == "" {
		return nil
	}
	loads := map[string]int64{}
	for _, n := range plan.CP.Nodes {
		if l, ok := operation.NodeLoad(ring, n.HostID); ok && !n.Unstarted && !dead[n.Pod] {
			loads[n.Pod] = l
		}
	}
	tp, warnings, err := operation.PlanThroughput(ctx, env, plan.DC, reader, loads, nil)
	if err != nil {
		return err
	}
	plan.CP.Throughput = tp
	plan.CP.Steps = throttled(plan.CP.Steps)
	if operation.CountSteps(plan.CP, record.StepSetThroughput) == 0 {
		plan.CP.Throughput = nil
		plan.Warnings = append(plan.Warnings, noStreamWarning)
		return nil
	}
	// A plugin that reads only schema 1 would not know the throughput steps.
	plan.CP.SchemaVersion = max(plan.CP.SchemaVersion, 2)
	plan.Warnings = append(plan.Warnings, warnings...)
	return nil
}

// noStreamWarning says a plan that removes no node by a decommission sets no rate.
const noStreamWarning = "--stream-throughput: no node of this plan streams (none leaves by a decommission: each already left, never started, is dead and removed by removenode, or only its claims are left); nothing is set"
