package cassoperator

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// threeRacks is datacenter dc1 of cluster c with racks r1, r2, r3.
func threeRacks(t *testing.T) topology.DC {
	t.Helper()
	cl, err := (&Adapter{API: operator.APIVersion{Version: Version}}).FromObject(dc("db", "dc1", map[string]any{"clusterName": "c", "size": int64(3), "racks": racks("r1", "r2", "r3")}))
	if err != nil {
		t.Fatal(err)
	}
	return cl.DCs[0]
}

func moves(ms ...string) []operator.Move {
	var out []operator.Move
	for _, m := range ms {
		var rack string
		var ord, size int
		if _, err := fmt.Sscanf(m, "%s %d %d", &rack, &ord, &size); err != nil {
			panic(err)
		}
		out = append(out, operator.Move{Rack: rack, Pod: fmt.Sprintf("c-dc1-%s-sts-%d", rack, ord), Size: size})
	}
	return out
}

// TestRemovals: one node per size step; the first rack in spec order above its split
// of the new size loses its highest ordinal.
func TestRemovals(t *testing.T) {
	d := threeRacks(t)
	for _, tc := range []struct {
		name  string
		from  map[string]int
		total int
		want  []operator.Move
		err   string
	}{
		{"6 to 3", map[string]int{"r1": 2, "r2": 2, "r3": 2}, 3, moves("r3 1 5", "r2 1 4", "r1 1 3"), ""},
		{"5 to 4", map[string]int{"r1": 2, "r2": 2, "r3": 1}, 4, moves("r2 1 4"), ""},
		{"7 to 5", map[string]int{"r1": 3, "r2": 2, "r3": 2}, 5, moves("r1 2 6", "r3 1 5"), ""},
		{"uneven but shrinkable", map[string]int{"r1": 3, "r2": 1, "r3": 1}, 4, moves("r1 2 4"), ""},
		{"same size", map[string]int{"r1": 1, "r2": 1, "r3": 1}, 3, nil, ""},
		{"below the rack count", map[string]int{"r1": 1, "r2": 1, "r3": 1}, 2, nil, "at least one node per rack"},
		{"not a scale-down", map[string]int{"r1": 1, "r2": 1, "r3": 1}, 4, nil, "not a scale-down"},
		{"a rack it would regrow", map[string]int{"r1": 1, "r2": 3, "r3": 2}, 5, nil, "rack r1 has 1 nodes, fewer than the 2 cass-operator gives it at size 5"},
		{"a rack missing", map[string]int{"r1": 1, "r2": 1}, 3, nil, "no replicas given for rack r3"},
	} {
		got, err := Removals(d, tc.from, tc.total)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// TestAdditions: at each size every rack below its split grows to it; from a split
// shape one node a step, in the first rack that had fewer, at the next ordinal.
func TestAdditions(t *testing.T) {
	d := threeRacks(t)
	for _, tc := range []struct {
		name  string
		from  map[string]int
		total int
		want  []operator.Move
		err   string
	}{
		{"3 to 6", map[string]int{"r1": 1, "r2": 1, "r3": 1}, 6, moves("r1 1 4", "r2 1 5", "r3 1 6"), ""},
		{"5 to 7", map[string]int{"r1": 2, "r2": 2, "r3": 1}, 7, moves("r3 1 6", "r1 2 7"), ""},
		{"uneven: a rack far below", map[string]int{"r1": 1, "r2": 1, "r3": 0}, 4, moves("r3 0 3", "r1 1 4"), ""},
		{"uneven: grows two, then too many", map[string]int{"r1": 3, "r2": 1, "r3": 0}, 5, nil, "rack r1 has 3 nodes, more than the 2 cass-operator gives it at size 5"},
		{"would decommission", map[string]int{"r1": 1, "r2": 3, "r3": 1}, 6, nil, "rack r2 has 3 nodes, more than the 2 cass-operator gives it at size 6"},
		{"not a scale-up", map[string]int{"r1": 2, "r2": 2, "r3": 2}, 5, nil, "not a scale-up"},
	} {
		got, err := Additions(d, tc.from, tc.total)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// TestRequestSize: a test-guarded write of spec.size; a size moved meanwhile is
// ErrSizeMoved (whether seen on the read, by the fake's json-patch, or as the API
// server's 422), the webhook's refusal while scaling is ErrNotYet.
func TestRequestSize(t *testing.T) {
	ctx := context.Background()
	a, dyn, _ := fakeAdapter([]runtime.Object{sample(t, "db")})
	if err := a.RequestSize(ctx, "db", "dc1", "dc1", 3, 4); err != nil {
		t.Fatal(err)
	}
	if n, _ := size(t, a, "dc1"); n != 4 {
		t.Errorf("size %d, want 4", n)
	}
	if err := a.RequestSize(ctx, "db", "dc1", "dc1", 3, 2); !errors.Is(err, operator.ErrSizeMoved) {
		t.Errorf("from 3 while at 4: %v", err)
	}
	if err := a.RequestSize(ctx, "db", "dc1", "dc1", 4, 2); err == nil || !strings.Contains(err.Error(), "at least one node per rack") {
		t.Errorf("below the rack count: %v", err)
	}
	if err := a.RequestSize(ctx, "db", "dc1", "dc9", 4, 3); err == nil || errors.Is(err, operator.ErrSizeMoved) {
		t.Errorf("wrong dc: %v", err)
	}

	// Someone changes the size between the read and the patch: the patch's test fails.
	react := func(err error) {
		dyn.PrependReactor("patch", Resource, func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, err })
	}
	// The API server's answer to a failed test: a bare 422, as applyJSPatch makes it.
	testFailed422 := apierrors.NewGenericServerResponse(422, "", schema.GroupResource{}, "", "testing value /spec/size failed: test failed", 0, false)
	dyn.PrependReactor("patch", Resource, func(k8stesting.Action) (bool, runtime.Object, error) {
		o, err := dyn.Tracker().Get(gvr, "db", "dc1")
		if err != nil {
			return true, nil, err
		}
		u := o.(*unstructured.Unstructured)
		u.Object["spec"].(map[string]any)["size"] = int64(7)
		if err := dyn.Tracker().Update(gvr, u, "db"); err != nil {
			return true, nil, err
		}
		return true, nil, testFailed422
	})
	if err := a.RequestSize(ctx, "db", "dc1", "dc1", 4, 3); !errors.Is(err, operator.ErrSizeMoved) || errors.Is(err, operator.ErrNotYet) {
		t.Errorf("422 test failed: %v", err)
	}
	// A 422 while the size is still the one read is another refusal.
	react(testFailed422)
	if err := a.RequestSize(ctx, "db", "dc1", "dc1", 7, 3); err == nil || errors.Is(err, operator.ErrSizeMoved) {
		t.Errorf("422, size unchanged: %v", err)
	}
	react(&apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
		Message: `admission webhook "vcassandradatacenter.kb.io" denied the request: CassandraDatacenter write rejected, attempted to change size while datacenter is still scaling down`}})
	if err := a.RequestSize(ctx, "db", "dc1", "dc1", 7, 3); !errors.Is(err, operator.ErrNotYet) || errors.Is(err, operator.ErrSizeMoved) {
		t.Errorf("webhook refusal: %v", err)
	}
	react(apierrors.NewInvalid(schema.GroupKind{Group: Group, Kind: Kind}, "dc1", nil))
	if err := a.RequestSize(ctx, "db", "dc1", "dc1", 7, 3); err == nil || errors.Is(err, operator.ErrNotYet) || errors.Is(err, operator.ErrSizeMoved) {
		t.Errorf("other invalid: %v", err)
	}
}

// TestRequestSizeFakeTest: client-go's fake applies the json patch itself: a failed
// test operation is ErrSizeMoved there too.
func TestRequestSizeFakeTest(t *testing.T) {
	err := classify(fmt.Errorf("wrapped: %w", errTestFailedFromFake()), "x")
	if !errors.Is(err, operator.ErrSizeMoved) {
		t.Errorf("fake test failure: %v", err)
	}
}

// TestProgress: the operator's own evidence about the datacenter and a pod.
func TestProgress(t *testing.T) {
	ctx := context.Background()
	u := withStatus(sample(t, "db"), map[string]any{
		"cassandraOperatorProgress": "Updating",
		"nodeStatuses":              map[string]any{"development-dc1-rack3-sts-0": map[string]any{"hostID": "h3"}},
		"conditions": []any{
			map[string]any{"type": "ScalingDown", "status": "True"},
			map[string]any{"type": "Valid", "status": "False", "reason": "notEnoughSpaceToScaleDown", "message": "no room"},
		},
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "development-dc1-rack3-sts-0", Namespace: "db",
		Labels: map[string]string{LabelNodeState: StateDecommissioning}}}
	a, _, _ := fakeAdapter([]runtime.Object{u}, pod)
	p, err := a.Progress(ctx, "db", "dc1", "dc1", pod.Name)
	if err != nil {
		t.Fatal(err)
	}
	want := operator.Progress{Size: 3, Leaving: true, Tracked: true, PodState: StateDecommissioning, ScalingDown: true,
		Blocked: "Valid=False notEnoughSpaceToScaleDown: no room"}
	if p != want {
		t.Errorf("progress %+v, want %+v", p, want)
	}
	p, err = a.Progress(ctx, "db", "dc1", "dc1", "development-dc1-rack2-sts-0")
	if err != nil || p.Tracked || p.Leaving || p.PodState != "" {
		t.Errorf("a pod that is gone: %+v, %v", p, err)
	}

	u = withStatus(sample(t, "db"), map[string]any{"cassandraOperatorProgress": "Ready"})
	u.Object["spec"].(map[string]any)["stopped"] = true
	a, _, _ = fakeAdapter([]runtime.Object{u})
	if p, err := a.Progress(ctx, "db", "dc1", "dc1", ""); err != nil || !p.Ready || !p.Stopped || p.ScalingDown || p.Blocked != "" {
		t.Errorf("ready and stopped: %+v, %v", p, err)
	}
}
