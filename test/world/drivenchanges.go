package world

import (
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
)

// Changes of the cass-operator world (Opts.CassOperator) made at a step boundary of a
// driven operation (ChangeAfter), and the check of the plugin's size requests. The
// matrix is internal/cli/drivenchanging_test.go.

// PickDrivenPod picks pod i of the first rack's StatefulSet of the cass-operator world.
func PickDrivenPod(i int) Picker {
	return func(w *World) string {
		pod := fmt.Sprintf("%s-%d", w.stsName(w.Racks[0]), i)
		if !w.podExists(pod) {
			return ""
		}
		return pod
	}
}

// dcSize is the CassandraDatacenter's spec.size (-1 when unreadable). Called with w.mu.
func (w *World) dcSize() int64 {
	obj, err := w.Dyn.Tracker().Get(DCGVR, w.NS, "dc1")
	if err != nil {
		return -1
	}
	n, _, _ := unstructured.NestedInt64(obj.(*unstructured.Unstructured).Object, "spec", "size")
	return n
}

// setDCSize writes spec.size as someone else (kubectl edit): no side effect of the
// plugin, not in History. Called with w.mu.
func (w *World) setDCSize(n int64) bool {
	obj, err := w.Dyn.Tracker().Get(DCGVR, w.NS, "dc1")
	if err != nil {
		return false
	}
	dc := obj.(*unstructured.Unstructured).DeepCopy()
	if err := unstructured.SetNestedField(dc.Object, n, "spec", "size"); err != nil {
		return false
	}
	w.rv++
	dc.SetResourceVersion(fmt.Sprintf("%d", 100+w.rv))
	dc.SetGeneration(dc.GetGeneration() + 1)
	return w.Dyn.Tracker().Update(DCGVR, dc, w.NS) == nil
}

// DCSizeEdited: someone edits the datacenter's spec.size by delta; put back, it has the
// size it had before (if nobody changed it since).
func DCSizeEdited(delta int64) Change {
	return Change{Name: fmt.Sprintf("size-edited%+d", delta), apply: func(w *World) ([]string, func(), bool) {
		was := w.dcSize()
		if was < 0 || !w.setDCSize(was+delta) {
			return nil, nil, false
		}
		drivenEdited.Store(w, was+delta)
		return []string{"spec.size", "size"}, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.dcSize() == was+delta {
				w.setDCSize(was)
			}
		}, true
	}}
}

// setCassOperatorReplicas scales the cass-operator Deployment. Called with w.mu.
func (w *World) setCassOperatorReplicas(n int32) bool {
	obj, err := w.Kube.Tracker().Get(deployGVR, w.NS, CassOperatorDeployment)
	if err != nil {
		return false
	}
	d := obj.(*appsv1.Deployment).DeepCopy()
	d.Spec.Replicas = &n
	if err := w.Kube.Tracker().Update(deployGVR, d, w.NS); err != nil {
		return false
	}
	w.deploymentController(w.NS, CassOperatorDeployment)
	return true
}

// CassOperatorDown: someone scales the cass-operator Deployment to 0; put back, to 1.
func CassOperatorDown() Change {
	return Change{Name: "cass-operator-down", apply: func(w *World) ([]string, func(), bool) {
		if w.replicasOf(deployGVR, CassOperatorDeployment) != 1 || !w.setCassOperatorReplicas(0) {
			return nil, nil, false
		}
		return []string{"operator is not running", "no running cass-operator", CassOperatorDeployment}, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.setCassOperatorReplicas(1)
		}, true
	}}
}

