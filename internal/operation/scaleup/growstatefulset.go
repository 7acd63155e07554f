package scaleup

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// growStatefulSet sets the rack's StatefulSet replicas to the new node's ordinal + 1, so
// the StatefulSet controller creates exactly that pod. It holds the new node and the
// World's capabilities it asks for (steps/capabilities.go).
type growStatefulSet struct {
	n        record.Node
	ns       string
	sts      steps.StatefulSets
	pods     steps.PodReader
	claims   steps.Claims
	seeds    steps.Seeds
	ring     steps.RingGuard
	deleting steps.DeletionGuard
	writes   steps.Writer
}

// Describe implements engine.Describer.
func (s *growStatefulSet) Describe() string {
	return fmt.Sprintf("grow StatefulSet %s to %d replicas (creates pod %s)", s.n.StatefulSet, s.n.Ordinal+1, s.n.Pod)
}

// Done: replicas are at least ordinal + 1.
func (s *growStatefulSet) Done(ctx context.Context) (bool, error) {
	_, r, err := s.sts.StatefulSetNow(ctx, s.n.StatefulSet)
	return err == nil && r > s.n.Ordinal, err
}

// Safe: replicas are still exactly the ordinal (the new pod is the next one), no pod
// or claim of that name is left over (a new pod on an old data claim would start a
// decommissioned node, which refuses to start), the operator does not list the new pod
// as a seed (it would start without bootstrapping), and, right now, every node of the
// datacenter is UN and none of the cluster leaving, joining or moving (one node joins
// at a time, into a healthy ring; otherwise the step waits, steps.RingGuard).
func (s *growStatefulSet) Safe(ctx context.Context) error {
	id := record.StepID(StepGrowSTS, s.n.Pod)
	return s.ring.WaitSafe(ctx, id, func() (string, error) {
		sts, r, err := s.sts.StatefulSetNow(ctx, s.n.StatefulSet)
		if err != nil {
			return "", err
		}
		if r != s.n.Ordinal {
			return "", fmt.Errorf("StatefulSet %s has %d replicas, expected %d: pod %s is not the next one (someone changed it)", s.n.StatefulSet, r, s.n.Ordinal, s.n.Pod)
		}
		if p, err := s.pods.Pod(ctx, s.n.Pod); err != nil {
			return "", err
		} else if p != nil {
			return "", fmt.Errorf("pod %s already exists (UID %s, %s) although StatefulSet %s has %d replicas", s.n.Pod, p.UID, podPhase(p), s.n.StatefulSet, r)
		}
		for _, tpl := range sts.Spec.VolumeClaimTemplates {
			name := tpl.Name + "-" + s.n.Pod
			pvc, err := s.claims.ClaimNow(ctx, name)
			if err != nil {
				return "", err
			}
			if pvc != nil {
				return "", fmt.Errorf("PVC %s already exists: the new pod would start on its old data (a decommissioned node refuses to start); delete it if it is a leftover (kubectl delete pvc -n %s %s)", name, s.ns, name)
			}
		}
		if err := s.seeds.NotSeed(ctx, s.n); err != nil {
			return "", err
		}
		return s.ring.RingSafeAt(ctx, id, s.n.DC, "", "")
	})
}

// Recheck implements engine.Rechecker: the ring, read right before the grow.
func (s *growStatefulSet) Recheck(ctx context.Context) error {
	return s.ring.RecheckRing(ctx, record.StepID(StepGrowSTS, s.n.Pod), s.n.DC, "", "")
}

// Do patches replicas with the resourceVersion just read as a precondition.
func (s *growStatefulSet) Do(ctx context.Context) error {
	if err := s.deleting.RefuseDeleting(record.StepID(StepGrowSTS, s.n.Pod)); err != nil {
		return err
	}
	return s.writes.WriteDetached(ctx, func(ctx context.Context) error {
		sts, r, err := s.sts.StatefulSetNow(ctx, s.n.StatefulSet)
		if err != nil {
			return &pub.Retryable{Err: err}
		}
		if r > s.n.Ordinal {
			return nil
		}
		if r != s.n.Ordinal {
			return fmt.Errorf("StatefulSet %s has %d replicas, expected %d", s.n.StatefulSet, r, s.n.Ordinal)
		}
		return s.sts.SetReplicasAt(ctx, sts, s.n.Ordinal+1, "growing")
	})
}

// podPhase is steps.PodState, or "Running and Ready".
func podPhase(p *corev1.Pod) string {
	if st := steps.PodState(p); st != "" {
		return st
	}
	return "Running and Ready"
}
