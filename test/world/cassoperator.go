package world

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	cassop "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
)

// The cass-operator-shaped world (Opts.CassOperator): a CassandraDatacenter "dc1" of
// cluster "demo" whose operator acts, played by the stand-in of test/standin/cassoperator.
// The stand-in makes one reconcile write (Step) before each API request of the plugin,
// so the plugin's polls drive it deterministically, without sleeps. Its writes go
// through clients of its own onto the same objects: they are no side effect of the
// plugin (no crash point, not in History), they are kept apart (OperatorEvents).

// DCGVR is the CassandraDatacenter resource of the cass-operator world.
var DCGVR = schema.GroupVersionResource{Group: cassop.Group, Version: cassop.Version, Resource: cassop.Resource}

// CassOperatorDeployment is the name of the cass-operator Deployment of the world (the
// kustomize install's name), in the world's namespace, watching it.
const CassOperatorDeployment = "cass-operator-controller-manager"

// cassOpState is the stand-in and what the world keeps of it.
type cassOpState struct {
	// step serialises the stand-in's steps (taken before World.mu, never inside it).
	step sync.Mutex
	cfg  standin.Config
	op   *standin.Operator
	// others are the stand-in's reconciles of the cluster's other datacenters: the
	// second one of Opts.OtherDC first, then each CassandraDatacenter created during the
	// run (add-dc), as the step finds it. The same operator process reconciles them all
	// (one Deployment watches the namespace); their actions are kept apart.
	others []*dcReconcile
	// actions are every process's actions, in order; procs the processes started.
	actions []standin.Action
	procs   int
	// killAfter makes the running process die right after that action (then the next
	// step starts a new one, as the Deployment restarts its pod); "" = none.
	killAfter standin.Action
	killed    []standin.Action
	// paused: the plugin's requests do not step the stand-in (test setup, Settle).
	paused bool
	// ticks is the stand-in's clock: one second per step from a fixed start (its task
	// names and transition times), so the same run makes the same names.
	ticks  atomic.Int64
	events []string
	errs   []string
	// rolled lists the pods the StatefulSet controller's rolling update deleted, in order.
	rolled []string
	// sizeEdits are the spec.size changes someone else made ("1->2"), in order;
	// crashLooping: the operator's Deployment keeps its replica but none is ready, and
	// the stand-in does nothing (drivenchanges.go).
	sizeEdits    []string
	crashLooping bool
}

// dcReconcile is the stand-in's reconcile of one datacenter other than dc1.
type dcReconcile struct {
	op      *standin.Operator
	cfg     standin.Config
	actions []standin.Action
}

// crGVR is the cluster resource of the world's shape.
func (w *World) crGVR() schema.GroupVersionResource {
	if w.co != nil {
		return DCGVR
	}
	return CCGVR
}

// crName is the cluster resource's name in the world's shape.
func (w *World) crName() string {
	if w.co != nil {
		return "dc1"
	}
	return w.Name
}

// dataClaim is the data claim of pod in the world's shape.
func (w *World) dataClaim(pod string) string {
	if w.co != nil {
		return "server-data-" + pod
	}
	return "data-" + pod
}

// stsName is a rack's StatefulSet in dc1.
func (w *World) stsName(rack string) string {
	if w.co != nil {
		return cassop.StatefulSetName(w.Name, "dc1", rack)
	}
	return casskop.StatefulSetName(w.Name, "dc1", rack)
}

// rackOf is the datacenter and rack a StatefulSet's labels name, in the world's shape.
func (w *World) rackOf(sts *appsv1.StatefulSet) (dc, rack string) {
	if w.co != nil {
		return sts.Labels[cassop.LabelDatacenter], sts.Labels[cassop.LabelRack]
	}
	return sts.Labels[casskop.LabelDC], sts.Labels[casskop.LabelRack]
}

// claimPod is the pod a claim of the world's templates belongs to.
func claimPod(claim string) string {
	for _, p := range []string{"server-data-", "data-", "cassandra-logs-"} {
		if strings.HasPrefix(claim, p) {
			return strings.TrimPrefix(claim, p)
		}
	}
	return claim
}

