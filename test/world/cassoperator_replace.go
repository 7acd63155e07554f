package world

import (
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
)

// What the cass-operator world needs for a node replacement (the stand-in's replacenode
// job and replace_ip start): the API server's parts the job leans on (pvc-protection,
// creationTimestamp), the data volume's part (a deleted data claim takes the node's data
// with it), a dead node, and what a test reads of it.

// pvcProtectionFinalizer is the finalizer the API server's admission puts on every
// claim; its controller removes it once no pod uses the claim.
const pvcProtectionFinalizer = "kubernetes.io/pvc-protection"

// protectClaim is pvc-protection for the stand-in's claim deletes: a claim whose pod
// exists is only marked terminating (deletionTimestamp, the finalizer), and stays until
// the pod is deleted (releaseClaims). Reports whether it did so (the delete is then
// answered here). The replacenode job deletes the claims before the pod (jobs.go
// replacePod: "set status to terminating - finalizer will block"). Called with w.mu held.
func (w *World) protectClaim(ns, claim string) bool {
	if _, err := w.Kube.Tracker().Get(podsGVR, ns, claimPod(claim)); err != nil {
		return false
	}
	obj, err := w.Kube.Tracker().Get(pvcsGVR, ns, claim)
	if err != nil {
		return false
	}
	c := obj.(*corev1.PersistentVolumeClaim).DeepCopy()
	if c.DeletionTimestamp != nil {
		return true
	}
	at := time.Now()
	if w.co != nil {
		at = w.co.cfg.Now()
	}
	now := metav1.NewTime(at)
	c.DeletionTimestamp = &now
	c.Finalizers = append(c.Finalizers, pvcProtectionFinalizer)
	w.rv++
	c.ResourceVersion = strconv.Itoa(100 + w.rv)
	_ = w.Kube.Tracker().Update(pvcsGVR, c, ns)
	return true
}

// releaseClaims is the pvc-protection controller once pod is deleted: its terminating
// claims go. When its data claim goes, so does the node's data: the simulated node is
// detached (peers keep a ring member in gossip, down, with no pod: what a replacement
// takes over), so the pod the StatefulSet controller creates again runs no node until
// the operator starts one. Called with w.mu held, before the StatefulSet controller.
func (w *World) releaseClaims(ns, pod string) {
	l, err := w.Kube.Tracker().List(pvcsGVR, corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), ns)
	if err != nil {
		return
	}
	for _, c := range l.(*corev1.PersistentVolumeClaimList).Items {
		if c.DeletionTimestamp == nil || claimPod(c.Name) != pod {
			continue
		}
		if err := w.Kube.Tracker().Delete(pvcsGVR, ns, c.Name); err != nil {
			continue
		}
		if c.Name == w.dataClaim(pod) {
			if _, err := w.Cass.Node(pod); err == nil {
				_ = w.Cass.Detach(pod)
			}
		}
	}
}

// stampCreation gives a pod the StatefulSet controller re-created its creationTimestamp
// (the API server's; the fake tracker sets none), on the stand-in's clock: the operator
// compares it with the time the replacement began (updateCurrentReplacePodsProgress).
// Called with w.mu held.
func (w *World) stampCreation(ns, pod string) {
	obj, err := w.Kube.Tracker().Get(podsGVR, ns, pod)
	if err != nil {
		return
	}
	p := obj.(*corev1.Pod)
	if !p.CreationTimestamp.IsZero() {
		return
	}
	p = p.DeepCopy()
	p.CreationTimestamp = metav1.NewTime(w.co.cfg.Now())
	_ = w.Kube.Tracker().Update(podsGVR, p, ns)
}

// killCassOperatorNode is KillNode in the cass-operator world: its JVM is down (peers
// see it DN, nodetool on the pod cannot connect, E10) and the kubelet marks the pod not
// Ready (its readiness probe). The pod itself stays Running, with its claims.
func (w *World) killCassOperatorNode(pod string) {
	w.t.Helper()
	if err := w.Cass.UpdateFault(pod, func(f *sim.Fault) { f.Down = true }); err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.kubelet()
}

// CreateReplaceTask creates, as someone other than the plugin (no side effect), a
// replacenode CassandraTask for pod as the plugin writes it (plugins/cassoperator
// CreateTask): one job {name, command replacenode, args.pod_name}, Forbid.
func (w *World) CreateReplaceTask(name, pod string) {
	w.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": standin.TaskGVR.GroupVersion().String(), "kind": "CassandraTask",
		"metadata": map[string]any{"name": name, "namespace": w.NS},
		"spec": map[string]any{"datacenter": map[string]any{"name": "dc1", "namespace": w.NS},
			"concurrencyPolicy": "Forbid",
			"jobs":              []any{map[string]any{"name": name, "command": "replacenode", "args": map[string]any{"pod_name": pod}}}},
	}}
	if err := w.Dyn.Tracker().Create(standin.TaskGVR, u, w.NS); err != nil {
		w.t.Fatal(err)
	}
}

// Task is the CassandraTask name as stored (nil when there is none).
func (w *World) Task(name string) *unstructured.Unstructured {
	obj, err := w.Dyn.Tracker().Get(standin.TaskGVR, w.NS, name)
	if err != nil {
		return nil
	}
	return obj.(*unstructured.Unstructured).DeepCopy()
}

// NodeReplacements is the DC's status.nodeReplacements.
func (w *World) NodeReplacements() []string {
	r, _, _ := unstructured.NestedStringSlice(w.DC().Object, "status", "nodeReplacements")
	return r
}

// SimNode is the view of the node pod runs now (after a replacement: the new node, its
// Tokens, HostID, Mode, PeerCode, Replacing); ok false when the pod runs none.
func (w *World) SimNode(pod string) (sim.NodeView, bool) {
	v, err := w.Cass.Node(pod)
	return v, err == nil
}

// GossipHostIDs lists, sorted, the host IDs gossip knows: every node, those no pod runs
// any more included (a dead node being replaced).
func (w *World) GossipHostIDs() []string {
	w.t.Helper()
	eps, err := w.Cass.Endpoints()
	if err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, n := range eps {
		out = append(out, n.HostID)
	}
	sort.Strings(out)
	return out
}

// OperatorDeletes lists the names of the stand-in's deletes of resource ("pods",
// "persistentvolumeclaims"), in order; a claim under pvc-protection counts when marked.
func (w *World) OperatorDeletes(resource string) []string {
	var out []string
	for _, e := range w.OperatorEvents() {
		if name, ok := strings.CutPrefix(e, "delete "+resource+" "); ok {
			out = append(out, name)
		}
	}
	return out
}
