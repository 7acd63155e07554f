package steps

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// warnings records the reporter's warnings.
type warnings struct {
	nopReporter
	mu   sync.Mutex
	msgs []string
	// onWarn and onWaiting, when set, are called after each Warn and Waiting (a test
	// acts on what the step reported, not at a wall-clock deadline).
	onWarn    func()
	onWaiting func(what string)
}

func (r *warnings) Warn(_, msg string) {
	r.mu.Lock()
	r.msgs = append(r.msgs, msg)
	r.mu.Unlock()
	if r.onWarn != nil {
		r.onWarn()
	}
}

func (r *warnings) Waiting(_, what string, _ time.Duration) {
	if r.onWaiting != nil {
		r.onWaiting(what)
	}
}

func (r *warnings) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.msgs, "\n")
}

// kindWorld is a fake world and the steps' World for a checkpoint of kind with nodes.
func kindWorld(t *testing.T, o fakeworld.Opts, kind string, nodes ...record.Node) (*fakeworld.World, *World) {
	t.Helper()
	w := fakeworld.New(t, o)
	cp := &record.Checkpoint{Kind: kind, Namespace: w.NS, Cluster: w.Name, Target: record.Target{DC: "dc1", Racks: []string{"rack1"}, Nodes: o.Nodes}, Nodes: nodes}
	a := w.Adapter()
	sw := &World{Kube: w.Kube, Nodetool: nodetool.Client{Exec: w}, Namespace: w.NS, ClusterSelector: a.ClusterSelector(w.Name),
		Racks: []topology.Rack{{DC: "dc1", Name: "rack1", StatefulSet: w.STS("rack1")}}, CountWords: a.CountWords(), Container: a.Container(), CP: cp, Reporter: nopReporter{}, Poll: time.Millisecond, ServerVersion: "4.1.0",
		Spec:     a.DCSpec(w.NS, w.Name, "dc1"),
		Operator: a.OperatorStatus(w.NS, w.Name, nil)}
	sw.obs.SetUncached(true)
	// The scale-down reads the ring from its ring readers (its Info's Variant).
	sw.variant.RingReaders = kind == checkpoint.KindScaleDown
	// A safety check that is not met waits; the tests want its answer soon (safenow.go).
	sw.StallAfter = 30 * time.Millisecond
	return w, sw
}

// existing describes a pod of the initial world.
func existing(w *fakeworld.World, ordinal int) record.Node {
	pod := w.Pod("rack1", ordinal)
	nv, _ := w.Cass.Node(pod)
	return record.Node{Pod: pod, PodUID: w.PodUID(pod), Ordinal: ordinal, DC: "dc1", Rack: "rack1", StatefulSet: w.STS("rack1"),
		HostID: nv.HostID, Address: nv.Address, PVCs: []record.PVC{{Name: "storage-" + pod, UID: "pvc-storage-" + pod}}}
}

func newNode(ordinal int) record.Node {
	sts := fakeadapter.StatefulSetName("demo", "dc1", "rack1")
	return record.Node{Pod: fmt.Sprintf("%s-%d", sts, ordinal), Ordinal: ordinal, DC: "dc1", Rack: "rack1", StatefulSet: sts, New: true}
}

func mustSafe(t *testing.T, st operation.Step) {
	t.Helper()
	if err := st.Safe(context.Background()); err != nil {
		t.Fatalf("%T.Safe: %v", st, err)
	}
}