// cassOpRackLabels are a rack's labels as cass-operator sets them (with managed-by).
func cassOpRackLabels(cluster, dc, rack string) map[string]string {
	l := cassop.RackLabels(cluster, dc, rack)
	l[cassop.LabelManagedBy] = cassop.ManagedByValue
	return l
}

// newCassOperator builds the cass-operator-shaped world: CassandraDatacenter dc1 (size
// o.Nodes split over o.Racks as SplitRacks does), settled (Ready), its StatefulSets,
// Started pods, server-data claims, nodeStatuses, the ring, a running cass-operator
// Deployment and the stand-in that plays it; with o.OtherDC, a second
// CassandraDatacenter of the same cluster, built the same way, in the same ring.
func newCassOperator(t *testing.T, w *World, o Opts) {
	t.Helper()
	w.co = &cassOpState{}
	w.statusSubresource = true
	ip := 10
	var specs []sim.NodeSpec
	dcs := []runtime.Object{w.addCassOpDC(o, "dc1", "dc-uid-1", o.Racks, o.Nodes, &ip, &specs)}
	if o.OtherDC != "" {
		racks, nodes := o.OtherDCRacks, o.OtherDCNodes
		if len(racks) == 0 {
			racks = o.Racks
		}
		if nodes == 0 {
			nodes = o.Nodes
		}
		dcs = append(dcs, w.addCassOpDC(o, o.OtherDC, "dc-uid-2", racks, nodes, &ip, &specs))
	}
	w.nextIP = ip
	w.Cass = sim.NewMemory(o.simOptions(), specs, nil)
	listKinds := map[schema.GroupVersionResource]string{DCGVR: "CassandraDatacenterList", standin.TaskGVR: "CassandraTaskList"}
	w.Dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, dcs...)
	w.Kube.Resources = []*metav1.APIResourceList{{GroupVersion: DCGVR.GroupVersion().String(), APIResources: []metav1.APIResource{
		{Name: cassop.Resource, Namespaced: true, Kind: cassop.Kind},
		{Name: cassop.Resource + "/status", Namespaced: true, Kind: cassop.Kind},
	}}}
	one := int32(1)
	sel := map[string]string{"app.kubernetes.io/name": "cass-operator"}
	w.add(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: CassOperatorDeployment, Namespace: w.NS, Labels: sel, UID: "dep-cass-operator", ResourceVersion: "1"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "manager", Image: "cr.k8ssandra.io/k8ssandra/cass-operator:v1.32.0",
				Env: []corev1.EnvVar{{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}},
			}}}}}})
	w.deploymentController(w.NS, CassOperatorDeployment)
	w.kubelet()

	// The stand-in's own clients: its requests reach the same objects (operatorReact),
	// never the plugin's reactors.
	sk := kubefake.NewSimpleClientset()
	sk.PrependReactor("*", "*", w.operatorReact(w.Kube.Tracker()))
	sd := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	sd.PrependReactor("*", "*", w.operatorReact(w.Dyn.Tracker()))
	w.co.cfg = standin.Config{Kube: sk, Dyn: sd, Cass: w.Cass, Namespace: w.NS, Name: "dc1",
		OperatorNamespace: w.NS, OperatorDeployment: CassOperatorDeployment, RunTasks: true, LabelStartedAfter: o.LabelStartedAfter,
		Now: func() time.Time {
			return time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC).Add(time.Duration(w.co.ticks.Load()) * time.Second)
		}}
	w.co.op = standin.New(w.co.cfg)
	w.co.procs = 1
	if o.OtherDC != "" {
		w.co.addReconcile(o.OtherDC)
	}
}

// addReconcile starts the stand-in's reconcile of datacenter name (a resource of the
// world's namespace other than dc1).
func (co *cassOpState) addReconcile(name string) {
	cfg := co.cfg
	cfg.Name = name
	co.others = append(co.others, &dcReconcile{op: standin.New(cfg), cfg: cfg})
}

