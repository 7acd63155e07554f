package operation

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/future"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// The planner's reads by name. Absent is (nil, nil), so that a kind tells "gone" from
// "cannot read" without knowing the API's error types; a read that failed is an error
// naming the object, never "absent".

// Pod reads pod name.
func (p *Planner) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	pod, err := p.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	return absent(pod, err, "pod", name)
}

// Claim reads PersistentVolumeClaim name.
func (p *Planner) Claim(ctx context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
	pvc, err := p.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	return absent(pvc, err, "PVC", name)
}

// NamespacePods lists every pod of namespace ns (which claims they use, at which
// addresses).
func (p *Planner) NamespacePods(ctx context.Context, ns string) ([]corev1.Pod, error) {
	l, err := p.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot list the pods of namespace %s: %w", ns, err)
	}
	return l.Items, nil
}

// ClaimsLabelled lists the claims carrying every label of match (a StatefulSet's
// selector: the StatefulSet controller puts it on the claims it creates), by name. A
// list started ahead for the same labels (ReadRacksAhead) is taken up, once.
func (p *Planner) ClaimsLabelled(ctx context.Context, ns string, match map[string]string) (map[string]*corev1.PersistentVolumeClaim, error) {
	sel := labels.SelectorFromSet(match).String()
	if list := takeAhead(&p.ahead.mu, &p.ahead.claims, aheadKey(ns, sel)); list != nil {
		return list()
	}
	return p.claimsSelected(ctx, ns, sel)
}

func (p *Planner) claimsSelected(ctx context.Context, ns, sel string) (map[string]*corev1.PersistentVolumeClaim, error) {
	l, err := p.Client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("cannot list PVCs: %w", err)
	}
	out := make(map[string]*corev1.PersistentVolumeClaim, len(l.Items))
	for i := range l.Items {
		out[l.Items[i].Name] = &l.Items[i]
	}
	return out, nil
}

// Replicas reads StatefulSet name's spec.replicas (1 when unset, as the API defaults it).
func (p *Planner) Replicas(ctx context.Context, ns, name string) (int, error) {
	sts, err := p.Client.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("cannot read StatefulSet %s: %w", name, err)
	}
	if sts.Spec.Replicas == nil {
		return 1, nil
	}
	return int(*sts.Spec.Replicas), nil
}

func absent[T any](obj *T, err error, what, name string) (*T, error) {
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("cannot read %s %s: %w", what, name, err)
	}
	return obj, nil
}

// ReadRack reads a rack's StatefulSet and pods. It judges nothing: CheckPods does. A
// read of the rack started ahead (ReadRacksAhead) is taken up, once.
func (p *Planner) ReadRack(ctx context.Context, ns string, r topology.Rack) (RackNow, error) {
	if read := takeAhead(&p.ahead.mu, &p.ahead.racks, aheadKey(ns, r.StatefulSet)); read != nil {
		return read()
	}
	return p.readRack(ctx, ns, r, nil)
}

// readRack reads the rack's StatefulSet and its pods at once (judged in that order);
// read, when not nil, is told the StatefulSet as soon as it is read.
func (p *Planner) readRack(ctx context.Context, ns string, r topology.Rack, read func(*appsv1.StatefulSet)) (RackNow, error) {
	pods := future.Start(func() (map[int]corev1.Pod, error) { return p.RackPods(ctx, ns, r) })
	sts, err := p.Client.AppsV1().StatefulSets(ns).Get(ctx, r.StatefulSet, metav1.GetOptions{})
	sts, err = absent(sts, err, "StatefulSet", r.StatefulSet)
	if err != nil {
		return RackNow{}, err
	}
	if sts == nil {
		return RackNow{}, exit.Refusedf("StatefulSet %s of rack %s/%s does not exist in namespace %s", r.StatefulSet, r.DC, r.Name, ns)
	}
	if read != nil {
		read(sts)
	}
	cur := 1
	if sts.Spec.Replicas != nil {
		cur = int(*sts.Spec.Replicas)
	}
	byOrdinal, err := pods()
	if err != nil {
		return RackNow{}, err
	}
	return RackNow{Rack: r, STS: sts, Pods: byOrdinal, Cur: cur}, nil
}

// RackPods maps ordinal → pod for the pods of a rack.
func (p *Planner) RackPods(ctx context.Context, ns string, r topology.Rack) (map[int]corev1.Pod, error) {
	l, err := p.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: r.LabelSelector()})
	if err != nil {
		return nil, fmt.Errorf("cannot list the pods of rack %s: %w", r.Name, err)
	}
	out := map[int]corev1.Pod{}
	for _, pod := range l.Items {
		if i, ok := topology.Ordinal(pod.Name, r.StatefulSet); ok {
			out[i] = pod
		}
	}
	return out, nil
}
