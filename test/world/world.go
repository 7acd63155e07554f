// Package world is a fake Kubernetes for unit tests: client-go's fake clientsets with
// resourceVersion and UID preconditions, a StatefulSet controller, PVC-deletion
// bookkeeping and crash injection, plus a simulated Cassandra (test/sim) behind a fake
// pod exec. Its API objects and Cassandra state outlive the "processes" that use it.
package world

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/watchlist"
)

// crash is what a simulated process death panics with, right after a side effect.
type Crash struct{ Point int }

// world is a fake Kubernetes (client-go fakes with resourceVersion preconditions, a
// StatefulSet controller and PVC-deletion bookkeeping) plus a simulated Cassandra. Its
// API objects and Cassandra state outlive the "processes" that run commands against it.
type World struct {
	t *testing.T
	// Kinds are the operation kinds the plugin under test knows (its Options' registry):
	// the changes that rewrite the checkpoint (Takeover) decode and encode it with them.
	Kinds checkpoint.Schemas
	NS    string
	Name  string
	Kube  *kubefake.Clientset
	Dyn   *dynamicfake.FakeDynamicClient
	Cass  *sim.Store
	Racks []string
	Nodes int

	mu          sync.Mutex
	rv          int
	sideEffects int
	crashAt     int // 0 = never
	violations  []string
	requests    int
	faultAt     int
	faultErr    error
	faultDesc   string
	// Deny lists "verb resource[/subresource]" pairs that SelfSubjectAccessReviews refuse.
	Deny    map[string]bool
	nextPID int
	// OnSideEffect, when set, is called after each side effect with its number (e.g. to
	// interrupt the run there, as Ctrl-C would).
	OnSideEffect func(n int)
	running      map[int]bool
	pvcDeletes   []string
	execLog      []string
	// hist records every side effect of every process (history.go).
	hist       history
	streamArgv [][]string // see Stream (tools.go)

	// Set by the options of the same names (see Opts); incarnations counts every pod
	// and PVC created under a name (1 for the initial ones), nextIP the last address used.
	statusSubresource bool
	joinFails         map[string]bool
	pendingPods       map[string]bool
	noAutoBootstrap   map[string]bool
	incarnations      map[string]int
	startTime         time.Duration
	// starting are the pods (name: UID) whose Cassandra starts StartTime after they
	// were created and has not yet.
	starting   map[string]types.UID
	nextIP     int
	podDeletes []string
	ipv6       bool
	// chg is what the changing-world checks keep (matrix.go).
	chg changeState
	// co is the cass-operator shape's stand-in (cassoperator.go); nil for CassKop's.
	co *cassOpState
	// boot is CassKop's bootstrap init container: its ConfigMap, the JVM options each
	// node started with, the failures (casskopboot.go).
	boot casskopBoot
}

// CCGVR is the CassandraCluster resource of the fake world.
var CCGVR = schema.GroupVersionResource{Group: casskop.Group, Version: "v2", Resource: casskop.Resource}

