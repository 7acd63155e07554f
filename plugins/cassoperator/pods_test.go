package cassoperator

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// podLabels are the labels cass-operator gives a pod of rack of datacenter dc (cluster c).
func podLabels(dc, rack, state string) map[string]string {
	l := RackLabels("c", dc, rack)
	l[LabelManagedBy] = ManagedByValue
	l[LabelNodeState] = state
	return l
}

// TestPodSelection: the selector of a datacenter selects its pods only, and a pod's
// datacenter label names its CassandraDatacenter.
func TestPodSelection(t *testing.T) {
	a := &Adapter{}
	mine, other := podLabels("dc1", "r1", StateStarted), podLabels("dc2", "r1", StateStarted)
	service := map[string]string{LabelCluster: "c", LabelDatacenter: "dc1", LabelManagedBy: ManagedByValue}
	sel := func(s string) labels.Selector {
		x, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	if s := sel(a.ClusterSelector("dc1")); !s.Matches(labels.Set(mine)) || s.Matches(labels.Set(other)) || s.Matches(labels.Set(service)) {
		t.Errorf("selector of dc1 %s", s)
	}
	if s := sel(a.ClusterSelector("")); !s.Matches(labels.Set(mine)) || !s.Matches(labels.Set(other)) || s.Matches(labels.Set(service)) {
		t.Errorf("selector of all %s", s)
	}
	if c, ok := a.PodCluster(mine); !ok || c != "dc1" {
		t.Errorf("pod cluster %q %v", c, ok)
	}
	if _, ok := a.PodCluster(service); ok {
		t.Errorf("a service's labels taken for a pod's")
	}
	if _, ok := a.PodCluster(map[string]string{"app": "cassandracluster", "cassandracluster": "x"}); ok {
		t.Errorf("a CassKop pod taken for cass-operator's")
	}
}

// TestBusyPods: the pods cass-operator is decommissioning or starting.
func TestBusyPods(t *testing.T) {
	pod := func(name, dc, state string) runtime.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "db", Labels: podLabels(dc, "r1", state)}}
	}
	a, _, _ := fakeAdapter(nil,
		pod("c-dc1-r1-sts-0", "dc1", StateStarted),
		pod("c-dc1-r1-sts-1", "dc1", StateStartedNotReady),
		pod("c-dc1-r1-sts-2", "dc1", StateDecommissioning),
		pod("c-dc1-r1-sts-3", "dc1", StateReadyToStart),
		pod("c-dc2-r1-sts-0", "dc2", StateStarting))
	got, err := a.BusyPods(context.Background(), "db", "dc1")
	want := []string{"pod c-dc1-r1-sts-2: node-state is Decommissioning", "pod c-dc1-r1-sts-3: node-state is Ready-to-Start"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("busy pods %q, %v", got, err)
	}
}
