package steps

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// growStatefulSet sets the rack's StatefulSet replicas to the new node's ordinal + 1, so
// the StatefulSet controller creates exactly that pod.
type growStatefulSet struct{ node }

func (*growStatefulSet) kind() string { return StepGrowSTS }

// Describe implements engine.Describer.
func (s *growStatefulSet) Describe() string {
	return fmt.Sprintf("grow StatefulSet %s to %d replicas (creates pod %s)", s.n.StatefulSet, s.n.Ordinal+1, s.n.Pod)
}

func (s *growStatefulSet) sts(ctx context.Context) (*appsv1.StatefulSet, int, error) {
	sts, err := s.w.readSTS(s.n.StatefulSet)(ctx) // uncached: Do writes against its resourceVersion
	if err != nil {
		return nil, 0, err
	}
	return sts, replicasOf(sts), nil
}

// Done: replicas are at least ordinal + 1.
func (s *growStatefulSet) Done(ctx context.Context) (bool, error) {
	_, r, err := s.sts(ctx)
	return err == nil && r > s.n.Ordinal, err
}

// Safe: replicas are still exactly the ordinal (the new pod is the next one), no pod
// or claim of that name is left over (a new pod on an old data claim would start a
// decommissioned node, which refuses to start), the operator does not list the new pod
// as a seed (it would start without bootstrapping, seedlist.go), and, right now, every
// node of the datacenter is UN and none of the cluster leaving, joining or moving (one
// node joins at a time, into a healthy ring; otherwise the step waits, safenow.go).
func (s *growStatefulSet) Safe(ctx context.Context) error {
	id := record.StepID(StepGrowSTS, s.n.Pod)
	return s.w.waitSafe(ctx, id, func() (string, error) {
		sts, r, err := s.sts(ctx)
		if err != nil {
			return "", err
		}
		if r != s.n.Ordinal {
			return "", fmt.Errorf("StatefulSet %s has %d replicas, expected %d: pod %s is not the next one (someone changed it)", s.n.StatefulSet, r, s.n.Ordinal, s.n.Pod)
		}
		if p, err := s.w.getPod(ctx, s.n.Pod); err != nil {
			return "", err
		} else if p != nil {
			return "", fmt.Errorf("pod %s already exists (UID %s, %s) although StatefulSet %s has %d replicas", s.n.Pod, p.UID, podPhase(p), s.n.StatefulSet, r)
		}
		for _, tpl := range sts.Spec.VolumeClaimTemplates {
			name := tpl.Name + "-" + s.n.Pod
			pvc, err := s.w.readPVC(name)(ctx)
			if err != nil {
				return "", err
			}
			if pvc != nil {
				return "", fmt.Errorf("PVC %s already exists: the new pod would start on its old data (a decommissioned node refuses to start); delete it if it is a leftover (kubectl delete pvc -n %s %s)", name, s.w.Namespace, name)
			}
		}
		if err := s.w.notSeed(ctx, s.n); err != nil {
			return "", err
		}
		return s.w.ringSafeAt(ctx, id, s.n.DC, "", "")
	})
}

// Recheck implements engine.Rechecker: the ring, read right before the grow.
func (s *growStatefulSet) Recheck(ctx context.Context) error {
	return s.w.recheckRing(ctx, record.StepID(StepGrowSTS, s.n.Pod), s.n.DC, "", "")
}

// Do patches replicas with the resourceVersion just read as a precondition.
func (s *growStatefulSet) Do(ctx context.Context) error {
	if err := s.w.refuseDeleting(record.StepID(StepGrowSTS, s.n.Pod)); err != nil {
		return err
	}
	ctx, cancel := writeContext(ctx)
	defer cancel()
	sts, r, err := s.sts(ctx)
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	if r > s.n.Ordinal {
		return nil
	}
	if r != s.n.Ordinal {
		return fmt.Errorf("StatefulSet %s has %d replicas, expected %d", s.n.StatefulSet, r, s.n.Ordinal)
	}
	return s.w.setReplicasAt(ctx, sts, s.n.Ordinal+1, "growing")
}

// waitJoined waits until the new pod is Ready and its node is UN in `nodetool status`
// read from another node: its bootstrap finished.
type waitJoined struct{ waiting }

func (*waitJoined) kind() string { return record.StepWaitJoined }

// Describe implements engine.Describer.
func (s *waitJoined) Describe() string {
	return "wait until pod " + s.n.Pod + " is Ready and its node UN (bootstrap finished)"
}

// back is the joined test of the pod as just read, and what is missing when it fails.
func (s *waitJoined) back(ctx context.Context, p *corev1.Pod) (bool, string, error) {
	if st := PodState(p); st != "" {
		return false, "pod " + s.n.Pod + ": " + st, nil
	}
	if p.Status.PodIP == "" {
		return false, "pod " + s.n.Pod + " has no IP yet", nil
	}
	return s.nodeUN(ctx, func(r pubnodetool.Ring) (pubnodetool.Node, bool) {
		return r.ByAddress(p.Status.PodIP)
	}, fmt.Sprintf("(%s) is not in the ring read from %%s yet", p.Status.PodIP))
}

// Done: the pod is Ready and its node UN (the StatefulSet controller creates the pod
// and Cassandra bootstraps it: the step itself does nothing, see waiting).
func (s *waitJoined) Done(ctx context.Context) (bool, error) {
	return s.doneBack(ctx, s.back)
}

