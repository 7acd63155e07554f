package steps

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

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
