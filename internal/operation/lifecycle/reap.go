package lifecycle

import (
	"bytes"
	"context"
	"sync"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// ReapGone takes out what operations that are gone left in the world, each found by the
// operation ID it carries on the object itself: pause holders on the operator
// (stalepause.go), replace blocks in a start script (staleblocks.go), stream-limit marks
// on pods (stalethroughput.go), tasks not started (staletasks.go), datacenter removal marks (stalemarks.go). cp is the checkpoint
// standing now (nil: none), whose marks are kept; pauseScope limits the pause reaping to one cluster ("" = the namespace).
// Every failure is a warning: the next command tries again. The reapers run at once
// (reapAtOnce): each reads and changes its own objects. It reports whether a reaper
// said anything: each says what it changed, or tried to change, so one that said
// nothing changed nothing.
func (l *Lifecycle) ReapGone(ctx context.Context, cp *record.Checkpoint, pauseScope string) (said bool) {
	ns := l.Cluster.Namespace
	stands := l.operationStands(ctx, ns)
	return l.reapAtOnce(
		func(r *Lifecycle) { r.reapStalePauses(ctx, ns, pauseScope) },
		func(r *Lifecycle) { r.reapStaleBlocks(ctx, stands, false) },
		func(r *Lifecycle) { r.reapStaleThroughput(ctx, cp) },
		func(r *Lifecycle) { r.reapStaleTasks(ctx, ns, l.Cluster.Name, stands, false) },
		func(r *Lifecycle) { r.reapDatacenterMarks(ctx, ns, stands) },
	)
}

// reapAtOnce runs reapers at once, each with its own output, and then says what each
// said in their order: the same lines as one after the other. Each reaper's reads are a
// round trip (a list waits up to 100 ms for the API server's cache); one after the other
// they came before every operation command's plan. It reports whether any said anything.
func (l *Lifecycle) reapAtOnce(reapers ...func(r *Lifecycle)) (said bool) {
	out := make([]bytes.Buffer, len(reapers))
	var wg sync.WaitGroup
	for i, reap := range reapers {
		r := &Lifecycle{Deps: l.Deps}
		r.ErrOut = &out[i]
		wg.Go(func() { reap(r) })
	}
	wg.Wait()
	for i := range out {
		if out[i].Len() > 0 {
			_, _ = l.ErrOut.Write(out[i].Bytes())
			said = true
		}
	}
	return said
}

// ReapAfterGone takes out what operations on cluster ns/name, which is gone, left in
// the world (the cluster resource deleted while its operation ran: its checkpoint went
// with it): the pauses they hold on the operator, their blocks in the start script,
// their tasks, and the stream limits on its pods that still run (with a Nodetool). Only
// Kube, Nodetool, Adapter, Kinds and ErrOut of the Deps are used: there is no cluster to
// open.
func (l *Lifecycle) ReapAfterGone(ctx context.Context, ns, name string) {
	l.Cluster = topology.Cluster{Namespace: ns, Name: name}
	l.reapStalePauses(ctx, ns, "")
	stands := l.operationStands(ctx, ns)
	l.reapBlocksAfterGone(ctx, ns, stands)
	l.reapStaleTasks(ctx, ns, name, stands, true)
	l.reapDatacenterMarks(ctx, ns, stands)
	if l.Nodetool.Exec != nil {
		l.reapStaleThroughput(ctx, nil)
	}
}
