package replacenode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// Where the operator replaces nodes itself (cass-operator's replacenode CassandraTask:
// it drains the node if up, deletes its claims and pod, and starts the new pod with the
// dead node's address as replace address; docs/how-it-works/replace.md §8), the plugin
// asks it once the node is still dead, then verifies the replacement itself: the task
// completes as soon as the pod is deleted, whatever follows (cass-operator #748).

// taskSpec is the operation's task: named from the operation's ID, so every run finds it.
func (r *run) taskSpec() operator.TaskSpec {
	cp := r.w.CP
	return operator.TaskSpec{Name: r.rep.Task, DC: cp.Cluster, Command: operator.TaskReplaceNode, Pod: r.rep.Pod, OperationID: cp.OperationID}
}

// task reads the operation's task (nil: none); one of its name that is not the
// operation's stops the run.
func (r *run) task(ctx context.Context) (*operator.Task, error) {
	if r.w.Tasks == nil {
		return nil, errors.New("this replace runs as a task of the operator, and the operator read has no tasks")
	}
	t, err := r.w.Tasks.GetTask(ctx, r.w.CP.Namespace, r.rep.Task)
	if err != nil || t == nil {
		return t, err
	}
	if t.OperationID != r.w.CP.OperationID {
		return nil, &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("a task named %s exists in namespace %s, but it is not operation %s's (label %s=%q): nothing was created; look at it, then abort this operation and plan again",
			t.Name, r.w.CP.Namespace, r.w.CP.OperationID, operator.TaskOperationLabel, t.OperationID)}
	}
	return t, nil
}

// createTask asks the operator to replace the node, once it is still dead right then.
type createTask struct{ *run }

func (s *createTask) Describe() string {
	return "create task " + s.rep.Task + " (replacenode " + s.rep.Pod + ")"
}

// PlanText implements steps.PlanTexter.
func (s *createTask) PlanText() string {
	t := s.taskSpec()
	return fmt.Sprintf("create CassandraTask %s on datacenter %s (command replacenode, args.pod_name %s, label %s=%s), once the node is still DN and its nodetool does not answer: "+
		"the operator deletes the pod's claims and the pod, and starts the new pod with replace address %s (the data discarded is the dead node's only)",
		t.Name, t.DC, t.Pod, operator.TaskOperationLabel, t.OperationID, s.rep.Address)
}

// Done: the task exists (it is the operation's), or it is gone and the world shows
// the operator ran it (operatorRan: a finished task is deleted after its TTL, maybe
// before a resume); the replacement is verified next. Never asked again then.
func (s *createTask) Done(ctx context.Context) (bool, error) {
	t, err := s.task(ctx)
	if err != nil || t != nil {
		return t != nil, err
	}
	ran, err := s.operatorRan(ctx)
	if ran {
		s.w.Reporter.Warn(StepCreateReplaceTask+"/"+s.rep.Pod, fmt.Sprintf("task %s is gone (deleted after its TTL?), and the dead node's claims and pod %s were deleted since the plan: the operator ran it; it is not created again, the replacement is verified next",
			s.rep.Task, s.rep.Pod))
	}
	return ran, err
}

func (s *createTask) Safe(ctx context.Context) error {
	return s.w.WaitSafe(ctx, StepCreateReplaceTask+"/"+s.rep.Pod, func() (string, error) { return s.stillDead(ctx) })
}

// Recheck implements engine.Rechecker.
func (s *createTask) Recheck(ctx context.Context) error { return s.recheck(ctx) }

func (s *createTask) Do(ctx context.Context) error {
	err := s.w.Tasks.CreateTask(ctx, s.w.CP.Namespace, s.taskSpec())
	if err == nil || errors.Is(err, operator.ErrTaskExists) {
		return nil // Done says whose it is
	}
	return &operation.Retryable{Err: err}
}

func (s *createTask) Evident() {}

// waitTask waits until the task finished. The replacement was verified before
// (wait-replaced): this only keeps the operator's record and the world in step, so a
// task that failed is a warning (the operator may fail its task after it deleted the
// pod: a job its process died in).
type waitTask struct{ *run }

func (s *waitTask) Describe() string { return "wait until task " + s.rep.Task + " has finished" }

func (s *waitTask) Done(ctx context.Context) (bool, error) {
	t, err := s.task(ctx)
	if err != nil {
		return false, err
	}
	if t == nil {
		// Deleted after its TTL: the replacement was verified before this step.
		return true, nil
	}
	if t.Failed {
		s.w.Reporter.Warn(StepWaitTask+"/"+s.rep.Pod, fmt.Sprintf("the operator's task %s finished (%s), although the replacement was verified in the ring: the node is replaced; see why: kubectl get %s -n %s %s -o yaml",
			t.Name, taskText(t, s.rep.Pod), s.w.Tasks.TaskResource(), s.w.CP.Namespace, t.Name))
		return true, nil
	}
	return t.Finished && t.Complete, nil
}

func (s *waitTask) Safe(context.Context) error { return nil }
func (s *waitTask) Do(context.Context) error   { return nil }
func (s *waitTask) Evident()                   {}
func (s *waitTask) Passive()                   {}

// Wait polls the task.
func (s *waitTask) Wait(ctx context.Context) error {
	start := time.Now()
	for {
		ok, err := s.Done(ctx)
		var fatal *operation.Fatal
		if ok || errors.As(err, &fatal) {
			return err
		}
		s.w.Reporter.Waiting(StepWaitTask+"/"+s.rep.Pod, "task "+s.rep.Task+" has not finished", time.Since(start))
		if err := s.w.SleepPoll(ctx); err != nil {
			return err
		}
	}
}
