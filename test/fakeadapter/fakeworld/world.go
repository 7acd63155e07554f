// Package fakeworld is the fake cluster of the neutral adapter (test/fakeadapter), for
// the core's unit tests: client-go's fake clientsets with the API server's write
// preconditions (resourceVersion on merge patches, JSON-patch tests answered 422, UID on
// pod and claim deletes), a StatefulSet controller (pods, their claims and their
// Cassandra nodes follow the replicas), a Deployment controller for the operator, a
// record of every side effect, and a simulated Cassandra (test/sim) behind a fake pod
// exec. Everything it creates is named by the fake adapter, never by a real operator.
// It has no crash injection nor changing-world matrix: those test the composed CLI
// (internal/cli on test/world).
package fakeworld

import (
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/watchlist"
)

// World is a fake Kubernetes holding one FakeCassandra and its racks, plus the
// simulated Cassandra of its pods.
type World struct {
	t     *testing.T
	NS    string
	Name  string
	Kube  *kubefake.Clientset
	Dyn   *dynamicfake.FakeDynamicClient
	Cass  *sim.Store
	DCs   []string
	Racks []string
	Nodes int

	// mu guards what follows and every write's bookkeeping.
	mu           sync.Mutex
	rv           int
	violations   []string
	incarnations map[string]int
	nextIP       int
	joinFails    map[string]bool
	pendingPods  map[string]bool
	startTime    time.Duration
	events       []Event
}

// Opts shape a world.
type Opts struct {
	// Version is Cassandra's (default 4.1).
	Version string
	// DCs and Racks: every datacenter has every rack (default dc1, rack1).
	DCs, Racks []string
	// Nodes is every rack's count and replicas.
	Nodes int
	// RF is the replication factor of the simulated keyspaces (default 1).
	RF int
	// DecommissionTime is how long a simulated decommission takes (default instant).
	DecommissionTime time.Duration
	// JoinTime is how long a node of a pod the StatefulSet controller creates
	// bootstraps before it is UN (0: at once); JoinFails lists pods whose node never
	// finishes; PendingPods lists pods created unschedulable (Pending).
	JoinTime    time.Duration
	JoinFails   []string
	PendingPods []string
	// StartTime is how long after a pod is created its Cassandra starts and the pod
	// turns Ready (0: at once).
	StartTime time.Duration
	// Operator adds the running operator Deployment OperatorName (1 replica, one pod).
	Operator bool
	// NoWatchList makes the server refuse a watch's initial events (before 1.32).
	NoWatchList bool
}

// OperatorName is the fake operator's Deployment (with Opts.Operator), and OperatorUID
// its UID.
const (
	OperatorName = "fake-operator"
	OperatorUID  = "dep-fake-operator"
)

// ClusterUID is the FakeCassandra's UID.
const ClusterUID = "fc-uid-1"

// GVR is the FakeCassandra resource as the world serves it.
func GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: fakeadapter.Group, Version: fakeadapter.Version, Resource: fakeadapter.Resource}
}

// New builds cluster "demo" in namespace "cassandra": every rack a StatefulSet of Nodes
// pods, each with its data claim and a UN node.
func New(t *testing.T, o Opts) *World {
	t.Helper()
	if o.Version == "" {
		o.Version = "4.1"
	}
	if len(o.DCs) == 0 {
		o.DCs = []string{"dc1"}
	}
	if len(o.Racks) == 0 {
		o.Racks = []string{"rack1"}
	}
	if o.RF == 0 {
		o.RF = 1
	}
	w := &World{t: t, NS: "cassandra", Name: "demo", DCs: o.DCs, Racks: o.Racks, Nodes: o.Nodes,
		incarnations: map[string]int{}, nextIP: 10, joinFails: map[string]bool{}, pendingPods: map[string]bool{}, startTime: o.StartTime}
	for _, p := range o.JoinFails {
		w.joinFails[p] = true
	}
	for _, p := range o.PendingPods {
		w.pendingPods[p] = true
	}
	var dcs []any
	for _, dc := range o.DCs {
		var racks []any
		for _, r := range o.Racks {
			racks = append(racks, map[string]any{"name": r, "members": int64(o.Nodes)})
		}
		dcs = append(dcs, map[string]any{"name": dc, "racks": racks})
	}
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": fakeadapter.Group + "/" + fakeadapter.Version, "kind": fakeadapter.Kind,
		"metadata": map[string]any{"name": w.Name, "namespace": w.NS, "uid": ClusterUID, "resourceVersion": "1"},
		"spec":     map[string]any{"version": o.Version + ".0", "datacenters": dcs},
	}}
	w.Dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{GVR(): fakeadapter.ListKind}, cr)
	w.Kube = kubefake.NewSimpleClientset()
	w.Kube.Resources = []*metav1.APIResourceList{{GroupVersion: fakeadapter.Group + "/" + fakeadapter.Version,
		APIResources: []metav1.APIResource{{Name: fakeadapter.Resource, Namespaced: true, Kind: fakeadapter.Kind}}}}
	var specs []sim.NodeSpec
	for _, dc := range o.DCs {
		for _, r := range o.Racks {
			specs = append(specs, w.addRack(dc, r, o.Nodes)...)
		}
	}
	w.Cass = sim.NewMemory(sim.Options{Version: o.Version, RF: o.RF, DecommissionTime: o.DecommissionTime, JoinTime: o.JoinTime}, specs, nil)
	if o.Operator {
		one := int32(1)
		sel := map[string]string{"app": OperatorName}
		labels := map[string]string{"app": OperatorName, fakeadapter.LabelOperator: ""}
		w.add(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: OperatorName, Namespace: w.NS, Labels: labels, UID: OperatorUID, ResourceVersion: "1"},
			Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: sel}}})
		w.deploymentController(w.NS, OperatorName)
	}
	w.install(o.NoWatchList)
	return w
}

