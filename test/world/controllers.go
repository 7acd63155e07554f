package world

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// emptyNodeLoad is what nodetool status shows of a node with no user data (its system
// keyspaces; a 4.1 node just bootstrapped).
const emptyNodeLoad = "74.15 KiB"

var (
	podsGVR = corev1.SchemeGroupVersion.WithResource("pods")
	pvcsGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
)

// createMissingPods is the StatefulSet controller's scale-up and re-creation: every
// ordinal below replicas without a pod gets one (a new UID), its missing claims are
// created from the templates, and its Cassandra node is registered: a pod that finds
// its data claim starts the node it held (a restart), a pod on a fresh claim is a new
// node that bootstraps (Opts.JoinTime). In CassKop's shape every pod start runs the
// bootstrap init container first (casskopboot.go), whose JVM options the node starts
// with. Called with w.mu held.
func (w *World) createMissingPods(sts *appsv1.StatefulSet) {
	ns := sts.Namespace
	for i := 0; i < int(*sts.Spec.Replicas); i++ {
		name := fmt.Sprintf("%s-%d", sts.Name, i)
		if _, err := w.Kube.Tracker().Get(podsGVR, ns, name); err == nil {
			continue
		}
		freshData, dying := false, ""
		for _, tpl := range sts.Spec.VolumeClaimTemplates {
			claim := tpl.Name + "-" + name
			if obj, err := w.Kube.Tracker().Get(pvcsGVR, ns, claim); err == nil {
				if obj.(*corev1.PersistentVolumeClaim).DeletionTimestamp != nil {
					dying = claim
				}
				continue
			}
			if tpl.Name == "data" || tpl.Name == "server-data" { // CassKop's, cass-operator's
				freshData = true
			}
			_ = w.Kube.Tracker().Add(&corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: ns, Labels: tpl.Labels, UID: w.nextUID("pvc", claim), ResourceVersion: "1"},
				Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
					Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}})
		}
		// The pod finds its node's data (a restart: the same node starts again), or a
		// fresh claim (a new node, which bootstraps, or replaces one when its JVM
		// options say so).
		var addr string
		var start func(jvm sim.StartOptions)
		known, err := w.Cass.Node(name)
		dc, rack := w.rackOf(sts)
		if err == nil && !freshData {
			addr = known.Address
			start = func(jvm sim.StartOptions) { w.restartNode(name, jvm) }
			if w.co != nil && known.Running {
				// The JVM stopped with the old pod; the operator starts the new one.
				_ = w.Cass.UpdateFault(name, func(f *sim.Fault) { f.Down = true })
			}
		} else {
			if err == nil && w.co != nil {
				_ = w.Cass.RemoveNode(name) // its data is gone: a new node takes the name
			}
			w.nextIP++
			addr = w.simAddress(w.nextIP)
			spec := sim.NodeSpec{Pod: name, HostID: fmt.Sprintf("00000000-0000-4000-8000-%012d", w.nextIP), Address: addr,
				DC: dc, Rack: rack, Load: "1.2 GiB"}
			if held, err := w.Cass.HoldsData(dc); err == nil && !held {
				// A node of a DC no keyspace replicates to (a new DC, add-dc) streams
				// nothing when it joins: it holds its system tables only.
				spec.Load = emptyNodeLoad
			}
			var f sim.Fault
			if w.joinFails[name] {
				f.JoinFails = true
			}
			start = func(jvm sim.StartOptions) {
				if w.co == nil {
					// Its data dir is new: StartFresh, which keeps a former node of
					// the pod in gossip, dead, as peers do (a replacement finds it).
					w.startFresh(spec, f, jvm)
					return
				}
				if err := w.Cass.AddNodeWithFault(spec, f); err != nil {
					w.violations = append(w.violations, "world: cannot register node "+name+": "+err.Error())
				}
			}
			if err == nil && w.co == nil && known.Running {
				// The former node's JVM went with its pod.
				_ = w.Cass.UpdateFault(name, func(f *sim.Fault) { f.Down = true })
			}
		}
		uid := w.nextUID("pod", name)
		ready := corev1.ConditionTrue
		if w.startTime > 0 || w.co != nil {
			ready = corev1.ConditionFalse
		}
		labels := sts.Spec.Selector.MatchLabels
		if len(sts.Spec.Template.Labels) > 0 {
			labels = sts.Spec.Template.Labels
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, UID: uid, ResourceVersion: "1"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: podAddress(addr),
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}},
		}
		if len(sts.Spec.Template.Annotations) > 0 {
			pod.Annotations = map[string]string{}
			for k, v := range sts.Spec.Template.Annotations {
				pod.Annotations[k] = v
			}
		}
		for _, tpl := range sts.Spec.VolumeClaimTemplates {
			pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: tpl.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: tpl.Name + "-" + name}}})
		}
		if dying != "" {
			// The scheduler does not place a pod whose claim is being deleted
			// (volumebinding: "persistentvolumeclaim is being deleted"): it stays Pending
			// and its node does not start; the claim waits for it to go.
			pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: "Unschedulable", Message: fmt.Sprintf("persistentvolumeclaim %q is being deleted", dying)}}}
			_ = w.Kube.Tracker().Add(pod)
			continue
		}
		if w.pendingPods[name] {
			pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient memory."}}}
			_ = w.Kube.Tracker().Add(pod)
			continue
		}
		if w.co != nil {
			_ = w.Kube.Tracker().Add(pod)
			continue // Cassandra starts when the operator calls the management API (FACTS §3.7)
		}
		// CassKop's bootstrap init container runs pre_run.sh before Cassandra, on every
		// start of every pod; when it fails the pod stays in Init and Cassandra never
		// starts (docs/how-it-works/replace.md §7.2, §7.3).
		jvm, failed := w.bootstrapInit(name)
		if failed != nil {
			pod.Status = initFailedStatus(pod.Status.PodIP, failed.Exit)
			_ = w.Kube.Tracker().Add(pod)
			if known, err := w.Cass.Node(name); err == nil && known.Running {
				_ = w.Cass.UpdateFault(name, func(f *sim.Fault) { f.Down = true }) // it went with the old pod
			}
			continue
		}
		if w.noAutoBootstrap[name] && freshData {
			jvm.NoAutoBootstrap = true
		}
		_ = w.Kube.Tracker().Add(pod)
		if w.startTime == 0 {
			start(jvm)
			w.syncContainer(name)
			continue
		}
		// Cassandra starts (and the pod turns Ready) StartTime later, if that pod is
		// still there.
		if w.starting == nil {
			w.starting = map[string]types.UID{}
		}
		w.starting[name] = uid
		time.AfterFunc(w.startTime, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.starting[name] == uid {
				delete(w.starting, name)
			}
			obj, err := w.Kube.Tracker().Get(podsGVR, ns, name)
			if err != nil || obj.(*corev1.Pod).UID != uid {
				return
			}
			start(jvm)
			p := obj.(*corev1.Pod).DeepCopy()
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			_ = w.Kube.Tracker().Update(podsGVR, p, ns)
			w.syncContainer(name)
		})
	}
}

