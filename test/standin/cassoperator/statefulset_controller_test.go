package cassoperator

// A test-only StatefulSet controller and fake world for the stand-in's unit tests: the
// fake clientsets have no controllers, and the stand-in must not do their job.

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

const (
	testNS      = "cass"
	testDC      = "dc1"
	testCluster = "demo"
)

type env struct {
	t      *testing.T
	kube   *kubefake.Clientset
	dyn    *dynamicfake.FakeDynamicClient
	cass   *sim.Store
	now    time.Time
	nextIP int
	uids   int
	racks  []string
	// rolled lists the pods the rolling update deleted, in order.
	rolled []string
	// protectPVCs turns pvcProtection on (off by default: the scale-down tests race
	// their StatefulSet controller against the claim delete, and count the deletes).
	protectPVCs bool
}

func (e *env) clock() time.Time { return e.now }

// newEnv builds a settled datacenter of size nodes over racks: StatefulSets, Started
// pods with their server-data claims, the ring, and a Ready status.
func newEnv(t *testing.T, racks []string, size int) *env {
	t.Helper()
	return newEnvWith(t, racks, size, sim.Options{Version: sim.V41, RF: 3})
}

// newEnvWith is newEnv with the simulated Cassandra's options (e.g. JoinTime, so a
// bootstrap or a replacement takes steps of the clock).
func newEnvWith(t *testing.T, racks []string, size int, opts sim.Options) *env {
	t.Helper()
	e := &env{t: t, now: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC), racks: racks}
	scheme := runtime.NewScheme()
	conds := []any{}
	for _, c := range []struct{ t, s string }{{CondReady, "True"}, {CondInitialized, "True"}, {CondValid, "True"},
		{CondScalingUp, "False"}, {CondScalingDown, "False"}, {CondStopped, "False"}, {CondReplacingNodes, "False"},
		{CondUpdating, "False"}, {CondRollingRestart, "False"}, {CondResuming, "False"}, {CondRequiresUpdate, "False"}} {
		conds = append(conds, map[string]any{"type": c.t, "status": c.s, "reason": "", "message": "", "lastTransitionTime": "2026-12-01T00:00:00Z"})
	}
	var rackList []any
	for _, r := range racks {
		rackList = append(rackList, map[string]any{"name": r})
	}
	dc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cassandra.datastax.com/v1beta1", "kind": "CassandraDatacenter",
		"metadata": map[string]any{"name": testDC, "namespace": testNS, "generation": int64(1), "uid": "dc-uid",
			"finalizers": []any{Finalizer}}, // added by the operator's first reconcile (deletion.go)
		"spec": map[string]any{"clusterName": testCluster, "size": int64(size), "racks": rackList, "serverVersion": "4.1.2"},
		"status": map[string]any{"conditions": conds, "cassandraOperatorProgress": "Ready", "observedGeneration": int64(1),
			"datacenterName": testDC},
	}}
	e.dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		DatacenterGVR: "CassandraDatacenterList", TaskGVR: "CassandraTaskList"}, dc)
	e.dyn.PrependReactor("*", "cassandradatacenters", WebhookReactor(e.dyn.Tracker()))
	e.kube = kubefake.NewSimpleClientset()
	e.kube.PrependReactor("delete", "*", e.pvcProtection)
	var specs []sim.NodeSpec
	statuses := map[string]any{}
	split := SplitRacks(size, len(racks))
	for i, r := range racks {
		e.addStatefulSet(r, split[i])
		for k := 0; k < split[i]; k++ {
			name := PodName(testCluster, testDC, r, k)
			p := e.createPod(r, name, StateStarted)
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", e.nextIP)
			specs = append(specs, sim.NodeSpec{Pod: name, HostID: id, Address: p.Status.PodIP, DC: testDC, Rack: r})
			statuses[name] = map[string]any{"hostID": id, "ip": p.Status.PodIP, "rack": r}
		}
	}
	e.cass = sim.NewMemory(opts, specs, e.clock)
	e.setStatus("nodeStatuses", statuses)
	return e
}

func (e *env) cfg() Config {
	return Config{Kube: e.kube, Dyn: e.dyn, Cass: e.cass, Namespace: testNS, Name: testDC, Now: e.clock}
}

func (e *env) addStatefulSet(rack string, replicas int) {
	lbl := RackLabels(testCluster, testDC, rack)
	tpl := RackLabels(testCluster, testDC, rack)
	tpl[LabelNodeState] = StateReadyToStart // construct_podtemplatespec.go
	r := int32(replicas)
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: StatefulSetName(testCluster, testDC, rack), Namespace: testNS, Labels: lbl},
		Spec: appsv1.StatefulSetSpec{Replicas: &r, Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template:             corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tpl}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "server-data"}}}},
	}
	if _, err := e.kube.AppsV1().StatefulSets(testNS).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// createPod creates a pod (and its claim when missing) with a new IP and UID.