func mustUnsafe(t *testing.T, st operation.Step, want string) {
	t.Helper()
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

func mustDo(t *testing.T, st operation.Step) {
	t.Helper()
	if err := st.Do(context.Background()); err != nil {
		t.Fatalf("%T.Do: %v", st, err)
	}
}

func TestWaitJoinedStep(t *testing.T) {
	ctx := context.Background()
	n := newNode(1)
	// The node stays joining (JoinFails) until the test lets it finish: no race with a
	// wall-clock JoinTime.
	w, sw := kindWorld(t, fakeworld.Opts{Nodes: 1, JoinTime: time.Millisecond, JoinFails: []string{n.Pod}}, "scale-up", n)
	st := &waitJoined{waiting{node{sw, n}}}
	mustDone(t, st, false)    // no pod yet
	w.SetReplicas("rack1", 2) // the new pod (scale-up's grow-statefulset: internal/operation/scaleup)
	mustDone(t, st, false)    // UJ
	if nv, _ := w.Cass.Node(n.Pod); nv.PeerCode != "UJ" {
		t.Fatalf("node %+v", nv)
	}
	if err := w.Cass.UpdateFault(n.Pod, func(f *sim.Fault) { f.JoinFails = false }); err != nil {
		t.Fatal(err)
	}
	if err := st.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	mustDone(t, st, true)

	// A bootstrap that fails (5.0 JOINING_FAILED) stops the run with what to check.
	w2, sw2 := kindWorld(t, fakeworld.Opts{Nodes: 1, Version: "5.0", JoinTime: time.Millisecond, JoinFails: []string{n.Pod}}, "scale-up", n)
	w2.SetReplicas("rack1", 2)
	err := (&waitJoined{waiting{node{sw2, n}}}).Wait(ctx)
	var fatal *operation.Fatal
	if !asFatal(err, &fatal) || !strings.Contains(err.Error(), "JOINING_FAILED") || !strings.Contains(err.Error(), "kubectl logs -n cassandra fake-demo-dc1-rack1-1 -c server") {
		t.Fatalf("failed join: %v", err)
	}

	// A node stuck joining (4.1 stays UJ): a warning after StallAfter, then, when the
	// wait is cancelled (here by the warning itself, not a wall-clock deadline), an
	// error saying where it is stuck and what to check.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rec := &warnings{onWarn: cancel}
	w3, sw3 := kindWorld(t, fakeworld.Opts{Nodes: 1, JoinTime: time.Millisecond, JoinFails: []string{n.Pod}}, "scale-up", n)
	sw3.Reporter, sw3.StallAfter = rec, 20*time.Millisecond
	w3.SetReplicas("rack1", 2)
	err = (&waitJoined{waiting{node{sw3, n}}}).Wait(wctx)
	if err == nil || !strings.Contains(err.Error(), "is UJ: joining") || !strings.Contains(err.Error(), "nodetool netstats (bootstrap streams)") {
		t.Fatalf("stuck join: %v", err)
	}
	if !strings.Contains(rec.all(), "still waiting after") || !strings.Contains(rec.all(), "check: kubectl describe pod") {
		t.Fatalf("no stall warning: %q", rec.all())
	}

	// An unschedulable pod says so (the wait is cancelled once it reported what it
	// waits for).
	wctx2, cancel2 := context.WithCancel(ctx)
	defer cancel2()
	w4, sw4 := kindWorld(t, fakeworld.Opts{Nodes: 1, PendingPods: []string{n.Pod}}, "scale-up", n)
	sw4.Reporter = &warnings{onWaiting: func(string) { cancel2() }}
	w4.SetReplicas("rack1", 2)
	if err := (&waitJoined{waiting{node{sw4, n}}}).Wait(wctx2); err == nil || !strings.Contains(err.Error(), "not scheduled (Unschedulable") {
		t.Fatalf("pending pod: %v", err)
	}
}

// stuck370 is the state of CassKop's seed bug (#370) on the neutral operator: pod 2
// decommissioned and gone (StatefulSet shrunk), its PVC left, the operator's status
// showing its operation on the pod unfinished. How CassKop's own status reads and is
// written (with and without a /status subresource) is tested in plugins/casskop.
func stuck370(t *testing.T) (*fakeworld.World, *World, record.Node) {
	t.Helper()
	w, sw := kindWorld(t, fakeworld.Opts{Nodes: 3}, repairKind)
	n := existing(w, 2)
	n.PodUID = ""
	var out, errb strings.Builder
	w.Cass.Run(context.Background(), n.Pod, []string{"decommission"}, &out, &errb)
	w.SetReplicas("rack1", 2)
	w.SetOperations(fakeadapter.Operation{Datacenter: "dc1", Rack: "rack1", Pod: n.Pod, Phase: fakeadapter.PhaseRunning})
	sw.CP.Nodes = []record.Node{n}
	sw.CP.Steps = []record.Step{checkpoint.PendingStep(record.StepDeletePVCs, n.Pod)}
	return w, sw, n
}

func TestRepairDeletePVCsStep(t *testing.T) {
	w, sw, n := stuck370(t)
	w.MountClaim(w.Pod("rack1", 0), "storage-"+n.Pod)
	mustUnsafe(t, &repairDeletePVCs{deletePVCs: &deletePVCs{node: node{sw, n}}}, "PVC storage-fake-demo-dc1-rack1-2 is used by pod fake-demo-dc1-rack1-0")
}

func TestBuildKinds(t *testing.T) {
	w, sw := kindWorld(t, fakeworld.Opts{Nodes: 1, Operator: true}, "scale-up")
	op := record.PausedOperator{Namespace: w.NS, Name: fakeworld.OperatorName, UID: fakeworld.OperatorUID, Replicas: 1}
	sw.CP.PausedOperator = &op
	n := newNode(1)
	old := existing(w, 0)
	sw.CP.Nodes = []record.Node{old, n}
	// scale-up's own steps (grow-statefulset, cleanup) are scale-up's to build.
	sw.CP.Steps = checkpoint.Paused(true, append(checkpoint.NodeSteps([]record.Node{n}, record.StepWaitJoined), checkpoint.PendingStep(StepUpdateCluster, "")))
	impl, err := Build(sw, Variant{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sw.CP.Steps {
		if impl[s.ID] == nil {
			t.Fatalf("no step for %s", s.ID)
		}
	}
	// Once the operator is restored, the pause stays done (a late resume must not pause
	// it again).
	pause := impl[record.StepPauseOperator]
	mustDone(t, pause, false)
	sw.CP.Steps[len(sw.CP.Steps)-1].State = record.StateDone // resume-operator
	mustDone(t, pause, true)
	// A repair restores the operator without waiting for CR and StatefulSets to agree.
	sw.CP.Kind = repairKind
	sw.CP.Steps = []record.Step{checkpoint.PendingStep(record.StepResumeOperator, "")}
	impl, _ = Build(sw, Variant{Repair: true})
	mustSafe(t, impl[record.StepResumeOperator])
}

// repairKind is an operator's own repair kind (as CassKop's repair-operator-state,
// plugins/casskop/repair): the steps know it only through steps.Variant.
const repairKind = "repair-fake-status"

// TestBuildNodeStepVariants: the node steps a kind differs in (Variant) and the refusal
// of a kind no step implements.
func TestBuildNodeStepVariants(t *testing.T) {
	w, sw := kindWorld(t, fakeworld.Opts{Nodes: 3}, checkpoint.KindScaleDown)
	n := existing(w, 2)
	sw.CP.Nodes = []record.Node{n}
	sw.CP.Steps = []record.Step{checkpoint.PendingStep(record.StepDecommission, n.Pod), checkpoint.PendingStep(record.StepDeletePVCs, n.Pod)}
	for _, repair := range []bool{false, true} {
		impl, err := Build(sw, Variant{Repair: repair})
		if err != nil {
			t.Fatal(err)
		}
		d, ok := impl[record.StepID(record.StepDecommission, n.Pod)].(*decommission)
		if !ok || d.refire != repair {
			t.Fatalf("repair %v: decommission %#v", repair, impl)
		}
		_, wrapped := impl[record.StepID(record.StepDeletePVCs, n.Pod)].(*repairDeletePVCs)
		if wrapped != repair {
			t.Fatalf("repair %v: delete-pvcs %T", repair, impl[record.StepID(record.StepDeletePVCs, n.Pod)])
		}
	}
	sw.CP.Steps = []record.Step{checkpoint.PendingStep("no-such-step", n.Pod)}
	if _, err := Build(sw, Variant{}); err == nil || err.Error() != `unknown step kind "no-such-step" in a scale-down` {
		t.Fatalf("unknown kind: %v", err)
	}
	// Every node step type is listed once, under its own kind.
	seen := map[string]bool{}
	for _, s := range nodeSteps(node{sw, n}) {
		if seen[s.kind()] {
			t.Fatalf("kind %s listed twice", s.kind())
		}
		seen[s.kind()] = true
	}
}