// nextUID is "<kind>-<name>" for the first object of a name, then "<kind>-<name>-<n>".
func (w *World) nextUID(kind, name string) types.UID {
	w.incarnations[kind+"/"+name]++
	if n := w.incarnations[kind+"/"+name]; n > 1 {
		return types.UID(fmt.Sprintf("%s-%s-%d", kind, name, n))
	}
	return types.UID(kind + "-" + name)
}

// checkPodDelete applies a pod deletion's UID precondition (a Conflict when it does not
// match) and records a deletion without one as a violation. Called with w.mu held.
func (w *World) checkPodDelete(tracker k8stesting.ObjectTracker, a k8stesting.DeleteAction) error {
	cur, err := tracker.Get(podsGVR, a.GetNamespace(), a.GetName())
	if err != nil {
		return nil // the delete answers NotFound
	}
	pod := cur.(*corev1.Pod)
	pre := a.GetDeleteOptions().Preconditions
	if pre == nil || pre.UID == nil {
		w.violations = append(w.violations, "pod "+a.GetName()+" deleted without a UID precondition")
	} else if *pre.UID != pod.UID {
		return apierrors.NewConflict(podsGVR.GroupResource(), a.GetName(), fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.UID, pod.UID))
	}
	w.podDeletes = append(w.podDeletes, a.GetName())
	return nil
}

// podDeleted runs the StatefulSet controller of the deleted pod's rack, which creates it
// again. Called with w.mu held.
func (w *World) podDeleted(ns, pod string) {
	i := strings.LastIndexByte(pod, '-')
	if i <= 0 {
		return
	}
	w.statefulSetController(ns, pod[:i])
}

// crBefore returns a copy of the CassandraCluster before a write to it (nil for any other
// write), and refuses a /status write when the CRD serves no status subresource.
func (w *World) crBefore(tracker k8stesting.ObjectTracker, action k8stesting.Action) (*unstructured.Unstructured, error) {
	if action.GetResource().Resource != w.crGVR().Resource {
		return nil, nil
	}
	if v := action.GetVerb(); v != "patch" && v != "update" {
		return nil, nil
	}
	if action.GetSubresource() == "status" && !w.statusSubresource {
		return nil, apierrors.NewNotFound(action.GetResource().GroupResource(), objName(action)+"/status")
	}
	if action.GetSubresource() != "" && action.GetSubresource() != "status" {
		return nil, nil
	}
	cur, err := tracker.Get(action.GetResource(), action.GetNamespace(), objName(action))
	if err != nil {
		return nil, nil // the write answers NotFound
	}
	return cur.(*unstructured.Unstructured).DeepCopy(), nil
}

