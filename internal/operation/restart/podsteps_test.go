package restart

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// The steps of one pod's restart, each run against a fake world through the steps'
// World (steps.World implements the capabilities they ask for).

// reporter records nothing; onWaiting, when set, is called after each Waiting (a test
// acts on what the step reported, not at a wall-clock deadline).
type reporter struct{ onWaiting func(what string) }

func (reporter) StepStarted(string, string, int)  {}
func (reporter) StepDone(string, string, bool)    {}
func (reporter) StepFailed(string, string, error) {}
func (reporter) Warn(string, string)              {}
func (r reporter) Waiting(_, what string, _ time.Duration) {
	if r.onWaiting != nil {
		r.onWaiting(what)
	}
}

// stepWorld is a fake world of o and the steps' World for a restart of rack1.
func stepWorld(t *testing.T, o fakeworld.Opts) (*fakeworld.World, *steps.World) {
	t.Helper()
	w := fakeworld.New(t, o)
	cp := &record.Checkpoint{Kind: "restart", Namespace: w.NS, Cluster: w.Name, Target: record.Target{DC: "dc1", Racks: []string{"rack1"}, Nodes: o.Nodes}}
	a := w.Adapter()
	sw := &steps.World{Kube: w.Kube, Nodetool: nodetool.Client{Exec: w}, Namespace: w.NS, ClusterSelector: a.ClusterSelector(w.Name),
		Racks: []topology.Rack{{DC: "dc1", Name: "rack1", StatefulSet: w.STS("rack1")}}, CountWords: a.CountWords(), Container: a.Container(), CP: cp, Reporter: reporter{}, Poll: time.Millisecond, ServerVersion: "4.1.0",
		Spec:     a.DCSpec(w.NS, w.Name, "dc1"),
		Operator: a.OperatorStatus(w.NS, w.Name, nil),
		// A safety check that is not met waits; the tests want its answer soon.
		StallAfter: 30 * time.Millisecond}
	return w, sw
}

// existing describes a pod of the initial world.
func existing(w *fakeworld.World, ordinal int) record.Node {
	pod := w.Pod("rack1", ordinal)
	nv, _ := w.Cass.Node(pod)
	return record.Node{Pod: pod, PodUID: w.PodUID(pod), Ordinal: ordinal, DC: "dc1", Rack: "rack1", StatefulSet: w.STS("rack1"),
		HostID: nv.HostID, Address: nv.Address, PVCs: []record.PVC{{Name: "storage-" + pod, UID: "pvc-storage-" + pod}}}
}

