package lifecycle

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// reapStaleThroughput is what every command that acts does first with the cluster's
// nodes, as reapStalePauses with the operators: a stream limit whose owner's mark names
// an operation no checkpoint holds (its record wiped or cleared, another operation in
// its place) is put back to what the mark recorded, and the mark removed
// (steps.ReapThroughputMarks). inFlight is the cluster's operation in flight (nil:
// none), whose marks stay. Failures are warnings: the command goes on, and the next one
// tries again.
func (l *Lifecycle) reapStaleThroughput(ctx context.Context, inFlight *record.Checkpoint) {
	keep := ""
	if inFlight != nil {
		keep = inFlight.OperationID
	}
	w := &steps.World{Kube: l.Kube, Nodetool: l.Nodetool, Namespace: l.Cluster.Namespace, ClusterSelector: l.Adapter.ClusterSelector(l.Cluster.Name),
		Container: l.Adapter.Container(), CP: &record.Checkpoint{}}
	done, err := steps.ReapThroughputMarks(ctx, w, keep)
	for _, line := range done {
		fmt.Fprintf(l.ErrOut, "Stream throughput left by an operation that is gone: %s.\n", line)
	}
	if err != nil {
		fmt.Fprintf(l.ErrOut, "warning: stream throughput left by operations that are gone could not all be put back: %v\n", err)
	}
}