// discoverDCs starts a reconcile for each CassandraDatacenter of the namespace that has
// none yet (one created during the run: the operator's watch sees it). Called with
// w.mu held.
func (w *World) discoverDCs() {
	l, err := w.Dyn.Tracker().List(DCGVR, DCGVR.GroupVersion().WithKind(cassop.Kind), w.NS)
	if err != nil {
		return
	}
	ul, ok := l.(*unstructured.UnstructuredList)
	if !ok {
		return
	}
	known := map[string]bool{w.co.cfg.Name: true}
	for _, r := range w.co.others {
		known[r.cfg.Name] = true
	}
	var names []string
	for _, u := range ul.Items {
		if !known[u.GetName()] {
			names = append(names, u.GetName())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		w.co.addReconcile(n)
	}
}

// addCassOpDC adds datacenter dcName of the world's cluster, settled (Ready): its
// StatefulSets (one per rack, nodes split as SplitRacks does), Started pods,
// server-data claims, and its nodes to specs (addresses from *ip on); it returns the
// CassandraDatacenter (with cass-operator's finalizer and the nodeStatuses).
func (w *World) addCassOpDC(o Opts, dcName, uid string, racks []string, nodes int, ip *int, specs *[]sim.NodeSpec) *unstructured.Unstructured {
	var conds []any
	for _, c := range []struct{ t, s string }{{"Ready", "True"}, {"Initialized", "True"}, {"Valid", "True"},
		{"ScalingUp", "False"}, {"ScalingDown", "False"}, {"Stopped", "False"}, {"ReplacingNodes", "False"},
		{"Updating", "False"}, {"RollingRestart", "False"}, {"Resuming", "False"}, {"RequiresUpdate", "False"}} {
		conds = append(conds, map[string]any{"type": c.t, "status": c.s, "reason": "", "message": "", "lastTransitionTime": "2026-12-01T00:00:00Z"})
	}
	var rackList []any
	for _, r := range racks {
		rackList = append(rackList, map[string]any{"name": r})
	}
	statuses := map[string]any{}
	split := cassop.SplitRacks(nodes, len(racks))
	for i, r := range racks {
		sts := cassop.StatefulSetName(w.Name, dcName, r)
		labels := cassOpRackLabels(w.Name, dcName, r)
		tplLabels := cassOpRackLabels(w.Name, dcName, r)
		tplLabels[cassop.LabelNodeState] = cassop.StateReadyToStart // construct_podtemplatespec.go
		replicas := int32(split[i])
		tpls := []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "server-data", Labels: labels}}}
		stsUID := types.UID("sts-" + r)
		if dcName != "dc1" {
			stsUID = types.UID("sts-" + dcName + "-" + r)
		}
		w.add(&appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: sts, Namespace: w.NS, Labels: labels, UID: stsUID, ResourceVersion: "1"},
			Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tplLabels}}, VolumeClaimTemplates: tpls},
		})
		for k := 0; k < split[i]; k++ {
			pod := fmt.Sprintf("%s-%d", sts, k)
			*ip++
			addr := w.simAddress(*ip)
			w.incarnations["pod/"+pod] = 1
			pl := cassOpRackLabels(w.Name, dcName, r)
			pl[cassop.LabelNodeState] = cassop.StateStarted
			claim := "server-data-" + pod
			w.add(&corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: w.NS, Labels: pl, UID: types.UID("pod-" + pod), ResourceVersion: "1"},
				Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "server-data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: podAddress(addr),
					Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
			})
			w.incarnations["pvc/"+claim] = 1
			w.add(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: w.NS, Labels: labels, UID: types.UID("pvc-" + claim), ResourceVersion: "1"},
				Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}})
			hostID := fmt.Sprintf("00000000-0000-4000-8000-%012d", *ip)
			*specs = append(*specs, sim.NodeSpec{Pod: pod, HostID: hostID, Address: addr, DC: dcName, Rack: r, Load: "1.2 GiB"})
			statuses[pod] = map[string]any{"hostID": hostID, "ip": podAddress(addr), "rack": r}
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": DCGVR.GroupVersion().String(), "kind": cassop.Kind,
		// The finalizer is the operator's first reconcile's (handler.go addFinalizer).
		"metadata": map[string]any{"name": dcName, "namespace": w.NS, "uid": uid, "resourceVersion": "1", "generation": int64(1),
			"finalizers": []any{standin.Finalizer}},
		"spec": map[string]any{"clusterName": w.Name, "size": int64(nodes), "racks": rackList, "serverVersion": o.Version + ".0",
			"managementApiAuth": map[string]any{"insecure": map[string]any{}}},
		"status": map[string]any{"conditions": conds, "cassandraOperatorProgress": "Ready", "observedGeneration": int64(1),
			"datacenterName": dcName, "nodeStatuses": statuses},
	}}
}

