package scaleup

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// assess is abort's check (operation.Abort) for a scale-up, which stops anywhere (a node
// still joining goes on bootstrapping by itself), so it refuses nothing: a new node
// counts as added once its StatefulSet reaches its ordinal. A cleanup that started may
// still run inside Cassandra, which a note says.
func assess(ctx context.Context, r operation.AbortReads, cp *record.Checkpoint) (pub.Progress, error) {
	var p pub.Progress
	replicas := map[string]int{}
	for _, n := range cp.Nodes {
		if !n.New {
			continue
		}
		p.Total++
		got, ok := replicas[n.StatefulSet]
		if !ok {
			var err error
			if got, err = r.Replicas(ctx, cp.Namespace, n.StatefulSet); err != nil {
				return p, fmt.Errorf("%w; nothing changed", err)
			}
			replicas[n.StatefulSet] = got
		}
		if n.Ordinal < got {
			p.Done++
		}
	}
	for _, st := range cp.Steps {
		if st.Kind == StepCleanup && st.State == record.StateStarted {
			p.Notes = append(p.Notes, fmt.Sprintf("nodetool cleanup on %s may still run inside Cassandra (harmless: it only drops data the node no longer owns)", st.Pod))
		}
	}
	return p, nil
}
