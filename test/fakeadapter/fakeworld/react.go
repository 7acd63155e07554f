package fakeworld

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter"
)

// The resources the world's controllers and helpers read and write.
func podsGVR() schema.GroupVersionResource { return corev1.SchemeGroupVersion.WithResource("pods") }
func pvcsGVR() schema.GroupVersionResource {
	return corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
}
func stsGVR() schema.GroupVersionResource {
	return appsv1.SchemeGroupVersion.WithResource("statefulsets")
}
func deployGVR() schema.GroupVersionResource {
	return appsv1.SchemeGroupVersion.WithResource("deployments")
}

// react handles every write as the API server would: resourceVersion, JSON-patch test
// and UID preconditions, then the controllers and the record of the side effect.
func (w *World) react(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	apply := k8stesting.ObjectReaction(tracker)
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		verb := action.GetVerb()
		if verb != "create" && verb != "update" && verb != "patch" && verb != "delete" {
			return false, nil, nil
		}
		if action.GetResource().Resource == "events" || action.GetResource().Resource == "selfsubjectaccessreviews" {
			return false, nil, nil // a story and a question, not state
		}
		gvr := action.GetResource()
		w.mu.Lock()
		defer w.mu.Unlock()
		if err := w.preconditions(tracker, action); err != nil {
			return true, nil, err
		}
		before := snapshot(tracker, action)
		handled, obj, err := apply(action)
		if err != nil {
			return handled, obj, err
		}
		if verb == "delete" && gvr.Resource == "pods" {
			w.podDeleted(action.GetNamespace(), action.(k8stesting.DeleteAction).GetName())
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
			switch gvr.Resource {
			case "statefulsets":
				w.statefulSetController(action.GetNamespace(), objName(action))
			case "deployments":
				w.deploymentController(action.GetNamespace(), objName(action))
			}
		}
		w.record(tracker, action, before)
		return handled, obj, err
	}
}

// preconditions refuses a write the API server would refuse: a failed JSON-patch test
// (422), a merge patch whose resourceVersion is not the object's (409), a pod or claim
// delete whose UID precondition does not match (409). A pod or claim deleted without a
// UID precondition, or a claim deleted while its pod exists, is recorded as a
// violation. Called with w.mu held.
func (w *World) preconditions(tracker k8stesting.ObjectTracker, action k8stesting.Action) error {
	gvr := action.GetResource()
	switch a := action.(type) {
	case k8stesting.PatchAction:
		cur, err := tracker.Get(gvr, a.GetNamespace(), a.GetName())
		if err != nil {
			return nil // the patch answers NotFound itself
		}
		switch a.GetPatchType() {
		case types.JSONPatchType:
			if err := jsonPatchApplies(cur, a.GetPatch()); err != nil {
				return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", gvr.GroupResource(), a.GetName(), err.Error(), 0, false)
			}
		case types.MergePatchType:
			var body struct {
				Metadata struct {
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			}
			_ = json.Unmarshal(a.GetPatch(), &body)
			m, _ := metaOf(cur)
			if want := body.Metadata.ResourceVersion; want != "" && m.GetResourceVersion() != want {
				return apierrors.NewConflict(gvr.GroupResource(), a.GetName(), fmt.Errorf("the object has been modified"))
			}
		}
	case k8stesting.DeleteAction:
		if gvr.Resource != "pods" && gvr.Resource != "persistentvolumeclaims" {
			return nil
		}
		cur, err := tracker.Get(gvr, a.GetNamespace(), a.GetName())
		if err != nil {
			return nil // the delete answers NotFound
		}
		m, _ := metaOf(cur)
		what := "pod"
		if gvr.Resource == "persistentvolumeclaims" {
			what = "PVC"
		}
		pre := a.GetDeleteOptions().Preconditions
		if pre == nil || pre.UID == nil {
			w.violations = append(w.violations, what+" "+a.GetName()+" deleted without a UID precondition")
		} else if *pre.UID != m.GetUID() {
			return apierrors.NewConflict(gvr.GroupResource(), a.GetName(), fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.UID, m.GetUID()))
		}
		if what == "PVC" {
			pod := strings.TrimPrefix(a.GetName(), fakeadapter.ClaimTemplate+"-")
			if _, err := tracker.Get(podsGVR(), a.GetNamespace(), pod); err == nil {
				w.violations = append(w.violations, "PVC "+a.GetName()+" deleted while pod "+pod+" exists")
			}
		}
	}
	return nil
}

// jsonPatchApplies tries a JSON patch on cur without storing it.
func jsonPatchApplies(cur runtime.Object, patch []byte) error {
	doc, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return err
	}
	_, err = p.Apply(doc)
	return err
}

func objName(a k8stesting.Action) string {
	switch a := a.(type) {
	case k8stesting.PatchAction:
		return a.GetName()
	case k8stesting.DeleteAction:
		return a.GetName()
	case k8stesting.UpdateAction:
		if m, err := metaOf(a.GetObject()); err == nil {
			return m.GetName()
		}
	case k8stesting.CreateAction:
		if m, err := metaOf(a.GetObject()); err == nil {
			return m.GetName()
		}
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

// isCluster reports whether gvr is the FakeCassandra.
func isCluster(gvr schema.GroupVersionResource) bool { return gvr.Resource == fakeadapter.Resource }