// installCassOperator adds the plugin-side reactors of the cass-operator world: the
// validating webhook's size rule, and the stand-in's step before each request. Called
// after the world's own reactors, so these run first.
func (w *World) installCassOperator() {
	w.Dyn.PrependReactor("*", cassop.Resource, standin.WebhookReactor(w.Dyn.Tracker()))
	step := func(k8stesting.Action) (bool, runtime.Object, error) {
		w.StepOperator()
		return false, nil, nil
	}
	w.Kube.PrependReactor("*", "*", step)
	w.Dyn.PrependReactor("*", "*", step)
	w.Kube.PrependWatchReactor("*", func(k8stesting.Action) (bool, watch.Interface, error) {
		w.StepOperator()
		return false, nil, nil
	})
}

// operatorReact serves the stand-in's requests on tracker as the API server would:
// resourceVersion checked on updates, a pod delete's UID precondition, the
// StatefulSet controller after a replicas change (and after a pod delete). Its writes
// are recorded apart from the plugin's, with no crash point.
func (w *World) operatorReact(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	apply := k8stesting.ObjectReaction(tracker)
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		verb := action.GetVerb()
		if verb != "create" && verb != "update" && verb != "patch" && verb != "delete" {
			return apply(action)
		}
		gvr := action.GetResource()
		w.mu.Lock()
		defer w.mu.Unlock()
		name := objName(action)
		switch a := action.(type) {
		case k8stesting.UpdateAction:
			if m, err := metaOf(a.GetObject()); err == nil {
				if cur, err := tracker.Get(gvr, a.GetNamespace(), m.GetName()); err == nil {
					cm, _ := metaOf(cur)
					if m.GetResourceVersion() != "" && m.GetResourceVersion() != cm.GetResourceVersion() {
						return true, nil, apierrors.NewConflict(gvr.GroupResource(), m.GetName(), errors.New("the object has been modified; please apply your changes to the latest version and try again"))
					}
				}
			}
		case k8stesting.DeleteAction:
			name = a.GetName()
			if gvr.Resource == "pods" {
				if cur, err := tracker.Get(gvr, a.GetNamespace(), name); err == nil {
					if pre := a.GetDeleteOptions().Preconditions; pre != nil && pre.UID != nil && *pre.UID != cur.(*corev1.Pod).UID {
						return true, nil, apierrors.NewConflict(gvr.GroupResource(), name, errors.New("precondition failed: UID"))
					}
				}
			}
			if gvr.Resource == "persistentvolumeclaims" && w.protectClaim(a.GetNamespace(), name) {
				w.co.events = append(w.co.events, "delete persistentvolumeclaims "+name)
				return true, nil, nil
			}
		case k8stesting.CreateAction:
			if m, err := metaOf(a.GetObject()); err == nil {
				name = m.GetName()
			}
		}
		if d, ok := action.(k8stesting.DeleteAction); ok && w.holdDeletion(tracker, gvr, d.GetNamespace(), d.GetName()) {
			w.co.events = append(w.co.events, "delete "+gvr.Resource+" "+name+" (held by finalizers)")
			return true, nil, nil
		}
		handled, obj, err := apply(action)
		if err != nil {
			return handled, obj, err
		}
		if verb == "patch" || verb == "update" {
			w.rv++
			if cur, gerr := tracker.Get(gvr, action.GetNamespace(), name); gerr == nil {
				cur = cur.DeepCopyObject()
				m, _ := metaOf(cur)
				m.SetResourceVersion(fmt.Sprintf("%d", 100+w.rv))
				_ = tracker.Update(gvr, cur, action.GetNamespace())
				obj = cur
			}
			if gvr.Resource == "statefulsets" {
				w.statefulSetController(action.GetNamespace(), name)
			}
			w.finalize(tracker, gvr, action.GetNamespace(), name)
		}
		if verb == "create" && gvr.Resource == "statefulsets" {
			// A rack the operator created (CheckRackCreation): the StatefulSet
			// controller makes its pods and claims.
			w.statefulSetController(action.GetNamespace(), name)
		}
		if verb == "delete" && gvr.Resource == "pods" {
			w.releaseClaims(action.GetNamespace(), name)
			w.podDeleted(action.GetNamespace(), name)
			w.stampCreation(action.GetNamespace(), name)
		}
		what := verb + " " + gvr.Resource
		if s := action.GetSubresource(); s != "" {
			what += "/" + s
		}
		w.co.events = append(w.co.events, what+" "+name)
		return handled, obj, err
	}
}

