package replacenode

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// A replace delegated to the operator (its replacenode task) is watched until the
// operator acts, and withdrawn when what made it safe no longer holds: the operator
// runs the task whenever it gets to it (it may be down, restarting, or running another
// task: one at a time), so the node may come back meanwhile. And the world, not the
// task, says what the operator did: a task gone after its TTL, or one that failed
// before it deleted the pod, is judged by the pod and the claims.

// withdrawable reports whether task t has not reached the pod yet: not finished, not
// Running (the controller writes Running before any pod's job starts, after an
// optimistic update of the task: cassandratask_controller.go processJobs), no pod
// status, and pod p there and not being deleted. Pod p need not be the planned one: a
// pod re-created by someone else (a user, an eviction) while the task waits was not the
// operator's doing, and its node may be the dead one come back. Deleting the task then,
// with the resourceVersion read as precondition (withdraw), stops the operator before it
// touches the node.
func withdrawable(t *operator.Task, p *corev1.Pod) bool {
	return t != nil && !t.Finished && !t.Running && len(t.Pods) == 0 &&
		p != nil && p.DeletionTimestamp == nil
}

// withdraw deletes the operation's task t (its label proves it is the operation's),
// only while it is the object judged: errors.Is operator.ErrTaskChanged when the
// operator wrote it since.
func (r *run) withdraw(ctx context.Context, t *operator.Task) error {
	if t.OperationID != r.w.CP.OperationID {
		return fmt.Errorf("task %s is not operation %s's (label %s=%q): not withdrawn", t.Name, r.w.CP.OperationID, operator.TaskOperationLabel, t.OperationID)
	}
	return r.w.Tasks.DeleteTask(ctx, r.w.CP.Namespace, t.Name, t.UID, t.ResourceVersion)
}

// plannedPod reports whether p is the planned pod, not being deleted: the operator has
// not deleted it.
func (r *run) plannedPod(p *corev1.Pod) bool {
	return p != nil && p.DeletionTimestamp == nil && string(p.UID) == r.n.PodUID
}

// operatorRan reports whether the world shows the operator's replace done to the node:
// every planned claim deleted (gone, or held by pvc-protection) and the pod not the
// planned one. A task gone (deleted after its TTL) is judged by that.
func (r *run) operatorRan(ctx context.Context) (bool, error) {
	if len(r.n.PVCs) == 0 {
		return false, nil
	}
	left, err := r.claimsLeft(ctx)
	if err != nil {
		return false, err
	}
	p, err := r.pod(ctx, r.rep.Pod)
	if err != nil {
		return false, err
	}
	return len(left) == 0 && !r.plannedPod(p), nil
}

// dyingText names the planned claims being deleted, for messages ("" when none is).
func (r *run) dyingText(ctx context.Context) string {
	planned, err := r.plannedClaims(ctx)
	if err != nil {
		return ""
	}
	return strings.Join(dyingClaims(planned), ", ")
}

// taskText says how task t ended, for messages.
func taskText(t *operator.Task, pod string) string {
	out := "Complete"
	if t.Failed {
		out = "Failed: " + t.Message
	}
	if st, ok := t.Pods[pod]; ok {
		out += "; pod status " + st.Status
		if st.Error != "" {
			out += " (" + st.Error + ")"
		}
	}
	return out
}

// watchTask is wait-replaced's look at the task, each round: a node that came back
// before the operator acted has its task withdrawn and stops the run (exit 3); a task
// that finished, or is gone, while the planned pod is still there stops it too (the
// operator will not replace the node). An unknown read says nothing: next round.
func (s *waitReplaced) watchTask(ctx context.Context) error {
	t, err := s.task(ctx)
	var fatal *operation.Fatal
	if errors.As(err, &fatal) {
		return err
	}
	if err != nil {
		return nil
	}
	p, err := s.pod(ctx, s.rep.Pod)
	if err != nil {
		return nil
	}
	switch {
	case withdrawable(t, p):
		_, err := s.stillDead(ctx)
		var alive *aliveError
		if errors.As(err, &alive) {
			return s.withdrawBack(ctx, alive.what)
		}
	case !s.plannedPod(p):
		// The operator deleted the pod: the replacement follows (check judges it).
	case t == nil:
		return &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("task %s is gone (deleted) and pod %s still has its planned UID %s: the operator did not replace the node. %s",
			s.rep.Task, s.rep.Pod, s.n.PodUID, s.notReplacedNext(ctx))}
	case t.Finished:
		return &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("the operator's task %s finished (%s) without deleting pod %s, which still has its planned UID %s: the operator will not replace the node. %s",
			t.Name, taskText(t, s.rep.Pod), s.rep.Pod, s.n.PodUID, s.notReplacedNext(ctx))}
	}
	return nil
}

// withdrawBack withdraws the task of a node found alive (what shows it) and stops the
// run. The task is read again right before (the ring reads took time), and deleted
// only as read then; one the operator wrote since is judged again next round.
func (s *waitReplaced) withdrawBack(ctx context.Context, what string) error {
	t, err := s.task(ctx)
	var fatal *operation.Fatal
	if errors.As(err, &fatal) {
		return err
	}
	p, perr := s.pod(ctx, s.rep.Pod)
	if err != nil || perr != nil || !withdrawable(t, p) {
		return nil
	}
	if err := s.withdraw(ctx, t); err != nil {
		s.w.Reporter.Waiting(s.id(), fmt.Sprintf("%s; task %s not withdrawn yet: %v", what, t.Name, err), 0)
		return nil
	}
	begun := ""
	if t.Started {
		begun = fmt.Sprintf(" The operator had begun the task: its pre-process may have listed pod %s in the datacenter's status.nodeReplacements (condition ReplacingNodes); cass-operator drops it once that pod starts again, or after 30 minutes.", s.rep.Pod)
	}
	cp := s.w.CP
	return &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("%s before the operator acted on task %s: a live node is never replaced, so the task was withdrawn (deleted) and nothing of the node was discarded.%s "+
		"End the operation: kubectl cassandra abort -n %s %s", what, t.Name, begun, cp.Namespace, cp.Cluster)}
}

// notReplacedNext says what state the dead node's data is in and how to go on, when
// the operator left the planned pod in place.
func (s *waitReplaced) notReplacedNext(ctx context.Context) string {
	cp := s.w.CP
	abort := fmt.Sprintf("abort ends the operation (kubectl cassandra abort -n %s %s), then replace-node again asks the operator anew", cp.Namespace, cp.Cluster)
	dying := s.dyingText(ctx)
	if dying == "" {
		return "Nothing of the node was discarded: " + abort + "."
	}
	return fmt.Sprintf("The operator deleted the dead node's claims (%s): kubernetes.io/pvc-protection holds them, and the node's data, until pod %s goes. Either %s, or delete the pod yourself "+
		"(kubectl delete pod -n %s %s): the operator starts the new pod as the replacement, and resume verifies it (kubectl cassandra resume -n %s %s)",
		dying, s.rep.Pod, abort, cp.Namespace, s.rep.Pod, cp.Namespace, cp.Cluster)
}
