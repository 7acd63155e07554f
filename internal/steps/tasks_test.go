package steps

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// fakeTasks is operator.Tasks in memory.
type fakeTasks struct {
	mu      sync.Mutex
	tasks   map[string]*operator.Task
	creates int
}

func (f *fakeTasks) CreateTask(_ context.Context, _ string, t operator.TaskSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tasks == nil {
		f.tasks = map[string]*operator.Task{}
	}
	if _, ok := f.tasks[t.Name]; ok {
		return operator.ErrTaskExists
	}
	f.creates++
	f.tasks[t.Name] = &operator.Task{Name: t.Name, DC: t.DC, Command: t.Command, Rack: t.Rack, OperationID: t.OperationID, Pods: map[string]operator.TaskPod{}}
	return nil
}

func (f *fakeTasks) GetTask(_ context.Context, _, name string) (*operator.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tasks[name]
	if !ok {
		return nil, nil
	}
	c := *t
	return &c, nil
}

func (f *fakeTasks) DeleteTask(_ context.Context, _, name, uid, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.tasks[name]; !ok || t.UID != uid {
		return operator.ErrTaskChanged
	}
	delete(f.tasks, name)
	return nil
}

func (f *fakeTasks) AutoCleanup(context.Context, string, string) (bool, error) { return true, nil }
func (f *fakeTasks) ListTasks(_ context.Context, _, dc string) ([]*operator.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*operator.Task
	for _, t := range f.tasks {
		if t.DC == dc {
			c := *t
			out = append(out, &c)
		}
	}
	return out, nil
}

func (*fakeTasks) TaskResource() schema.GroupResource {
	return schema.GroupResource{Group: "fake.kubectl-cassandra.test", Resource: "faketasks"}
}

// set changes the task name in place.
func (f *fakeTasks) set(name string, change func(t *operator.Task)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f.tasks[name])
}

// taskSetup is setup with a task of pod 2: a cleanup (create-task, wait-cleaned,
// wait-task-done), else a restart's task steps of the library (its wait-restarted is
// restart's own: internal/operation/restart).
func taskSetup(t *testing.T, restart bool) (*fakeTasks, *World, record.Node, map[string]operation.Step) {
	t.Helper()
	_, sw, n := setup(t, "4.1")
	ft := &fakeTasks{}
	sw.Tasks = ft
	sw.CP.OperationID = "restart-20261205-101010-abcde"
	sw.CP.Target.Racks = []string{"rack1"}
	sw.CP.Steps = []record.Step{checkpoint.PendingStep(record.StepCreateTask, ""), checkpoint.PendingStep(record.StepWaitTaskDone, "")}
	if !restart {
		sw.CP.Steps = []record.Step{sw.CP.Steps[0], checkpoint.PendingStep(record.StepWaitCleaned, n.Pod), sw.CP.Steps[1]}
	}
	steps, err := Build(sw, Variant{})
	if err != nil {
		t.Fatal(err)
	}
	return ft, sw, n, steps
}

// TestTaskOf: the task is named after the operation; a restart of one rack sets
// args.rack; a plan that waits for cleaned pods asks for a cleanup (no rack).
func TestTaskOf(t *testing.T) {
	_, sw, _, _ := taskSetup(t, true)
	want := operator.TaskSpec{Name: "restart-20261205-101010-abcde-restart", DC: sw.CP.Cluster, Command: "restart", Rack: "rack1", OperationID: "restart-20261205-101010-abcde"}
	if got := TaskOf(sw.CP); got != want {
		t.Fatalf("restart: %+v, want %+v", got, want)
	}
	_, sw, _, _ = taskSetup(t, false)
	if got := TaskOf(sw.CP); got.Command != "cleanup" || got.Rack != "" || got.Name != "restart-20261205-101010-abcde-cleanup" {
		t.Fatalf("cleanup: %+v", got)
	}
}