type Opts struct {
	Version string
	Racks   []string
	// DCs are the datacenters, each with every rack (default dc1; more than one implies Topology).
	DCs   []string
	Nodes int
	// Topology: whether the CR has spec.topology (else the defaults dc1/rack1 apply).
	Topology bool
	Status   map[string]any
	ExtraPVC bool // a storageConfigs claim template besides data
	RF       int  // replication factor of the simulated keyspaces (default 1)
	// DecommissionTime is how long a simulated decommission takes (default instant).
	DecommissionTime time.Duration
	// Operator adds a running CassKop Deployment "casskop" (1 replica, one pod) that a
	// fake Deployment controller scales.
	Operator bool
	// StatusSubresource makes the CassandraCluster CRD serve a /status subresource (the
	// 2026 CRD): discovery lists cassandraclusters/status, writes to the main resource
	// leave status alone and /status writes change only status. Without it (the 2022
	// CRD) a /status request is NotFound and the main resource carries status.
	StatusSubresource bool
	// JoinTime is how long a node of a pod the StatefulSet controller creates bootstraps
	// (JOINING, peers UJ) before it is UN; 0 = at once.
	JoinTime time.Duration
	// JoinFails lists pods whose node, once created, never finishes joining.
	JoinFails []string
	// PendingPods lists pods the StatefulSet controller creates unschedulable (Pending).
	PendingPods []string
	// NoAutoBootstrap lists pods whose Cassandra, started on a fresh claim, has
	// auto_bootstrap: false: a replacement then fails to start (R3) and restarts in a loop.
	NoAutoBootstrap []string
	// StartTime is how long after the StatefulSet controller creates a pod its Cassandra
	// starts and the pod turns Ready (0 = at once). A restarted node is down meanwhile.
	StartTime time.Duration
	// NoWatchList makes the server refuse a watch's initial events, as before 1.32 (the
	// WatchList gate off).
	NoWatchList bool
	// IPv6 gives the pods IPv6 addresses: Cassandra prints them in full
	// (fd00:10:244:0:0:0:0:b), the pods' status.podIP short (fd00:10:244::b) (changes.go).
	IPv6 bool
	// CassOperator builds the cass-operator shape instead (cassoperator.go): a
	// CassandraDatacenter dc1 of size Nodes split over Racks, played by the stand-in.
	CassOperator bool
	// OtherDC (cass-operator shape only) adds a second CassandraDatacenter of that name
	// to the cluster, settled, with OtherDCNodes nodes (default Nodes) over OtherDCRacks
	// (default Racks), in the same ring, reconciled by the stand-in too (cassoperator.go).
	OtherDC      string
	OtherDCRacks []string
	OtherDCNodes int
	// LabelStartedAfter: the stand-in labels a ready pod Started only on that many
	// passes later (standin.Config.LabelStartedAfter), as the real operator does on a
	// later reconcile.
	LabelStartedAfter int
	// StreamTimeScale, HardwareRate and ExecCost are the simulated Cassandra's
	// (sim.Options): metered streaming at the sender's stream throughput, the most a
	// node sends, and the cost of each nodetool call.
	StreamTimeScale, HardwareRate float64
	ExecCost                      time.Duration
	// NoConfigMap: the CassandraCluster names no ConfigMap (spec.configMapName unset),
	// so CassKop runs no pre_run.sh. By default it names "demo-config", which exists
	// (casskopboot.go).
	NoConfigMap bool
	// PreRun is the user's pre_run.sh in that ConfigMap ("" = no such key).
	PreRun string
	// Replication, SchemaAgreeTime and CQLAuth are the simulated Cassandra's
	// (sim.Options): keyspaces' initial replication maps (keyspace → DC → replicas), how
	// long the other nodes keep the old schema after a cqlsh ALTER KEYSPACE, and the
	// credentials cqlsh must give (PasswordAuthenticator).
	Replication     map[string]map[string]int
	SchemaAgreeTime time.Duration
	CQLAuth         *sim.JMXAuth
}

// simOptions are the simulated Cassandra's options from o.
func (o Opts) simOptions() sim.Options {
	return sim.Options{Version: o.Version, RF: o.RF, DecommissionTime: o.DecommissionTime, JoinTime: o.JoinTime,
		StreamTimeScale: o.StreamTimeScale, HardwareRate: o.HardwareRate, ExecCost: o.ExecCost,
		Replication: o.Replication, SchemaAgreeTime: o.SchemaAgreeTime, CQLAuth: o.CQLAuth}
}

