package restart

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// The three steps that restart one pod: each holds its planned node and the World's
// capabilities it asks for (steps/capabilities.go).

// drain runs `nodetool drain` on the node before its pod is deleted: Cassandra flushes
// its tables and stops serving, so the restart replays no commit log.
type drain struct {
	n        record.Node
	pods     steps.PodReader
	modes    steps.NodeModes
	ring     steps.RingGuard
	nodetool steps.Maintenance
}

// Describe implements engine.Describer.
func (s *drain) Describe() string { return "drain " + s.n.Pod + " (nodetool drain)" }

// PlanText implements operation.PlanTexter.
func (s *drain) PlanText() string {
	return fmt.Sprintf("nodetool drain on %s (Host ID %s), once every node is UN", s.n.Pod, s.n.HostID)
}

// Done: the node reports DRAINED, or its pod was already replaced (restarted).
func (s *drain) Done(ctx context.Context) (bool, error) {
	gone, err := s.pods.Replaced(ctx, s.n)
	if err != nil || gone {
		return gone, err
	}
	mode, err := s.modes.Mode(ctx, s.n.Pod)
	if err != nil {
		return false, err
	}
	return mode == pubnodetool.ModeDrained, nil
}

// Safe: right now the planned pod is Running and Ready, and every node of the datacenter
// is UN and none of the cluster leaving, joining or moving (read from another node):
// one node down at a time. Otherwise the step waits (steps.RingGuard).
func (s *drain) Safe(ctx context.Context) error {
	id := record.StepID(StepDrain, s.n.Pod)
	return s.ring.WaitSafe(ctx, id, func() (string, error) {
		if what, err := s.pods.PodRunning(ctx, s.n, true); what != "" || err != nil {
			return what, err
		}
		return s.ring.RingSafeAt(ctx, id, s.n.DC, "", s.n.Pod)
	})
}

// Recheck implements engine.Rechecker: the ring, read right before the drain.
func (s *drain) Recheck(ctx context.Context) error {
	return s.ring.RecheckRing(ctx, record.StepID(StepDrain, s.n.Pod), s.n.DC, "", s.n.Pod)
}

// Do drains the node. A drain that failed or was cut proves nothing: the node's mode
// decides (Done).
func (s *drain) Do(ctx context.Context) error {
	return s.nodetool.RunMaintenance(ctx, StepDrain, s.n, "drain", func(m steps.Maintainer) error { return m.Drain(ctx, s.n.Pod) })
}

// deletePod deletes the drained node's pod with a UID precondition; its StatefulSet
// creates it again.
type deletePod struct {
	n      record.Node
	pods   steps.PodReader
	delete steps.PodDeleter
	modes  steps.NodeModes
}

// Describe implements engine.Describer.
func (s *deletePod) Describe() string {
	return fmt.Sprintf("delete pod %s (UID %s); StatefulSet %s creates it again", s.n.Pod, s.n.PodUID, s.n.StatefulSet)
}

// Done: no pod with the planned UID exists.
func (s *deletePod) Done(ctx context.Context) (bool, error) { return s.pods.Replaced(ctx, s.n) }

// Safe: the node is drained (or its Cassandra is not running at all). A node that is
// NORMAL again (restarted since the drain) is drained again by resume.
func (s *deletePod) Safe(ctx context.Context) error {
	mode, err := s.modes.Mode(ctx, s.n.Pod)
	var unreachable *pubnodetool.UnreachableError
	switch {
	case errors.As(err, &unreachable):
		return nil
	case err != nil:
		return err
	case mode != pubnodetool.ModeDrained:
		return fmt.Errorf("node %s is %s, not DRAINED (restarted since the drain?); run resume to drain it again", s.n.Pod, mode)
	}
	return nil
}

// Do deletes the pod, only if it still has the planned UID.
func (s *deletePod) Do(ctx context.Context) error {
	return s.delete.DeletePodUID(ctx, s.n.Pod, s.n.PodUID)
}

// waitRestarted waits until the pod is back: a new UID, Running and Ready, and its node
// (the same Host ID) UN in `nodetool status` read from another node. The StatefulSet
// controller creates the pod: the step itself does nothing.
type waitRestarted struct {
	n    record.Node
	back steps.PodBack
}

// Describe implements engine.Describer.
func (s *waitRestarted) Describe() string {
	return "wait until pod " + s.n.Pod + " is back (new UID), Ready, and its node UN"
}

// Safe: nothing is changed by a waiting step.
func (*waitRestarted) Safe(context.Context) error { return nil }

// Do: nothing; the StatefulSet controller creates the pod.
func (*waitRestarted) Do(context.Context) error { return nil }

// Passive marks the step as acting on nothing (engine.Passive).
func (*waitRestarted) Passive() {}

// restarted is the restarted test of the pod as just read, and what is missing when it
// fails (a steps.BackTest).
func (s *waitRestarted) restarted(ctx context.Context, p *corev1.Pod) (bool, string, error) {
	if p != nil && string(p.UID) == s.n.PodUID {
		return false, "pod " + s.n.Pod + " still has its old UID " + s.n.PodUID, nil
	}
	if st := steps.PodState(p); st != "" {
		return false, "pod " + s.n.Pod + ": " + st, nil
	}
	return s.back.NodeUN(ctx, s.n, func(r pubnodetool.Ring) (pubnodetool.Node, bool) {
		if node, ok := r.ByHostID(s.n.HostID); ok {
			return node, true
		}
		return r.ByAddress(p.Status.PodIP)
	}, fmt.Sprintf("(Host ID %s) is not in the ring read from %%s", s.n.HostID))
}

// Done: the new pod is Ready and its node UN.
func (s *waitRestarted) Done(ctx context.Context) (bool, error) {
	ok, _, err := s.back.ReadBack(ctx, s.n, s.restarted)
	return ok, err
}

func (s *waitRestarted) hint() string {
	return s.back.CheckHint(s.n, "", "", "nodetool status on another node")
}

// Wait polls until the pod is back and its node UN, warning once after StallAfter.
func (s *waitRestarted) Wait(ctx context.Context) error {
	return s.back.WaitBack(ctx, s.n, record.StepID(StepWaitRestarted, s.n.Pod), "pod "+s.n.Pod+" is not back", s.hint(), s.restarted)
}
