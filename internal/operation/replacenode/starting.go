package replacenode

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A pod re-created since the plan on the dead node's claims (not the planned pod: the
// StatefulSet controller made it again after someone or something deleted the old one)
// starts Cassandra on the dead node's data, and a JVM that starts does not answer
// nodetool until its JMX server is up (NODETOOL.md E10: "Cassandra down or starting").
// Not answering then proves nothing: discarding the data would lose a node that is
// coming back. So such a pod is "starting", the node's state unknown, until it answers
// (alive: the run stops, nothing discarded), shows that it cannot start (a container in
// back-off or failed and not running, an unschedulable pod), or has not answered for
// startGrace since this run first saw it: a dead node's pod ends the wait then at the
// latest, so it is bounded and no dead end.

// startGrace bounds the wait on a re-created pod that neither answers nor fails. A
// Cassandra JVM opens its JMX port early in its start, before the commit log replay
// (CassandraDaemon.setup), in well under this on a node whose image is there.
const startGrace = 3 * time.Minute

// firstSeen remembers, per pod UID, when this run first found it starting.
type firstSeen struct {
	mu sync.Mutex
	at map[types.UID]time.Time
}

// since records uid at now when new, and returns how long ago it was first seen.
func (f *firstSeen) since(uid types.UID, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.at == nil {
		f.at = map[types.UID]time.Time{}
	}
	if _, ok := f.at[uid]; !ok {
		f.at[uid] = now
	}
	return now.Sub(f.at[uid])
}

// mayBeStarting is why p, whose Cassandra does not answer, is waited on (its node may
// be starting), or "" when not answering shows the node dead.
func (r *run) mayBeStarting(ctx context.Context, p *corev1.Pod) string {
	if string(p.UID) == r.n.PodUID || p.DeletionTimestamp != nil || startFailed(p) != "" {
		return ""
	}
	left, err := r.claimsLeft(ctx)
	if err != nil {
		return fmt.Sprintf("pod %s was re-created since the plan and its claims cannot be read (%v): whether it starts on the dead node's data is unknown", p.Name, err)
	}
	if len(left) == 0 {
		return "" // the dead node's claims are going: it cannot start on its data
	}
	waited := r.seen.since(p.UID, r.w.Clock())
	if waited >= startGrace {
		return ""
	}
	return fmt.Sprintf("pod %s was re-created since the plan (UID %s) on the dead node's claims and does not answer nodetool yet: its Cassandra may be starting, so the node's state is unknown. "+
		"Waiting until it answers (then it is alive and nothing is replaced), shows it cannot start (a container in back-off or failed, unschedulable), or has not answered for %s (%s so far)",
		p.Name, p.UID, startGrace, waited.Round(time.Second))
}

// startFailed is why p shows that its Cassandra cannot start, or "": a container (init
// containers too: CassKop's bootstrap) in back-off, exited with an error, or restarted
// and not running; a Failed pod, or one the scheduler found no node for. A container
// that runs now, restarts or not, may still be starting; one that exited 0 (an init
// container) is done. Sources: the kubelet's container statuses (state, restartCount,
// state.waiting.reason CrashLoopBackOff) and the scheduler's PodScheduled=False reason
// Unschedulable (k8s.io/api/core/v1).
func startFailed(p *corev1.Pod) string {
	if p.Status.Phase == corev1.PodFailed {
		return "the pod failed"
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return "the pod is unschedulable"
		}
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		switch {
		case cs.State.Running != nil, cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0:
			continue
		case cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff":
			return "container " + cs.Name + " is in CrashLoopBackOff"
		case cs.State.Terminated != nil:
			return fmt.Sprintf("container %s exited %d", cs.Name, cs.State.Terminated.ExitCode)
		case cs.RestartCount > 0:
			return fmt.Sprintf("container %s restarted %d times and does not run", cs.Name, cs.RestartCount)
		}
	}
	return ""
}
