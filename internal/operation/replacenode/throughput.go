package replacenode

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// throttle adds --stream-throughput to a planned replace: the replacement, like a
// bootstrap, only receives, each source's own limit throttling its part
// (docs/how-it-works/streaming.md §1.7), so the limits set are those of every other Ready
// node of the dead node's datacenter, recorded first and put back once the replacement
// is verified. The replacement is expected to receive the dead node's Load (expectedLoad).
func throttle(ctx context.Context, env *pub.Env, plan *pub.Plan, dc topology.DC, ring pubnodetool.Ring, ringReader string) error {
	if env.Request.StreamThroughput == "" {
		return nil
	}
	rep := plan.CP.Replace
	sources, notReady, err := sourcesOf(ctx, operation.PlannerOf(env), env.Cluster.Namespace, dc, rep.Pod)
	if err != nil {
		return exit.Refusedf("--stream-throughput: cannot tell which nodes stream to the replacement: %v; nothing changed", err)
	}
	loads := map[string]int64{}
	if l, ok := expectedLoad(rep.Load, ring, dc.Name); ok {
		loads[rep.Pod] = l
	}
	reader := ringReader
	if len(sources) > 0 {
		reader = sources[0]
	}
	tp, warnings, err := operation.PlanThroughput(ctx, env, dc, reader, loads, sources)
	if err != nil || tp == nil {
		return err
	}
	if len(notReady) > 0 {
		warnings = append(warnings, fmt.Sprintf("--stream-throughput: pods %s are not Ready: their limits are not set, and the replacement may stream from them at their own", strings.Join(notReady, ", ")))
	}
	if len(sources) > 0 {
		plan.CP.Throughput = tp
		plan.CP.Steps = throttled(plan.CP.Steps)
	} else {
		warnings = append(warnings, "--stream-throughput: no other node of datacenter "+dc.Name+" is Ready to stream to the replacement; nothing is set")
	}
	plan.Warnings = append(plan.Warnings, warnings...)
	return nil
}

// expectedLoad is what the replacement receives: the dead node's Load as the ring read
// it, else (a down node's Load is "?" once its load gossip is lost) the average Load of
// the datacenter's other nodes, which share its ranges evenly.
func expectedLoad(dead string, ring pubnodetool.Ring, dc string) (int64, bool) {
	if l, ok := operation.ParseLoad(dead); ok {
		return int64(l), true
	}
	total, n := operation.TotalLoad(ring, dc)
	if n == 0 {
		return 0, false
	}
	return total / int64(n), true
}

// sourcesOf are the pods of dc's racks, within their StatefulSets' replicas, other than
// dead: the Ready ones (the sources whose limits are set) and the others.
func sourcesOf(ctx context.Context, p *operation.Planner, ns string, dc topology.DC, dead string) (ready, notReady []string, err error) {
	for _, r := range dc.Racks {
		st, err := p.ReadRack(ctx, ns, r)
		if err != nil {
			return nil, nil, err
		}
		for i := 0; i < st.Cur; i++ {
			pod, ok := st.Pods[i]
			switch {
			case !ok || pod.Name == dead:
			case kube.PodReady(&pod):
				ready = append(ready, pod.Name)
			default:
				notReady = append(notReady, pod.Name)
			}
		}
	}
	return ready, notReady, nil
}

// throttled is steps with the sources' stream throughput set around the replacement's
// streaming: from the first step that can start it (the replace option written: a
// restart of the pod on an empty volume replaces from then on; or the operator's task)
// until the replacement is verified.
func throttled(list []record.Step) []record.Step {
	return operation.Throttled(list, []string{StepSetOption, StepCreateReplaceTask}, []string{StepWaitReplaced})
}
