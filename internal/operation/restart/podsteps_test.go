package restart

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/stepworld"
)

// The steps of one pod's restart, each run against a fake world through the steps'
// World (steps.World implements the capabilities they ask for: test/stepworld).

// built is the implementation BuildSteps makes of step kind (the kind's own) about n.
func built(t *testing.T, sw *steps.World, kind string, n record.Node) pub.Step {
	t.Helper()
	sw.CP.Nodes = append(sw.CP.Nodes, n)
	st, err := own(sw)(checkpoint.PendingStep(kind, n.Pod))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestDrainStep(t *testing.T) {
	w, sw := stepworld.World(t, fakeworld.Opts{Nodes: 3}, "restart")
	n := stepworld.Existing(w, 2)
	st := built(t, sw, StepDrain, n)
	stepworld.MustDone(t, sw, st, false)
	stepworld.MustSafe(t, sw, st)
	stepworld.MustDo(t, sw, st)
	stepworld.MustDone(t, sw, st, true)
	stepworld.MustDo(t, sw, st) // idempotent
	if nv, _ := w.Cass.Node(n.Pod); nv.Drains != 1 || nv.PeerCode != "DN" {
		t.Fatalf("node %+v", nv)
	}
	// With this node drained, no other node may be drained.
	stepworld.MustUnsafe(t, sw, built(t, sw, StepDrain, stepworld.Existing(w, 1)), "is DN")
	// Once the pod was replaced, the drain is done (the restart happened).
	stepworld.MustDo(t, sw, built(t, sw, StepDeletePod, n))
	stepworld.MustDone(t, sw, st, true)
}

func TestDeletePodStep(t *testing.T) {
	w, sw := stepworld.World(t, fakeworld.Opts{Nodes: 3}, "restart")
	n := stepworld.Existing(w, 2)
	st := built(t, sw, StepDeletePod, n)
	stepworld.MustDone(t, sw, st, false)
	stepworld.MustUnsafe(t, sw, st, "not DRAINED")
	stepworld.MustDo(t, sw, built(t, sw, StepDrain, n))
	stepworld.MustSafe(t, sw, st)
	stepworld.MustDo(t, sw, st)
	stepworld.MustDone(t, sw, st, true)
	uid := w.PodUID(n.Pod)
	if uid == "" || uid == n.PodUID {
		t.Fatalf("pod UID %q", uid)
	}
	// Idempotent, and the UID precondition spares the new incarnation.
	stepworld.MustDo(t, sw, st)
	if w.PodUID(n.Pod) != uid || w.Incarnations("pod", n.Pod) != 2 {
		t.Fatalf("the new pod was deleted: %q, %d incarnations", w.PodUID(n.Pod), w.Incarnations("pod", n.Pod))
	}
	if v := w.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
}

func TestWaitRestartedStep(t *testing.T) {
	// The world would start the new pod's Cassandra (and turn the pod Ready) an hour
	// after creating it, so the pod stays not Ready until the test starts it, on the
	// step's report that it waits for that: no race with a wall-clock StartTime.
	w, sw := stepworld.World(t, fakeworld.Opts{Nodes: 3, StartTime: time.Hour}, "restart")
	n := stepworld.Existing(w, 1)
	st := built(t, sw, StepWaitRestarted, n)
	if _, ok := st.(*waitRestarted); !ok {
		t.Fatalf("wait-restarted without a task is %T", st)
	}
	stepworld.MustDone(t, sw, st, false) // the old pod
	stepworld.MustDo(t, sw, built(t, sw, StepDrain, n))
	stepworld.MustDo(t, sw, built(t, sw, StepDeletePod, n))
	stepworld.MustDone(t, sw, st, false) // new pod, not Ready, node still down
	if nv, _ := w.Cass.Node(n.Pod); nv.PeerCode != "DN" {
		t.Fatalf("node %+v", nv)
	}
	var waited []string
	sw.Reporter = stepworld.Reporter{OnWaiting: func(what string) {
		if len(waited) == 0 {
			stepworld.StartPod(t, w, n.Pod)
		}
		waited = append(waited, what)
	}}
	if err := st.(engine.Waiter).Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(waited) == 0 || waited[0] != "pod "+n.Pod+": Running, not Ready" {
		t.Fatalf("waited for %q, want first the new pod not Ready", waited)
	}
	stepworld.MustDone(t, sw, st, true)
	if nv, _ := w.Cass.Node(n.Pod); nv.PeerCode != "UN" || nv.Restarts != 1 {
		t.Fatalf("node %+v", nv)
	}
}

// fakeTasks is operator.Tasks in memory.
type fakeTasks struct {
	mu    sync.Mutex
	tasks map[string]*operator.Task
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

func (f *fakeTasks) DeleteTask(context.Context, string, string, string, string) error { return nil }
func (f *fakeTasks) AutoCleanup(context.Context, string, string) (bool, error)        { return true, nil }
func (f *fakeTasks) ListTasks(context.Context, string, string) ([]*operator.Task, error) {
	return nil, nil
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

// taskRestart is a restart of pod 2 through the operator's task (create-task,
// wait-restarted, wait-task-done), its steps built by BuildSteps.
func taskRestart(t *testing.T) (*fakeworld.World, *fakeTasks, *steps.World, record.Node, map[string]pub.Step) {
	t.Helper()
	w, sw := stepworld.World(t, fakeworld.Opts{Nodes: 3}, "restart")
	n := stepworld.Existing(w, 2)
	ft := &fakeTasks{}
	sw.Tasks = ft
	sw.CP.OperationID = "restart-20261205-101010-abcde"
	sw.CP.Nodes = []record.Node{n}
	sw.CP.Steps = TaskSteps(sw.CP.Nodes)
	out, err := (Kind{}).BuildSteps(sw.ForKind())
	if err != nil {
		t.Fatal(err)
	}
	return w, ft, sw, n, out
}

// TestWaitRestartedRefusesCompleteTask: the task says Complete but the pod was never
// re-created: not done, and the wait stops naming the pod; a failed task stops it too.
func TestWaitRestartedRefusesCompleteTask(t *testing.T) {
	ctx := context.Background()
	_, ft, sw, n, built := taskRestart(t)
	st := built[record.StepID(StepWaitRestarted, n.Pod)]
	if _, ok := st.(*waitTaskRestarted); !ok {
		t.Fatalf("wait-restarted of a task is %T", st)
	}
	if err := built[record.StepCreateTask].Do(ctx); err != nil {
		t.Fatal(err)
	}
	name := steps.TaskOf(sw.CP).Name
	ft.set(name, func(t *operator.Task) { t.Started, t.Finished, t.Complete = true, true, true })
	stepworld.MustDone(t, sw, st, false)
	var fatal *pub.Fatal
	err := st.(engine.Waiter).Wait(ctx)
	if !errors.As(err, &fatal) || !strings.Contains(err.Error(), "did not restart it") || !strings.Contains(err.Error(), n.Pod) {
		t.Fatalf("Wait: %v", err)
	}
	// A failed task stops the wait too, naming the pods' statuses.
	ft.set(name, func(t *operator.Task) { t.Failed, t.Message = true, "1 pods failed" })
	if err := st.(engine.Waiter).Wait(ctx); !errors.As(err, &fatal) || !strings.Contains(err.Error(), "failed (1 pods failed)") {
		t.Fatalf("Wait on a failed task: %v", err)
	}
}

// TestWaitRestartedDoneInWorld: the pod re-created with its node UN is done, whatever
// the task says yet; the task's end is then waited for (Complete; Failed is an error).
func TestWaitRestartedDoneInWorld(t *testing.T) {
	ctx := context.Background()
	w, ft, sw, n, built := taskRestart(t)
	if err := built[record.StepCreateTask].Do(ctx); err != nil {
		t.Fatal(err)
	}
	st := built[record.StepID(StepWaitRestarted, n.Pod)]
	stepworld.MustDone(t, sw, st, false)
	w.RecreatePod(n.Pod)
	if err := st.(engine.Waiter).Wait(ctx); err != nil {
		t.Fatalf("Wait after the re-create: %v", err)
	}
	stepworld.MustDone(t, sw, st, true)
	done := built[record.StepWaitTaskDone]
	stepworld.MustDone(t, sw, done, false)
	name := steps.TaskOf(sw.CP).Name
	ft.set(name, func(t *operator.Task) { t.Started, t.Finished, t.Complete = true, true, true })
	stepworld.MustDone(t, sw, done, true)
	ft.set(name, func(t *operator.Task) {
		t.Failed, t.Message, t.Pods = true, "1 pods failed during processing", map[string]operator.TaskPod{"p": {Status: "ERROR", Error: "boom"}}
	})
	stepworld.MustDone(t, sw, done, false)
	var fatal *pub.Fatal
	if err := done.(engine.Waiter).Wait(ctx); !errors.As(err, &fatal) || !strings.Contains(err.Error(), "p ERROR (boom)") {
		t.Fatalf("failed task: %v", err)
	}
}
