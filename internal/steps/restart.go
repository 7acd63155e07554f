package steps

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// replaced reports whether the planned pod (its UID) no longer exists: gone, or
// re-created under the same name with another UID.
func (w *World) replaced(ctx context.Context, n record.Node) (bool, error) {
	p, err := w.getPod(ctx, n.Pod)
	if err != nil {
		return false, err
	}
	return p == nil || string(p.UID) != n.PodUID, nil
}

// drain runs `nodetool drain` on the node before its pod is deleted: Cassandra flushes
// its tables and stops serving, so the restart replays no commit log.
type drain struct{ node }

func (*drain) kind() string { return StepDrain }

// Describe implements engine.Describer.
func (s *drain) Describe() string { return "drain " + s.n.Pod + " (nodetool drain)" }

// PlanText implements PlanTexter.
func (s *drain) PlanText() string {
	return fmt.Sprintf("nodetool drain on %s (Host ID %s), once every node is UN", s.n.Pod, s.n.HostID)
}

// Done: the node reports DRAINED, or its pod was already replaced (restarted).
func (s *drain) Done(ctx context.Context) (bool, error) {
	gone, err := s.w.replaced(ctx, s.n)
	if err != nil || gone {
		return gone, err
	}
	ns, err := s.w.Nodetool.Netstats(ctx, s.n.Pod)
	if err != nil {
		return false, err
	}
	return ns.Mode == pubnodetool.ModeDrained, nil
}

// Safe: right now the planned pod is Running and Ready, and every node of the datacenter
// is UN and none of the cluster leaving, joining or moving (read from another node):
// one node down at a time. Otherwise the step waits (safenow.go).
func (s *drain) Safe(ctx context.Context) error {
	id := record.StepID(StepDrain, s.n.Pod)
	return s.w.waitSafe(ctx, id, func() (string, error) {
		if what, err := s.podRunning(ctx, true); what != "" || err != nil {
			return what, err
		}
		return s.w.ringSafeAt(ctx, id, s.n.DC, "", s.n.Pod)
	})
}

// Recheck implements engine.Rechecker: the ring, read right before the drain.
func (s *drain) Recheck(ctx context.Context) error {
	return s.w.recheckRing(ctx, record.StepID(StepDrain, s.n.Pod), s.n.DC, "", s.n.Pod)
}

// Do drains the node. A drain that failed or was cut proves nothing: the node's mode
// decides (Done).
func (s *drain) Do(ctx context.Context) error {
	return s.runMaintenance(ctx, s.kind(), "drain", func(m maintainer) error { return m.Drain(ctx, s.n.Pod) })
}

// deletePod deletes the drained node's pod with a UID precondition; its StatefulSet
// creates it again.
type deletePod struct{ node }

func (*deletePod) kind() string { return StepDeletePod }

// Describe implements engine.Describer.
func (s *deletePod) Describe() string {
	return fmt.Sprintf("delete pod %s (UID %s); StatefulSet %s creates it again", s.n.Pod, s.n.PodUID, s.n.StatefulSet)
}

// Done: no pod with the planned UID exists.
func (s *deletePod) Done(ctx context.Context) (bool, error) { return s.w.replaced(ctx, s.n) }

// Safe: the node is drained (or its Cassandra is not running at all). A node that is
// NORMAL again (restarted since the drain) is drained again by resume.
func (s *deletePod) Safe(ctx context.Context) error {
	ns, err := s.w.Nodetool.Netstats(ctx, s.n.Pod)
	var unreachable *pubnodetool.UnreachableError
	switch {
	case errors.As(err, &unreachable):
		return nil
	case err != nil:
		return err
	case ns.Mode != pubnodetool.ModeDrained:
		return fmt.Errorf("node %s is %s, not DRAINED (restarted since the drain?); run resume to drain it again", s.n.Pod, ns.Mode)
	}
	return nil
}

// Do deletes the pod, only if it still has the planned UID.
func (s *deletePod) Do(ctx context.Context) error {
	ctx, cancel := writeContext(ctx)
	defer cancel()
	return s.w.deletePodUID(ctx, s.n.Pod, s.n.PodUID)
}

// waitRestarted waits until the pod is back: a new UID, Running and Ready, and its node
// (the same Host ID) UN in `nodetool status` read from another node.
type waitRestarted struct{ waiting }

func (*waitRestarted) kind() string { return StepWaitRestarted }

// Describe implements engine.Describer.
func (s *waitRestarted) Describe() string {
	return "wait until pod " + s.n.Pod + " is back (new UID), Ready, and its node UN"
}

// back is the restarted test of the pod as just read, and what is missing when it fails.
func (s *waitRestarted) back(ctx context.Context, p *corev1.Pod) (bool, string, error) {
	if p != nil && string(p.UID) == s.n.PodUID {
		return false, "pod " + s.n.Pod + " still has its old UID " + s.n.PodUID, nil
	}
	if st := podState(p); st != "" {
		return false, "pod " + s.n.Pod + ": " + st, nil
	}
	return s.nodeUN(ctx, func(r pubnodetool.Ring) (pubnodetool.Node, bool) {
		if node, ok := r.ByHostID(s.n.HostID); ok {
			return node, true
		}
		return r.ByAddress(p.Status.PodIP)
	}, fmt.Sprintf("(Host ID %s) is not in the ring read from %%s", s.n.HostID))
}

// Done: the new pod is Ready and its node UN (the StatefulSet controller creates the
// pod: the step itself does nothing, see waiting).
func (s *waitRestarted) Done(ctx context.Context) (bool, error) {
	return s.doneBack(ctx, s.back)
}

func (s *waitRestarted) hint() string {
	return s.checkHint("", "", "nodetool status on another node")
}

// Wait polls until the pod is back and its node UN, warning once after StallAfter.
func (s *waitRestarted) Wait(ctx context.Context) error {
	id := record.StepID(s.kind(), s.n.Pod)
	return s.waitBack(ctx, id, "pod "+s.n.Pod+" is not back", s.hint(), s.back, nil, nil)
}