// StepOperator makes the stand-in take one step (one reconcile write at most), then
// the kubelet's part (pods' readiness from their nodes). A process killed at a
// KillOperatorAfter action is replaced by a new one at the next step (its Deployment
// restarts it). Nothing happens while the stand-in is paused.
func (w *World) StepOperator() standin.Action {
	if w.co == nil {
		return ""
	}
	w.co.step.Lock()
	defer w.co.step.Unlock()
	w.mu.Lock()
	paused := w.co.paused
	w.mu.Unlock()
	if paused {
		return ""
	}
	return w.stepOperator()
}

// stepOperator is StepOperator with co.step held.
func (w *World) stepOperator() standin.Action {
	if w.co.op.Killed() {
		w.co.op = standin.New(w.co.cfg)
		w.co.procs++
		w.mu.Lock()
		if w.co.crashLooping {
			w.co.op.SetDown(true)
		}
		w.mu.Unlock()
	}
	w.co.ticks.Add(1)
	a, err := w.co.op.Step(context.Background())
	w.mu.Lock()
	if a != "" {
		w.co.actions = append(w.co.actions, a)
		w.hist.timeline = append(w.hist.timeline, "operator "+string(a))
	}
	switch {
	case errors.Is(err, standin.ErrKilled):
		w.co.killed = append(w.co.killed, a)
		w.co.killAfter = ""
	case err != nil:
		w.co.errs = append(w.co.errs, err.Error())
	}
	w.kubelet()
	if w.rollStatefulSets() {
		w.kubelet()
	}
	others := !w.co.crashLooping
	if others {
		w.discoverDCs()
	}
	rs := append([]*dcReconcile(nil), w.co.others...)
	w.mu.Unlock()
	if !others {
		return a
	}
	// The same process reconciles the other datacenters (a request each).
	for _, r := range rs {
		if oa := w.stepOther(r); a == "" {
			a = oa
		}
	}
	return a
}

// stepOther is one step of the stand-in's reconcile of another datacenter, with
// co.step held: its actions are kept in r.actions.
func (w *World) stepOther(r *dcReconcile) standin.Action {
	a, err := r.op.Step(context.Background())
	w.mu.Lock()
	defer w.mu.Unlock()
	if a != "" {
		r.actions = append(r.actions, a)
		w.hist.timeline = append(w.hist.timeline, "operator "+r.cfg.Name+" "+string(a))
	}
	if err != nil {
		w.co.errs = append(w.co.errs, r.cfg.Name+": "+err.Error())
	}
	w.kubelet()
	return a
}

// OtherOperatorActions lists the stand-in's actions on the other datacenter
// (Opts.OtherDC), in order.
func (w *World) OtherOperatorActions() []standin.Action {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.co.others) == 0 {
		return nil
	}
	return append([]standin.Action(nil), w.co.others[0].actions...)
}

