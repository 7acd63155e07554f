package steps

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
)

// replaced reports whether the planned pod (its UID) no longer exists: gone, or
// re-created under the same name with another UID.
func (w *World) replaced(ctx context.Context, n checkpoint.Node) (bool, error) {
	p, err := w.getPod(ctx, n.Pod)
	if err != nil {
		return false, err
	}
	return p == nil || string(p.UID) != n.PodUID, nil
}

// Drain runs `nodetool drain` on the node before its pod is deleted: Cassandra flushes
// its tables and stops serving, so the restart replays no commit log.
type Drain struct {
	w *World
	n checkpoint.Node
}

// Describe implements engine.Describer.
func (s *Drain) Describe() string { return "drain " + s.n.Pod + " (nodetool drain)" }

// PlanText implements PlanTexter.
func (s *Drain) PlanText() string {
	return fmt.Sprintf("nodetool drain on %s (Host ID %s), once every node is UN", s.n.Pod, s.n.HostID)
}

// Done: the node reports DRAINED, or its pod was already replaced (restarted).
func (s *Drain) Done(ctx context.Context) (bool, error) {
	gone, err := s.w.replaced(ctx, s.n)
	if err != nil || gone {
		return gone, err
	}
	ns, err := s.w.Nodetool.Netstats(ctx, s.n.Pod)
	if err != nil {
		return false, err
	}
	return ns.Mode == nodetool.ModeDrained, nil
}

// Safe: right now the planned pod is Running and Ready, and every node of the datacenter
// is UN and none of the cluster leaving, joining or moving (read from another node):
// one node down at a time. Otherwise the step waits (safenow.go).
func (s *Drain) Safe(ctx context.Context) error {
	id := checkpoint.StepID(checkpoint.StepDrain, s.n.Pod)
	return s.w.waitSafe(ctx, id, func() (string, error) {
		p, err := s.w.getPod(ctx, s.n.Pod)
		if err != nil {
			return "cannot read pod " + s.n.Pod + ": " + err.Error(), nil
		}
		if p == nil || string(p.UID) != s.n.PodUID {
			return "", fmt.Errorf("pod %s (UID %s) is gone", s.n.Pod, s.n.PodUID)
		}
		if st := podState(p); st != "" {
			return fmt.Sprintf("pod %s is %s", s.n.Pod, st), nil
		}
		return s.w.ringSafeAt(ctx, id, s.n.DC, "", s.n.Pod)
	})
}

// Recheck implements engine.Rechecker: the ring, read right before the drain.
func (s *Drain) Recheck(ctx context.Context) error {
	return s.w.recheckRing(ctx, checkpoint.StepID(checkpoint.StepDrain, s.n.Pod), s.n.DC, "", s.n.Pod)
}

// Do drains the node.
func (s *Drain) Do(ctx context.Context) error {
	if err := s.w.refuseDeleting(checkpoint.StepID(checkpoint.StepDrain, s.n.Pod)); err != nil {
		return err
	}
	m, err := s.w.maintenance()
	if err != nil {
		return err
	}
	err = m.Drain(ctx, s.n.Pod)
	if err == nil || ctx.Err() != nil {
		return err
	}
	var unreachable *nodetool.UnreachableError
	if errors.As(err, &unreachable) {
		return &engine.Retryable{Err: err}
	}
	// A drain that failed or was cut proves nothing: the node's mode decides.
	return &engine.Retryable{Err: fmt.Errorf("nodetool drain on %s failed: %w", s.n.Pod, err)}
}

// DeletePod deletes the drained node's pod with a UID precondition; its StatefulSet
// creates it again.
type DeletePod struct {
	w *World
	n checkpoint.Node
}

// Describe implements engine.Describer.
func (s *DeletePod) Describe() string {
	return fmt.Sprintf("delete pod %s (UID %s); StatefulSet %s creates it again", s.n.Pod, s.n.PodUID, s.n.StatefulSet)
}

// Done: no pod with the planned UID exists.
func (s *DeletePod) Done(ctx context.Context) (bool, error) { return s.w.replaced(ctx, s.n) }

// Safe: the node is drained (or its Cassandra is not running at all). A node that is
// NORMAL again (restarted since the drain) is drained again by resume.
func (s *DeletePod) Safe(ctx context.Context) error {
	ns, err := s.w.Nodetool.Netstats(ctx, s.n.Pod)
	var unreachable *nodetool.UnreachableError
	switch {
	case errors.As(err, &unreachable):
		return nil
	case err != nil:
		return err
	case ns.Mode != nodetool.ModeDrained:
		return fmt.Errorf("node %s is %s, not DRAINED (restarted since the drain?); run resume to drain it again", s.n.Pod, ns.Mode)
	}
	return nil
}

// Do deletes the pod, only if it still has the planned UID.
func (s *DeletePod) Do(ctx context.Context) error {
	ctx, cancel := writeContext(ctx)
	defer cancel()
	uid := types.UID(s.n.PodUID)
	err := s.w.Kube.CoreV1().Pods(s.w.Namespace).Delete(ctx, s.n.Pod, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or already another incarnation: Done decides
	}
	return &engine.Retryable{Err: fmt.Errorf("cannot delete pod %s: %w", s.n.Pod, err)}
}

// WaitRestarted waits until the pod is back: a new UID, Running and Ready, and its node
// (the same Host ID) UN in `nodetool status` read from another node.
type WaitRestarted struct {
	waiting
	w *World
	n checkpoint.Node
}

// Describe implements engine.Describer.
func (s *WaitRestarted) Describe() string {
	return "wait until pod " + s.n.Pod + " is back (new UID), Ready, and its node UN"
}

func (s *WaitRestarted) check(ctx context.Context) (bool, string, error) {
	p, err := s.w.getPod(ctx, s.n.Pod)
	if err != nil {
		return false, "", err
	}
	if p != nil && string(p.UID) == s.n.PodUID {
		return false, "pod " + s.n.Pod + " still has its old UID " + s.n.PodUID, nil
	}
	if st := podState(p); st != "" {
		return false, "pod " + s.n.Pod + ": " + st, nil
	}
	return s.w.nodeUN(ctx, s.n.Pod, func(r nodetool.Ring) (nodetool.Node, bool) {
		if node, ok := r.ByHostID(s.n.HostID); ok {
			return node, true
		}
		return r.ByAddress(p.Status.PodIP)
	}, fmt.Sprintf("(Host ID %s) is not in the ring read from %%s", s.n.HostID))
}

// Done: the new pod is Ready and its node UN (the StatefulSet controller creates the
// pod: the step itself does nothing, see waiting).
func (s *WaitRestarted) Done(ctx context.Context) (bool, error) {
	ok, _, err := s.check(ctx)
	return ok, err
}

func (s *WaitRestarted) hint() string {
	ns, p := s.w.Namespace, s.n.Pod
	return fmt.Sprintf("check: kubectl describe pod -n %s %s; kubectl logs -n %s %s%s; nodetool status on another node; then run: kubectl cassandra resume -n %s %s",
		ns, p, ns, p, s.w.container(), s.w.CP.Namespace, s.w.CP.Cluster)
}

// Wait polls until the pod is back and its node UN, warning once after StallAfter.
func (s *WaitRestarted) Wait(ctx context.Context) error {
	id := checkpoint.StepID(checkpoint.StepWaitRestarted, s.n.Pod)
	return s.w.waitBack(ctx, id, "pod "+s.n.Pod+" is not back", s.hint(), s.check, nil)
}
