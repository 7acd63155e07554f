package cli

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
)

// reapGone takes out what operations that are gone left in the world, each found by the
// operation ID it carries on the object itself: pause holders on the operator
// (stalepause.go), replace blocks in a start script (staleblocks.go), stream-limit marks
// on pods (stalethroughput.go). cp is the checkpoint standing now (nil: none), whose
// marks are kept; pauseScope limits the pause reaping to one cluster ("" = the namespace).
// Every failure is a warning: the next command tries again.
func (o *Options) reapGone(ctx context.Context, s *session, cp *checkpoint.Checkpoint, pauseScope string) {
	o.reapStalePauses(ctx, s.c, s.adapter, s.pauseJudge(), s.cluster.Namespace, pauseScope)
	o.reapStaleBlocks(ctx, s, false)
	o.reapStaleThroughput(ctx, s, cp)
}
