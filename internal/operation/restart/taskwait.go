package restart

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// waitTaskRestarted is wait-restarted when the operator restarts the pods (a restart
// task): done only when the world shows the pod re-created (a new UID), Ready, and its
// node UN, whatever the task says. A task finished (or failed) while the pod still has
// its planned UID stops the run: the operator did not restart it.
type waitTaskRestarted struct {
	*waitRestarted
	cp   *record.Checkpoint
	pods steps.PodReader
	task steps.TaskWatch
}

// taskStops says why the wait for the pod ends without it: the task failed, is gone,
// or finished while the pod was not re-created (nil: go on waiting).
func (s *waitTaskRestarted) taskStops(ctx context.Context) error {
	t, spec, err := s.task.Task(ctx)
	if err != nil {
		return nil // unknown: read again next round
	}
	p, err := s.pods.Pod(ctx, s.n.Pod)
	if err != nil {
		return nil
	}
	old := p != nil && string(p.UID) == s.n.PodUID
	switch {
	case t == nil && old:
		return &pub.Fatal{Code: exit.Error, Err: fmt.Errorf("task %s is gone (deleted) and pod %s still has its planned UID %s: it was not restarted; see: kubectl cassandra status -n %s %s",
			spec.Name, s.n.Pod, s.n.PodUID, s.cp.Namespace, s.cp.Cluster)}
	case t == nil:
		return nil
	case t.OperationID != s.cp.OperationID:
		return s.task.ForeignTask(t)
	case t.Failed:
		return s.task.FailedTask(t)
	case t.Finished && old:
		return &pub.Fatal{Code: exit.Error, Err: fmt.Errorf("task %s says it finished (Complete), but pod %s still has its planned UID %s: the operator did not restart it. "+
			"Look at the StatefulSet %s (updateStrategy, status) and the task (kubectl get %s -n %s %s -o yaml); abort this operation and plan again",
			t.Name, s.n.Pod, s.n.PodUID, s.n.StatefulSet, s.task.TaskResource(), s.cp.Namespace, t.Name)}
	}
	return nil
}

// Wait reads the pod and its node as wait-restarted does, and the task between rounds,
// again as soon as the pod or the task changes.
func (s *waitTaskRestarted) Wait(ctx context.Context) error {
	return s.task.WaitBackWithTask(ctx, s.n, record.StepID(StepWaitRestarted, s.n.Pod), s.hint(), s.restarted, func() error { return s.taskStops(ctx) })
}
