package operator

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestImageRepo(t *testing.T) {
	for in, want := range map[string]string{
		"ghcr.io/cscetbon/casskop:2.3.4":                  "casskop",
		"registry.corp:5000/mirror/casskop@sha256:0123":   "casskop",
		"cr.k8ssandra.io/k8ssandra/cass-operator:v1.32.0": "cass-operator",
		"Cass-Operator": "cass-operator",
		"registry.corp:5000/k8ssandra/cass-operator:v1@sha256:1": "cass-operator",
	} {
		if got := ImageRepo(in); got != want {
			t.Errorf("ImageRepo(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWatchNamespace: the downward API means the Deployment's own namespace; a value
// from elsewhere cannot be read and counts as every namespace; a comma list is several.
func TestWatchNamespace(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ops"}}
	env := func(e corev1.EnvVar) corev1.Container { return corev1.Container{Env: []corev1.EnvVar{e}} }
	cases := []struct {
		name    string
		c       corev1.Container
		watch   string
		manages map[string]bool
	}{
		{"unset", corev1.Container{}, "", map[string]bool{"a": true}},
		{"own namespace", env(corev1.EnvVar{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}), "ops", map[string]bool{"ops": true, "a": false}},
		{"from a ConfigMap", env(corev1.EnvVar{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{Key: "ns"}}}), "", map[string]bool{"a": true}},
		{"list", env(corev1.EnvVar{Name: "WATCH_NAMESPACE", Value: " a, b ,"}), "a, b ,", map[string]bool{"a": true, "b": true, "c": false}},
	}
	for _, tc := range cases {
		w := WatchNamespace(d, tc.c)
		if w != tc.watch {
			t.Errorf("%s: watch %q, want %q", tc.name, w, tc.watch)
		}
		for ns, want := range tc.manages {
			if got := (Controller{Watch: w}).Manages(ns); got != want {
				t.Errorf("%s: manages %s = %v, want %v", tc.name, ns, got, want)
			}
		}
	}
}
