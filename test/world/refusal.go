package world

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
)

// ReplicaHistory records every replica count a Deployment had, in order, from the
// moment it is made (its value then first). It reads the fake tracker's own watch,
// whose events are queued synchronously with each write, so History needs no waiting.
type ReplicaHistory struct {
	w       *World
	name    string
	watch   watch.Interface
	history []int32
}

// RecordReplicas starts recording the replica history of Deployment name.
func (w *World) RecordReplicas(name string) *ReplicaHistory {
	w.t.Helper()
	wa, err := w.Kube.Tracker().Watch(appsv1.SchemeGroupVersion.WithResource("deployments"), w.NS)
	if err != nil {
		w.t.Fatal(err)
	}
	h := &ReplicaHistory{w: w, name: name, watch: wa, history: []int32{w.DeploymentReplicas(name)}}
	w.t.Cleanup(wa.Stop)
	return h
}

// History is the sequence of distinct consecutive replica counts so far, e.g. [1 0 1]
// for a pause and its restore.
func (h *ReplicaHistory) History() []int32 {
	for {
		select {
		case ev := <-h.watch.ResultChan():
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok || d.Name != h.name || d.Spec.Replicas == nil {
				continue
			}
			if r := *d.Spec.Replicas; r != h.history[len(h.history)-1] {
				h.history = append(h.history, r)
			}
		default:
			return append([]int32{}, h.history...)
		}
	}
}

// String renders the history as "1 -> 0 -> 1".
func (h *ReplicaHistory) String() string {
	var s []string
	for _, r := range h.History() {
		s = append(s, fmt.Sprint(r))
	}
	return strings.Join(s, " -> ")
}

// LastOperation is the CR's last-operation record (nil when there is none).
func (w *World) LastOperation() *checkpoint.LastOperation {
	w.t.Helper()
	v, ok := w.CR().GetAnnotations()[checkpoint.LastOperationAnnotation]
	if !ok {
		return nil
	}
	var lo checkpoint.LastOperation
	if err := json.Unmarshal([]byte(v), &lo); err != nil {
		w.t.Fatal(err)
	}
	return &lo
}

// Decommissions returns how many decommissions started leaving on pod's node and how
// many `nodetool decommission` calls it got (refused ones included).
func (w *World) Decommissions(pod string) (started, calls int) {
	w.t.Helper()
	n, err := w.Cass.Node(pod)
	if err != nil {
		w.t.Fatal(err)
	}
	return n.DecommissionsStarted, n.DecommissionCalls
}

// StartDecommission starts a decommission on pod's node as if a nodetool call reached
// Cassandra and its client was killed right after: the node goes on LEAVING for the
// world's DecommissionTime, and the call is no side effect of any run.
func (w *World) StartDecommission(pod string) {
	w.t.Helper()
	w.Cass.Run(killedClient{}, pod, []string{"decommission"}, io.Discard, io.Discard)
	if n, _ := w.Cass.Node(pod); n.Mode != "LEAVING" {
		w.t.Fatalf("the decommission of %s did not start (mode %s)", pod, n.Mode)
	}
}

// killedClient is the context of a nodetool client killed once its call is under way:
// it lets the call reach Cassandra (Err is nil when asked first) and then ends the wait
// at once (Done is closed), as a killed JVM does (test/sim Run).
type killedClient struct{ context.Context }

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (killedClient) Deadline() (time.Time, bool) { return time.Time{}, false }
func (killedClient) Done() <-chan struct{}       { return closed }
func (killedClient) Err() error                  { return nil }
func (killedClient) Value(any) any               { return nil }

// AssertConsistentAt checks a cluster left consistent at replicas nodes per rack (after
// an abort): every rack's StatefulSet at replicas with pods 0..replicas-1 and their data
// claims and nothing above, the CR's nodesPerRacks equal, no checkpoint, a last-operation
// record, and no safety violation.
func (w *World) AssertConsistentAt(replicas int, label string) {
	w.t.Helper()
	pods := " " + strings.Join(w.PodNames(), " ") + " "
	pvcs := " " + strings.Join(w.PVCNames(), " ") + " "
	for _, r := range w.Racks {
		sts := casskop.StatefulSetName(w.Name, "dc1", r)
		if got := w.Replicas(r); got != replicas {
			w.t.Errorf("%s: StatefulSet %s has %d replicas, want %d", label, sts, got, replicas)
		}
		for i := 0; i < replicas+w.Nodes+4; i++ {
			pod := fmt.Sprintf("%s-%d", sts, i)
			keep := i < replicas
			if strings.Contains(pods, " "+pod+" ") != keep {
				w.t.Errorf("%s: pod %s present=%v, want %v", label, pod, !keep, keep)
			}
			if strings.Contains(pvcs, " data-"+pod+" ") != keep {
				w.t.Errorf("%s: PVC data-%s present=%v, want %v", label, pod, !keep, keep)
			}
		}
	}
	cl, err := (&casskop.Adapter{API: operator.APIVersion{Version: "v2"}}).FromObject(w.CR())
	if err != nil {
		w.t.Fatal(err)
	}
	if got := cl.DCs[0].Racks[0].Nodes; got != replicas {
		w.t.Errorf("%s: CR nodesPerRacks is %d, want %d", label, got, replicas)
	}
	w.assertFinished(label)
}