// DrivenTakeover: another run, on host with its clock skew off ours, takes the
// datacenter's checkpoint over (Takeover on the CassandraDatacenter). World.Kinds must
// be set.
func DrivenTakeover(host string, skew time.Duration) Change {
	return Change{Name: "takeover", apply: func(w *World) ([]string, func(), bool) {
		obj, err := w.Dyn.Tracker().Get(DCGVR, w.NS, "dc1")
		if err != nil {
			return nil, nil, false
		}
		dc := obj.(*unstructured.Unstructured).DeepCopy()
		ann := dc.GetAnnotations()
		v, ok := ann[checkpoint.Annotation]
		if !ok {
			return nil, nil, false
		}
		cp, err := checkpoint.Decode(v, string(dc.GetUID()), w.Kinds)
		if err != nil {
			return nil, nil, false
		}
		b := TakeoverHolder(host, skew)
		now := *b.RenewedAt
		cp.Takeovers = append(cp.Takeovers, checkpoint.Takeover{From: cp.Holder, By: b, At: now, Reason: "lease of " + cp.Holder.String() + " expired"})
		cp.Holder = b
		cp.Seq++
		cp.UpdatedAt = now
		enc, err := checkpoint.Encode(cp, w.Kinds)
		if err != nil {
			return nil, nil, false
		}
		ann[checkpoint.Annotation] = enc
		dc.SetAnnotations(ann)
		w.rv++
		dc.SetResourceVersion(fmt.Sprintf("%d", 100+w.rv))
		if err := w.Dyn.Tracker().Update(DCGVR, dc, w.NS); err != nil {
			return nil, nil, false
		}
		return []string{host}, nil, true
	}}
}

// checkDrivenSizeWrite judges each of the plugin's spec.size changes as it takes effect
// (an OnSideEffect hook, ChainSideEffect): every node of dc1 UN (or gone), the
// cass-operator Deployment running, and the size written from the value the write found
// (Before) equal to the value planned (the write is "s -> s-1" or "s -> s+1" from the
// size the plugin last wrote or found at its start, never from someone else's edit).
// Called with w.mu held.
func (w *World) checkDrivenSizeWrite() {
	if len(w.hist.events) == 0 {
		return
	}
	e := w.hist.events[len(w.hist.events)-1]
	if e.Kind != "write" || e.Resource != DCGVR.Resource || !e.SpecChanged || e.Before == e.After {
		return
	}
	what := fmt.Sprintf("spec.size %d -> %d", e.Before, e.After)
	w.checkRing(what, "", "dc1")
	if r := w.replicasOf(deployGVR, CassOperatorDeployment); r < 1 {
		w.violations = append(w.violations, fmt.Sprintf("%s while cass-operator has %d replicas", what, r))
	}
	if d := e.After - e.Before; d != 1 && d != -1 {
		w.violations = append(w.violations, what+": not one node at a time")
	}
	if v, ok := drivenEdited.Load(w); ok && int64(e.Before) == v.(int64) {
		w.violations = append(w.violations, fmt.Sprintf("%s: written from someone else's size %d", what, v))
	}
}

// drivenEdited is, per world, the spec.size someone else set (DCSizeEdited): no size
// write of the plugin may start from it. (Kept here, not in World, to leave world.go
// as it is.)
var drivenEdited sync.Map

// ChainSideEffect makes every later side effect run checkDrivenSizeWrite first, then
// whatever OnSideEffect holds (an armed change). Call after ChangeAfter and again after
// PutBack.
func (w *World) ChainSideEffect() {
	w.mu.Lock()
	defer w.mu.Unlock()
	next := w.OnSideEffect
	w.OnSideEffect = func(n int) {
		w.checkDrivenSizeWrite()
		if next != nil {
			next(n)
		}
	}
}

// NotUN lists the nodes of the ring that are not UN ("pod CODE").
func (w *World) NotUN() []string {
	var out []string
	nodes, _ := w.Cass.Nodes()
	for _, n := range nodes {
		if n.PeerCode != "" && n.PeerCode != "UN" {
			out = append(out, n.Pod+" "+n.PeerCode)
		}
	}
	return out
}

// DCSize is the CassandraDatacenter's spec.size.
func (w *World) DCSize() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return int(w.dcSize())
}

// HasDCCheckpoint reports whether the CassandraDatacenter carries a checkpoint.
func (w *World) HasDCCheckpoint() bool {
	_, ok := w.DC().GetAnnotations()[checkpoint.Annotation]
	return ok
}