// DCOperatorActions lists the stand-in's actions on datacenter resource name (dc1's
// are OperatorActions), in order; nil when it never reconciled it.
func (w *World) DCOperatorActions(name string) []standin.Action {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.co.others {
		if r.cfg.Name == name {
			return append([]standin.Action(nil), r.actions...)
		}
	}
	return nil
}

// DCOperatorWaiting says what the stand-in's reconcile of datacenter resource name
// waited for at its last idle step.
func (w *World) DCOperatorWaiting(name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.co.others {
		if r.cfg.Name == name {
			return r.op.Waiting()
		}
	}
	return ""
}

// rollStatefulSets is the StatefulSet controller's rolling update (RollingUpdate, one
// pod at a time, highest ordinal first) for a template changed by a restart task: in a
// StatefulSet whose pods below replicas all exist and are Ready, the highest-ordinal
// pod whose restartedAt annotation is not the template's is deleted, then created again
// from the template (createMissingPods: the same node starts again on its data, when
// the operator starts it). Reports whether a pod was rolled. Called with w.mu held.
func (w *World) rollStatefulSets() bool {
	sl, err := w.Kube.Tracker().List(stsGVR, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), w.NS)
	if err != nil {
		return false
	}
	rolled := false
	for _, s := range sl.(*appsv1.StatefulSetList).Items {
		want, ok := s.Spec.Template.Annotations[standin.RestartedAtAnnotaton]
		if !ok || s.Spec.Replicas == nil {
			continue
		}
		all, roll := true, -1
		for k := 0; k < int(*s.Spec.Replicas); k++ {
			obj, err := w.Kube.Tracker().Get(podsGVR, w.NS, fmt.Sprintf("%s-%d", s.Name, k))
			if err != nil {
				all = false
				break
			}
			p := obj.(*corev1.Pod)
			if len(p.Status.Conditions) == 0 || p.Status.Conditions[0].Type != corev1.PodReady || p.Status.Conditions[0].Status != corev1.ConditionTrue {
				all = false
				break
			}
			if p.Annotations[standin.RestartedAtAnnotaton] != want {
				roll = k
			}
		}
		if !all || roll < 0 {
			continue
		}
		name := fmt.Sprintf("%s-%d", s.Name, roll)
		if err := w.Kube.Tracker().Delete(podsGVR, w.NS, name); err != nil {
			continue
		}
		w.co.rolled = append(w.co.rolled, name)
		w.statefulSetController(w.NS, s.Name)
		rolled = true
	}
	return rolled
}

// RolledPods lists the pods the StatefulSet controller's rolling update re-created, in
// order.
func (w *World) RolledPods() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.co.rolled...)
}

// KillOperatorAfter makes the running stand-in die right after its next action a (the
// action took effect; its pending writes are lost); the next step restarts it.
func (w *World) KillOperatorAfter(a standin.Action) {
	w.co.step.Lock()
	defer w.co.step.Unlock()
	w.mu.Lock()
	w.co.killAfter = a
	w.mu.Unlock()
	w.co.op.KillAfter(a)
}

// PauseOperatorSteps stops (true) or lets (false) the plugin's requests step the stand-in.
func (w *World) PauseOperatorSteps(paused bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.co.paused = paused
}

// SettleOperator steps the stand-in until it has nothing to do (idle twice in a row)
// and returns its actions (with Opts.OtherDC, a step's action on the other datacenter
// when it made none on dc1); at most max steps.
func (w *World) SettleOperator(max int) []standin.Action {
	w.co.step.Lock()
	defer w.co.step.Unlock()
	var out []standin.Action
	idle := 0
	for i := 0; i < max && idle < 2; i++ {
		a := w.stepOperator()
		if a == "" {
			idle++
			continue
		}
		idle = 0
		out = append(out, a)
	}
	return out
}

// OperatorActions lists every action of every stand-in process, in order.
func (w *World) OperatorActions() []standin.Action {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]standin.Action(nil), w.co.actions...)
}