// TestCreateTaskDoneAfterCrash: a run that died after the create finds the task by
// name: done, and no second task; a task of that name that is not the operation's
// stops the run.
func TestCreateTaskDoneAfterCrash(t *testing.T) {
	ctx := context.Background()
	ft, sw, _, steps := taskSetup(t, true)
	st := steps[record.StepCreateTask]
	if _, ok := st.(operation.Evident); !ok {
		t.Fatal("create-task should be Evident")
	}
	mustDone(t, st, false)
	if err := st.Do(ctx); err != nil {
		t.Fatal(err)
	}
	// The crash: the checkpoint still says pending. A new run asks the world.
	steps2, err := Build(sw, Variant{})
	if err != nil {
		t.Fatal(err)
	}
	mustDone(t, steps2[record.StepCreateTask], true)
	// Even a repeated Do makes no second task.
	if err := steps2[record.StepCreateTask].Do(ctx); err != nil || ft.creates != 1 {
		t.Fatalf("second Do: %v, creates %d", err, ft.creates)
	}
	// Someone else's task under the planned name.
	ft.set(TaskOf(sw.CP).Name, func(t *operator.Task) { t.OperationID = "other" })
	var fatal *operation.Fatal
	if _, err := st.Done(ctx); !errors.As(err, &fatal) || !strings.Contains(err.Error(), "not operation") {
		t.Fatalf("foreign task: %v", err)
	}
}

// TestWaitCleaned: the pod is done once the task reports it COMPLETED; ERROR stops the
// run; a task finished without the pod stops it too.
func TestWaitCleaned(t *testing.T) {
	ctx := context.Background()
	ft, sw, n, steps := taskSetup(t, false)
	st := steps[record.StepID(record.StepWaitCleaned, n.Pod)]
	if err := steps[record.StepCreateTask].Do(ctx); err != nil {
		t.Fatal(err)
	}
	name := TaskOf(sw.CP).Name
	mustDone(t, st, false)
	ft.set(name, func(t *operator.Task) { t.Pods[n.Pod] = operator.TaskPod{Status: operator.TaskPodRunning} })
	mustDone(t, st, false)
	ft.set(name, func(t *operator.Task) { t.Pods[n.Pod] = operator.TaskPod{Status: operator.TaskPodCompleted} })
	mustDone(t, st, true)
	var fatal *operation.Fatal
	ft.set(name, func(t *operator.Task) {
		t.Pods[n.Pod] = operator.TaskPod{Status: operator.TaskPodError, Error: "no space"}
	})
	if err := st.(engine.Waiter).Wait(ctx); !errors.As(err, &fatal) || !strings.Contains(err.Error(), "no space") {
		t.Fatalf("ERROR: %v", err)
	}
	ft.set(name, func(t *operator.Task) { t.Pods = map[string]operator.TaskPod{}; t.Finished, t.Complete = true, true })
	if err := st.(engine.Waiter).Wait(ctx); !errors.As(err, &fatal) || !strings.Contains(err.Error(), "without cleaning up") {
		t.Fatalf("finished without the pod: %v", err)
	}
}

// fixedScaler is an operator.Scaler whose datacenter's progress is p.
type fixedScaler struct {
	operator.Scaler
	p operator.Progress
}

func (s fixedScaler) Progress(context.Context, string, string, string, string) (operator.Progress, error) {
	return s.p, nil
}

// readyScaler is an operator.Scaler whose datacenter is settled.
func readyScaler() fixedScaler { return fixedScaler{p: operator.Progress{Ready: true, Size: 3}} }