// built is the implementation BuildSteps makes of step kind about n.
func built(t *testing.T, sw *steps.World, kind string, n record.Node) pub.Step {
	t.Helper()
	sw.CP.Nodes = append(sw.CP.Nodes, n)
	st, err := buildStep(sw, checkpoint.PendingStep(kind, n.Pod))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The checks below forget what the World read before (the engine forgets whenever the
// run waits; a test changes the world between two questions without waiting).

func mustDone(t *testing.T, sw *steps.World, st pub.Step, want bool) {
	t.Helper()
	sw.Forget()
	got, err := st.Done(context.Background())
	if err != nil {
		t.Fatalf("%T.Done: %v", st, err)
	}
	if got != want {
		t.Fatalf("%T.Done = %v, want %v", st, got, want)
	}
}

func mustSafe(t *testing.T, sw *steps.World, st pub.Step) {
	t.Helper()
	sw.Forget()
	if err := st.Safe(context.Background()); err != nil {
		t.Fatalf("%T.Safe: %v", st, err)
	}
}

func mustUnsafe(t *testing.T, sw *steps.World, st pub.Step, want string) {
	t.Helper()
	sw.Forget()
	// A step with a Recheck (engine.Rechecker) checks the ring there, right before it
	// acts: Safe, then Recheck, is what the engine asks.
	err := st.Safe(context.Background())
	if rc, ok := st.(engine.Rechecker); ok && err == nil {
		err = rc.Recheck(context.Background())
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%T.Safe/Recheck = %v, want an error saying %q", st, err, want)
	}
}

func mustDo(t *testing.T, sw *steps.World, st pub.Step) {
	t.Helper()
	sw.Forget()
	if err := st.Do(context.Background()); err != nil {
		t.Fatalf("%T.Do: %v", st, err)
	}
}

func TestDrainStep(t *testing.T) {
	w, sw := stepWorld(t, fakeworld.Opts{Nodes: 3})
	n := existing(w, 2)
	st := built(t, sw, StepDrain, n)
	mustDone(t, sw, st, false)
	mustSafe(t, sw, st)
	mustDo(t, sw, st)
	mustDone(t, sw, st, true)
	mustDo(t, sw, st) // idempotent
	if nv, _ := w.Cass.Node(n.Pod); nv.Drains != 1 || nv.PeerCode != "DN" {
		t.Fatalf("node %+v", nv)
	}
	// With this node drained, no other node may be drained.
	mustUnsafe(t, sw, built(t, sw, StepDrain, existing(w, 1)), "is DN")
	// Once the pod was replaced, the drain is done (the restart happened).
	mustDo(t, sw, built(t, sw, StepDeletePod, n))
	mustDone(t, sw, st, true)
}

func TestDeletePodStep(t *testing.T) {
	w, sw := stepWorld(t, fakeworld.Opts{Nodes: 3})
	n := existing(w, 2)
	st := built(t, sw, StepDeletePod, n)
	mustDone(t, sw, st, false)
	mustUnsafe(t, sw, st, "not DRAINED")
	mustDo(t, sw, built(t, sw, StepDrain, n))
	mustSafe(t, sw, st)
	mustDo(t, sw, st)
	mustDone(t, sw, st, true)
	uid := w.PodUID(n.Pod)
	if uid == "" || uid == n.PodUID {
		t.Fatalf("pod UID %q", uid)
	}
	// Idempotent, and the UID precondition spares the new incarnation.
	mustDo(t, sw, st)
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
	w, sw := stepWorld(t, fakeworld.Opts{Nodes: 3, StartTime: time.Hour})
	n := existing(w, 1)
	st := built(t, sw, StepWaitRestarted, n)
	if _, ok := st.(*waitRestarted); !ok {
		t.Fatalf("wait-restarted without a task is %T", st)
	}
	mustDone(t, sw, st, false) // the old pod
	mustDo(t, sw, built(t, sw, StepDrain, n))
	mustDo(t, sw, built(t, sw, StepDeletePod, n))
	mustDone(t, sw, st, false) // new pod, not Ready, node still down
	if nv, _ := w.Cass.Node(n.Pod); nv.PeerCode != "DN" {
		t.Fatalf("node %+v", nv)
	}
	var waited []string
	sw.Reporter = reporter{onWaiting: func(what string) {
		if len(waited) == 0 {
			startPod(t, w, n.Pod)
		}
		waited = append(waited, what)
	}}
	if err := st.(engine.Waiter).Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(waited) == 0 || waited[0] != "pod "+n.Pod+": Running, not Ready" {
		t.Fatalf("waited for %q, want first the new pod not Ready", waited)
	}
	mustDone(t, sw, st, true)
	if nv, _ := w.Cass.Node(n.Pod); nv.PeerCode != "UN" || nv.Restarts != 1 {
		t.Fatalf("node %+v", nv)
	}
}

// startPod starts the Cassandra of a pod the world created not Ready (fakeworld.Opts.StartTime)
// and turns the pod Ready, as the world does once StartTime passed: the kubelet's
// doing, written to the tracker behind the plugin's back.
func startPod(t *testing.T, w *fakeworld.World, pod string) {
	t.Helper()
	if err := w.Cass.Restart(pod); err != nil {
		t.Fatal(err)
	}
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	obj, err := w.Kube.Tracker().Get(gvr, w.NS, pod)
	if err != nil {
		t.Fatal(err)
	}
	p := obj.(*corev1.Pod).DeepCopy()
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if err := w.Kube.Tracker().Update(gvr, p, w.NS); err != nil {
		t.Fatal(err)
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
	w, sw := stepWorld(t, fakeworld.Opts{Nodes: 3})
	n := existing(w, 2)
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
	mustDone(t, sw, st, false)
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
	mustDone(t, sw, st, false)
	w.RecreatePod(n.Pod)
	if err := st.(engine.Waiter).Wait(ctx); err != nil {
		t.Fatalf("Wait after the re-create: %v", err)
	}
	mustDone(t, sw, st, true)
	done := built[record.StepWaitTaskDone]
	mustDone(t, sw, done, false)
	name := steps.TaskOf(sw.CP).Name
	ft.set(name, func(t *operator.Task) { t.Started, t.Finished, t.Complete = true, true, true })
	mustDone(t, sw, done, true)
	ft.set(name, func(t *operator.Task) {
		t.Failed, t.Message, t.Pods = true, "1 pods failed during processing", map[string]operator.TaskPod{"p": {Status: "ERROR", Error: "boom"}}
	})
	mustDone(t, sw, done, false)
	var fatal *pub.Fatal
	if err := done.(engine.Waiter).Wait(ctx); !errors.As(err, &fatal) || !strings.Contains(err.Error(), "p ERROR (boom)") {
		t.Fatalf("failed task: %v", err)
	}
}
