package lifecycle

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// putBackThroughput restores, outside a run, the stream throughput cp's steps set and
// did not put back yet (abort; a plan replaced by another, skip leaving out the nodes
// the new plan restores itself). The caller has proved it holds the lock.
func (l *Lifecycle) putBackThroughput(ctx context.Context, cp *record.Checkpoint, skip func(pod string) bool) error {
	if len(steps.ThroughputToRestore(cp, skip)) == 0 {
		return nil
	}
	w := l.stepWorld(cp)
	progress := output.NewProgress(l.ErrOut, l.Color)
	progress.Now = l.Now
	w.Reporter = progress
	if err := steps.RestoreThroughput(ctx, w, skip); err != nil {
		return fmt.Errorf("cannot put back the stream throughput operation %s set: %w", cp.OperationID, err)
	}
	fmt.Fprintf(l.ErrOut, "Put back the stream throughput operation %s had set (the values recorded before it).\n", cp.OperationID)
	return nil
}

// keepThroughput gives a re-plan without --stream-throughput the rate of the plan in
// flight: the nodes it set stay at it, and their records carry over.
func (l *Lifecycle) keepThroughput(existing *record.Checkpoint, rate *string) {
	if *rate != "" || existing.Throughput == nil {
		return
	}
	*rate = steps.RateThroughput(existing.Throughput.Rate).Flag()
	fmt.Fprintf(l.ErrOut, "Keeping --stream-throughput %s of operation %s.\n", *rate, existing.OperationID)
}