// TestOtherTaskHoldsTheOperator: nothing is asked of the operator while another task
// on the datacenter has not finished (cass-operator #902: its own cleanup after each
// node); the operation's own task, and finished ones, do not hold it.
func TestOtherTaskHoldsTheOperator(t *testing.T) {
	ctx := context.Background()
	ft, sw, _, _ := taskSetup(t, false)
	sw.Scaler = readyScaler()
	ft.tasks = map[string]*operator.Task{"cleanup-0": {Name: "cleanup-0", DC: sw.CP.Cluster, Command: "cleanup"}}
	if _, what, err := sw.operatorMayAct(ctx, ""); what != "" || err != nil {
		t.Fatalf("without HoldForTasks: %q %v", what, err)
	}
	sw.HoldForTasks = true
	ft.tasks = nil
	check := func(want string) {
		t.Helper()
		_, what, err := sw.operatorMayAct(ctx, "")
		if err != nil || !strings.Contains(what, want) || (want == "" && what != "") {
			t.Fatalf("operatorMayAct: %q %v, want %q", what, err, want)
		}
	}
	check("")
	ft.tasks = map[string]*operator.Task{"cleanup-1764928800": {Name: "cleanup-1764928800", DC: sw.CP.Cluster, Command: "cleanup"}}
	check("task cleanup-1764928800 (cleanup) has not finished")
	ft.set("cleanup-1764928800", func(t *operator.Task) { t.Finished = true })
	check("")
	if err := (&createTask{sw}).Do(ctx); err != nil {
		t.Fatal(err)
	}
	check("") // the operation's own task, running
	ft.tasks["other-dc"] = &operator.Task{Name: "other-dc", DC: "elsewhere", Command: "cleanup"}
	check("")
}

// TestOperatorMayActJudgesInOrder: its reads are made at once, and what is wrong is
// judged in the order the checks had one after the other: the operator down first (a
// wait), then its progress (stopped: refused), then another task (a wait).
func TestOperatorMayActJudgesInOrder(t *testing.T) {
	ctx := context.Background()
	ft, sw, _, _ := taskSetup(t, false)
	sw.HoldForTasks = true
	sw.Scaler = fixedScaler{p: operator.Progress{Stopped: true, Size: 3}}
	ft.tasks = map[string]*operator.Task{"cleanup-1": {Name: "cleanup-1", DC: sw.CP.Cluster, Command: "cleanup"}}
	ops := []operator.Controller{{Namespace: "ops", Name: "cass-operator", Replicas: 0}}
	sw.Operators = func(context.Context) ([]operator.Controller, error) { return ops, nil }
	if _, what, err := sw.operatorMayAct(ctx, ""); err != nil || !strings.Contains(what, "the operator is not running") {
		t.Fatalf("operator down, stopped, a task running: %q %v, want the operator down first", what, err)
	}
	ops[0].Replicas, ops[0].IsRunning = 1, true
	var f *operation.Fatal
	if _, what, err := sw.operatorMayAct(ctx, ""); what != "" || !errors.As(err, &f) || !strings.Contains(err.Error(), "is stopped") {
		t.Fatalf("stopped, a task running: %q %v, want the stop refused", what, err)
	}
	sw.Scaler = readyScaler()
	if _, what, err := sw.operatorMayAct(ctx, ""); err != nil || !strings.Contains(what, "task cleanup-1 (cleanup) has not finished") {
		t.Fatalf("a task running: %q %v, want it waited for", what, err)
	}
}

// TestAllRecreated: a restart task gone counts as run only when every planned pod was
// re-created since the plan.
func TestAllRecreated(t *testing.T) {
	nodes := []record.Node{{Pod: "a-0", PodUID: "u0"}, {Pod: "a-1", PodUID: "u1"}}
	for _, c := range []struct {
		uids map[string]string
		want bool
	}{
		{map[string]string{"a-0": "v0", "a-1": "v1"}, true},
		{map[string]string{"a-0": "v0", "a-1": "u1"}, false},
		{map[string]string{"a-0": "v0"}, false},
		{map[string]string{}, false},
	} {
		if got := allRecreated(nodes, c.uids); got != c.want {
			t.Errorf("allRecreated(%v) = %v, want %v", c.uids, got, c.want)
		}
	}
	if allRecreated(nil, nil) || allRecreated([]record.Node{{Pod: "a-0"}}, map[string]string{"a-0": "v"}) {
		t.Error("nothing planned, or no planned UID, counts as re-created")
	}
}