// New builds a CassKop-shaped cluster "demo" in namespace "cassandra".
func New(t *testing.T, o Opts) *World {
	t.Helper()
	if o.Version == "" {
		o.Version = "4.1"
	}
	if len(o.Racks) == 0 {
		o.Racks = []string{"rack1"}
	}
	if len(o.DCs) == 0 {
		o.DCs = []string{"dc1"}
	}
	if len(o.DCs) > 1 {
		o.Topology = true
	}
	w := &World{t: t, NS: "cassandra", Name: "demo", Racks: o.Racks, Nodes: o.Nodes, statusSubresource: o.StatusSubresource,
		joinFails: map[string]bool{}, pendingPods: map[string]bool{}, noAutoBootstrap: map[string]bool{}, incarnations: map[string]int{}, startTime: o.StartTime, ipv6: o.IPv6}
	for _, p := range o.JoinFails {
		w.joinFails[p] = true
	}
	for _, p := range o.NoAutoBootstrap {
		w.noAutoBootstrap[p] = true
	}
	for _, p := range o.PendingPods {
		w.pendingPods[p] = true
	}
	if o.CassOperator {
		if o.RF == 0 {
			o.RF = 1
		}
		w.Kube = kubefake.NewSimpleClientset()
		newCassOperator(t, w, o)
		w.install(o)
		w.installCassOperator()
		return w
	}
	scheme := runtime.NewScheme()
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "db.orange.com/v2", "kind": "CassandraCluster",
		"metadata": map[string]any{"name": w.Name, "namespace": w.NS, "uid": "cc-uid-1", "resourceVersion": "1"},
		"spec":     map[string]any{"nodesPerRacks": int64(o.Nodes), "serverVersion": o.Version + ".0"},
	}}
	w.nameConfigMap(cr.Object["spec"].(map[string]any), o)
	if o.Topology {
		var racks []any
		for _, r := range o.Racks {
			racks = append(racks, map[string]any{"name": r})
		}
		cr.Object["spec"].(map[string]any)["nodesPerRacks"] = int64(1)
		var dcs []any
		for _, dc := range o.DCs {
			dcs = append(dcs, map[string]any{"name": dc, "nodesPerRacks": int64(o.Nodes), "rack": racks})
		}
		cr.Object["spec"].(map[string]any)["topology"] = map[string]any{"dc": dcs}
	}
	if o.Status != nil {
		cr.Object["status"] = o.Status
	}
	w.Dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{CCGVR: "CassandraClusterList"}, cr)
	w.Kube = kubefake.NewSimpleClientset()
	w.createConfigMap(o)
	w.Kube.Resources = []*metav1.APIResourceList{{GroupVersion: "db.orange.com/v2", APIResources: []metav1.APIResource{{Name: casskop.Resource, Namespaced: true, Kind: casskop.Kind}}}}
	if o.StatusSubresource {
		w.Kube.Resources[0].APIResources = append(w.Kube.Resources[0].APIResources, metav1.APIResource{Name: casskop.Resource + "/status", Namespaced: true, Kind: casskop.Kind})
	}
	var specs []sim.NodeSpec
	ip := 10
	for _, dc := range o.DCs {
		for _, r := range o.Racks {
			sts := casskop.StatefulSetName(w.Name, dc, r)
			labels := casskop.RackLabels(w.Name, dc, r)
			replicas := int32(o.Nodes)
			tpls := []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: labels}}}
			if o.ExtraPVC {
				tpls = append(tpls, corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "cassandra-logs", Labels: labels}})
			}
			w.add(&appsv1.StatefulSet{
				ObjectMeta: metav1.ObjectMeta{Name: sts, Namespace: w.NS, Labels: labels, UID: types.UID("sts-" + r), ResourceVersion: "1"},
				Spec:       appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels}, VolumeClaimTemplates: tpls},
			})
			for i := 0; i < o.Nodes; i++ {
				pod := fmt.Sprintf("%s-%d", sts, i)
				ip++
				addr := w.simAddress(ip)
				w.incarnations["pod/"+pod] = 1
				var vols []corev1.Volume
				for _, tpl := range tpls {
					vols = append(vols, corev1.Volume{Name: tpl.Name, VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: tpl.Name + "-" + pod}}})
				}
				w.add(&corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: w.NS, Labels: labels, UID: types.UID("pod-" + pod), ResourceVersion: "1"},
					Spec:       corev1.PodSpec{Volumes: vols},
					Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: podAddress(addr),
						Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
				})
				for _, tpl := range tpls {
					name := tpl.Name + "-" + pod
					w.incarnations["pvc/"+name] = 1
					w.add(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS, Labels: labels, UID: types.UID("pvc-" + name), ResourceVersion: "1"},
						Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}})
				}
				specs = append(specs, sim.NodeSpec{Pod: pod, HostID: fmt.Sprintf("00000000-0000-4000-8000-%012d", ip), Address: addr, DC: dc, Rack: r, Load: "1.2 GiB"})
			}
		}
	}
	if o.RF == 0 {
		o.RF = 1
	}
	w.nextIP = ip
	w.Cass = sim.NewMemory(o.simOptions(), specs, nil)
	if o.Operator {
		one := int32(1)
		sel := map[string]string{"app": "casskop"}
		w.add(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "casskop", Namespace: w.NS, Labels: sel, UID: "dep-casskop", ResourceVersion: "1"},
			Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: sel}}})
		w.deploymentController(w.NS, "casskop")
	}
	w.install(o)
	return w
}

