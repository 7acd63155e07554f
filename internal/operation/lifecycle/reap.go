package lifecycle

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// ReapGone takes out what operations that are gone left in the world, each found by the
// operation ID it carries on the object itself: pause holders on the operator
// (stalepause.go), replace blocks in a start script (staleblocks.go), stream-limit marks
// on pods (stalethroughput.go). cp is the checkpoint standing now (nil: none), whose
// marks are kept; pauseScope limits the pause reaping to one cluster ("" = the namespace).
// Every failure is a warning: the next command tries again.
func (l *Lifecycle) ReapGone(ctx context.Context, cp *record.Checkpoint, pauseScope string) {
	l.reapStalePauses(ctx, l.Cluster.Namespace, pauseScope)
	l.reapStaleBlocks(ctx, false)
	l.reapStaleThroughput(ctx, cp)
}

// ReapAfterGone releases the pauses held in namespace ns for operations whose cluster
// is gone (the cluster resource deleted while its operation held the operator paused:
// its checkpoint went with it). Only Kube, Adapter, Kinds and ErrOut of the Deps are
// used: there is no cluster to open.
func (l *Lifecycle) ReapAfterGone(ctx context.Context, ns string) {
	l.reapStalePauses(ctx, ns, "")
}
