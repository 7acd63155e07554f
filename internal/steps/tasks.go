package steps

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TaskStepKinds are the step kinds above, for the schemas of the kinds that use them.
var TaskStepKinds = []string{record.StepCreateTask, record.StepWaitCleaned, record.StepWaitTaskDone}

// TaskOf is the task checkpoint cp's operation creates: a restart when its steps create
// a task and wait for no cleaned pod (restart's steps wait for restarted pods instead:
// internal/operation/restart; args.rack when it restarts one rack), else a cleanup. It
// is derived from the checkpoint alone, so every run asks for the same task.
func TaskOf(cp *record.Checkpoint) operator.TaskSpec {
	t := operator.TaskSpec{Command: operator.TaskCleanup, DC: cp.Cluster, OperationID: cp.OperationID}
	cleans := false
	for _, s := range cp.Steps {
		cleans = cleans || s.Kind == record.StepWaitCleaned
	}
	if _, created := cp.Step(record.StepCreateTask); created && !cleans {
		t.Command = operator.TaskRestart
		if len(cp.Target.Racks) == 1 {
			t.Rack = cp.Target.Racks[0]
		}
	}
	t.Name = operator.TaskName(cp.OperationID, t.Command)
	return t
}

// tasks is the operator's task interface, or an error saying this world has none.
func (w *World) tasks() (operator.Tasks, error) {
	if w.Tasks == nil {
		return nil, errors.New("this operation runs as a task of the operator, and the operator read has no tasks")
	}
	return w.Tasks, nil
}

// task reads the operation's task (nil when it does not exist).
func (w *World) task(ctx context.Context) (*operator.Task, operator.TaskSpec, error) {
	spec := TaskOf(w.CP)
	ts, err := w.tasks()
	if err != nil {
		return nil, spec, err
	}
	t, err := ts.GetTask(ctx, w.CP.Namespace, spec.Name)
	return t, spec, err
}

// taskResource names the task resource for kubectl commands in messages.
func (w *World) taskResource() string {
	if w.Tasks == nil {
		return "tasks"
	}
	return w.Tasks.TaskResource().String()
}

// foreign is the error for a task of the planned name that is not the operation's.
func (w *World) foreign(t *operator.Task) error {
	return &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("a task named %s exists in namespace %s, but it is not operation %s's (label %s=%q): nothing was created. "+
		"Look at it (kubectl get %s -n %s %s -o yaml); abort this operation and plan again",
		t.Name, w.CP.Namespace, w.CP.OperationID, operator.TaskOperationLabel, t.OperationID, w.taskResource(), w.CP.Namespace, t.Name)}
}