// OperatorKills lists the actions after which a stand-in process was killed.
func (w *World) OperatorKills() []standin.Action {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]standin.Action(nil), w.co.killed...)
}

// OperatorWaiting says what the running stand-in waited for at its last idle step.
func (w *World) OperatorWaiting() string { return w.co.op.Waiting() }

// OperatorEvents lists the stand-in's writes ("<verb> <resource> <name>"), in order.
func (w *World) OperatorEvents() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.co.events...)
}

// OperatorErrors lists the stand-in's failed steps and its unsafe writes.
func (w *World) OperatorErrors() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.co.errs...)
}

// ScaleCassOperator scales the cass-operator Deployment to n replicas (0: it is down), as
// a user would; not a side effect of the plugin.
func (w *World) ScaleCassOperator(n int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	obj, err := w.Kube.Tracker().Get(deployGVR, w.NS, CassOperatorDeployment)
	if err != nil {
		w.t.Fatal(err)
	}
	d := obj.(*appsv1.Deployment).DeepCopy()
	d.Spec.Replicas = &n
	if err := w.Kube.Tracker().Update(deployGVR, d, w.NS); err != nil {
		w.t.Fatal(err)
	}
	w.deploymentController(w.NS, CassOperatorDeployment)
}

// kubelet sets each Cassandra pod's Ready condition from its node: the JVM runs, the
// node joined and has not left (the management API's readiness probe). Called with
// w.mu held.
func (w *World) kubelet() {
	l, err := w.Kube.Tracker().List(podsGVR, corev1.SchemeGroupVersion.WithKind("Pod"), w.NS)
	if err != nil {
		return
	}
	for _, p := range l.(*corev1.PodList).Items {
		if p.Labels[cassop.LabelManagedBy] != cassop.ManagedByValue || p.Status.Phase != corev1.PodRunning {
			continue
		}
		ready := corev1.ConditionFalse
		if n, err := w.Cass.Node(p.Name); err == nil && n.Running && !n.Joining && !n.Left && n.Address == p.Status.PodIP {
			ready = corev1.ConditionTrue
		}
		if len(p.Status.Conditions) == 1 && p.Status.Conditions[0].Type == corev1.PodReady && p.Status.Conditions[0].Status == ready {
			continue
		}
		np := p.DeepCopy()
		np.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}
		w.rv++
		np.ResourceVersion = fmt.Sprintf("%d", 100+w.rv)
		_ = w.Kube.Tracker().Update(podsGVR, np, w.NS)
	}
	// The StatefulSet controller's status: its pods and the ready ones.
	sl, err := w.Kube.Tracker().List(stsGVR, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), w.NS)
	if err != nil {
		return
	}
	pl, _ := w.Kube.Tracker().List(podsGVR, corev1.SchemeGroupVersion.WithKind("Pod"), w.NS)
	for _, s := range sl.(*appsv1.StatefulSetList).Items {
		var n, ready int32
		for _, p := range pl.(*corev1.PodList).Items {
			if !strings.HasPrefix(p.Name, s.Name+"-") {
				continue
			}
			n++
			if len(p.Status.Conditions) > 0 && p.Status.Conditions[0].Status == corev1.ConditionTrue {
				ready++
			}
		}
		if s.Status.Replicas == n && s.Status.ReadyReplicas == ready {
			continue
		}
		ns := s.DeepCopy()
		ns.Status.Replicas, ns.Status.ReadyReplicas, ns.Status.AvailableReplicas = n, ready, ready
		_ = w.Kube.Tracker().Update(stsGVR, ns, w.NS)
	}
}

// DC returns the CassandraDatacenter.
func (w *World) DC() *unstructured.Unstructured {
	w.t.Helper()
	u, err := w.Dyn.Tracker().Get(DCGVR, w.NS, "dc1")
	if err != nil {
		w.t.Fatal(err)
	}
	return u.(*unstructured.Unstructured)
}

