// Package stepworld runs a kind's own steps against a fake world (fakeworld) through
// the steps' World, as the kinds' unit tests do (internal/operation/*).
package stepworld

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// Reporter records nothing; OnWaiting, when set, is called after each Waiting (a test
// acts on what the step reported, not at a wall-clock deadline).
type Reporter struct{ OnWaiting func(what string) }

func (Reporter) StepStarted(string, string, int)  {}
func (Reporter) StepDone(string, string, bool)    {}
func (Reporter) StepFailed(string, string, error) {}
func (Reporter) Warn(string, string)              {}
func (r Reporter) Waiting(_, what string, _ time.Duration) {
	if r.OnWaiting != nil {
		r.OnWaiting(what)
	}
}

// World is a fake world of o and the steps' World for a checkpoint of kind about rack1
// of dc1, planning nodes.
func World(t *testing.T, o fakeworld.Opts, kind string, nodes ...record.Node) (*fakeworld.World, *steps.World) {
	t.Helper()
	w := fakeworld.New(t, o)
	cp := &record.Checkpoint{Kind: kind, Namespace: w.NS, Cluster: w.Name, Target: record.Target{DC: "dc1", Racks: []string{"rack1"}, Nodes: o.Nodes}, Nodes: nodes}
	a := w.Adapter()
	version := o.Version
	if version == "" {
		version = "4.1"
	}
	sw := &steps.World{Kube: w.Kube, Nodetool: nodetool.Client{Exec: w}, Namespace: w.NS, ClusterSelector: a.ClusterSelector(w.Name),
		Racks: []topology.Rack{{DC: "dc1", Name: "rack1", StatefulSet: w.STS("rack1")}}, CountWords: a.CountWords(), Container: a.Container(), CP: cp, Reporter: Reporter{}, Poll: time.Millisecond, ServerVersion: version + ".0",
		Spec:     a.DCSpec(w.NS, w.Name, "dc1"),
		Operator: a.OperatorStatus(w.NS, w.Name, nil),
		// A safety check that is not met waits; the tests want its answer soon.
		StallAfter: 30 * time.Millisecond}
	return w, sw
}

// Existing describes a pod of the initial world.
func Existing(w *fakeworld.World, ordinal int) record.Node {
	pod := w.Pod("rack1", ordinal)
	nv, _ := w.Cass.Node(pod)
	return record.Node{Pod: pod, PodUID: w.PodUID(pod), Ordinal: ordinal, DC: "dc1", Rack: "rack1", StatefulSet: w.STS("rack1"),
		HostID: nv.HostID, Address: nv.Address, PVCs: []record.PVC{{Name: "storage-" + pod, UID: "pvc-storage-" + pod}}}
}

// NewNode describes the pod of ordinal a scale-up of rack1 adds.
func NewNode(ordinal int) record.Node {
	sts := fakeadapter.StatefulSetName("demo", "dc1", "rack1")
	return record.Node{Pod: fmt.Sprintf("%s-%d", sts, ordinal), Ordinal: ordinal, DC: "dc1", Rack: "rack1", StatefulSet: sts, New: true}
}

// StartPod starts the Cassandra of a pod the world created not Ready
// (fakeworld.Opts.StartTime) and turns the pod Ready, as the world does once StartTime
// passed: the kubelet's doing, written to the tracker behind the plugin's back.
func StartPod(t *testing.T, w *fakeworld.World, pod string) {
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

// The checks below forget what the World read before (the engine forgets whenever the
// run waits; a test changes the world between two questions without waiting).

// MustDone fails t unless st.Done says want.
func MustDone(t *testing.T, sw *steps.World, st operation.Step, want bool) {
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

// MustSafe fails t unless st is safe now.
func MustSafe(t *testing.T, sw *steps.World, st operation.Step) {
	t.Helper()
	sw.Forget()
	if err := st.Safe(context.Background()); err != nil {
		t.Fatalf("%T.Safe: %v", st, err)
	}
}

// MustUnsafe fails t unless st's Safe, then its Recheck (engine.Rechecker: what the
// engine asks right before it acts), refuses saying want.
func MustUnsafe(t *testing.T, sw *steps.World, st operation.Step, want string) {
	t.Helper()
	sw.Forget()
	err := st.Safe(context.Background())
	if rc, ok := st.(engine.Rechecker); ok && err == nil {
		err = rc.Recheck(context.Background())
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%T.Safe/Recheck = %v, want an error saying %q", st, err, want)
	}
}

// MustDo fails t unless st.Do succeeds.
func MustDo(t *testing.T, sw *steps.World, st operation.Step) {
	t.Helper()
	sw.Forget()
	if err := st.Do(context.Background()); err != nil {
		t.Fatalf("%T.Do: %v", st, err)
	}
}