// podsText says the task's pod states, sorted, for errors.
func podsText(t *operator.Task) string {
	if len(t.Pods) == 0 {
		return "no pod statuses"
	}
	var out []string
	for p, st := range t.Pods {
		s := p + " " + st.Status
		if st.Error != "" {
			s += " (" + st.Error + ")"
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return "pod statuses: " + strings.Join(out, ", ")
}

// failedTask is the error for a task that failed.
func (w *World) failedTask(t *operator.Task) error {
	return &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("the operator's task %s failed (%s); %s. See: kubectl get %s -n %s %s -o yaml; fix the cause, then abort this operation and plan again",
		t.Name, t.Message, podsText(t), w.taskResource(), w.CP.Namespace, t.Name)}
}

// createTask creates the operation's task. The task's existence shows it was created
// (Evident); one of the planned name that is not the operation's stops the run.
type createTask struct {
	w *World
}

func (s *createTask) id() string { return record.StepCreateTask }

// Describe implements engine.Describer.
func (s *createTask) Describe() string {
	t := TaskOf(s.w.CP)
	return fmt.Sprintf("create task %s (%s)", t.Name, t.Command)
}

// PlanText implements PlanTexter.
func (s *createTask) PlanText() string {
	t := TaskOf(s.w.CP)
	what := "command " + t.Command
	if t.Rack != "" {
		what += ", args.rack " + t.Rack
	}
	var does string
	switch t.Command {
	case operator.TaskRestart:
		does = "the operator rolls the racks' StatefulSets, one rack at a time in name order; each pod is re-created, highest ordinal first"
	default:
		does = "the operator runs a cleanup on every pod of the datacenter, rack by rack, one pod at a time"
	}
	return fmt.Sprintf("create CassandraTask %s on datacenter %s (%s, concurrencyPolicy Forbid, label %s=%s), once the operator is Ready and every node UN: %s",
		t.Name, t.DC, what, operator.TaskOperationLabel, t.OperationID, does)
}

// Done: the task exists and is the operation's (or the checkpoint records the step
// done: a finished task may be gone since, deleted after its TTL). The create is
// evident, so its done mark may never have reached the server: a restart task gone is
// judged by the world too (restartedSincePlan), never created a second time for pods
// the operator restarted already.
func (s *createTask) Done(ctx context.Context) (bool, error) {
	if s.w.recordDone(s.id()) {
		return true, nil
	}
	t, spec, err := s.w.task(ctx)
	switch {
	case err != nil:
		return false, err
	case t == nil && spec.Command == operator.TaskRestart:
		done, err := s.restartedSincePlan(ctx)
		if done {
			s.w.Reporter.Warn(s.id(), fmt.Sprintf("task %s is gone (deleted after its TTL?), and every pod of the restart was re-created since the plan: the operator ran it; it is not created again, each pod is verified next", spec.Name))
		}
		return done, err
	case t == nil:
		return false, nil
	case t.OperationID != s.w.CP.OperationID:
		return false, s.w.foreign(t)
	}
	return true, nil
}

// restartedSincePlan reports whether every pod the restart planned exists with a UID
// other than the planned one (re-created since the plan).
func (s *createTask) restartedSincePlan(ctx context.Context) (bool, error) {
	uids := map[string]string{}
	for _, n := range s.w.CP.Nodes {
		p, err := s.w.getPod(ctx, n.Pod)
		if err != nil {
			return false, err
		}
		if p != nil {
			uids[n.Pod] = string(p.UID)
		}
	}
	return allRecreated(s.w.CP.Nodes, uids), nil
}

// allRecreated reports whether every node's pod has a UID (uids: pod -> UID now, absent
// when the pod is gone) other than its planned one; false when nothing is planned.
func allRecreated(nodes []record.Node, uids map[string]string) bool {
	for _, n := range nodes {
		uid, ok := uids[n.Pod]
		if !ok || n.PodUID == "" || uid == n.PodUID {
			return false
		}
	}
	return len(nodes) > 0
}

// Safe: the operator runs, is not stopped, not resizing, reports the datacenter Ready,
// and no task of the planned name belongs to someone else; the ring is checked right
// before the create (Recheck).
func (s *createTask) Safe(ctx context.Context) error {
	return s.w.waitSafe(ctx, s.id(), func() (string, error) {
		if s.w.Scaler != nil {
			p, what, err := s.w.operatorMayAct(ctx, "")
			if what != "" || err != nil {
				return what, err
			}
			if !p.Ready {
				return "the operator does not report the datacenter Ready yet", nil
			}
		}
		t, _, err := s.w.task(ctx)
		switch {
		case err != nil:
			return "cannot read the task: " + err.Error(), nil
		case t != nil && t.OperationID != s.w.CP.OperationID:
			return "", s.w.foreign(t)
		}
		return s.w.ringSafeAt(ctx, s.id(), s.w.CP.Target.DC, "", "")
	})
}

// Recheck implements engine.Rechecker: the ring, read right before the create.
func (s *createTask) Recheck(ctx context.Context) error {
	return s.w.recheckRing(ctx, s.id(), s.w.CP.Target.DC, "", "")
}

// Do creates the task; one that exists already is left to Done (it says whose it is).
func (s *createTask) Do(ctx context.Context) error {
	if err := s.w.refuseDeleting(s.id()); err != nil {
		return err
	}
	ts, err := s.w.tasks()
	if err != nil {
		return err
	}
	ctx, cancel := writeContext(ctx)
	defer cancel()
	err = ts.CreateTask(ctx, s.w.CP.Namespace, TaskOf(s.w.CP))
	if err == nil || errors.Is(err, operator.ErrTaskExists) {
		return nil
	}
	return &operation.Retryable{Err: err}
}

// Evident implements engine.Evident: the task's existence shows the create.
func (s *createTask) Evident() {}

// taskWait is what the steps that follow a task share: they change nothing.
type taskWait struct{ w *World }

// Safe: nothing is changed by a waiting step.
func (taskWait) Safe(context.Context) error { return nil }

// Do: nothing; the operator acts.
func (taskWait) Do(context.Context) error { return nil }

// Evident implements engine.Evident: it does not act.
func (taskWait) Evident() {}

// Passive implements engine.Passive.
func (taskWait) Passive() {}

// waitTaskDone waits until the task finished: completionTime set, Complete, not Failed.
type waitTaskDone struct{ taskWait }

// Describe implements engine.Describer.
func (s *waitTaskDone) Describe() string {
	return "wait until task " + TaskOf(s.w.CP).Name + " has finished, Complete and not Failed"
}

// PlanText implements PlanTexter.
func (s *waitTaskDone) PlanText() string {
	return "wait until task " + TaskOf(s.w.CP).Name + " has finished (status.completionTime set, condition Complete; Failed stops the run, naming the pods' statuses)"
}

// Done: the task finished Complete and did not fail. A task gone (deleted after its
// TTL) counts only when every step before this one is recorded done: each pod was
// verified in the world.
func (s *waitTaskDone) Done(ctx context.Context) (bool, error) {
	t, _, err := s.w.task(ctx)
	if err != nil {
		return false, err
	}
	ok, err := s.judge(t)
	return ok && err == nil, nil
}

// judge says whether t finished well; an error when it never will.
func (s *waitTaskDone) judge(t *operator.Task) (bool, error) {
	switch {
	case t == nil:
		for _, st := range s.w.CP.Steps {
			if st.Kind != record.StepWaitTaskDone && st.State != record.StateDone {
				return false, &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("task %s is gone (deleted) before step %s was done: what the operator did is unknown; see: kubectl cassandra status -n %s %s",
					TaskOf(s.w.CP).Name, st.ID, s.w.CP.Namespace, s.w.CP.Cluster)}
			}
		}
		s.w.Reporter.Warn(record.StepWaitTaskDone, fmt.Sprintf("task %s is gone (deleted after its TTL?); every pod was verified before it went", TaskOf(s.w.CP).Name))
		return true, nil
	case t.OperationID != s.w.CP.OperationID:
		return false, s.w.foreign(t)
	case t.Failed:
		return false, s.w.failedTask(t)
	}
	return t.Finished && t.Complete, nil
}

