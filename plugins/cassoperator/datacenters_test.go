package cassoperator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// removable is datacenter dc2 (UID uid-2) of cluster c, racks r1 r2, size 2.
func removable() *unstructured.Unstructured {
	u := dc("db", "dc2", map[string]any{"clusterName": "c", "size": int64(2), "racks": racks("r1", "r2")})
	u.SetUID("uid-2")
	return u
}

// serverLike makes dyn's CassandraDatacenters behave as the API server does for what
// RemoveDatacenter relies on: a merge patch naming a resourceVersion is refused unless
// it is the object's, every write gets a new resourceVersion, and a delete's UID and
// resourceVersion preconditions are checked. It returns the writes made, in order
// ("patch {…}", "delete uid=… rv=…").
func serverLike(dyn *dynamicfake.FakeDynamicClient) *[]string {
	var writes []string
	tr := dyn.Tracker()
	rv := 10
	dyn.PrependReactor("*", Resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		switch a := a.(type) {
		case k8stesting.PatchAction:
			cur, err := tr.Get(gvr, a.GetNamespace(), a.GetName())
			if err != nil {
				return true, nil, err
			}
			u := cur.(*unstructured.Unstructured).DeepCopy()
			var body struct {
				Metadata struct {
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			}
			_ = json.Unmarshal(a.GetPatch(), &body)
			if want := body.Metadata.ResourceVersion; want != "" && want != u.GetResourceVersion() {
				return true, nil, apierrors.NewConflict(gvr.GroupResource(), a.GetName(), fmt.Errorf("the object has been modified"))
			}
			writes = append(writes, "patch "+string(a.GetPatch()))
			var patch map[string]any
			_ = json.Unmarshal(a.GetPatch(), &patch)
			ann := u.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			if md, ok := patch["metadata"].(map[string]any); ok {
				for k, v := range md["annotations"].(map[string]any) {
					if v == nil {
						delete(ann, k)
					} else {
						ann[k] = v.(string)
					}
				}
			}
			u.SetAnnotations(ann)
			rv++
			u.SetResourceVersion(fmt.Sprint(rv))
			return true, u, tr.Update(gvr, u, a.GetNamespace())
		case k8stesting.DeleteAction:
			cur, err := tr.Get(gvr, a.GetNamespace(), a.GetName())
			if err != nil {
				return true, nil, err
			}
			m := cur.(*unstructured.Unstructured)
			pre := a.GetDeleteOptions().Preconditions
			if pre == nil || pre.UID == nil || pre.ResourceVersion == nil {
				writes = append(writes, "delete without preconditions")
			} else {
				if *pre.UID != m.GetUID() || *pre.ResourceVersion != m.GetResourceVersion() {
					return true, nil, apierrors.NewConflict(gvr.GroupResource(), a.GetName(), fmt.Errorf("precondition failed"))
				}
				writes = append(writes, fmt.Sprintf("delete uid=%s rv=%s", *pre.UID, *pre.ResourceVersion))
			}
			return true, nil, tr.Delete(gvr, a.GetNamespace(), a.GetName())
		}
		return false, nil, nil
	})
	return &writes
}

func annotations(t *testing.T, dyn *dynamicfake.FakeDynamicClient, name string) map[string]string {
	t.Helper()
	obj, err := dyn.Tracker().Get(gvr, "db", name)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*unstructured.Unstructured).GetAnnotations()
}