// NodeStatuses lists the DC's status.nodeStatuses keys, sorted.
func (w *World) NodeStatuses() []string {
	ns, _, _ := unstructured.NestedMap(w.DC().Object, "status", "nodeStatuses")
	var out []string
	for k := range ns {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// DCCondition is the status of one of the DC's conditions ("" when absent).
func (w *World) DCCondition(t string) string {
	conds, _, _ := unstructured.NestedSlice(w.DC().Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == t {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// PodLabel is a label of a pod ("" when the pod or the label is absent).
func (w *World) PodLabel(pod, key string) string {
	obj, err := w.Kube.Tracker().Get(podsGVR, w.NS, pod)
	if err != nil {
		return ""
	}
	return obj.(*corev1.Pod).Labels[key]
}

// AssertDrivenConverged checks the end state of a scale of the cass-operator world to
// size nodes: spec.size, each rack's StatefulSet at its SplitRacks count with exactly
// its pods (Started, Ready) and server-data claims, nodeStatuses listing exactly those
// pods, the operator Ready and not resizing, the checkpoint gone and a last-operation
// record left, no safety violation by anyone.
func (w *World) AssertDrivenConverged(size int, label string) {
	w.t.Helper()
	dc := w.DC()
	if got, _, _ := unstructured.NestedInt64(dc.Object, "spec", "size"); int(got) != size {
		w.t.Errorf("%s: spec.size is %d, want %d", label, got, size)
	}
	pods := " " + strings.Join(w.PodNames(), " ") + " "
	pvcs := " " + strings.Join(w.PVCNames(), " ") + " "
	var want []string
	for i, r := range w.Racks {
		n := cassop.SplitRacks(size, len(w.Racks))[i]
		sts := w.stsName(r)
		if got := w.Replicas(r); got != n {
			w.t.Errorf("%s: StatefulSet %s has %d replicas, want %d", label, sts, got, n)
		}
		for k := 0; k < n+4; k++ {
			pod := fmt.Sprintf("%s-%d", sts, k)
			keep := k < n
			if strings.Contains(pods, " "+pod+" ") != keep {
				w.t.Errorf("%s: pod %s present=%v, want %v", label, pod, !keep, keep)
			}
			if strings.Contains(pvcs, " server-data-"+pod+" ") != keep {
				w.t.Errorf("%s: PVC server-data-%s present=%v, want %v", label, pod, !keep, keep)
			}
			if !keep {
				continue
			}
			want = append(want, pod)
			if s := w.PodLabel(pod, cassop.LabelNodeState); s != cassop.StateStarted {
				w.t.Errorf("%s: pod %s node-state %q, want Started", label, pod, s)
			}
			if n, err := w.Cass.Node(pod); err != nil || !n.Running || n.PeerCode != "UN" {
				w.t.Errorf("%s: node %s: %+v %v, want UN", label, pod, n, err)
			}
		}
	}
	sort.Strings(want)
	if got := w.NodeStatuses(); strings.Join(got, " ") != strings.Join(want, " ") {
		w.t.Errorf("%s: nodeStatuses %v, want %v", label, got, want)
	}
	if p, _, _ := unstructured.NestedString(dc.Object, "status", "cassandraOperatorProgress"); p != "Ready" {
		w.t.Errorf("%s: cassandraOperatorProgress %q, want Ready", label, p)
	}
	for _, c := range []string{"ScalingDown", "ScalingUp"} {
		if s := w.DCCondition(c); s != "False" {
			w.t.Errorf("%s: condition %s is %q, want False", label, c, s)
		}
	}
	if _, ok := dc.GetAnnotations()[checkpoint.Annotation]; ok {
		w.t.Errorf("%s: checkpoint annotation still present", label)
	}
	if _, ok := dc.GetAnnotations()[checkpoint.LastOperationAnnotation]; !ok {
		w.t.Errorf("%s: no last-operation record", label)
	}
	if v := w.Violations(); len(v) > 0 {
		w.t.Errorf("%s: safety violations: %v", label, v)
	}
	if e := w.OperatorErrors(); len(e) > 0 {
		w.t.Errorf("%s: operator errors: %v", label, e)
	}
}