// install puts the world's reactors on its clients.
func (w *World) install(o Opts) {
	w.Kube.PrependWatchReactor("pods", watchlist.Pods(w.Kube.Tracker(), o.NoWatchList))
	w.Kube.PrependReactor("*", "*", w.react(w.Kube.Tracker()))
	w.Dyn.PrependReactor("*", "*", w.react(w.Dyn.Tracker()))
	// Installed last, so it runs first: every API request counts, and one can fail.
	w.Kube.PrependReactor("*", "*", w.fault)
	w.Dyn.PrependReactor("*", "*", w.fault)
}

func (w *World) add(obj runtime.Object) {
	w.t.Helper()
	if err := w.Kube.Tracker().Add(obj); err != nil {
		w.t.Fatal(err)
	}
}

// react handles every write: resourceVersion and UID preconditions, the StatefulSet
// controller, bookkeeping, then the crash injection right after the write took effect.
func (w *World) react(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	apply := k8stesting.ObjectReaction(tracker)
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		verb := action.GetVerb()
		if verb != "create" && verb != "update" && verb != "patch" && verb != "delete" {
			return false, nil, nil
		}
		if action.GetResource().Resource == "events" {
			// Events are the story, not the state: the plugin writes them in batches
			// from a timer, so they are neither crash points nor side effects.
			return false, nil, nil
		}
		if action.GetResource().Resource == "selfsubjectaccessreviews" {
			// An access review is a question, not a write.
			r := action.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview).DeepCopy()
			ra := r.Spec.ResourceAttributes
			key := ra.Verb + " " + ra.Resource
			if ra.Subresource != "" {
				key += "/" + ra.Subresource
			}
			w.mu.Lock()
			r.Status.Allowed = !w.Deny[key]
			w.mu.Unlock()
			return true, r, nil
		}
		gvr := action.GetResource()
		w.mu.Lock()
		defer w.mu.Unlock()
		snap := w.beforeAction(action)
		protect := false
		before, err := w.crBefore(tracker, action)
		if err != nil {
			return true, nil, err
		}
		switch a := action.(type) {
		case k8stesting.PatchAction:
			if a.GetPatchType() == types.JSONPatchType {
				// The API server answers a failed "test" operation with 422; the fake
				// tracker would return a bare error.
				if err := jsonPatchApplies(tracker, gvr, a); err != nil {
					return true, nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", gvr.GroupResource(), a.GetName(), err.Error(), 0, false)
				}
			}
			if a.GetPatchType() == types.MergePatchType {
				var body struct {
					Metadata struct {
						ResourceVersion string `json:"resourceVersion"`
					} `json:"metadata"`
				}
				_ = json.Unmarshal(a.GetPatch(), &body)
				if want := body.Metadata.ResourceVersion; want != "" {
					cur, err := tracker.Get(gvr, a.GetNamespace(), a.GetName())
					if err != nil {
						return true, nil, err
					}
					m, _ := metaOf(cur)
					if m.GetResourceVersion() != want {
						return true, nil, apierrors.NewConflict(gvr.GroupResource(), a.GetName(), fmt.Errorf("the object has been modified"))
					}
				}
			}
		case k8stesting.DeleteAction:
			if err := deletePreconditions(tracker, gvr, a); err != nil {
				return true, nil, err
			}
			if pre := a.GetDeleteOptions().Preconditions; gvr.Resource == "cassandratasks" && (pre == nil || pre.UID == nil || pre.ResourceVersion == nil) {
				// A task is withdrawn only as the object judged unstarted.
				w.violations = append(w.violations, "CassandraTask "+a.GetName()+" deleted without UID and resourceVersion preconditions")
			}
			if gvr.Resource == "persistentvolumeclaims" {
				cur, err := tracker.Get(gvr, a.GetNamespace(), a.GetName())
				if err == nil {
					pvc := cur.(*corev1.PersistentVolumeClaim)
					if pre := a.GetDeleteOptions().Preconditions; pre != nil && pre.UID != nil && *pre.UID != pvc.UID {
						return true, nil, apierrors.NewConflict(gvr.GroupResource(), a.GetName(), fmt.Errorf("precondition failed: UID"))
					}
					if pre := a.GetDeleteOptions().Preconditions; pre == nil || pre.UID == nil {
						w.violations = append(w.violations, "PVC "+a.GetName()+" deleted without a UID precondition")
					}
					pod := claimPod(a.GetName())
					if _, err := w.Kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), a.GetNamespace(), pod); err == nil {
						if w.chg.replacing[pod] {
							// A replace deletes the dead node's claims, then its pod:
							// pvc-protection holds them until the pod is gone.
							protect = true
						} else {
							w.violations = append(w.violations, "PVC "+a.GetName()+" deleted while pod "+pod+" exists")
						}
					}
					w.pvcDeletes = append(w.pvcDeletes, a.GetName())
				}
			}
			if gvr.Resource == "pods" {
				if err := w.checkPodDelete(tracker, a); err != nil {
					return true, nil, err
				}
			}
		}
		hsnap := w.historyBefore(tracker, action)
		var handled bool
		var obj runtime.Object
		if protect {
			handled = w.protectClaim(action.GetNamespace(), action.(k8stesting.DeleteAction).GetName())
		}
		if d, ok := action.(k8stesting.DeleteAction); ok && !handled && w.co != nil {
			handled = w.holdDeletion(tracker, gvr, d.GetNamespace(), d.GetName())
		}
		if !handled {
			handled, obj, err = apply(action)
		}
		if err != nil {
			return handled, obj, err
		}
		if before != nil {
			obj = w.crAfter(tracker, action, before, obj)
		}
		w.afterAction(action, snap)
		if verb == "delete" && gvr.Resource == "pods" {
			w.releaseClaims(action.GetNamespace(), action.(k8stesting.DeleteAction).GetName())
			w.podDeleted(action.GetNamespace(), action.(k8stesting.DeleteAction).GetName())
		}
		if verb == "create" {
			if cur := w.created(tracker, gvr, action.(k8stesting.CreateAction)); cur != nil {
				obj = cur
			}
		}
		if verb == "patch" || verb == "update" {
			w.rv++
			if cur, gerr := tracker.Get(gvr, action.GetNamespace(), objName(action)); gerr == nil {
				cur = cur.DeepCopyObject()
				m, _ := metaOf(cur)
				m.SetResourceVersion(fmt.Sprintf("%d", 100+w.rv))
				_ = tracker.Update(gvr, cur, action.GetNamespace())
				obj = cur
			}
			if gvr.Resource == "statefulsets" {
				w.statefulSetController(action.GetNamespace(), objName(action))
			}
			w.finalize(tracker, gvr, action.GetNamespace(), objName(action))
			if gvr.Resource == "deployments" {
				w.deploymentController(action.GetNamespace(), objName(action))
			}
			if gvr.Resource == "deployments" || gvr == CCGVR {
				w.casskopDeleteDCs(action.GetNamespace())
				w.casskopAddDCs(action.GetNamespace())
			}
		}
		w.recordWrite(tracker, action, hsnap)
		w.sideEffects++
		if w.OnSideEffect != nil {
			w.OnSideEffect(w.sideEffects)
		}
		if w.crashAt > 0 && w.sideEffects == w.crashAt {
			panic(Crash{Point: w.sideEffects})
		}
		return handled, obj, err
	}
}

