package scaleup

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// throttle adds --stream-throughput to a planned scale-up: a joining node only
// receives, each source's own limit throttling its part (docs/how-it-works/streaming.md
// §1.7), so the limits set are those of every node of the datacenter before the first
// new one (the sources), recorded first and put back once the last new node joined.
// The nodes this operation adds stream to the later ones at their own default. Each new
// node is expected to receive the datacenter's average Load after the scale-up.
func throttle(ctx context.Context, env *pub.Env, plan *pub.Plan, dc topology.DC, ring pubnodetool.Ring, newNodes []record.Node) error {
	if env.Request.StreamThroughput == "" {
		return nil
	}
	var sources []string
	for _, r := range dc.Racks {
		st, err := operation.PlannerOf(env).ReadRack(ctx, env.Cluster.Namespace, r)
		if err != nil {
			return err
		}
		for i := 0; i < st.Cur; i++ {
			if p, ok := st.Pods[i]; ok {
				sources = append(sources, p.Name)
			}
		}
	}
	loads := map[string]int64{}
	if total, n := operation.TotalLoad(ring, dc.Name); n > 0 {
		for _, nn := range newNodes {
			loads[nn.Pod] = total / int64(n+len(newNodes))
		}
	}
	reader := ""
	if len(sources) > 0 {
		reader = sources[0]
	}
	tp, warnings, err := operation.PlanThroughput(ctx, env, dc, reader, loads, sources)
	if err != nil || tp == nil {
		return err
	}
	plan.CP.Throughput = tp
	plan.CP.Steps = throttled(plan.CP.Steps)
	plan.Warnings = append(plan.Warnings, warnings...)
	return nil
}

// throttled is steps with the sources' stream throughput set around the new nodes'
// bootstraps: from the first new node asked for until the last one joined.
func throttled(list []record.Step) []record.Step {
	return operation.Throttled(list, []string{StepGrowSTS, record.StepRequestGrowth}, []string{record.StepWaitJoined})
}
