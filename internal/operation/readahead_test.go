package operation

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// TestRackReadsAheadTakenUpOnce: the racks' reads started ahead (the StatefulSet, its
// pods, then its claims) are what the plan's first ReadRack and ClaimsLabelled get;
// every later read of the same objects reads the world anew, so a change since is seen.
func TestRackReadsAheadTakenUpOnce(t *testing.T) {
	ctx := context.Background()
	labels := map[string]string{"app": "c", "rack": "r1"}
	replicas := int32(3)
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "c-r1", Namespace: "ns"},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}},
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "c-r1-0", Namespace: "ns", Labels: labels}}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-c-r1-0", Namespace: "ns", Labels: labels}}
	kube := fake.NewClientset(sts, pod, claim)
	p := &Planner{Client: kube}
	rack := topology.Rack{DC: "dc1", Name: "r1", StatefulSet: "c-r1", Labels: labels}
	count := func(verb, resource string) int {
		n := 0
		for _, a := range kube.Actions() {
			if a.GetVerb() == verb && a.GetResource().Resource == resource {
				n++
			}
		}
		return n
	}

	p.ReadRacksAhead(ctx, "ns", []topology.Rack{rack})
	p.ReadRacksAhead(ctx, "ns", []topology.Rack{rack}) // started once
	st, err := p.ReadRack(ctx, "ns", rack)
	if err != nil || st.Cur != 3 || len(st.Pods) != 1 {
		t.Fatalf("rack read ahead: %+v, %v; want 3 replicas and one pod", st, err)
	}
	claims, err := p.ClaimsLabelled(ctx, "ns", labels)
	if err != nil || claims["data-c-r1-0"] == nil {
		t.Fatalf("claims read ahead: %v, %v", claims, err)
	}
	if g, l, c := count("get", "statefulsets"), count("list", "pods"), count("list", "persistentvolumeclaims"); g != 1 || l != 1 || c != 1 {
		t.Fatalf("reads ahead: %d StatefulSet GETs, %d pod LISTs, %d claim LISTs; want one of each", g, l, c)
	}

	// The world changes; the next reads see it.
	replicas = 2
	if _, err := kube.AppsV1().StatefulSets("ns").Update(ctx, sts, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().PersistentVolumeClaims("ns").Delete(ctx, claim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kube.ClearActions()
	if st, err := p.ReadRack(ctx, "ns", rack); err != nil || st.Cur != 2 {
		t.Fatalf("second read: %d replicas, %v; want 2 (read anew)", st.Cur, err)
	}
	if claims, err := p.ClaimsLabelled(ctx, "ns", labels); err != nil || len(claims) != 0 {
		t.Fatalf("second claims read: %v, %v; want none (read anew)", claims, err)
	}
	if g, l, c := count("get", "statefulsets"), count("list", "pods"), count("list", "persistentvolumeclaims"); g != 1 || l != 1 || c != 1 {
		t.Fatalf("later reads: %d StatefulSet GETs, %d pod LISTs, %d claim LISTs; want one of each", g, l, c)
	}
}

// TestReadRackJudgesTheStatefulSetFirst: the StatefulSet and the pods are read at once;
// a missing StatefulSet is the refusal, whatever the pods' list answered.
func TestReadRackJudgesTheStatefulSetFirst(t *testing.T) {
	kube := fake.NewClientset()
	kube.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, context.DeadlineExceeded
	})
	_, err := (&Planner{Client: kube}).ReadRack(context.Background(), "ns", topology.Rack{DC: "dc1", Name: "r1", StatefulSet: "c-r1"})
	if err == nil || !strings.Contains(err.Error(), "StatefulSet c-r1 of rack dc1/r1 does not exist in namespace ns") {
		t.Fatalf("got %v; want the missing StatefulSet", err)
	}
}

// The pods noted as the plan's ring readers come back once each, in the order noted.
func TestRingReadersNoted(t *testing.T) {
	p := &Planner{}
	if got := p.RingReaders(); len(got) != 0 {
		t.Fatalf("readers before any: %v", got)
	}
	for _, pod := range []string{"b", "a", "b"} {
		p.NoteRingReader(pod)
	}
	if got := strings.Join(p.RingReaders(), ","); got != "b,a" {
		t.Fatalf("readers %q, want b,a", got)
	}
}
