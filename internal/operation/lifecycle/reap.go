package lifecycle

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// ReapGone takes out what operations that are gone left in the world, each found by the
// operation ID it carries on the object itself: pause holders on the operator
// (stalepause.go), replace blocks in a start script (staleblocks.go), stream-limit marks
// on pods (stalethroughput.go), tasks not started (staletasks.go), datacenter removal marks (stalemarks.go). cp is the checkpoint
// standing now (nil: none), whose marks are kept; pauseScope limits the pause reaping to one cluster ("" = the namespace).
// Every failure is a warning: the next command tries again.
func (l *Lifecycle) ReapGone(ctx context.Context, cp *record.Checkpoint, pauseScope string) {
	l.reapStalePauses(ctx, l.Cluster.Namespace, pauseScope)
	stands := l.operationStands(ctx, l.Cluster.Namespace)
	l.reapStaleBlocks(ctx, stands, false)
	l.reapStaleThroughput(ctx, cp)
	l.reapStaleTasks(ctx, l.Cluster.Namespace, l.Cluster.Name, stands, false)
	l.reapDatacenterMarks(ctx, l.Cluster.Namespace, stands)
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
