package cassoperator

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestUnsettled: the operator is settled only with its progress Ready, no scaling
// condition True and every pod labelled Started; each thing missing is named.
func TestUnsettled(t *testing.T) {
	dc := func(progress, scalingUp, scalingDown string) datacenter {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "dc1"},
			"status": map[string]any{"cassandraOperatorProgress": progress, "conditions": []any{
				map[string]any{"type": "ScalingUp", "status": scalingUp},
				map[string]any{"type": "ScalingDown", "status": scalingDown}}}}}
		d, err := read(u)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	pod := func(name, state string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		if state != "" {
			p.Labels[LabelNodeState] = state
		}
		return p
	}
	started := []corev1.Pod{pod("a", StateStarted), pod("b", StateStarted)}
	for _, tc := range []struct {
		name string
		d    datacenter
		pods []corev1.Pod
		want []string // "" alone: settled
	}{
		{"settled", dc("Ready", "False", "False"), started, []string{""}},
		{"updating", dc("Updating", "False", "False"), started, []string{`its progress is "Updating", not Ready`}},
		{"scaling up", dc("Ready", "True", "False"), started, []string{"ScalingUp=True"}},
		{"scaling down", dc("Ready", "False", "True"), started, []string{"ScalingDown=True"}},
		{"a pod not labelled Started yet", dc("Ready", "False", "False"), []corev1.Pod{pod("a", StateStarted), pod("b", StateStartedNotReady), pod("c", "")},
			[]string{"pod b is Started-not-Ready", "pod c is no node-state"}},
	} {
		got := unsettled(tc.d, tc.pods)
		for _, w := range tc.want {
			if (w == "" && got != "") || !strings.Contains(got, w) {
				t.Errorf("%s: %q, want %q", tc.name, got, w)
			}
		}
	}
}
