package cassoperator

import (
	"encoding/json"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
)

// The webhook's texts (internal/webhooks/cassandra/v1beta1/cassandradatacenter_webhook.go:
// attemptedTo, ValidateDatacenterFieldChanges; FACTS §3.8).
const (
	WebhookName              = "vcassandradatacenter.kb.io"
	MsgSizeWhileScalingUp    = "CassandraDatacenter write rejected, attempted to change size while datacenter is still scaling up"
	MsgSizeWhileScalingDown  = "CassandraDatacenter write rejected, attempted to change size while datacenter is still scaling down"
	SizeChangePolicyName     = "cass-operator-size-change"
	sizeChangeBindingName    = SizeChangePolicyName
	webhookDeniedPrefix      = `admission webhook "` + WebhookName + `" denied the request: `
	bypassAnnotationSelector = `object.metadata.annotations['` + AnnotationBypassWebhook + `']`
)

// ValidateSizeChange is the size rule of cass-operator's validating webhook
// (ValidateUpdate -> ValidateDatacenterFieldChanges): a spec.size change is refused
// while the old object's ScalingUp or ScalingDown condition is True, unless the new
// object carries bypass-webhook-validations: "true". The error is what the API server
// returns for the webhook's denial: 403 Forbidden, `admission webhook
// "vcassandradatacenter.kb.io" denied the request: <text>`. Only this rule of the
// webhook is modelled.
func ValidateSizeChange(old, new *unstructured.Unstructured) error {
	if new.GetAnnotations()[AnnotationBypassWebhook] == "true" {
		return nil
	}
	os, _, _ := unstructured.NestedInt64(old.Object, "spec", "size")
	ns, _, _ := unstructured.NestedInt64(new.Object, "spec", "size")
	if os == ns {
		return nil
	}
	status := func(t string) string {
		conds, _, _ := unstructured.NestedSlice(old.Object, "status", "conditions")
		for _, ci := range conds {
			if m, ok := ci.(map[string]any); ok && m["type"] == t {
				s, _ := m["status"].(string)
				return s
			}
		}
		return ""
	}
	msg := ""
	switch {
	case status(CondScalingUp) == "True":
		msg = MsgSizeWhileScalingUp
	case status(CondScalingDown) == "True":
		msg = MsgSizeWhileScalingDown
	default:
		return nil
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden,
		Reason: metav1.StatusReasonForbidden, Message: webhookDeniedPrefix + msg}}
}

// WebhookReactor makes a fake dynamic client refuse size changes like the webhook:
// updates and patches of the main cassandradatacenters resource (not /status, which
// the webhook does not see) are checked against the tracker's current object.
//
//	dyn.PrependReactor("*", "cassandradatacenters", cassoperator.WebhookReactor(dyn.Tracker()))
func WebhookReactor(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetResource() != DatacenterGVR || action.GetSubresource() != "" {
			return false, nil, nil
		}
		var name string
		var apply func(old *unstructured.Unstructured) (*unstructured.Unstructured, error)
		switch a := action.(type) {
		case k8stesting.UpdateAction:
			u, ok := a.GetObject().(*unstructured.Unstructured)
			if !ok {
				return false, nil, nil
			}
			name = u.GetName()
			apply = func(*unstructured.Unstructured) (*unstructured.Unstructured, error) { return u, nil }
		case k8stesting.PatchAction:
			name = a.GetName()
			apply = func(old *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return applyPatch(old, a.GetPatchType(), a.GetPatch())
			}
		default:
			return false, nil, nil
		}
		cur, err := tracker.Get(DatacenterGVR, action.GetNamespace(), name)
		if err != nil {
			return false, nil, nil
		}
		old, ok := cur.(*unstructured.Unstructured)
		if !ok {
			return false, nil, nil
		}
		next, err := apply(old.DeepCopy())
		if err != nil {
			return false, nil, nil // the default reactor reports the bad patch
		}
		if err := ValidateSizeChange(old, next); err != nil {
			return true, nil, err
		}
		return false, nil, nil
	}
}

func applyPatch(old *unstructured.Unstructured, pt types.PatchType, patch []byte) (*unstructured.Unstructured, error) {
	doc, err := json.Marshal(old.Object)
	if err != nil {
		return nil, err
	}
	var out []byte
	switch pt {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, err
		}
		out, err = p.Apply(doc)
		if err != nil {
			return nil, err
		}
	default: // merge (strategic merge on a CR is a merge patch)
		out, err = jsonpatch.MergePatch(doc, patch)
		if err != nil {
			return nil, err
		}
	}
	// As the API server decodes it: integers stay int64 (a plain json.Unmarshal makes
	// them float64, and spec.size would then read as changed by any patch).
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(out); err != nil {
		return nil, err
	}
	return u, nil
}

// SizeChangePolicy returns a ValidatingAdmissionPolicy and its binding
// (admissionregistration.k8s.io/v1, GA since Kubernetes 1.30) that refuse on a real API
// server what ValidateSizeChange refuses: UPDATEs of cassandradatacenters (the main
// resource; /status is not matched) changing spec.size while the old object's
// ScalingUp or ScalingDown condition is True, unless bypass-webhook-validations is
// "true". Same texts and 403 Forbidden; the API server prefixes them with
// `... is forbidden: ValidatingAdmissionPolicy '<policy>' with binding '<binding>'
// denied request: ` instead of the webhook's prefix, so match the text, not the prefix.
func SizeChangePolicy() (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	fail := admissionv1.Fail
	forbidden := metav1.StatusReasonForbidden
	cond := func(t string) string {
		return `(has(oldObject.status) && has(oldObject.status.conditions) && oldObject.status.conditions.exists(c, c.type == '` + t + `' && c.status == 'True'))`
	}
	policy := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: SizeChangePolicyName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule: admissionv1.Rule{APIGroups: []string{DatacenterGVR.Group}, APIVersions: []string{DatacenterGVR.Version},
						Resources: []string{DatacenterGVR.Resource}},
				},
			}}},
			MatchConditions: []admissionv1.MatchCondition{{
				Name: "not-bypassed",
				Expression: `!has(object.metadata.annotations) || !('` + AnnotationBypassWebhook + `' in object.metadata.annotations) || ` +
					bypassAnnotationSelector + ` != 'true'`,
			}},
			Validations: []admissionv1.Validation{
				{
					Expression: `oldObject.spec.size == object.spec.size || !` + cond(CondScalingUp),
					Message:    MsgSizeWhileScalingUp,
					Reason:     &forbidden,
				},
				{
					// Only when ScalingUp is not True, so one text comes back, the webhook's first.
					Expression: `oldObject.spec.size == object.spec.size || ` + cond(CondScalingUp) + ` || !` + cond(CondScalingDown),
					Message:    MsgSizeWhileScalingDown,
					Reason:     &forbidden,
				},
			},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: sizeChangeBindingName},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        SizeChangePolicyName,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	return policy, binding
}