// waitReporter tells the test each time a wait reports what it waits for: the wait
// has read the world and waits for the next change.
type waitReporter struct {
	nopReporter
	waiting chan string
}

func (r waitReporter) Waiting(id, _ string, _ time.Duration) {
	r.waiting <- id
}

// TestTaskWaitsFollowTheWatches: a restart through the operator's task notices each
// pod's return, and the task's end, when the watch delivers it. The poll interval is an
// hour: only the change itself can end these waits before the test's own deadline.
func TestTaskWaitsFollowTheWatches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, sw, n := setup(t, "4.1")
	ft := &fakeTasks{}
	rep := waitReporter{waiting: make(chan string, 100)}
	sw.Tasks, sw.Scaler, sw.Reporter, sw.Poll = ft, readyScaler(), rep, time.Hour
	sw.CP.OperationID = "restart-20261206-101010-abcde"
	sw.CP.Steps = []record.Step{checkpoint.PendingStep(record.StepCreateTask, ""), checkpoint.PendingStep(record.StepWaitTaskDone, "")}
	n.PodUID = w.PodUID(n.Pod)
	sw.CP.Nodes[0] = n
	steps, err := Build(sw, Variant{})
	if err != nil {
		t.Fatal(err)
	}
	fw := fakeWatches{res: watch.NewFake(), tasks: watch.NewFake()}
	sw.Watches = fw
	feed := NewEvidenceFeed(ctx, sw)
	if feed == nil {
		t.Fatal("no feed")
	}
	defer feed.Stop()
	if err := steps[record.StepCreateTask].Do(ctx); err != nil {
		t.Fatal(err)
	}
	// waitFor runs wait (reporting as id) until it reports waiting (it read the world
	// and waits for a change), then changes the world and returns wait's error.
	waitFor := func(id string, wait func() error, change func()) error {
		for len(rep.waiting) > 0 {
			<-rep.waiting
		}
		done := make(chan error, 1)
		go func() { done <- wait() }()
		for waiting := ""; waiting != id; {
			select {
			case waiting = <-rep.waiting:
			case err := <-done:
				t.Fatalf("%s ended before the change: %v", id, err)
			}
		}
		change()
		return <-done
	}

	// The pod comes back (re-created by the StatefulSet controller): its watch event
	// ends the wait (restart's wait-restarted with a task waits so, its test of the pod
	// more than a new UID: internal/operation/restart).
	back := "wait-restarted/" + n.Pod
	recreated := func(_ context.Context, p *corev1.Pod) (bool, string, error) {
		return p != nil && string(p.UID) != n.PodUID, "pod " + n.Pod + " not re-created", nil
	}
	waitBack := func() error {
		return sw.WaitBackWithTask(ctx, n, back, "", recreated, func() error { return nil })
	}
	if err := waitFor(back, waitBack, func() { w.RecreatePod(n.Pod) }); err != nil {
		t.Fatalf("the wait for the pod after it came back: %v", err)
	}

	// The operator writes the task's end: the task's watch event ends the wait.
	name := TaskOf(sw.CP).Name
	if err := waitFor(record.StepWaitTaskDone, func() error { return steps[record.StepWaitTaskDone].(engine.Waiter).Wait(ctx) }, func() {
		ft.set(name, func(t *operator.Task) { t.Started, t.Finished, t.Complete = true, true, true })
		u := &unstructured.Unstructured{}
		u.SetName(name)
		fw.tasks.Modify(u)
	}); err != nil {
		t.Fatalf("wait-task-done after the task finished: %v", err)
	}
	mustDone(t, steps[record.StepWaitTaskDone], true)
}