// crAfter makes a write to the CassandraCluster behave like the API server: with a
// status subresource, a main-resource write leaves status as it was and a /status
// write changes nothing but status; without one, every write goes through as is.
func (w *World) crAfter(tracker k8stesting.ObjectTracker, action k8stesting.Action, before *unstructured.Unstructured, obj runtime.Object) runtime.Object {
	if !w.statusSubresource {
		return obj
	}
	gvr := action.GetResource()
	cur, err := tracker.Get(gvr, action.GetNamespace(), objName(action))
	if err != nil {
		return obj
	}
	after := cur.(*unstructured.Unstructured).DeepCopy()
	var fixed *unstructured.Unstructured
	if action.GetSubresource() == "status" {
		fixed = before.DeepCopy()
		if st, ok := after.Object["status"]; ok {
			fixed.Object["status"] = st
		} else {
			delete(fixed.Object, "status")
		}
		fixed.SetResourceVersion(after.GetResourceVersion())
	} else {
		fixed = after
		if st, ok := before.Object["status"]; ok {
			fixed.Object["status"] = st
		} else {
			delete(fixed.Object, "status")
		}
	}
	if err := tracker.Update(gvr, fixed, action.GetNamespace()); err != nil {
		return obj
	}
	return fixed
}

// PodUID returns the UID of a pod ("" when it does not exist).
func (w *World) PodUID(name string) string {
	obj, err := w.Kube.Tracker().Get(podsGVR, w.NS, name)
	if err != nil {
		return ""
	}
	return string(obj.(*corev1.Pod).UID)
}

// Incarnations is how many pods (kind "pod") or claims (kind "pvc") were created under
// name, the initial one included.
func (w *World) Incarnations(kind, name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.incarnations[kind+"/"+name]
}

// PodDeletes lists the pods deleted through the API, in order.
func (w *World) PodDeletes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.podDeletes...)
}

// ExecLog lists the side-effect nodetool calls ("<pod> <args>"), in order.
func (w *World) ExecLog() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.execLog...)
}

// SetCRStatus replaces the CassandraCluster's status (test setup, as the operator's
// write would).
func (w *World) SetCRStatus(status map[string]any) {
	w.t.Helper()
	cr := w.CR().DeepCopy()
	cr.Object["status"] = status
	if err := w.Dyn.Tracker().Update(CCGVR, cr, w.NS); err != nil {
		w.t.Fatal(err)
	}
}

// SetNodesPerRack sets the CR's count (spec.nodesPerRacks, or the first DC's with a
// topology), as a user's edit would.
func (w *World) SetNodesPerRack(n int) {
	w.t.Helper()
	cr := w.CR().DeepCopy()
	if dcs, ok, _ := unstructured.NestedSlice(cr.Object, "spec", "topology", "dc"); ok && len(dcs) > 0 {
		dcs[0].(map[string]any)["nodesPerRacks"] = int64(n)
		_ = unstructured.SetNestedSlice(cr.Object, dcs, "spec", "topology", "dc")
	} else {
		_ = unstructured.SetNestedField(cr.Object, int64(n), "spec", "nodesPerRacks")
	}
	if err := w.Dyn.Tracker().Update(CCGVR, cr, w.NS); err != nil {
		w.t.Fatal(err)
	}
}

// SetReplicas sets a rack's StatefulSet replicas and runs its controller (pods created
// or removed), as a kubectl scale would.
func (w *World) SetReplicas(rack string, n int) {
	w.t.Helper()
	gvr := appsv1.SchemeGroupVersion.WithResource("statefulsets")
	name := casskop.StatefulSetName(w.Name, "dc1", rack)
	obj, err := w.Kube.Tracker().Get(gvr, w.NS, name)
	if err != nil {
		w.t.Fatal(err)
	}
	sts := obj.(*appsv1.StatefulSet).DeepCopy()
	r := int32(n)
	sts.Spec.Replicas = &r
	if err := w.Kube.Tracker().Update(gvr, sts, w.NS); err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.statefulSetController(w.NS, name)
}

// MountClaim adds a volume using claim to a pod (test setup: a claim in use).
func (w *World) MountClaim(pod, claim string) {
	w.t.Helper()
	obj, err := w.Kube.Tracker().Get(podsGVR, w.NS, pod)
	if err != nil {
		w.t.Fatal(err)
	}
	p := obj.(*corev1.Pod).DeepCopy()
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "extra", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	if err := w.Kube.Tracker().Update(podsGVR, p, w.NS); err != nil {
		w.t.Fatal(err)
	}
}