func (e *env) createPod(rack, name, nodeState string) *corev1.Pod {
	return e.createPodAnn(rack, name, nodeState, nil)
}

// createPodAnn is createPod with the template's annotations.
func (e *env) createPodAnn(rack, name, nodeState string, ann map[string]string) *corev1.Pod {
	lbl := RackLabels(testCluster, testDC, rack)
	lbl[LabelNodeState] = nodeState
	return e.createPodLabels(lbl, name, ann)
}

// createPodLabels creates a pod of labels lbl (its rack's labels and node-state), and
// its claim when missing, with the rack labels.
func (e *env) createPodLabels(lbl map[string]string, name string, ann map[string]string) *corev1.Pod {
	ctx := context.Background()
	e.nextIP++
	e.uids++
	claim := DataPVCName(name)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, Labels: lbl, Annotations: ann, UID: types.UID(fmt.Sprintf("pod-uid-%d", e.uids)),
			CreationTimestamp: metav1.NewTime(e.now)},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "server-data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.0.0.%d", e.nextIP)},
	}
	if _, err := e.kube.CoreV1().Pods(testNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(testNS).Get(ctx, claim, metav1.GetOptions{}); err != nil {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: testNS, Labels: RackLabels(lbl[LabelCluster], lbl[LabelDatacenter], lbl[LabelRack])},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}}
		if _, err := e.kube.CoreV1().PersistentVolumeClaims(testNS).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
	return p
}

