package operation

import (
	"context"
	"sync"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/future"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
)

// AheadReads are one pod's ring and keyspace reads, started before a plan asks for them
// (nodetool through exec is a plan's slowest read). Each answers as often as asked.
type AheadReads struct {
	Ring     func() (pubnodetool.Ring, error)
	Describe func() (nodetool.ClusterDescription, error)
}

// readsAhead keeps a planner's reads started ahead, by pod: once started they are not
// started again, so a kind's Prefetch and its Plan share them.
type readsAhead struct {
	mu    sync.Mutex
	byPod map[string]*AheadReads
}

// ReadAhead starts pod's ring and keyspace reads, unless this planner started them
// already, and returns them. A kind's Prefetch starts them beside the lifecycle's own
// reads (reaping, the busy checks); its Plan takes them up. They are only reads: what a
// plan judges from them is judged again by each step right before it acts.
func (p *Planner) ReadAhead(ctx context.Context, pod string) *AheadReads {
	p.ahead.mu.Lock()
	defer p.ahead.mu.Unlock()
	if a, ok := p.ahead.byPod[pod]; ok {
		return a
	}
	if p.ahead.byPod == nil {
		p.ahead.byPod = map[string]*AheadReads{}
	}
	a := &AheadReads{
		Ring:     future.Start(func() (pubnodetool.Ring, error) { return p.Nodetool.Status(ctx, pod) }),
		Describe: future.Start(func() (nodetool.ClusterDescription, error) { return p.Nodetool.DescribeCluster(ctx, pod) }),
	}
	p.ahead.byPod[pod] = a
	return a
}