// created gives a created object what the API server does: a UID when it has none, and
// a resourceVersion (one counter with the world's updates). Called with w.mu held.
func (w *World) created(tracker k8stesting.ObjectTracker, gvr schema.GroupVersionResource, a k8stesting.CreateAction) runtime.Object {
	m, err := metaOf(a.GetObject())
	if err != nil {
		return nil
	}
	cur, err := tracker.Get(gvr, a.GetNamespace(), m.GetName())
	if err != nil {
		return nil
	}
	cur = cur.DeepCopyObject()
	cm, _ := metaOf(cur)
	if cm.GetUID() == "" {
		cm.SetUID(w.nextUID(gvr.Resource, cm.GetName()))
	}
	w.rv++
	cm.SetResourceVersion(fmt.Sprintf("%d", 100+w.rv))
	if err := tracker.Update(gvr, cur, a.GetNamespace()); err != nil {
		return nil
	}
	return cur
}

// deletePreconditions applies a delete's UID and resourceVersion preconditions to any
// object, as the API server does (a Conflict when one does not match; storage
// Preconditions.Check). A delete of an object that is gone answers NotFound later.
func deletePreconditions(tracker k8stesting.ObjectTracker, gvr schema.GroupVersionResource, a k8stesting.DeleteAction) error {
	pre := a.GetDeleteOptions().Preconditions
	if pre == nil {
		return nil
	}
	cur, err := tracker.Get(gvr, a.GetNamespace(), a.GetName())
	if err != nil {
		return nil
	}
	m, err := metaOf(cur)
	if err != nil {
		return nil
	}
	if pre.UID != nil && *pre.UID != m.GetUID() {
		return apierrors.NewConflict(gvr.GroupResource(), a.GetName(), fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.UID, m.GetUID()))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != m.GetResourceVersion() {
		return apierrors.NewConflict(gvr.GroupResource(), a.GetName(), fmt.Errorf("Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", *pre.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

func objName(a k8stesting.Action) string {
	switch a := a.(type) {
	case k8stesting.PatchAction:
		return a.GetName()
	case k8stesting.UpdateAction:
		m, _ := metaOf(a.GetObject())
		return m.GetName()
	}
	return ""
}

func metaOf(o runtime.Object) (metav1.Object, error) {
	if u, ok := o.(*unstructured.Unstructured); ok {
		return u, nil
	}
	if m, ok := o.(metav1.Object); ok {
		return m, nil
	}
	return nil, fmt.Errorf("no metadata")
}

// statefulSetController deletes the pods at or above the replica count, as the real one
// does on a scale-down (it leaves the PVCs), and creates the missing pods below it (a
// scale-up, or a deleted pod), with their PVCs and simulated nodes.
func (w *World) statefulSetController(ns, name string) {
	obj, err := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("statefulsets"), ns, name)
	if err != nil {
		return
	}
	sts := obj.(*appsv1.StatefulSet)
	w.deleteStatefulSetPods(sts)
	w.createMissingPods(sts)
}

// InjectFault makes API request number at (counting from 1, every verb) fail with err
// instead of reaching the fake server; 0 disables it. It resets the request count.
func (w *World) InjectFault(at int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.requests, w.faultAt, w.faultErr, w.faultDesc = 0, at, err, ""
}

// Requests is the number of API requests since the last InjectFault, and what the
// injected fault hit.
func (w *World) Requests() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.requests, w.faultDesc
}

func (w *World) fault(action k8stesting.Action) (bool, runtime.Object, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.requests++
	if w.faultAt > 0 && w.requests == w.faultAt {
		w.faultDesc = action.GetVerb() + " " + action.GetResource().Resource
		if action.GetSubresource() != "" {
			w.faultDesc += "/" + action.GetSubresource()
		}
		return true, nil, w.faultErr
	}
	return false, nil, nil
}

// deploymentController keeps one pod per replica of a Deployment (named <deploy>-<i>).
func (w *World) deploymentController(ns, name string) {
	obj, err := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), ns, name)
	if err != nil {
		return
	}
	d := obj.(*appsv1.Deployment)
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	for i := 0; i < 5; i++ {
		pod := fmt.Sprintf("%s-%d", name, i)
		_, err := w.Kube.Tracker().Get(podsGVR, ns, pod)
		exists := err == nil
		want := int32(i) < *d.Spec.Replicas
		switch {
		case want && !exists:
			_ = w.Kube.Tracker().Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns, Labels: d.Spec.Selector.MatchLabels, UID: types.UID("pod-" + pod)}})
		case !want && exists:
			_ = w.Kube.Tracker().Delete(podsGVR, ns, pod)
		}
	}
}

