package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// deleteLeftoverPVCs deletes the claims a removed pod left behind when the record of its
// removal was wiped (checkpoint.Leftover), planned by a scale-down that found its racks
// at the target already (internal/operation/scaledown/settle.go). The planner saw no pod
// using them and every ring member of the datacenter at a pod's address; the step asks
// the world again right before it deletes, after the proof of the lock (Recheck).
type deleteLeftoverPVCs struct {
	w *World
	l record.Leftover
}

func (s *deleteLeftoverPVCs) id() string {
	return record.StepID(record.StepDeleteLeftoverPVCs, s.l.Pod)
}

func (s *deleteLeftoverPVCs) names() []string {
	var names []string
	for _, c := range s.l.PVCs {
		names = append(names, c.Name)
	}
	return names
}

// Describe implements engine.Describer.
func (s *deleteLeftoverPVCs) Describe() string {
	return "delete left-over PVC " + strings.Join(s.names(), ", ")
}

// PlanText implements PlanTexter.
func (s *deleteLeftoverPVCs) PlanText() string {
	return fmt.Sprintf("%s of removed pod %s (%s)", s.Describe(), s.l.Pod, LeftoverWhy)
}

// LeftoverWhy is why a left-over claim may go, as plans say it.
const LeftoverWhy = "left over by a removal whose record is gone; no pod and no ring member uses it"

// Done: every planned claim is gone, being deleted, or its name now belongs to another
// claim (another UID).
func (s *deleteLeftoverPVCs) Done(ctx context.Context) (bool, error) {
	left, err := s.w.claimsLeft(ctx, s.l.PVCs)
	if err != nil {
		return false, err
	}
	return allDeleting(left), nil
}

// Safe: the checks are Recheck's, right before the deletion. Once a recheck found the
// ring unreadable in this run, Safe waits until it reads again (unknown is never
// "no member uses it").
func (s *deleteLeftoverPVCs) Safe(ctx context.Context) error {
	return s.w.waitSafe(ctx, s.id(), func() (string, error) {
		if failed, _ := s.w.recheckFailed.get(s.id()); !failed {
			return "", nil
		}
		if _, _, err := s.w.freshRing(ctx, s.id(), ""); err != nil {
			return ringUnknown(err), nil
		}
		return "", nil
	})
}

func ringUnknown(err error) string {
	return "the ring cannot be read (" + err.Error() + "): whether a ring member still uses the claims is unknown"
}

// Recheck implements engine.Rechecker: from reads made now, every ring member of the
// datacenter runs at a pod's address, no pod uses the claims and the StatefulSet does
// not want the pod back (replicas at most its ordinal). An unreadable ring sends the
// step back to Safe's wait; anything else found stops the run, nothing deleted.
func (s *deleteLeftoverPVCs) Recheck(ctx context.Context) error {
	if err := s.w.refuseDeleting(s.id()); err != nil {
		return err
	}
	r, reader, err := s.w.freshRing(ctx, s.id(), "")
	s.w.recheckFailed.set(s.id(), err != nil)
	if err != nil {
		return &engine.NotYet{Reason: ringUnknown(err)}
	}
	pods, err := s.w.Kube.CoreV1().Pods(s.w.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("cannot list pods to check the claims of %s are unused: %w", s.l.Pod, err)
	}
	sts, err := s.w.Kube.AppsV1().StatefulSets(s.w.Namespace).Get(ctx, s.l.StatefulSet, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("cannot read StatefulSet %s: %w", s.l.StatefulSet, err)
	}
	why := JudgeLeftover(s.l, s.w.CP.Target.DC, r, reader, replicasOf(sts), pods.Items)
	if why == "" {
		return nil
	}
	return &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("not deleting the claims of %s: %s; nothing deleted. "+
		"Find out why, then run `kubectl cassandra resume -n %s %s`, or end the operation with `kubectl cassandra abort -n %s %s`",
		s.l.Pod, why, s.w.CP.Namespace, s.w.CP.Cluster, s.w.CP.Namespace, s.w.CP.Cluster)}
}

// JudgeLeftover says why the claims of l may not be deleted now ("" when they may): a
// pod uses one, the StatefulSet wants the pod again (replicas above its ordinal), or a
// ring member of dc (read from reader) runs at no pod's address, which may be the node
// whose data is on them.
func JudgeLeftover(l record.Leftover, dc string, r pubnodetool.Ring, reader string, replicas int, pods []corev1.Pod) string {
	var why []string
	for _, c := range l.PVCs {
		for _, p := range ClaimUsers(pods, c.Name) {
			why = append(why, fmt.Sprintf("PVC %s is used by pod %s", c.Name, p))
		}
	}
	if replicas > l.Ordinal {
		why = append(why, fmt.Sprintf("StatefulSet %s has %d replicas and wants pod %s again", l.StatefulSet, replicas, l.Pod))
	}
	if bad := Unaccounted(r, dc, pods); len(bad) > 0 {
		why = append(why, fmt.Sprintf("ring members of datacenter %s run where no pod is (%s, ring read from %s): one may be the node whose data is on them",
			dc, strings.Join(bad, ", "), reader))
	}
	return strings.Join(why, "; ")
}

// ClaimUsers lists the pods among pods whose volumes use claim.
func ClaimUsers(pods []corev1.Pod, claim string) []string {
	var users []string
	for _, p := range pods {
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
				users = append(users, p.Name)
				break
			}
		}
	}
	return users
}

// Unaccounted names the ring members of dc at no pod's address ("ADDRESS (Host ID
// ID, CODE)"): nodes whose pod is gone while they are still in the ring.
func Unaccounted(r pubnodetool.Ring, dc string, pods []corev1.Pod) []string {
	var ips []string
	for _, p := range pods {
		ips = append(ips, p.Status.PodIP)
	}
	var out []string
	for _, n := range r.Unaccounted(dc, ips) {
		out = append(out, fmt.Sprintf("%s (Host ID %s, %s)", n.Address, n.HostID, n.Code()))
	}
	return out
}

// Do deletes the claims still there with a UID precondition (deleteClaims).
func (s *deleteLeftoverPVCs) Do(ctx context.Context) error {
	ctx, cancel := writeContext(ctx)
	defer cancel()
	left, err := s.w.claimsLeft(ctx, s.l.PVCs)
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	return s.w.deleteClaims(ctx, left)
}

// KeepsObservations implements engine.ObservationKeeper: Do records what it deleted.
func (s *deleteLeftoverPVCs) KeepsObservations() {}

// Evident implements engine.Evident: the claims show whether they are being deleted.
func (s *deleteLeftoverPVCs) Evident() {}

// newLeftoverStep is the step deleting the left-over claims of pod.
func newLeftoverStep(w *World, pod string) (operation.Step, error) {
	l, ok := w.CP.Leftover(pod)
	if !ok {
		return nil, errors.New("step " + record.StepID(record.StepDeleteLeftoverPVCs, pod) + " names pod " + pod + ", which has no left-over claims in the plan")
	}
	return &deleteLeftoverPVCs{w: w, l: l}, nil
}