// addRack adds a rack's StatefulSet with n pods, their claims, and returns their nodes.
func (w *World) addRack(dc, rack string, n int) []sim.NodeSpec {
	sts := fakeadapter.StatefulSetName(w.Name, dc, rack)
	labels := fakeadapter.RackLabels(w.Name, dc, rack)
	replicas := int32(n)
	tpl := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: fakeadapter.ClaimTemplate, Labels: labels}}
	w.add(&appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: sts, Namespace: w.NS, Labels: labels, UID: types.UID("sts-" + sts), ResourceVersion: "1"},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{tpl}},
	})
	var specs []sim.NodeSpec
	for i := 0; i < n; i++ {
		pod := fmt.Sprintf("%s-%d", sts, i)
		claim := fakeadapter.ClaimName(pod)
		w.nextIP++
		addr := address(w.nextIP)
		w.incarnations["pod/"+pod], w.incarnations["pvc/"+claim] = 1, 1
		w.add(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: w.NS, Labels: labels, UID: types.UID("pod-" + pod), ResourceVersion: "1"},
			Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: tpl.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: addr,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		})
		w.add(claimOf(w.NS, claim, labels, types.UID("pvc-"+claim)))
		specs = append(specs, sim.NodeSpec{Pod: pod, HostID: hostID(w.nextIP), Address: addr, DC: dc, Rack: rack, Load: "1.2 GiB"})
	}
	return specs
}

// claimOf is a bound 10Gi claim.
func claimOf(ns, name string, labels map[string]string, uid types.UID) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, UID: uid, ResourceVersion: "1"},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}}
}

// address is the n-th node's address; hostID its Host ID.
func address(n int) string { return fmt.Sprintf("10.244.0.%d", n) }
func hostID(n int) string  { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// install puts the world's reactors on its clients.
func (w *World) install(noWatchList bool) {
	w.Kube.PrependWatchReactor("pods", watchlist.Pods(w.Kube.Tracker(), noWatchList))
	w.Kube.PrependReactor("*", "*", w.react(w.Kube.Tracker()))
	w.Dyn.PrependReactor("*", "*", w.react(w.Dyn.Tracker()))
}

func (w *World) add(obj runtime.Object) {
	w.t.Helper()
	if err := w.Kube.Tracker().Add(obj); err != nil {
		w.t.Fatal(err)
	}
}

// Adapter is the fake adapter on the world's clients.
func (w *World) Adapter() *fakeadapter.Adapter {
	return &fakeadapter.Adapter{Dynamic: w.Dyn, Kube: w.Kube, Discovery: w.Kube.Discovery(), Version: fakeadapter.Version}
}

// STS is the StatefulSet of rack of dc1; Pod its pod ordinal.
func (w *World) STS(rack string) string { return fakeadapter.StatefulSetName(w.Name, "dc1", rack) }
func (w *World) Pod(rack string, ordinal int) string {
	return fmt.Sprintf("%s-%d", w.STS(rack), ordinal)
}

// CR returns the FakeCassandra.
func (w *World) CR() *unstructured.Unstructured {
	w.t.Helper()
	u, err := w.Dyn.Tracker().Get(GVR(), w.NS, w.Name)
	if err != nil {
		w.t.Fatal(err)
	}
	return u.(*unstructured.Unstructured)
}

// Members is the count the FakeCassandra asks for rack of dc1.
func (w *World) Members(rack string) int {
	w.t.Helper()
	cl, err := w.Adapter().FromObject(w.CR())
	if err != nil {
		w.t.Fatal(err)
	}
	dc, _ := cl.DC("dc1")
	return dc.RackNodes()[rack]
}

// Replicas is the replicas of rack's StatefulSet (dc1).
func (w *World) Replicas(rack string) int {
	w.t.Helper()
	obj, err := w.Kube.Tracker().Get(stsGVR(), w.NS, w.STS(rack))
	if err != nil {
		w.t.Fatal(err)
	}
	return int(*obj.(*appsv1.StatefulSet).Spec.Replicas)
}

// PodUID returns a pod's UID ("" when it does not exist).
func (w *World) PodUID(name string) string {
	obj, err := w.Kube.Tracker().Get(podsGVR(), w.NS, name)
	if err != nil {
		return ""
	}
	return string(obj.(*corev1.Pod).UID)
}

// Incarnations is how many pods (kind "pod") or claims ("pvc") were created under name,
// the initial one included.
func (w *World) Incarnations(kind, name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.incarnations[kind+"/"+name]
}

// Violations lists the safety rules broken so far (a claim of a live pod deleted, a
// delete without a UID precondition).
func (w *World) Violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.violations...)
}

// DeploymentReplicas returns a Deployment's replicas.
func (w *World) DeploymentReplicas(name string) int32 {
	w.t.Helper()
	obj, err := w.Kube.Tracker().Get(deployGVR(), w.NS, name)
	if err != nil {
		w.t.Fatal(err)
	}
	return *obj.(*appsv1.Deployment).Spec.Replicas
}