// TestRemoveDatacenter: annotate (one patch under the resourceVersion read), verify on
// the object read back, delete that version (UID and resourceVersion preconditions);
// asked again once gone, nothing.
func TestRemoveDatacenter(t *testing.T) {
	a, dyn, _ := fakeAdapter([]runtime.Object{removable()})
	writes := serverLike(dyn)
	if err := a.RemoveDatacenter(context.Background(), "db", "dc2", "dc2", "uid-2", "op-1"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`patch {"metadata":{"annotations":{"cassandra.datastax.com/decommission-on-delete":"true","kubectl-cassandra.io/remove-dc":"{\"operationID\":\"op-1\",\"added\":true}"},"resourceVersion":"1"}}`,
		"delete uid=uid-2 rv=11",
	}
	if strings.Join(*writes, "\n") != strings.Join(want, "\n") {
		t.Fatalf("writes:\n%s\nwant:\n%s", strings.Join(*writes, "\n"), strings.Join(want, "\n"))
	}
	if _, err := dyn.Tracker().Get(gvr, "db", "dc2"); !apierrors.IsNotFound(err) {
		t.Fatalf("dc2 not deleted: %v", err)
	}
	if err := a.RemoveDatacenter(context.Background(), "db", "dc2", "dc2", "uid-2", "op-1"); err != nil {
		t.Fatalf("again once gone: %v", err)
	}
	if len(*writes) != 2 {
		t.Fatalf("writes again: %v", *writes)
	}
}

// TestRemoveDatacenterRefusals: a re-created resource, another DC, another operation's
// mark, a deletion someone started without the annotation: nothing written, and the
// error says what is so.
func TestRemoveDatacenterRefusals(t *testing.T) {
	deleting := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		ts := metav1.NewTime(metav1.Now().Rfc3339Copy().Time)
		u.SetDeletionTimestamp(&ts)
		u.SetFinalizers([]string{Finalizer})
		return u
	}
	otherMark := removable()
	otherMark.SetAnnotations(map[string]string{RemoveDCMarkAnnotation: `{"operationID":"op-0","added":true}`, DecommissionOnDeleteAnnotation: "true"})
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		dc   string
		err  string
	}{
		{"re-created", removable(), "dc2", "re-created since the plan read it (UID uid-2, not uid-9)"},
		{"another dc", removable(), "dc3", "is datacenter dc2, not dc3"},
		{"another operation", otherMark, "dc2", "marked for removal by operation op-0"},
		{"deleted without annotation", deleting(removable()), "dc2", "without annotation cassandra.datastax.com/decommission-on-delete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, dyn, _ := fakeAdapter([]runtime.Object{tc.obj})
			writes := serverLike(dyn)
			uid := "uid-2"
			if tc.name == "re-created" {
				uid = "uid-9"
			}
			err := a.RemoveDatacenter(context.Background(), "db", "dc2", tc.dc, uid, "op-1")
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
			if len(*writes) != 0 {
				t.Fatalf("writes: %v", *writes)
			}
		})
	}
}