// DeploymentReplicas returns a Deployment's replicas.
func (w *World) DeploymentReplicas(name string) int32 {
	obj, err := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), w.NS, name)
	if err != nil {
		w.t.Fatal(err)
	}
	return *obj.(*appsv1.Deployment).Spec.Replicas
}

// Exec runs the simulated nodetool (or cqlsh, without standard input) "in" a pod; a
// decommission, drain, cleanup, rebuild, removenode (but its status),
// set(interdc)streamthroughput or cqlsh ALTER KEYSPACE call is a side effect (a crash
// point right after it returns).
func (w *World) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	if _, err := w.Kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), w.NS, pod); err != nil {
		return "", "", fmt.Errorf("exec in %s: %w", pod, err)
	}
	tool, args := toolArgs(argv)
	if tool == "" {
		return "", "", fmt.Errorf("not a nodetool or cqlsh command: %v", argv)
	}
	w.restartCrashed()
	var out, errb bytes.Buffer
	var code int
	if tool == "cqlsh" {
		// An exec without stdin: a cqlshrc named /dev/stdin reads nothing (not this
		// test process's own stdin).
		w.checkAlter(pod, args)
		code = w.Cass.RunCQL(ctx, pod, args, strings.NewReader(""), &out, &errb)
	} else {
		w.checkExec(pod, args)
		code = w.Cass.Run(ctx, pod, args, &out, &errb)
	}
	var err error
	if code != 0 {
		err = fmt.Errorf("command terminated with non-zero exit code: %d", code)
	}
	entry, verb := "", ""
	if tool == "nodetool" && len(args) > 0 && (args[0] == "decommission" || args[0] == "drain" || args[0] == "cleanup" || args[0] == "rebuild" || setsThroughput(args) || removes(args)) {
		entry, verb = pod+" "+strings.Join(args, " "), args[0]
		if setsThroughput(args) {
			verb = strings.Join(args, " ") // which limiter, and to what
		}
	}
	if stmt := cqlStatement(args); tool == "cqlsh" && altersSchema(stmt) {
		entry, verb = pod+" cqlsh "+stmt, "cqlsh "+stmt
	}
	if entry != "" {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.execLog = append(w.execLog, entry)
		w.recordExec(pod, verb)
		w.sideEffects++
		if w.OnSideEffect != nil {
			w.OnSideEffect(w.sideEffects)
		}
		if w.crashAt > 0 && w.sideEffects == w.crashAt {
			panic(Crash{Point: w.sideEffects})
		}
	}
	return out.String(), errb.String(), err
}

