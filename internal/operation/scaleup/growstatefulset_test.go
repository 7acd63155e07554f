package scaleup

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/stepworld"
)

// built is the implementation BuildSteps makes of step kind (the kind's own) about n (planned in sw).
func built(t *testing.T, sw *steps.World, kind string, n record.Node) pub.Step {
	t.Helper()
	if _, ok := sw.CP.Node(n.Pod); !ok {
		sw.CP.Nodes = append(sw.CP.Nodes, n)
	}
	st, err := own(sw)(checkpoint.PendingStep(kind, n.Pod))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestGrowStatefulSetStep(t *testing.T) {
	n := stepworld.NewNode(1)
	w, sw := stepworld.World(t, fakeworld.Opts{Nodes: 1}, "scale-up", n)
	st := built(t, sw, StepGrowSTS, n)
	stepworld.MustDone(t, sw, st, false)
	stepworld.MustSafe(t, sw, st)
	stepworld.MustDo(t, sw, st)
	stepworld.MustDone(t, sw, st, true)
	if w.Replicas("rack1") != 2 || w.PodUID(n.Pod) == "" {
		t.Fatalf("replicas %d, pod %q", w.Replicas("rack1"), w.PodUID(n.Pod))
	}
	stepworld.MustDo(t, sw, st) // idempotent
	if w.Replicas("rack1") != 2 || w.Incarnations("pod", n.Pod) != 1 {
		t.Fatal("second Do changed something")
	}
	// The next node is not safe to add while this one is not the ordinal any more.
	stepworld.MustUnsafe(t, sw, built(t, sw, StepGrowSTS, stepworld.NewNode(3)), "expected 3")

	// A claim left over for the new pod: refused (it would start on old data).
	w2, sw2 := stepworld.World(t, fakeworld.Opts{Nodes: 1}, "scale-up", n)
	_ = w2.Kube.Tracker().Add(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "storage-" + n.Pod, Namespace: w2.NS, UID: "old"}})
	stepworld.MustUnsafe(t, sw2, built(t, sw2, StepGrowSTS, n), "PVC storage-fake-demo-dc1-rack1-1 already exists")
	// A node down: refused (a node joins a healthy ring only).
	w3, sw3 := stepworld.World(t, fakeworld.Opts{Nodes: 2}, "scale-up", stepworld.NewNode(2))
	_ = w3.Cass.SetFault(w3.Pod("rack1", 1), sim.Fault{Down: true})
	stepworld.MustUnsafe(t, sw3, built(t, sw3, StepGrowSTS, stepworld.NewNode(2)), "is DN")
}
