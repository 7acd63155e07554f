package cassoperator

import (
	"context"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

func dcObj(size int64, conds map[string]string, annotations map[string]string) *unstructured.Unstructured {
	var cs []any
	for t, s := range conds {
		cs = append(cs, map[string]any{"type": t, "status": s, "reason": "", "message": ""})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "dc1"},
		"spec":     map[string]any{"size": size},
		"status":   map[string]any{"conditions": cs},
	}}
	if annotations != nil {
		u.SetAnnotations(annotations)
	}
	return u
}

func TestValidateSizeChange(t *testing.T) {
	for _, c := range []struct {
		name    string
		old     map[string]string
		from    int64
		to      int64
		bypass  bool
		wantMsg string
	}{
		{"settled", map[string]string{CondScalingDown: "False", CondScalingUp: "False"}, 3, 2, false, ""},
		{"scaling down", map[string]string{CondScalingDown: "True"}, 3, 2, false, MsgSizeWhileScalingDown},
		{"scaling up", map[string]string{CondScalingUp: "True"}, 2, 3, false, MsgSizeWhileScalingUp},
		{"both: the up text first", map[string]string{CondScalingUp: "True", CondScalingDown: "True"}, 2, 3, false, MsgSizeWhileScalingUp},
		{"same size", map[string]string{CondScalingDown: "True"}, 3, 3, false, ""},
		{"bypassed", map[string]string{CondScalingDown: "True"}, 3, 2, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ann map[string]string
			if c.bypass {
				ann = map[string]string{AnnotationBypassWebhook: "true"}
			}
			err := ValidateSizeChange(dcObj(c.from, c.old, nil), dcObj(c.to, c.old, ann))
			if c.wantMsg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.(apierrors.APIStatus).Status().Code != http.StatusForbidden {
				t.Fatalf("not a 403: %v", err)
			}
			if want := `admission webhook "vcassandradatacenter.kb.io" denied the request: ` + c.wantMsg; err.Error() != want {
				t.Fatalf("got %q\nwant %q", err.Error(), want)
			}
		})
	}
}

func TestSizeChangePolicyObjects(t *testing.T) {
	p, b := SizeChangePolicy()
	if b.Spec.PolicyName != p.Name || len(b.Spec.ValidationActions) != 1 || b.Spec.ValidationActions[0] != "Deny" {
		t.Fatalf("binding %+v", b.Spec)
	}
	r := p.Spec.MatchConstraints.ResourceRules[0]
	if r.Resources[0] != "cassandradatacenters" || r.Operations[0] != "UPDATE" || r.APIGroups[0] != DatacenterGVR.Group {
		t.Fatalf("rule %+v", r)
	}
	if len(p.Spec.Validations) != 2 || p.Spec.Validations[0].Message != MsgSizeWhileScalingUp || p.Spec.Validations[1].Message != MsgSizeWhileScalingDown {
		t.Fatalf("validations %+v", p.Spec.Validations)
	}
	for _, v := range p.Spec.Validations {
		if *v.Reason != "Forbidden" || !strings.Contains(v.Expression, "oldObject.spec.size == object.spec.size") {
			t.Fatalf("validation %+v", v)
		}
	}
	for _, o := range []any{p, b} {
		y, err := yaml.Marshal(o)
		if err != nil || !strings.Contains(string(y), "apiVersion: admissionregistration.k8s.io/v1") {
			t.Fatalf("yaml: %s %v", y, err)
		}
	}
}

// An annotation-only merge patch is no size change, even while scaling: the patched
// object's spec.size must decode as the integer it is.
func TestWebhookAnnotationPatchWhileScaling(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	_ = e.setSize(2)
	op := New(e.cfg())
	if a, _ := op.Step(context.Background()); a != CondAction(CondScalingDown, "True") {
		t.Fatalf("first action %q", a)
	}
	body := []byte(`{"metadata":{"annotations":{"a":"b"}}}`)
	if _, err := e.dyn.Resource(DatacenterGVR).Namespace(testNS).Patch(context.Background(), testDC, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotation patch while scaling down: %v", err)
	}
}
