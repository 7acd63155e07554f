package casskop

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func deployment(labels map[string]string, image string, command []string, env ...corev1.EnvVar) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "op", Namespace: "ops", Labels: labels},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "op", Image: image, Command: command, Env: env}}}}},
	}
}

// TestIsCassKop: CassKop is recognised by what is its own (image, command, the cscetbon
// chart's labels), not by labels other Cassandra operators use too.
func TestIsCassKop(t *testing.T) {
	ownNS := corev1.EnvVar{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}
	cases := []struct {
		name  string
		d     *appsv1.Deployment
		want  bool
		watch string
	}{
		{"orange chart", deployment(map[string]string{"app": "cassandra-operator", "operator": "cassandra"}, "orangeopensource/casskop:v2.1.0", []string{"casskop"}, ownNS), true, "ops"},
		{"cscetbon chart", deployment(map[string]string{"app": "casskop", "name": "casskop", "operator": "cassandra"}, "ghcr.io/cscetbon/casskop:2.3.4", []string{"casskop"}, ownNS), true, "ops"},
		{"image only, mirrored, digest", deployment(nil, "registry.corp:5000/mirror/casskop@sha256:0123", nil), true, ""},
		{"command only", deployment(nil, "registry.corp/ops/cassandra-operator:7", []string{"/usr/local/bin/casskop"}), true, ""},
		{"watches one namespace", deployment(nil, "orangeopensource/casskop:v1.1.5", nil, corev1.EnvVar{Name: "WATCH_NAMESPACE", Value: "cassandra"}), true, "cassandra"},
		{"watches all (empty)", deployment(nil, "orangeopensource/casskop:v2.1.0", nil, corev1.EnvVar{Name: "WATCH_NAMESPACE", Value: ""}), true, ""},
		{"generic labels, another operator", deployment(map[string]string{"operator": "cassandra", "app": "cassandra-operator"}, "datastax/cass-operator:v1.22.0", []string{"/manager"}), false, ""},
		{"generic labels, no container", deployment(map[string]string{"operator": "cassandra"}, "", nil), false, ""},
		{"image name containing casskop", deployment(nil, "example/casskop-exporter:1", nil), false, ""},
	}
	for _, tc := range cases {
		op, ok := OperatorOf(tc.d)
		if ok != tc.want {
			t.Errorf("%s: recognised %v, want %v", tc.name, ok, tc.want)
			continue
		}
		if ok && op.Watch != tc.watch {
			t.Errorf("%s: watches %q, want %q", tc.name, op.Watch, tc.watch)
		}
	}
}
