package steps

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// A scale-up's new pod that never started (never scheduled, or no container of it ever
// ran) holds nothing: no Cassandra ran on it, so its node never joined the ring and its
// claims hold no data. abort may take it away — shrink its StatefulSet below it, delete
// its claims — to end at counts the operator keeps (a two-rack scale-up whose rack1 pod
// stays Pending), once the ring confirms that no node runs on it.

// Unstarted is a new pod of the plan that abort may take away.
type Unstarted struct {
	Node record.Node
	// UID is the pod's, as judged (the shrink's wait and nothing else keys on it).
	UID types.UID
	// Why is the pod's state in words ("Pending, not scheduled: Unschedulable").
	Why string
}

// UnstartedNewPods lists the plan's new pods, per StatefulSet from its top ordinal
// down, that never started: it stops at the first pod of a StatefulSet that did start
// (the StatefulSet can only lose its highest pods). With any such pod, the ring is read
// and must show no node on it, and no node at an address no other pod of the cluster
// has (that node could be this pod's): otherwise it is an error, and abort takes
// nothing away.
func UnstartedNewPods(ctx context.Context, w *World) ([]Unstarted, error) {
	byST := map[string][]record.Node{}
	for _, n := range w.CP.Nodes {
		if n.New {
			byST[n.StatefulSet] = append(byST[n.StatefulSet], n)
		}
	}
	names := make([]string, 0, len(byST))
	for name := range byST {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []Unstarted
	for _, name := range names {
		sts, err := w.Kube.AppsV1().StatefulSets(w.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("cannot read StatefulSet %s: %w", name, err)
		}
		nodes := byST[name]
		sort.Slice(nodes, func(i, j int) bool { return nodes[i].Ordinal > nodes[j].Ordinal })
		top := replicasOf(sts) - 1
		for _, n := range nodes {
			if n.Ordinal != top {
				break // not at the top: pods above it are not new, or started
			}
			p, err := w.Kube.CoreV1().Pods(w.Namespace).Get(ctx, n.Pod, metav1.GetOptions{})
			if err != nil || !NeverStarted(p) {
				break
			}
			out = append(out, Unstarted{Node: n, UID: p.UID, Why: pendingWhy(p)})
			top--
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	if err := notInRing(ctx, w, out); err != nil {
		return nil, err
	}
	return out, nil
}

// NeverStarted: the pod is Pending and no container of it ever ran.
func NeverStarted(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending {
		return false
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if cs.RestartCount > 0 || cs.State.Running != nil || cs.State.Terminated != nil ||
			cs.LastTerminationState.Running != nil || cs.LastTerminationState.Terminated != nil {
			return false
		}
	}
	return true
}

// pendingWhy is the pod's scheduling condition in words ("Pending" when none says more).
func pendingWhy(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return "Pending, not scheduled: " + c.Reason
		}
	}
	return "Pending, no container ever ran"
}

// notInRing confirms from the ring that no node runs on any of us.
func notInRing(ctx context.Context, w *World, us []Unstarted) error {
	r, reader, err := w.ring(ctx)
	if err != nil {
		return fmt.Errorf("cannot confirm that the never-started pod %s has no node in the ring: %w", us[0].Node.Pod, err)
	}
	pods, err := w.Kube.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.ClusterSelector})
	if err != nil {
		return fmt.Errorf("cannot list the cluster's pods: %w", err)
	}
	var mine []string
	for _, u := range us {
		mine = append(mine, u.Node.Pod)
	}
	return NoNodeOn(r, reader, pods.Items, mine)
}

// NoNodeOn confirms from ring r (read on reader) that no node runs on the never-started
// pods mine, among pods (every pod of the cluster): none at the address of one of them,
// and none at an address no other pod has (that node could be one of them).
func NoNodeOn(r pubnodetool.Ring, reader string, pods []corev1.Pod, mine []string) error {
	if len(mine) == 0 {
		return nil
	}
	ours := map[string]bool{}
	for _, m := range mine {
		ours[m] = true
	}
	var others []string
	for _, p := range pods {
		if ours[p.Name] {
			if p.Status.PodIP == "" {
				continue
			}
			if row, ok := r.ByAddress(p.Status.PodIP); ok {
				return fmt.Errorf("pod %s looks never started, yet the ring (read on %s) has node %s (Host ID %s) at its address: it is not taken away", p.Name, reader, row.Address, row.HostID)
			}
			continue
		}
		others = append(others, p.Status.PodIP)
	}
	for _, row := range r.Nodes {
		if !anyAddress(row.Address, others) {
			return fmt.Errorf("node %s (Host ID %s) is in the ring (read on %s) at an address no running pod of the cluster has: whether it runs on the never-started pod %s cannot be told", row.Address, row.HostID, reader, mine[0])
		}
	}
	return nil
}