// controller is the StatefulSet controller (and the kubelet's part for Cassandra): pods
// at or above replicas are deleted (claims stay; their JVM stops), missing pods below
// it are created from the template (label Ready-to-Start). A pod on a fresh claim is a
// new node (the sim detaches the old one of that name: its data is gone, and peers keep
// a ring member in gossip, down, for a replacement to take over); a pod that
// finds its claim runs the node it held, whose Cassandra waits for the operator's start
// (MGMT_API_EXPLICIT_START: its JVM is down until then).
func (e *env) controller() {
	ctx := context.Background()
	sl, err := e.kube.AppsV1().StatefulSets(testNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, s := range sl.Items {
		n := int(*s.Spec.Replicas)
		pl, _ := e.kube.CoreV1().Pods(testNS).List(ctx, metav1.ListOptions{})
		have := map[string]bool{}
		for _, p := range pl.Items {
			if !strings.HasPrefix(p.Name, s.Name+"-") {
				continue
			}
			if ordinal(p.Name) >= n {
				e.deletePod(p.Name)
				continue
			}
			have[p.Name] = true
		}
		// RollingUpdate: once every pod is there and started, the highest-ordinal pod
		// whose restartedAt annotation is not the template's is deleted (then created
		// again from the template below): one pod at a time.
		if want, ok := s.Spec.Template.Annotations[RestartedAtAnnotaton]; ok {
			all, roll := true, -1
			for k := 0; k < n; k++ {
				name := fmt.Sprintf("%s-%d", s.Name, k)
				p := e.pod(name)
				if p == nil || p.Labels[LabelNodeState] != StateStarted {
					all = false
					break
				}
				if p.Annotations[RestartedAtAnnotaton] != want {
					roll = k
				}
			}
			if all && roll >= 0 {
				name := fmt.Sprintf("%s-%d", s.Name, roll)
				e.deletePod(name)
				e.rolled = append(e.rolled, name)
				have[name] = false
			}
		}
		for k := 0; k < n; k++ {
			name := fmt.Sprintf("%s-%d", s.Name, k)
			if have[name] {
				continue
			}
			_, err := e.kube.CoreV1().PersistentVolumeClaims(testNS).Get(ctx, DataPVCName(name), metav1.GetOptions{})
			fresh := err != nil
			if _, nerr := e.node(name); nerr == nil && fresh {
				_ = e.cass.Detach(name)
			}
			// From the template: its labels (node-state Ready-to-Start) and annotations.
			lbl := map[string]string{}
			for k, v := range s.Spec.Template.Labels {
				lbl[k] = v
			}
			e.createPodLabels(lbl, name, s.Spec.Template.Annotations)
		}
	}
}

// deletePod deletes a pod at once (no grace period); its JVM stops with it.
func (e *env) deletePod(name string) {
	if err := e.kube.CoreV1().Pods(testNS).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if v, err := e.node(name); err == nil && !v.Left {
		_ = e.cass.UpdateFault(name, func(f *sim.Fault) { f.Down = true })
	}
}

func (e *env) node(pod string) (sim.NodeView, error) { return e.cass.Node(pod) }

// run steps op (the controller runs after each action) until it is idle or killed,
// and returns its actions.
func (e *env) run(op *Operator) []Action {
	e.t.Helper()
	var got []Action
	errs := 0
	for i := 0; i < 200; i++ {
		a, err := op.Step(context.Background())
		if a != "" {
			got = append(got, a)
		}
		e.controller()
		if errors.Is(err, ErrKilled) {
			return got
		}
		if err != nil {
			// A failed reconcile is requeued; the clock moves on.
			if errs++; errs > 3 {
				e.t.Fatalf("step %d: %v (actions so far %q)", i, err, got)
			}
			e.now = e.now.Add(time.Second)
			continue
		}
		errs = 0
		if a == "" {
			return got
		}
		e.now = e.now.Add(time.Second)
	}
	e.t.Fatalf("no idle after 200 steps: %q", got)
	return nil
}

func (e *env) dc() *unstructured.Unstructured {
	e.t.Helper()
	u, err := e.dyn.Resource(DatacenterGVR).Namespace(testNS).Get(context.Background(), testDC, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

func (e *env) setStatus(field string, v any) {
	e.t.Helper()
	u := e.dc()
	if err := unstructured.SetNestedField(u.Object, v, "status", field); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.dyn.Resource(DatacenterGVR).Namespace(testNS).UpdateStatus(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// setSize is the user's (or the plugin's) spec.size write, through the webhook reactor.
func (e *env) setSize(n int) error {
	u := e.dc()
	_ = unstructured.SetNestedField(u.Object, int64(n), "spec", "size")
	_, err := e.dyn.Resource(DatacenterGVR).Namespace(testNS).Update(context.Background(), u, metav1.UpdateOptions{})
	return err
}

func (e *env) cond(t string) string {
	conds, _, _ := unstructured.NestedSlice(e.dc().Object, "status", "conditions")
	for _, ci := range conds {
		if m := ci.(map[string]any); m["type"] == t {
			return m["status"].(string)
		}
	}
	return ""
}

func (e *env) progress() string {
	s, _, _ := unstructured.NestedString(e.dc().Object, "status", "cassandraOperatorProgress")
	return s
}

func (e *env) nodeStatuses() map[string]any {
	m, _, _ := unstructured.NestedMap(e.dc().Object, "status", "nodeStatuses")
	return m
}

func (e *env) pod(name string) *corev1.Pod {
	p, err := e.kube.CoreV1().Pods(testNS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return p
}

func (e *env) pvcExists(name string) bool {
	_, err := e.kube.CoreV1().PersistentVolumeClaims(testNS).Get(context.Background(), name, metav1.GetOptions{})
	return err == nil
}

func (e *env) replicas(rack string) int {
	s, err := e.kube.AppsV1().StatefulSets(testNS).Get(context.Background(), StatefulSetName(testCluster, testDC, rack), metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return int(*s.Spec.Replicas)
}

func newDeployment(replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "cass-operator", Namespace: testNS},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas}}
}

// pvcProtection is the kubernetes.io/pvc-protection finalizer and its controller: a
// claim deleted while its pod exists is only marked terminating, and goes once the pod
// is deleted (the replacenode job deletes the claims before the pod).
func (e *env) pvcProtection(action k8stesting.Action) (bool, runtime.Object, error) {
	if !e.protectPVCs {
		return false, nil, nil
	}
	d := action.(k8stesting.DeleteAction)
	tr := e.kube.Tracker()
	pvcs := corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	switch d.GetResource().Resource {
	case "persistentvolumeclaims":
		if _, err := tr.Get(pods, d.GetNamespace(), strings.TrimPrefix(d.GetName(), "server-data-")); err != nil {
			return false, nil, nil
		}
		obj, err := tr.Get(pvcs, d.GetNamespace(), d.GetName())
		if err != nil {
			return false, nil, nil
		}
		c := obj.(*corev1.PersistentVolumeClaim).DeepCopy()
		if c.DeletionTimestamp == nil {
			now := metav1.NewTime(e.now)
			c.DeletionTimestamp = &now
			c.Finalizers = append(c.Finalizers, "kubernetes.io/pvc-protection")
		}
		return true, c, tr.Update(pvcs, c, d.GetNamespace())
	case "pods":
		if err := tr.Delete(pods, d.GetNamespace(), d.GetName()); err != nil {
			return true, nil, err
		}
		claim := DataPVCName(d.GetName())
		if obj, err := tr.Get(pvcs, d.GetNamespace(), claim); err == nil && obj.(*corev1.PersistentVolumeClaim).DeletionTimestamp != nil {
			_ = tr.Delete(pvcs, d.GetNamespace(), claim)
		}
		return true, nil, nil
	}
	return false, nil, nil
}
