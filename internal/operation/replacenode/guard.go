package replacenode

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// Safe means safe now: a step that discards the dead node's data or pod, or asks the
// operator to, first reads the world again. The node must still be dead: DN in a ring
// read right then by a UN node other than its pod, every other node of the datacenter
// UN and none joining, leaving or moving, and its pod's nodetool not answering. A node
// that came back stops the run (nothing discarded); anything unknown waits.

// stillDead is "" when the dead node is still dead now, else what the step waits for;
// an error stops the run.
func (r *run) stillDead(ctx context.Context) (string, error) {
	w := r.w
	ring, reader, failed, err := w.ForKind().RingExcept(ctx, r.rep.Pod)
	if err != nil {
		return "the ring cannot be read (" + err.Error() + "): the node's state is unknown", nil
	}
	if reader == "" {
		return "no other node reads the ring (" + orNone(failed) + "): the node's state is unknown", nil
	}
	rp, err := r.pod(ctx, reader)
	if err != nil || rp == nil {
		return fmt.Sprintf("pod %s, which read the ring, cannot be read (%v)", reader, err), nil
	}
	if row, ok := ring.ByHostID(r.rep.HostID); ok && row.Status == "U" {
		return "", r.cameBack(fmt.Sprintf("node %s (Host ID %s) is %s in the ring read from %s", row.Address, row.HostID, row.Code(), reader))
	}
	if bad := ringProblems(ring, r.n.DC, r.rep.HostID, rp.Status.PodIP); len(bad) > 0 {
		return strings.Join(bad, "; ") + " (ring read from " + reader + ")", nil
	}
	return r.notAnswering(ctx)
}

// notAnswering is "" when the pod's nodetool cannot answer (no pod, no running
// Cassandra container, or nodetool cannot connect); an answer stops the run.
func (r *run) notAnswering(ctx context.Context) (string, error) {
	p, err := r.pod(ctx, r.rep.Pod)
	if err != nil {
		return "pod " + r.rep.Pod + " cannot be read (" + err.Error() + ")", nil
	}
	if p == nil {
		return "", nil
	}
	if !containerRunning(p, r.w.Container) {
		return r.mayBeStarting(ctx, p), nil
	}
	_, err = r.w.Nodetool.Netstats(ctx, p.Name)
	var unreachable *pubnodetool.UnreachableError
	switch {
	case err == nil:
		return "", r.cameBack("the node of pod " + p.Name + " answers nodetool")
	case errors.As(err, &unreachable):
		return r.mayBeStarting(ctx, p), nil
	default:
		return "whether the node of pod " + p.Name + " is alive is unknown (" + err.Error() + ")", nil
	}
}

// cameBack stops the run: the node the plan found dead is alive, so nothing of it may
// be discarded.
func (r *run) cameBack(what string) error {
	cp := r.w.CP
	return &operation.Fatal{Code: operation.ExitRefused, Err: &aliveError{what: what, ns: cp.Namespace, cluster: cp.Cluster}}
}

// aliveError is cameBack's error; what says what shows the node alive.
type aliveError struct{ what, ns, cluster string }

func (e *aliveError) Error() string {
	return fmt.Sprintf("%s: the node planned as dead is alive, and a live node is never replaced. Its data and pod were not touched by this step. "+
		"If it is healthy, abort: kubectl cassandra abort -n %s %s", e.what, e.ns, e.cluster)
}

// pod reads a pod now ((nil, nil): gone).
func (r *run) pod(ctx context.Context, name string) (*corev1.Pod, error) {
	p, err := r.w.Kube.CoreV1().Pods(r.w.CP.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return p, err
}

// recheck is the destructive steps' Recheck: still dead right before acting, else not
// yet (the step goes back to its Safe, which waits or stops the run).
func (r *run) recheck(ctx context.Context) error {
	what, err := r.stillDead(ctx)
	if err != nil {
		return err
	}
	if what != "" {
		return &engine.NotYet{Reason: what}
	}
	return nil
}