// Wait reads the task until it finished, again as soon as it changes (awaitEvidence:
// the task's end is seen when the operator writes it, not a poll interval later).
func (s *waitTaskDone) Wait(ctx context.Context) error {
	start := s.w.Clock()
	for {
		since := s.w.markEvidence()
		t, _, err := s.w.task(ctx)
		what := ""
		if err != nil {
			what = "cannot read the task: " + err.Error()
		} else {
			ok, err := s.judge(t)
			if err != nil || ok {
				return err
			}
			what = "task " + t.Name + " has not finished"
			if !t.Started {
				what += " (not started: the operator runs one task at a time)"
			}
		}
		s.w.Reporter.Waiting(record.StepWaitTaskDone, what, s.w.Clock().Sub(start))
		if err := s.w.awaitEvidence(ctx, since, s.w.poll(), s.w.unknownDue(what, 0), keyTask(TaskOf(s.w.CP).Name)); err != nil {
			return err
		}
	}
}

// waitCleaned waits until the cleanup task reports the pod COMPLETED
// (status.podStatuses: internal/controllers/control/cassandratask_controller.go
// checkRackCompletion).
type waitCleaned struct{ driven }

func (*waitCleaned) kind() string { return record.StepWaitCleaned }

// Describe implements engine.Describer.
func (s *waitCleaned) Describe() string {
	return "wait until task " + TaskOf(s.w.CP).Name + " has cleaned up " + s.n.Pod
}