// Process runs fn as one plugin process that dies right after side effect crashAt
// (0 = never). It reports whether the process died.
func (w *World) Process(crashAt int, fn func()) (crashed bool) {
	w.mu.Lock()
	w.sideEffects, w.crashAt = 0, crashAt
	w.hist.proc++
	proc := w.hist.proc
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.crashAt = 0
		w.mu.Unlock()
		if r := recover(); r != nil {
			if _, ok := r.(Crash); !ok {
				panic(r)
			}
			crashed = true
			w.mu.Lock()
			if w.hist.crashed == nil {
				w.hist.crashed = map[int]bool{}
			}
			w.hist.crashed[proc] = true
			w.mu.Unlock()
		}
	}()
	fn()
	return false
}

// StartProcess registers a simulated plugin process and returns its PID.
func (w *World) StartProcess() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running == nil {
		w.running = map[int]bool{}
	}
	w.nextPID++
	pid := 1000 + w.nextPID
	w.running[pid] = true
	return pid
}

// EndProcess marks a simulated process as gone (it exited or crashed).
func (w *World) EndProcess(pid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.running, pid)
}

// ProcessAlive reports whether a simulated process still runs.
func (w *World) ProcessAlive(pid int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running[pid]
}

// SideEffects is the number of writes and decommission execs of the last Process.
func (w *World) SideEffects() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sideEffects
}

// Violations lists the safety rules broken so far (PVC of a live pod deleted, …).
func (w *World) Violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.violations...)
}

// CR returns the CassandraCluster object.
func (w *World) CR() *unstructured.Unstructured {
	w.t.Helper()
	u, err := w.Dyn.Tracker().Get(w.crGVR(), w.NS, w.crName())
	if err != nil {
		w.t.Fatal(err)
	}
	return u.(*unstructured.Unstructured)
}

func (w *World) PodNames() []string {
	l, _ := w.Kube.Tracker().List(corev1.SchemeGroupVersion.WithResource("pods"), corev1.SchemeGroupVersion.WithKind("Pod"), w.NS)
	var n []string
	for _, p := range l.(*corev1.PodList).Items {
		n = append(n, p.Name)
	}
	return n
}

func (w *World) PVCNames() []string {
	l, _ := w.Kube.Tracker().List(corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), w.NS)
	var n []string
	for _, p := range l.(*corev1.PersistentVolumeClaimList).Items {
		n = append(n, p.Name)
	}
	return n
}

