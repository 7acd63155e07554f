package cassoperator

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func deployment(ns, name string, labels map[string]string, containers ...corev1.Container) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec:       appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: containers}}},
	}
}

var ownNS = corev1.EnvVar{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}

// TestControllerOf: cass-operator is recognised as its installs deploy it (kustomize,
// Helm chart, mirrors), with the namespaces its WATCH_NAMESPACE names.
func TestControllerOf(t *testing.T) {
	name := map[string]string{"app.kubernetes.io/name": "cass-operator"}
	for _, tc := range []struct {
		name  string
		d     *appsv1.Deployment
		want  bool
		watch string
	}{
		{"kustomize, namespaced", deployment("cass-operator", "cass-operator-controller-manager", name,
			corev1.Container{Name: "manager", Image: "cr.k8ssandra.io/k8ssandra/cass-operator:v1.32.0", Command: []string{"/manager"}, Env: []corev1.EnvVar{ownNS}}), true, "cass-operator"},
		{"kustomize, cluster scope", deployment("cass-operator", "cass-operator-controller-manager", name,
			corev1.Container{Name: "manager", Image: "k8ssandra/cass-operator:v1.32.0", Env: []corev1.EnvVar{{Name: "WATCH_NAMESPACE", Value: ""}}}), true, ""},
		{"helm chart", deployment("k8ssandra", "k8ssandra-cass-operator", map[string]string{"app.kubernetes.io/name": "cass-operator", "app.kubernetes.io/instance": "k8ssandra"},
			corev1.Container{Name: "cass-operator", Image: "docker.io/k8ssandra/cass-operator:v1.22.0", Env: []corev1.EnvVar{ownNS}}), true, "k8ssandra"},
		{"old datastax image, a list", deployment("ops", "op", nil,
			corev1.Container{Name: "x", Image: "datastax/cass-operator:1.7.1", Env: []corev1.EnvVar{{Name: "WATCH_NAMESPACE", Value: "a,b"}}}), true, "a,b"},
		{"mirrored by digest, no env", deployment("ops", "op", nil,
			corev1.Container{Name: "sidecar", Image: "busybox"}, corev1.Container{Name: "m", Image: "registry.corp:5000/mirror/cass-operator@sha256:0123"}), true, ""},
		{"label only, renamed image", deployment("ops", "op", name,
			corev1.Container{Name: "manager", Image: "registry.corp/ops/cassop:1", Env: []corev1.EnvVar{{Name: "WATCH_NAMESPACE", Value: "db"}}}), true, "db"},
		{"k8ssandra-operator", deployment("k8ssandra-operator", "k8ssandra-operator", map[string]string{"app.kubernetes.io/name": "k8ssandra-operator"},
			corev1.Container{Name: "k8ssandra-operator", Image: "cr.k8ssandra.io/k8ssandra/k8ssandra-operator:v1.20.0"}), false, ""},
		{"casskop", deployment("ops", "casskop", map[string]string{"app": "casskop"},
			corev1.Container{Name: "casskop", Image: "ghcr.io/cscetbon/casskop:2.3.4"}), false, ""},
		{"an image whose name contains it", deployment("ops", "x", nil,
			corev1.Container{Name: "x", Image: "example/cass-operator-exporter:1"}), false, ""},
	} {
		op, ok := ControllerOf(tc.d)
		if ok != tc.want {
			t.Errorf("%s: recognised %v, want %v", tc.name, ok, tc.want)
			continue
		}
		if ok && (op.Watch != tc.watch || !op.Running() || op.Replicas != 1) {
			t.Errorf("%s: %+v, want watch %q, running", tc.name, op, tc.watch)
		}
	}
}

// TestOperators: the cass-operator Deployments managing a namespace, running or not,
// and the datacenters one manages.
func TestOperators(t *testing.T) {
	ctx := context.Background()
	zero := int32(0)
	img := func(ns string) corev1.Container {
		return corev1.Container{Name: "manager", Image: "k8ssandra/cass-operator:v1.32.0", Env: []corev1.EnvVar{{Name: "WATCH_NAMESPACE", Value: ns}}}
	}
	own := deployment("db", "own", nil, corev1.Container{Name: "manager", Image: "k8ssandra/cass-operator:v1.32.0", Env: []corev1.EnvVar{ownNS}})
	list := deployment("ops", "list", nil, img("db, other"))
	all := deployment("ops", "all", nil, img(""))
	stopped := deployment("ops", "stopped", nil, img("db"))
	stopped.Spec.Replicas = &zero
	elsewhere := deployment("ops", "elsewhere", nil, img("other"))
	a, _, _ := fakeAdapter([]runtime.Object{
		dc("db", "dc1", map[string]any{"clusterName": "c", "size": int64(1)}),
		dc("other", "dc2", map[string]any{"clusterName": "c", "size": int64(1)}),
		dc("third", "dc3", map[string]any{"clusterName": "c", "size": int64(1)}),
	}, own, list, all, stopped, elsewhere)

	ops, err := a.Operators(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, op := range ops {
		names = append(names, op.String())
	}
	if got := strings.Join(names, " "); got != "db/own ops/all ops/list ops/stopped" {
		t.Errorf("operators of db: %s", got)
	}
	running, err := a.RunningOperators(ctx, "db")
	if err != nil || len(running) != 3 {
		t.Errorf("running: %v, %v", running, err)
	}

	op, _ := ControllerOf(list)
	cls, err := a.ManagedClusters(ctx, op)
	if err != nil || len(cls) != 2 || cls[0].Name != "dc1" || cls[1].Name != "dc2" {
		t.Errorf("managed by a list: %v, %v", cls, err)
	}
	op, _ = ControllerOf(all)
	if cls, err := a.ManagedClusters(ctx, op); err != nil || len(cls) != 3 {
		t.Errorf("managed by all: %v, %v", cls, err)
	}
}

// TestControllerNotReady: a Deployment asked to run whose controller reports no ready
// replica is NotReady (it cannot act); one never reconciled yet, or scaled to 0, is not.
func TestControllerNotReady(t *testing.T) {
	c := corev1.Container{Name: "manager", Image: "k8ssandra/cass-operator:v1.32.0"}
	for _, tc := range []struct {
		name          string
		replicas      int32
		observed      int64
		ready         int32
		wantNotReady  bool
		wantIsRunning bool
	}{
		{"crash-looping", 1, 1, 0, true, true},
		{"ready", 1, 1, 1, false, true},
		{"never reconciled", 1, 0, 0, false, true},
		{"scaled to 0", 0, 2, 0, false, false},
	} {
		d := deployment("db", "op", nil, c)
		d.Spec.Replicas = &tc.replicas
		d.Status.ObservedGeneration, d.Status.ReadyReplicas = tc.observed, tc.ready
		op, ok := ControllerOf(d)
		if !ok || op.NotReady != tc.wantNotReady || op.Running() != tc.wantIsRunning {
			t.Errorf("%s: NotReady %v Running %v (ok %v), want %v %v", tc.name, op.NotReady, op.Running(), ok, tc.wantNotReady, tc.wantIsRunning)
		}
	}
}