func (s *waitJoined) hint() string {
	return s.checkHint(" (scheduling, volumes, probes)", " (bootstrap errors)",
		fmt.Sprintf("kubectl exec -n %s %s%s -- nodetool netstats (bootstrap streams)", s.w.Namespace, s.n.Pod, s.w.container()))
}

// Wait polls until the node joined, reporting what it waits for; after StallAfter it
// warns once with what to check, and a bootstrap that failed (5.0 JOINING_FAILED) stops
// the run.
func (s *waitJoined) Wait(ctx context.Context) error {
	return s.wait(ctx, nil)
}

// wait is Wait, with guard (nil: none) watching what keeps an operator that acts from
// creating and starting the pod (driven.go).
func (s *waitJoined) wait(ctx context.Context, guard *stallGuard) error {
	id := record.StepID(s.kind(), s.n.Pod)
	var meter StreamMeter
	// The pod runs and its node is not UN yet: did its bootstrap fail (5.0)?
	bootstrap := func() error {
		ns, err := s.w.Nodetool.Netstats(ctx, s.n.Pod)
		if err != nil {
			return nil // unknown: the wait goes on
		}
		if ns.Mode == pubnodetool.ModeJoiningFailed {
			return &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("node %s failed to bootstrap (mode JOINING_FAILED); %s", s.n.Pod, s.hint())}
		}
		// 4.0+ receivers count right; on 3.11 the joiner's done bytes undercount
		// (docs/how-it-works/streaming.md §2.2): a pessimistic figure, never an optimistic one.
		s.w.reportStream(id, "bootstrap", s.n.Pod, ns, nodetool.PlanBootstrap, nodetool.DirReceiving, &meter)
		return nil
	}
	return s.waitBack(ctx, id, "pod "+s.n.Pod+" did not join", s.hint(), s.back, bootstrap, guard)
}

// cleanup runs `nodetool cleanup` on a node that was in the datacenter before the
// scale-up, dropping the ranges the new nodes took over. Whether it ran cannot be read
// from nodetool, so it is done only once the checkpoint records it done, which happens
// only after the exec returned success. A run that dies during the cleanup runs it
// again on that node on resume: harmless (it only drops data the node does not own).
type cleanup struct{ node }

func (*cleanup) kind() string { return StepCleanup }

// Describe implements engine.Describer.
func (s *cleanup) Describe() string { return "nodetool cleanup on " + s.n.Pod }

// PlanText implements PlanTexter.
func (s *cleanup) PlanText() string {
	return "nodetool cleanup on " + s.n.Pod + " (a run interrupted during it cleans that node again on resume: harmless)"
}

// Done: recorded done in the checkpoint (nothing in the real world tells).
func (s *cleanup) Done(context.Context) (bool, error) {
	return s.w.recordDone(record.StepID(StepCleanup, s.n.Pod)), nil
}

// Safe: right now the pod is Running and Ready, its node NORMAL, every node of the
// datacenter UN and none of the cluster leaving, joining or moving (a cleanup beside a
// joining node would drop ranges it is about to stream; safenow.go). Another
// incarnation of the pod (restarted meanwhile) is the same node on the same data:
// cleaning it is right. While the world is not there yet the step waits.
func (s *cleanup) Safe(ctx context.Context) error {
	id := record.StepID(StepCleanup, s.n.Pod)
	return s.w.waitSafe(ctx, id, func() (string, error) {
		if what, err := s.podRunning(ctx, false); what != "" || err != nil {
			return what, err
		}
		if what, err := s.w.ringSafeAt(ctx, id, s.n.DC, "", s.n.Pod); what != "" || err != nil {
			return what, err
		}
		ns, err := s.w.Nodetool.Netstats(ctx, s.n.Pod)
		if err != nil {
			return "cannot read the mode of node " + s.n.Pod + ": " + err.Error(), nil
		}
		if ns.Mode != pubnodetool.ModeNormal {
			return fmt.Sprintf("node %s is in mode %s; cleanup needs NORMAL", s.n.Pod, ns.Mode), nil
		}
		return "", nil
	})
}

// Recheck implements engine.Rechecker: the ring, read right before the cleanup.
func (s *cleanup) Recheck(ctx context.Context) error {
	return s.w.recheckRing(ctx, record.StepID(StepCleanup, s.n.Pod), s.n.DC, "", s.n.Pod)
}

// Do runs the cleanup and blocks until it returns.
func (s *cleanup) Do(ctx context.Context) error {
	return s.runMaintenance(ctx, s.kind(), "cleanup", func(m Maintainer) error {
		done := make(chan struct{})
		go s.progress(ctx, done)
		defer close(done)
		return m.Cleanup(ctx, s.n.Pod)
	})
}

func (s *cleanup) progress(ctx context.Context, done <-chan struct{}) {
	start := s.w.now()
	ticks(ctx, done, progressEvery(s.w), func() {
		s.w.Reporter.Waiting(record.StepID(StepCleanup, s.n.Pod), "nodetool cleanup running on "+s.n.Pod, s.w.now().Sub(start))
	})
}

// Wait: the exec returned success, the cleanup is done.
func (s *cleanup) Wait(context.Context) error { return nil }
