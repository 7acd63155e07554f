package world

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	cassop "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// The deletion of a CassandraDatacenter in the cass-operator world: the API server's
// part (finalizers, deletionTimestamp), the garbage collector's (the StatefulSets the
// operator owns go with the resource), and the JVM of a pod the StatefulSet controller
// deletes. The operator's part (ProcessDeletion) is the stand-in's (deletion.go there).

// holdDeletion is the API server's delete of a CassandraDatacenter that has finalizers:
// it only gets a deletionTimestamp (the first delete's), and stays until its last
// finalizer is removed. Reports whether it held (false: not such an object, or no
// finalizer: the delete goes through). Called with w.mu held.
func (w *World) holdDeletion(tracker k8stesting.ObjectTracker, gvr schema.GroupVersionResource, ns, name string) bool {
	if gvr.Resource != cassop.Resource {
		return false
	}
	obj, err := tracker.Get(gvr, ns, name)
	if err != nil {
		return false
	}
	u := obj.(*unstructured.Unstructured).DeepCopy()
	if len(u.GetFinalizers()) == 0 {
		return false
	}
	if u.GetDeletionTimestamp() != nil {
		return true
	}
	now := metav1.NewTime(w.co.cfg.Now())
	u.SetDeletionTimestamp(&now)
	w.rv++
	u.SetResourceVersion(fmt.Sprintf("%d", 100+w.rv))
	_ = tracker.Update(gvr, u, ns)
	return true
}

// finalize is the API server after a write to a CassandraDatacenter being deleted: with
// its last finalizer gone, it is deleted, and the garbage collector deletes what it
// owns (cass-operator makes itself the controller owner of its StatefulSets; their pods
// go with them). Called with w.mu held.
func (w *World) finalize(tracker k8stesting.ObjectTracker, gvr schema.GroupVersionResource, ns, name string) {
	if gvr.Resource != cassop.Resource || w.co == nil {
		return
	}
	obj, err := tracker.Get(gvr, ns, name)
	if err != nil {
		return
	}
	u := obj.(*unstructured.Unstructured)
	if u.GetDeletionTimestamp() == nil || len(u.GetFinalizers()) > 0 {
		return
	}
	if err := tracker.Delete(gvr, ns, name); err != nil {
		return
	}
	w.co.events = append(w.co.events, "deleted cassandradatacenters "+name+" (finalizers gone)")
	sl, err := w.Kube.Tracker().List(stsGVR, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), ns)
	if err != nil {
		return
	}
	for _, s := range sl.(*appsv1.StatefulSetList).Items {
		if s.Labels[cassop.LabelDatacenter] != cassop.CleanLabelValue(name) || s.Labels[cassop.LabelManagedBy] != cassop.ManagedByValue {
			continue
		}
		if err := w.Kube.Tracker().Delete(stsGVR, ns, s.Name); err == nil {
			w.co.events = append(w.co.events, "garbage-collected statefulsets "+s.Name)
		}
		zero := int32(0)
		s.Spec.Replicas = &zero
		w.deleteStatefulSetPods(&s)
	}
}

// deleteStatefulSetPods deletes the pods of sts at or above its replicas, as the
// StatefulSet controller does on a scale-down (it leaves the claims). In the
// cass-operator world the node's JVM stops with its pod (it runs in the pod): a node
// that did not leave the ring is then DN to its peers. Called with w.mu held.
func (w *World) deleteStatefulSetPods(sts *appsv1.StatefulSet) {
	l, _ := w.Kube.Tracker().List(podsGVR, corev1.SchemeGroupVersion.WithKind("Pod"), sts.Namespace)
	for _, p := range l.(*corev1.PodList).Items {
		var i int
		if _, err := fmt.Sscanf(strings.TrimPrefix(p.Name, sts.Name+"-"), "%d", &i); err != nil || !strings.HasPrefix(p.Name, sts.Name+"-") {
			continue
		}
		if i < int(*sts.Spec.Replicas) {
			continue
		}
		if err := w.Kube.Tracker().Delete(podsGVR, sts.Namespace, p.Name); err != nil {
			continue
		}
		if w.co == nil {
			continue
		}
		if n, err := w.Cass.Node(p.Name); err == nil && n.Running && !n.Left {
			_ = w.Cass.UpdateFault(p.Name, func(f *sim.Fault) { f.Down = true })
		}
	}
}

// Datacenter returns the CassandraDatacenter name (ok false once it is gone).
func (w *World) Datacenter(name string) (*unstructured.Unstructured, bool) {
	u, err := w.Dyn.Tracker().Get(DCGVR, w.NS, name)
	if err != nil {
		return nil, false
	}
	return u.(*unstructured.Unstructured), true
}
