package replacenode

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Abort of a replace asked of the operator (its task), judged by the world: a task
// that has not reached the pod is withdrawn (undoTask); one running refuses (the
// operator deletes the node's claims and pod whatever abort does); once the task ended,
// or is gone, abort goes through as long as the operator left the planned pod in place
// (its claims may be deleted already: said loudly), and refuses once the pod was
// deleted (the data is discarded: resume verifies the replacement).

// assessTask is assess for a replace through a task.
func (r *run) assessTask(ctx context.Context, ar operation.AbortReads, p pub.Progress) (pub.Progress, error) {
	t, err := r.task(ctx)
	if err != nil {
		return p, exit.Refusedf("cannot read task %s (%v): abort needs to know what the operator was asked and did; nothing changed", r.rep.Task, err)
	}
	pod, err := r.pod(ctx, r.rep.Pod)
	if err != nil {
		return p, exit.Refusedf("cannot read pod %s (%v): abort needs to know whether the operator deleted it; nothing changed", r.rep.Pod, err)
	}
	switch {
	case withdrawable(t, pod):
		p.Notes = append(p.Notes, fmt.Sprintf("task %s has not reached pod %s (not Running, no pod status): abort withdraws it (deletes it) before the operator acts on it, so nothing of the node is discarded", t.Name, r.rep.Pod))
		return p, nil
	case t != nil && !t.Finished:
		return p, exit.Refusedf("the operator runs task %s on pod %s: it deletes the dead node's claims and pod, so abort cannot undo it; resume finishes the replace: %s", t.Name, r.rep.Pod, ar.ResumeHint)
	}
	planned, err := r.plannedClaims(ctx)
	if err != nil {
		return p, exit.Refusedf("%v: abort needs to know the dead node's claims; nothing changed", err)
	}
	dying := dyingClaims(planned)
	intact := len(planned) == len(r.n.PVCs) && len(dying) == 0
	if !r.plannedPod(pod) && (t != nil || !intact) {
		what := "task " + r.rep.Task + " is gone"
		if t != nil {
			what = fmt.Sprintf("task %s finished (%s)", t.Name, taskText(t, r.rep.Pod))
		}
		return p, exit.Refusedf("%s and pod %s is not the planned one any more (planned UID %s): the operator deleted the dead node's claims and pod, so abort cannot give its data back; resume verifies the replacement and ends the operation: %s",
			what, r.rep.Pod, r.n.PodUID, ar.ResumeHint)
	}
	if len(dying) > 0 {
		state := "its node is still down"
		if alive, _ := r.aliveOn(ctx, ar.Nodetool); alive {
			state = "WARNING: its node runs again, on them"
		}
		p.Notes = append(p.Notes, fmt.Sprintf("the operator deleted the dead node's claims (%s) but not pod %s (%s): kubernetes.io/pvc-protection holds them, with the node's data, until the pod goes (a restart, an eviction, a drain); no API can take a deletion back. "+
			"To replace the node: kubectl cassandra replace-node -n %s %s --pod %s (a new task)", strings.Join(dying, ", "), r.rep.Pod, state, r.w.CP.Namespace, r.w.CP.Cluster, r.rep.Pod))
	}
	if t != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("task %s finished (%s) without deleting pod %s; the operator deletes it after its TTL", t.Name, taskText(t, r.rep.Pod), r.rep.Pod))
	}
	return p, nil
}

// undoTask withdraws the operation's task if it has still not reached the pod (abort's
// undo, the lock proved): deleted with its resourceVersion as precondition, so a task
// the operator started since stays, and abort says to run it again (which refuses).
func undoTask(ctx context.Context, ar operation.AbortReads, cp *record.Checkpoint) (string, error) {
	r := &run{w: &steps.World{Kube: ar.Kube(), CP: cp, Tasks: ar.Tasks}, rep: cp.Replace, n: cp.Nodes[0]}
	t, err := r.task(ctx)
	if err != nil {
		return "", fmt.Errorf("cannot read task %s: %w", r.rep.Task, err)
	}
	if t == nil || t.Finished {
		return "", nil
	}
	pod, err := r.pod(ctx, r.rep.Pod)
	if err != nil {
		return "", fmt.Errorf("cannot read pod %s: %w", r.rep.Pod, err)
	}
	if !withdrawable(t, pod) {
		return "", exit.Refusedf("task %s reached pod %s since abort looked: the operator replaces the node, abort cannot withdraw it", t.Name, r.rep.Pod)
	}
	if err := r.withdraw(ctx, t); err != nil {
		if errors.Is(err, operator.ErrTaskChanged) {
			return "", fmt.Errorf("task %s changed since abort read it (the operator may have started it), so it was not withdrawn: %w", t.Name, err)
		}
		return "", fmt.Errorf("cannot withdraw task %s: %w", t.Name, err)
	}
	return fmt.Sprintf("Withdrew task %s (deleted it) before the operator acted on pod %s.", t.Name, r.rep.Pod), nil
}
