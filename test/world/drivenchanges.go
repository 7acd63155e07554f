package world

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Changes of the cass-operator world (Opts.CassOperator) made at a step boundary of a
// driven operation (ChangeAfter). The shared ones (NodeDown, Takeover, …) work on it
// too; the checks of what the plugin does next are drivenchecks.go. The matrix is
// internal/cli/drivenchanging_test.go.

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
// plugin, not in History; kept in DCSizeEdits. Called with w.mu.
func (w *World) setDCSize(n int64) bool {
	obj, err := w.Dyn.Tracker().Get(DCGVR, w.NS, "dc1")
	if err != nil {
		return false
	}
	dc := obj.(*unstructured.Unstructured).DeepCopy()
	was, _, _ := unstructured.NestedInt64(dc.Object, "spec", "size")
	if err := unstructured.SetNestedField(dc.Object, n, "spec", "size"); err != nil {
		return false
	}
	w.rv++
	dc.SetResourceVersion(fmt.Sprintf("%d", 100+w.rv))
	dc.SetGeneration(dc.GetGeneration() + 1)
	if w.Dyn.Tracker().Update(DCGVR, dc, w.NS) != nil {
		return false
	}
	w.co.sizeEdits = append(w.co.sizeEdits, fmt.Sprintf("%d->%d", was, n))
	return true
}

// DCSizeEdited: someone edits the datacenter's spec.size by delta; put back, it has the
// size it had before (if nobody changed it since).
func DCSizeEdited(delta int64) Change {
	return Change{Name: fmt.Sprintf("size-edited%+d", delta), apply: func(w *World) ([]string, func(), bool) {
		was := w.dcSize()
		if was < 0 || !w.setDCSize(was+delta) {
			return nil, nil, false
		}
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
		return []string{"operator is not running", CassOperatorDeployment}, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.setCassOperatorReplicas(1)
		}, true
	}}
}

// setCassOperatorReady writes the cass-operator Deployment's status as its controller
// would: its one replica ready or not. Called with w.mu.
func (w *World) setCassOperatorReady(ready bool) bool {
	obj, err := w.Kube.Tracker().Get(deployGVR, w.NS, CassOperatorDeployment)
	if err != nil {
		return false
	}
	d := obj.(*appsv1.Deployment).DeepCopy()
	d.Status.ObservedGeneration, d.Status.Replicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1, 0, 0
	if ready {
		d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1
	}
	w.rv++
	d.ResourceVersion = fmt.Sprintf("%d", 100+w.rv)
	return w.Kube.Tracker().Update(deployGVR, d, w.NS) == nil
}

// CassOperatorCrashLoop: cass-operator's pod crash-loops: its Deployment keeps one
// replica, none ready, and the stand-in does nothing (its pending writes lost); put
// back, it is ready and runs again.
func CassOperatorCrashLoop() Change {
	return Change{Name: "cass-operator-crash-loop", apply: func(w *World) ([]string, func(), bool) {
		if w.replicasOf(deployGVR, CassOperatorDeployment) != 1 || !w.setCassOperatorReady(false) {
			return nil, nil, false
		}
		w.co.crashLooping = true
		w.co.op.SetDown(true)
		return []string{"none ready", "operator is not running"}, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.co.crashLooping = false
			w.co.op.SetDown(false)
			w.setCassOperatorReady(true)
		}, true
	}}
}