func (w *World) Replicas(rack string) int {
	obj, err := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("statefulsets"), w.NS, w.stsName(rack))
	if err != nil {
		w.t.Fatal(err)
	}
	return int(*obj.(*appsv1.StatefulSet).Spec.Replicas)
}

// AssertConverged checks the end state of a scale-down to target nodes per rack.
func (w *World) AssertConverged(target int, label string) {
	w.t.Helper()
	for _, r := range w.Racks {
		sts := casskop.StatefulSetName(w.Name, "dc1", r)
		if got := w.Replicas(r); got != target {
			w.t.Errorf("%s: StatefulSet %s has %d replicas, want %d", label, sts, got, target)
		}
		pods := strings.Join(w.PodNames(), " ")
		pvcs := strings.Join(w.PVCNames(), " ")
		for i := 0; i < w.Nodes; i++ {
			pod := fmt.Sprintf("%s-%d", sts, i)
			keep := i < target
			if strings.Contains(" "+pods+" ", " "+pod+" ") != keep {
				w.t.Errorf("%s: pod %s present=%v, want %v", label, pod, !keep, keep)
			}
			if strings.Contains(" "+pvcs+" ", " data-"+pod+" ") != keep {
				w.t.Errorf("%s: PVC data-%s present=%v, want %v", label, pod, !keep, keep)
			}
			nv, err := w.Cass.Node(pod)
			if err != nil {
				w.t.Fatalf("%s: %v", label, err)
			}
			want := 0
			if !keep {
				want = 1
			}
			if nv.DecommissionsStarted != want {
				w.t.Errorf("%s: node %s decommissions started = %d, want %d", label, pod, nv.DecommissionsStarted, want)
			}
		}
	}
	cr := w.CR()
	if _, ok := cr.GetAnnotations()[checkpoint.Annotation]; ok {
		w.t.Errorf("%s: checkpoint annotation still present", label)
	}
	if _, ok := cr.GetAnnotations()[checkpoint.LastOperationAnnotation]; !ok {
		w.t.Errorf("%s: no last-operation record", label)
	}
	cl, err := (&casskop.Adapter{API: operator.APIVersion{Version: "v2"}}).FromObject(cr)
	if err != nil {
		w.t.Fatal(err)
	}
	if got := cl.DCs[0].Racks[0].Nodes; got != target {
		w.t.Errorf("%s: CR nodesPerRacks is %d, want %d", label, got, target)
	}
	if len(w.violations) > 0 {
		w.t.Errorf("%s: safety violations: %v", label, w.violations)
	}
}

// jsonPatchApplies tries a JSON patch on the current object without storing it.
func jsonPatchApplies(tracker k8stesting.ObjectTracker, gvr schema.GroupVersionResource, a k8stesting.PatchAction) error {
	cur, err := tracker.Get(gvr, a.GetNamespace(), a.GetName())
	if err != nil {
		return nil // the tracker answers NotFound itself
	}
	doc, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	p, err := jsonpatch.DecodePatch(a.GetPatch())
	if err != nil {
		return err
	}
	_, err = p.Apply(doc)
	return err
}

// setsThroughput: the command changes a stream limiter (docs/how-it-works/streaming.md §1).
// removes: `removenode <Host ID>` or `removenode force`, which act (status only reads).
func removes(args []string) bool {
	return len(args) > 1 && args[0] == "removenode" && args[1] != "status"
}

func setsThroughput(args []string) bool {
	return len(args) > 0 && (args[0] == "setstreamthroughput" || args[0] == "setinterdcstreamthroughput")
}

// restartCrashed is the kubelet restarting a Cassandra container whose JVM exited on a
// startup error (exit 3, docs/how-it-works/replace.md §4.2; CrashLoopBackOff), seen at
// the next nodetool call anywhere: the same start runs again, and succeeds once its
// precondition holds (a ring that stopped changing, R7). CassKop world only: the
// cass-operator stand-in starts Cassandra itself.
func (w *World) restartCrashed() {
	if w.co != nil {
		return
	}
	nodes, err := w.Cass.Nodes()
	if err != nil {
		return
	}
	for _, n := range nodes {
		if n.ExitCode == 3 && !n.Running {
			_ = w.Cass.Restart(n.Pod)
			w.mu.Lock()
			w.syncContainer(n.Pod)
			w.mu.Unlock()
		}
	}
}
