package fakeworld

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter"
)

// Changes made behind the plugin's back, as a user or the operator would: written to
// the trackers directly, so none is a side effect in History.

// SetReplicas sets rack's StatefulSet replicas (dc1) and runs its controller, as a
// kubectl scale would.
func (w *World) SetReplicas(rack string, n int) {
	w.t.Helper()
	obj, err := w.Kube.Tracker().Get(stsGVR(), w.NS, w.STS(rack))
	if err != nil {
		w.t.Fatal(err)
	}
	sts := obj.(*appsv1.StatefulSet).DeepCopy()
	r := int32(n)
	sts.Spec.Replicas = &r
	if err := w.Kube.Tracker().Update(stsGVR(), sts, w.NS); err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.statefulSetController(w.NS, sts.Name)
}

// SetOperations replaces status.operations, as the operator's own write would.
func (w *World) SetOperations(ops ...fakeadapter.Operation) {
	w.t.Helper()
	var l []any
	for _, op := range ops {
		m := map[string]any{"datacenter": op.Datacenter, "rack": op.Rack, "phase": op.Phase}
		if op.Pod != "" {
			m["pod"] = op.Pod
		}
		l = append(l, m)
	}
	cr := w.CR().DeepCopy()
	cr.Object["status"] = map[string]any{"operations": l}
	if err := w.Dyn.Tracker().Update(GVR(), cr, w.NS); err != nil {
		w.t.Fatal(err)
	}
}

// Operations reads status.operations.
func (w *World) Operations() []fakeadapter.Operation {
	w.t.Helper()
	l, _, _ := unstructured.NestedSlice(w.CR().Object, "status", "operations")
	var out []fakeadapter.Operation
	for _, x := range l {
		m, _ := x.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, fakeadapter.Operation{Datacenter: str("datacenter"), Rack: str("rack"), Pod: str("pod"), Phase: str("phase"), EndTime: str("endTime")})
	}
	return out
}

// MountClaim adds a volume using claim to pod (a claim in use).
func (w *World) MountClaim(pod, claim string) {
	w.t.Helper()
	obj, err := w.Kube.Tracker().Get(podsGVR(), w.NS, pod)
	if err != nil {
		w.t.Fatal(err)
	}
	p := obj.(*corev1.Pod).DeepCopy()
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "extra", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	if err := w.Kube.Tracker().Update(podsGVR(), p, w.NS); err != nil {
		w.t.Fatal(err)
	}
}

// RecreatePod deletes pod as an eviction does and lets its StatefulSet controller
// create it again at once: a new UID on the same claim, so the same node restarts.
func (w *World) RecreatePod(pod string) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.Kube.Tracker().Delete(podsGVR(), w.NS, pod); err != nil {
		w.t.Fatal(err)
	}
	w.podDeleted(w.NS, pod)
}

// SetDeploymentAnnotation sets (or, with value "", removes) an annotation of a
// Deployment.
func (w *World) SetDeploymentAnnotation(name, key, value string) {
	w.t.Helper()
	obj, err := w.Kube.Tracker().Get(deployGVR(), w.NS, name)
	if err != nil {
		w.t.Fatal(err)
	}
	d := obj.(*appsv1.Deployment).DeepCopy()
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	if value == "" {
		delete(d.Annotations, key)
	} else {
		d.Annotations[key] = value
	}
	if err := w.Kube.Tracker().Update(deployGVR(), d, w.NS); err != nil {
		w.t.Fatal(err)
	}
}