// TestRemoveDatacenterIdempotent: being deleted with the annotation is done; marked by
// this operation already, only the delete is left (a run that died between the two).
func TestRemoveDatacenterIdempotent(t *testing.T) {
	u := removable()
	u.SetAnnotations(map[string]string{DecommissionOnDeleteAnnotation: "true"})
	ts := metav1.Now()
	u.SetDeletionTimestamp(&ts)
	a, dyn, _ := fakeAdapter([]runtime.Object{u})
	writes := serverLike(dyn)
	if err := a.RemoveDatacenter(context.Background(), "db", "dc2", "dc2", "uid-2", "op-1"); err != nil || len(*writes) != 0 {
		t.Fatalf("being deleted: %v, writes %v", err, *writes)
	}

	u = removable()
	u.SetAnnotations(map[string]string{DecommissionOnDeleteAnnotation: "true", RemoveDCMarkAnnotation: `{"operationID":"op-1","added":true}`})
	a, dyn, _ = fakeAdapter([]runtime.Object{u})
	writes = serverLike(dyn)
	if err := a.RemoveDatacenter(context.Background(), "db", "dc2", "dc2", "uid-2", "op-1"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(*writes, ";") != "delete uid=uid-2 rv=1" {
		t.Fatalf("writes: %v", *writes)
	}
}

// TestRemoveDatacenterChangedAfterVerify: a write between the verifying read and the
// delete fails the resourceVersion precondition; the datacenter is read and judged
// again, and the delete made on the version that read verified. One that changes
// after every read is never deleted: the error says so.
func TestRemoveDatacenterChangedAfterVerify(t *testing.T) {
	for _, always := range []bool{false, true} {
		t.Run(fmt.Sprintf("always=%v", always), func(t *testing.T) {
			a, dyn, _ := fakeAdapter([]runtime.Object{removable()})
			writes := serverLike(dyn)
			gets, bumps := 0, 0
			dyn.PrependReactor("get", Resource, func(k8stesting.Action) (bool, runtime.Object, error) {
				if gets++; gets < 2 || (!always && gets > 2) {
					return false, nil, nil
				}
				// Someone's write right after this verifying read.
				obj, _ := dyn.Tracker().Get(gvr, "db", "dc2")
				u := obj.(*unstructured.Unstructured).DeepCopy()
				read := u.DeepCopy()
				bumps++
				u.SetResourceVersion(fmt.Sprint(90 + bumps))
				_ = dyn.Tracker().Update(gvr, u, "db")
				return true, read, nil
			})
			err := a.RemoveDatacenter(context.Background(), "db", "dc2", "dc2", "uid-2", "op-1")
			_, gerr := dyn.Tracker().Get(gvr, "db", "dc2")
			if always {
				if err == nil || !strings.Contains(err.Error(), "kept changing") || !strings.Contains(err.Error(), "nothing was deleted") {
					t.Fatalf("err %v", err)
				}
				if gerr != nil || len(*writes) != 1 {
					t.Fatalf("deleted (%v), writes %v", gerr, *writes)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !apierrors.IsNotFound(gerr) || strings.Join(*writes, ";") != `patch {"metadata":{"annotations":{"cassandra.datastax.com/decommission-on-delete":"true","kubectl-cassandra.io/remove-dc":"{\"operationID\":\"op-1\",\"added\":true}"},"resourceVersion":"1"}};delete uid=uid-2 rv=91` {
				t.Fatalf("not deleted once, as verified (%v): %v", gerr, *writes)
			}
		})
	}
}

// TestDatacenterMarksUnmark: the marks listed; Unmark takes back only op's, removes
// decommission-on-delete only when op added it, and refuses while being deleted.
func TestDatacenterMarksUnmark(t *testing.T) {
	mine := removable()
	mine.SetAnnotations(map[string]string{DecommissionOnDeleteAnnotation: "true", RemoveDCMarkAnnotation: `{"operationID":"op-1","added":true}`})
	users := dc("db", "dc3", map[string]any{"clusterName": "c", "size": int64(1)})
	users.SetUID("uid-3")
	users.SetAnnotations(map[string]string{DecommissionOnDeleteAnnotation: "true", RemoveDCMarkAnnotation: `{"operationID":"op-2","added":false}`})
	gone := dc("db", "dc4", map[string]any{"clusterName": "c", "size": int64(1)})
	gone.SetUID("uid-4")
	gone.SetAnnotations(map[string]string{DecommissionOnDeleteAnnotation: "true", RemoveDCMarkAnnotation: `{"operationID":"op-3","added":true}`})
	ts := metav1.Now()
	gone.SetDeletionTimestamp(&ts)
	plain := dc("db", "dc1", map[string]any{"clusterName": "c", "size": int64(1)})
	a, dyn, _ := fakeAdapter([]runtime.Object{mine, users, gone, plain})
	writes := serverLike(dyn)
	ctx := context.Background()
	marks, err := a.DatacenterMarks(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(marks); got != "[{dc2 uid-2 op-1 false} {dc3 uid-3 op-2 false} {dc4 uid-4 op-3 true}]" {
		t.Fatalf("marks %s", got)
	}
	// Not op's, or another UID: nothing.
	if err := a.Unmark(ctx, "db", "dc2", "op-9", "uid-2"); err != nil {
		t.Fatal(err)
	}
	if err := a.Unmark(ctx, "db", "dc2", "op-1", "uid-8"); err != nil {
		t.Fatal(err)
	}
	if len(*writes) != 0 {
		t.Fatalf("writes: %v", *writes)
	}
	if err := a.Unmark(ctx, "db", "dc2", "op-1", "uid-2"); err != nil {
		t.Fatal(err)
	}
	if ann := annotations(t, dyn, "dc2"); len(ann) != 0 {
		t.Fatalf("dc2 annotations left: %v", ann)
	}
	if err := a.Unmark(ctx, "db", "dc3", "op-2", "uid-3"); err != nil {
		t.Fatal(err)
	}
	if ann := annotations(t, dyn, "dc3"); len(ann) != 1 || ann[DecommissionOnDeleteAnnotation] != "true" {
		t.Fatalf("dc3 annotations: %v (the user's decommission-on-delete must stay)", ann)
	}
	if err := a.Unmark(ctx, "db", "dc4", "op-3", "uid-4"); err == nil || !strings.Contains(err.Error(), "being deleted already") {
		t.Fatalf("dc4: %v", err)
	}
	if len(*writes) != 2 {
		t.Fatalf("writes: %v", *writes)
	}
	for _, w := range *writes {
		if !strings.Contains(w, `"resourceVersion":"1"`) {
			t.Fatalf("unmark not under the resourceVersion read: %s", w)
		}
	}
}

// TestDatacenterLeft: the resource with its deletion state, then the StatefulSets,
// pods and claims of the datacenter's label; nothing of another datacenter.
func TestDatacenterLeft(t *testing.T) {
	u := removable()
	u.SetAnnotations(map[string]string{DecommissionOnDeleteAnnotation: "true"})
	ts := metav1.NewTime(metav1.Now().Rfc3339Copy().Time)
	u.SetDeletionTimestamp(&ts)
	u.SetFinalizers([]string{Finalizer})
	u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Decommission", "status": "True"}}}
	l2 := RackLabels("c", "dc2", "r1")
	l2[LabelManagedBy] = ManagedByValue
	l1 := RackLabels("c", "dc1", "r1")
	l1[LabelManagedBy] = ManagedByValue
	one := int32(1)
	kube := []runtime.Object{
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "c-dc2-r1-sts", Namespace: "db", Labels: l2}, Spec: appsv1.StatefulSetSpec{Replicas: &one}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "c-dc1-r1-sts", Namespace: "db", Labels: l1}, Spec: appsv1.StatefulSetSpec{Replicas: &one}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "c-dc2-r1-sts-0", Namespace: "db", Labels: merge(l2, LabelNodeState, StateDecommissioning)}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "c-dc1-r1-sts-0", Namespace: "db", Labels: l1}},
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "server-data-c-dc2-r1-sts-0", Namespace: "db", Labels: l2}},
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "server-data-c-dc1-r1-sts-0", Namespace: "db", Labels: l1}},
	}
	a, dyn, k := fakeAdapter([]runtime.Object{u}, kube...)
	ctx := context.Background()
	left, err := a.DatacenterLeft(ctx, "db", "dc2", "dc2")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"CassandraDatacenter dc2 (being deleted since " + ts.UTC().Format("2006-01-02T15:04:05Z") + ", cass-operator's finalizer pending, condition Decommission True, annotated cassandra.datastax.com/decommission-on-delete)",
		"StatefulSet c-dc2-r1-sts (1 replicas)",
		"pod c-dc2-r1-sts-0 (node-state Decommissioning)",
		"PersistentVolumeClaim server-data-c-dc2-r1-sts-0",
	}
	if strings.Join(left, "\n") != strings.Join(want, "\n") {
		t.Fatalf("left:\n%s\nwant:\n%s", strings.Join(left, "\n"), strings.Join(want, "\n"))
	}
	// All gone: empty.
	_ = dyn.Tracker().Delete(gvr, "db", "dc2")
	_ = k.AppsV1().StatefulSets("db").Delete(ctx, "c-dc2-r1-sts", metav1.DeleteOptions{})
	_ = k.CoreV1().Pods("db").Delete(ctx, "c-dc2-r1-sts-0", metav1.DeleteOptions{})
	_ = k.CoreV1().PersistentVolumeClaims("db").Delete(ctx, "server-data-c-dc2-r1-sts-0", metav1.DeleteOptions{})
	if left, err := a.DatacenterLeft(ctx, "db", "dc2", "dc2"); err != nil || len(left) != 0 {
		t.Fatalf("left %v, %v", left, err)
	}
}

func merge(l map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range l {
		out[a] = b
	}
	return out
}