// PlanText implements PlanTexter.
func (s *waitCleaned) PlanText() string {
	return "wait until task " + TaskOf(s.w.CP).Name + " reports " + s.n.Pod + " COMPLETED (ERROR stops the run)"
}

// cleaned reads the task: whether it reports the pod COMPLETED, what it waits for
// otherwise, and an error when it never will.
func (s *waitCleaned) cleaned(ctx context.Context) (bool, string, error) {
	t, spec, err := s.w.task(ctx)
	switch {
	case err != nil:
		return false, "cannot read the task: " + err.Error(), nil
	case t == nil:
		return false, "", &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("task %s is gone (deleted) before it reported %s cleaned up; see: kubectl cassandra status -n %s %s", spec.Name, s.n.Pod, s.w.CP.Namespace, s.w.CP.Cluster)}
	case t.OperationID != s.w.CP.OperationID:
		return false, "", s.w.foreign(t)
	}
	st := t.Pods[s.n.Pod]
	switch {
	case st.Status == operator.TaskPodCompleted:
		return true, "", nil
	case st.Status == operator.TaskPodError:
		return false, "", &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("task %s failed on %s: %s; %s. Run a cleanup on it again once the cause is fixed", t.Name, s.n.Pod, st.Error, podsText(t))}
	case t.Failed:
		return false, "", s.w.failedTask(t)
	case t.Finished:
		return false, "", &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("task %s finished without cleaning up %s (%s): the pod was not in the datacenter when the task ran? Run a cleanup on it", t.Name, s.n.Pod, podsText(t))}
	case st.Status == "":
		return false, "task " + t.Name + " has not reached " + s.n.Pod + " yet", nil
	}
	return false, "task " + t.Name + ": " + s.n.Pod + " is " + st.Status, nil
}

// Done: the task reports the pod COMPLETED.
func (s *waitCleaned) Done(ctx context.Context) (bool, error) {
	ok, what, err := s.cleaned(ctx)
	if err == nil && !ok && strings.HasPrefix(what, "cannot read") {
		return false, errors.New(what)
	}
	return ok, nil
}

// Wait polls the task.
func (s *waitCleaned) Wait(ctx context.Context) error {
	return s.poll(ctx, record.StepID(record.StepWaitCleaned, s.n.Pod), []string{keyTask(TaskOf(s.w.CP).Name)}, func() (bool, string, error) { return s.cleaned(ctx) })
}

// WaitBackWithTask implements TaskWatch: the wait of a pod the operator re-creates
// through the operation's task (restart's wait-restarted with a task).
func (w *World) WaitBackWithTask(ctx context.Context, n record.Node, id, hint string, test BackTest, stops func() error) error {
	back := waiting{node{w, n}}
	start := w.Clock()
	stall := &stallWatch{w: w, id: id, start: start}
	for {
		since := w.markEvidence()
		ok, what, err := back.readBack(ctx, test)
		if ok {
			return nil
		}
		if err != nil {
			what = "state unknown: " + err.Error()
		}
		if err := stops(); err != nil {
			return err
		}
		w.Reporter.Waiting(id, what, w.Clock().Sub(start))
		stall.check(what, hint)
		if err := w.awaitEvidence(ctx, since, w.poll(), w.backDue(what), keyPod(n.Pod), keyTask(TaskOf(w.CP).Name)); err != nil {
			return fmt.Errorf("pod %s is not back: %s; %s", n.Pod, what, hint)
		}
	}
}
