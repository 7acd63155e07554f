package fakeworld

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// statefulSetController deletes the pods at or above the replicas, as the real one does
// on a scale-down (it leaves the claims), and creates the missing ones below (a
// scale-up, or a deleted pod). Called with w.mu held.
func (w *World) statefulSetController(ns, name string) {
	obj, err := w.Kube.Tracker().Get(stsGVR(), ns, name)
	if err != nil {
		return
	}
	sts := obj.(*appsv1.StatefulSet)
	l, _ := w.Kube.Tracker().List(podsGVR(), corev1.SchemeGroupVersion.WithKind("Pod"), ns)
	for _, p := range l.(*corev1.PodList).Items {
		if i, ok := topology.Ordinal(p.Name, name); ok && i >= int(*sts.Spec.Replicas) {
			_ = w.Kube.Tracker().Delete(podsGVR(), ns, p.Name)
		}
	}
	w.createMissingPods(sts)
}

// createMissingPods gives every ordinal below replicas without a pod one (a new UID),
// with its claim when missing, and registers its Cassandra node: a pod that finds its
// claim starts the node it held (a restart), a pod on a fresh claim is a new node that
// bootstraps (Opts.JoinTime). Called with w.mu held.
func (w *World) createMissingPods(sts *appsv1.StatefulSet) {
	ns := sts.Namespace
	labels := sts.Spec.Selector.MatchLabels
	dc, rack := labels[fakeadapter.LabelDC], labels[fakeadapter.LabelRack]
	for i := 0; i < int(*sts.Spec.Replicas); i++ {
		name := topology.PodName(sts.Name, i)
		if _, err := w.Kube.Tracker().Get(podsGVR(), ns, name); err == nil {
			continue
		}
		claim := fakeadapter.ClaimName(name)
		fresh := false
		if _, err := w.Kube.Tracker().Get(pvcsGVR(), ns, claim); err != nil {
			fresh = true
			_ = w.Kube.Tracker().Add(claimOf(ns, claim, labels, w.nextUID("pvc", claim)))
		}
		var addr string
		var start func()
		known, err := w.Cass.Node(name)
		if err == nil && !fresh {
			addr = known.Address
			start = func() { _ = w.Cass.Restart(name) }
		} else {
			if err == nil {
				_ = w.Cass.RemoveNode(name) // its data is gone: a new node takes the name
			}
			w.nextIP++
			addr = address(w.nextIP)
			spec := sim.NodeSpec{Pod: name, HostID: hostID(w.nextIP), Address: addr, DC: dc, Rack: rack, Load: "1.2 GiB"}
			f := sim.Fault{JoinFails: w.joinFails[name]}
			start = func() {
				if err := w.Cass.AddNodeWithFault(spec, f); err != nil {
					w.violations = append(w.violations, "world: cannot register node "+name+": "+err.Error())
				}
			}
		}
		uid := w.nextUID("pod", name)
		ready := corev1.ConditionTrue
		if w.startTime > 0 {
			ready = corev1.ConditionFalse
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, UID: uid, ResourceVersion: "1"},
			Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: fakeadapter.ClaimTemplate, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: addr,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}},
		}
		if w.pendingPods[name] {
			pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient memory."}}}
			_ = w.Kube.Tracker().Add(pod)
			continue
		}
		_ = w.Kube.Tracker().Add(pod)
		if w.startTime == 0 {
			start()
			continue
		}
		// Cassandra starts, and the pod turns Ready, StartTime later if the pod is still
		// that incarnation.
		time.AfterFunc(w.startTime, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			obj, err := w.Kube.Tracker().Get(podsGVR(), ns, name)
			if err != nil || obj.(*corev1.Pod).UID != uid {
				return
			}
			start()
			p := obj.(*corev1.Pod).DeepCopy()
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			_ = w.Kube.Tracker().Update(podsGVR(), p, ns)
		})
	}
}

// nextUID is "<kind>-<name>" for the first object of a name, then "<kind>-<name>-<n>".
// Called with w.mu held.
func (w *World) nextUID(kind, name string) types.UID {
	w.incarnations[kind+"/"+name]++
	if n := w.incarnations[kind+"/"+name]; n > 1 {
		return types.UID(fmt.Sprintf("%s-%s-%d", kind, name, n))
	}
	return types.UID(kind + "-" + name)
}

// podDeleted runs the StatefulSet controller of the deleted pod's rack, which creates it
// again. Called with w.mu held.
func (w *World) podDeleted(ns, pod string) {
	if i := strings.LastIndexByte(pod, '-'); i > 0 {
		w.statefulSetController(ns, pod[:i])
	}
}

// deploymentController keeps one pod per replica of a Deployment (<name>-<i>).
func (w *World) deploymentController(ns, name string) {
	obj, err := w.Kube.Tracker().Get(deployGVR(), ns, name)
	if err != nil {
		return
	}
	d := obj.(*appsv1.Deployment)
	for i := 0; i < 5; i++ {
		pod := fmt.Sprintf("%s-%d", name, i)
		_, err := w.Kube.Tracker().Get(podsGVR(), ns, pod)
		exists, want := err == nil, int32(i) < *d.Spec.Replicas
		switch {
		case want && !exists:
			_ = w.Kube.Tracker().Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns, Labels: d.Spec.Selector.MatchLabels, UID: types.UID("pod-" + pod)}})
		case !want && exists:
			_ = w.Kube.Tracker().Delete(podsGVR(), ns, pod)
		}
	}
}
