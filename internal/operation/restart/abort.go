package restart

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
)

// assess is abort's check (operation.Abort) for a restart, which stops between two
// pods: it refuses unless every planned pod is Ready with its node NORMAL (none drained,
// none on its way back); a pod whose UID changed since the plan counts as restarted.
func assess(ctx context.Context, r operation.AbortReads, cp *checkpoint.Checkpoint) (operation.Progress, error) {
	p := operation.Progress{Total: len(cp.Nodes)}
	for _, n := range cp.Nodes {
		pod, err := r.Pod(ctx, cp.Namespace, n.Pod)
		if err != nil {
			return p, exit.Refusedf("%v: abort needs to know every pod is back; nothing changed", err)
		}
		if pod == nil || pod.DeletionTimestamp != nil || !steps.PodReady(pod) {
			return p, exit.Refusedf("pod %s is being restarted (not back and Ready yet): wait until it is Ready and its node UN, then run abort again (or resume, which waits for it): %s", n.Pod, r.ResumeHint)
		}
		ns, err := r.Nodetool.Netstats(ctx, n.Pod)
		if err != nil {
			return p, exit.Refusedf("cannot read the state of %s (%v): abort needs to know no node is drained; nothing changed", n.Pod, err)
		}
		switch ns.Mode {
		case nodetool.ModeNormal:
		case nodetool.ModeDrained, nodetool.ModeDraining:
			return p, exit.Refusedf("node %s is %s: resume restarts it: %s", n.Pod, ns.Mode, r.ResumeHint)
		default:
			return p, exit.Refusedf("node %s is %s, not NORMAL: wait until it is, then run abort again (or resume): %s", n.Pod, ns.Mode, r.ResumeHint)
		}
		if string(pod.UID) != n.PodUID {
			p.Done++
		}
	}
	return p, nil
}