// recheckUnstarted judges again, from fresh reads right before a write, that the
// scale-down's never-started node n still holds nothing: its pod, if any, never
// started, and the ring has no node on it (NoNodeOn). An operator that scales itself
// (operator.Scaler) acts on its StatefulSets alone: never for it.
func (w *World) recheckUnstarted(ctx context.Context, n record.Node) error {
	if w.Scaler != nil {
		return fmt.Errorf("pod %s: the operator scales its StatefulSets itself, the plugin never shrinks one", n.Pod)
	}
	p, err := w.Kube.CoreV1().Pods(w.Namespace).Get(ctx, n.Pod, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("cannot read pod %s: %w", n.Pod, err)
	case p.DeletionTimestamp == nil && !NeverStarted(p):
		return fmt.Errorf("pod %s started since it was planned (phase %s): it is not taken away without a decommission: abort this operation, then plan the scale again", n.Pod, p.Status.Phase)
	}
	r, reader, err := w.freshRing(ctx, "", n.Pod)
	if err != nil {
		return fmt.Errorf("cannot confirm that the never-started pod %s has no node in the ring: %w", n.Pod, err)
	}
	pods, err := w.Kube.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.ClusterSelector})
	if err != nil {
		return fmt.Errorf("cannot list the cluster's pods: %w", err)
	}
	return NoNodeOn(r, reader, pods.Items, []string{n.Pod})
}

// TakeAwayUnstarted removes the pods UnstartedNewPods found: each StatefulSet shrunk to
// its lowest such ordinal (only from the replicas they were judged at: a StatefulSet
// changed since is an error), the pods waited gone (up to wait), then their claims
// deleted, each with a UID precondition. Each step is safe to do again.
func TakeAwayUnstarted(ctx context.Context, w *World, us []Unstarted, wait time.Duration) error {
	// A paused operator scaled back up meanwhile would fight each write: checked right
	// before each one, as the engine does before a step.
	guard := NewOperatorGuard(ctx, w)
	defer guard.Stop()
	lowest := map[string]int{}
	judged := map[string]int{}
	for _, u := range us {
		st := u.Node.StatefulSet
		if o, ok := lowest[st]; !ok || u.Node.Ordinal < o {
			lowest[st] = u.Node.Ordinal
		}
		judged[st] = max(judged[st], u.Node.Ordinal+1)
	}
	for st, to := range lowest {
		sts, err := w.Kube.AppsV1().StatefulSets(w.Namespace).Get(ctx, st, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("cannot read StatefulSet %s: %w", st, err)
		}
		switch have := replicasOf(sts); {
		case have == to:
			continue // shrunk already (an abort before this one)
		case have != judged[st]:
			return fmt.Errorf("StatefulSet %s changed to %d replicas since it was read at %d", st, have, judged[st])
		}
		if err := guard.Check(ctx, "take-away/"+st); err != nil {
			return err
		}
		if err := w.setReplicasAt(ctx, sts, to, "shrinking"); err != nil {
			return err
		}
	}
	poll := w.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	deadline := time.Now().Add(wait)
	for _, u := range us {
		for {
			p, err := w.Kube.CoreV1().Pods(w.Namespace).Get(ctx, u.Node.Pod, metav1.GetOptions{})
			if apierrors.IsNotFound(err) || (err == nil && p.UID != u.UID) {
				break
			}
			if err == nil && !NeverStarted(p) && p.DeletionTimestamp == nil {
				return fmt.Errorf("pod %s started meanwhile: its claims are kept", u.Node.Pod)
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("pod %s is not gone after %s", u.Node.Pod, wait)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(poll):
			}
		}
		if err := guard.Check(ctx, "take-away/"+u.Node.Pod); err != nil {
			return err
		}
		if err := deleteTemplateClaims(ctx, w, u.Node); err != nil {
			return err
		}
	}
	return nil
}

// deleteTemplateClaims deletes the claims the StatefulSet's templates give n's pod, each
// with a UID precondition, once no pod of that name exists.
func deleteTemplateClaims(ctx context.Context, w *World, n record.Node) error {
	sts, err := w.Kube.AppsV1().StatefulSets(w.Namespace).Get(ctx, n.StatefulSet, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("cannot read StatefulSet %s: %w", n.StatefulSet, err)
	}
	for _, tpl := range sts.Spec.VolumeClaimTemplates {
		name := tpl.Name + "-" + n.Pod
		pvc, err := w.Kube.CoreV1().PersistentVolumeClaims(w.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("cannot read PVC %s: %w", name, err)
		}
		if pvc.DeletionTimestamp != nil {
			continue
		}
		uid := pvc.UID
		err = w.Kube.CoreV1().PersistentVolumeClaims(w.Namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("cannot delete PVC %s: %w", name, err)
		}
	}
	return nil
}
