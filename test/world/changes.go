package world

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// Changes of the world while a run goes on (issue 15: a node going down, a pod evicted,
// another node joining, a seed list not pruned, the cluster resource being deleted).

// simAddress is the n-th node address as Cassandra prints it: IPv4, or IPv6 in full
// (Java's Inet6Address.getHostAddress: eight groups, no "::").
func (w *World) simAddress(n int) string {
	if w.ipv6 {
		return fmt.Sprintf("fd00:10:244:0:0:0:0:%x", n)
	}
	return fmt.Sprintf("10.244.0.%d", n)
}

// podAddress is an address as the kubelet writes it in status.podIP (RFC 5952: IPv6
// short, fd00:10:244::b).
func podAddress(a string) string {
	if p, err := netip.ParseAddr(a); err == nil {
		return p.String()
	}
	return a
}

// SetDown stops (true) or starts again (false) the Cassandra of pod: peers see it DN,
// nodetool on it cannot connect.
func (w *World) SetDown(pod string, down bool) {
	w.t.Helper()
	if err := w.Cass.UpdateFault(pod, func(f *sim.Fault) { f.Down = down }); err != nil {
		w.t.Fatal(err)
	}
}

// RecreatePod deletes pod as an eviction (or a drained Kubernetes node) does, and lets
// its StatefulSet controller create it again at once: a new UID, the same claims, so the
// same Cassandra node (same Host ID) restarts on its data.
func (w *World) RecreatePod(pod string) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.Kube.Tracker().Delete(podsGVR, w.NS, pod); err != nil {
		w.t.Fatal(err)
	}
	w.podDeleted(w.NS, pod)
}

// WipePod deletes pod and its claims as a node replacement does (the claims' PVC
// protection finalizer lets them go once the pod is gone), and lets its StatefulSet
// controller create it again at once on new claims: a fresh data dir. Not through the
// API (no side effect, no violation): a test's setup, or CassKop's own plugin's steps.
func (w *World) WipePod(pod string) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.Kube.Tracker().Delete(podsGVR, w.NS, pod); err != nil {
		w.t.Fatal(err)
	}
	l, err := w.Kube.Tracker().List(pvcsGVR, corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), w.NS)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, c := range l.(*corev1.PersistentVolumeClaimList).Items {
		if claimPod(c.Name) == pod {
			if err := w.Kube.Tracker().Delete(pvcsGVR, w.NS, c.Name); err != nil {
				w.t.Fatal(err)
			}
		}
	}
	w.podDeleted(w.NS, pod)
}

// AddJoiningNode adds to the ring a node of dc that stays joining (UJ) until
// FinishJoining: another operation's node bootstrapping (it has no pod here; only
// nodetool status shows it). It needs Opts.JoinTime > 0.
func (w *World) AddJoiningNode(name, dc string) {
	w.t.Helper()
	w.mu.Lock()
	w.nextIP++
	n := w.nextIP
	w.mu.Unlock()
	spec := sim.NodeSpec{Pod: name, HostID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n), Address: w.simAddress(n), DC: dc, Rack: "rack9", Load: "1 GiB"}
	if err := w.Cass.AddNodeWithFault(spec, sim.Fault{JoinFails: true}); err != nil {
		w.t.Fatal(err)
	}
}

// FinishJoining lets a node added by AddJoiningNode finish its bootstrap (UN).
func (w *World) FinishJoining(name string) {
	w.t.Helper()
	if err := w.Cass.UpdateFault(name, func(f *sim.Fault) { f.JoinFails = false }); err != nil {
		w.t.Fatal(err)
	}
}

// SetSeedlist writes status.seedlist as CassKop does (hostnames <pod>.<cluster>.<ns>,
// by pod name here).
func (w *World) SetSeedlist(pods ...string) {
	w.t.Helper()
	cr := w.CR().DeepCopy()
	status, _ := cr.Object["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	var l []any
	for _, p := range pods {
		l = append(l, p+"."+w.Name+"."+w.NS)
	}
	status["seedlist"] = l
	cr.Object["status"] = status
	if err := w.Dyn.Tracker().Update(CCGVR, cr, w.NS); err != nil {
		w.t.Fatal(err)
	}
}

// MarkDeleting sets the cluster resource's deletionTimestamp, as a `kubectl delete` held
// by a finalizer does.
func (w *World) MarkDeleting() {
	w.t.Helper()
	cr := w.CR().DeepCopy()
	now := metav1.NewTime(time.Now())
	cr.SetDeletionTimestamp(&now)
	cr.SetFinalizers([]string{"kubernetes.io/pvc-to-delete"})
	if err := w.Dyn.Tracker().Update(CCGVR, cr, w.NS); err != nil {
		w.t.Fatal(err)
	}
}

// PodIP is the pod's status.podIP ("" when there is no such pod).
func (w *World) PodIP(pod string) string {
	obj, err := w.Kube.Tracker().Get(podsGVR, w.NS, pod)
	if err != nil {
		return ""
	}
	return obj.(*corev1.Pod).Status.PodIP
}

// PVCDeletesOfLivePods lists the violations about claims deleted while their pod
// existed (a subset of Violations).
func (w *World) PVCDeletesOfLivePods() []string {
	var out []string
	for _, v := range w.Violations() {
		if strings.Contains(v, "deleted while pod") {
			out = append(out, v)
		}
	}
	return out
}
