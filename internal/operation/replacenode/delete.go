package replacenode

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// deleteClaims deletes the dead node's claims (its data: only its), each with the UID
// planned as precondition, once the node is still dead right then and the replace
// option is in place (or the operator's task is not involved: the script flow only).
// The claims stay while the pod mounts them (kubernetes.io/pvc-protection); deleting
// the pod next lets them go, and the StatefulSet creates the new pod on fresh ones.
type deleteClaims struct{ *run }

func (s *deleteClaims) Describe() string { return "delete the claims of " + s.rep.Pod }

// PlanText implements steps.PlanTexter: exactly which data is discarded.
func (s *deleteClaims) PlanText() string {
	var names []string
	for _, c := range s.n.PVCs {
		names = append(names, c.Name+" (UID "+c.UID+")")
	}
	if len(names) == 0 {
		return "delete the claims of " + s.rep.Pod + ": none left"
	}
	return fmt.Sprintf("delete %s: the data of the dead node (Host ID %s) only, with UID preconditions, once it is still DN and its nodetool does not answer",
		strings.Join(names, ", "), s.rep.HostID)
}

// plannedClaims are the planned claims that still exist with their planned UID (being
// deleted or not).
func (r *run) plannedClaims(ctx context.Context) ([]corev1.PersistentVolumeClaim, error) {
	var out []corev1.PersistentVolumeClaim
	for _, c := range r.n.PVCs {
		got, err := r.w.Kube.CoreV1().PersistentVolumeClaims(r.w.CP.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read claim %s: %w", c.Name, err)
		}
		if string(got.UID) == c.UID {
			out = append(out, *got)
		}
	}
	return out, nil
}

// claimsLeft are the planned claims that still exist and are not being deleted.
func (r *run) claimsLeft(ctx context.Context) ([]corev1.PersistentVolumeClaim, error) {
	all, err := r.plannedClaims(ctx)
	var out []corev1.PersistentVolumeClaim
	for _, c := range all {
		if c.DeletionTimestamp == nil {
			out = append(out, c)
		}
	}
	return out, err
}

func (s *deleteClaims) Done(ctx context.Context) (bool, error) {
	left, err := s.claimsLeft(ctx)
	return len(left) == 0, err
}

func (s *deleteClaims) Safe(ctx context.Context) error {
	return s.w.WaitSafe(ctx, StepDeleteClaims+"/"+s.rep.Pod, func() (string, error) {
		if err := s.optionThere(ctx, "nothing was deleted. Abort this operation (kubectl cassandra abort -n %s %s) and run replace-node again"); err != nil {
			return "", err
		}
		return s.stillDead(ctx)
	})
}

// Recheck implements engine.Rechecker: still dead right before the deletes.
func (s *deleteClaims) Recheck(ctx context.Context) error { return s.recheck(ctx) }

func (s *deleteClaims) Do(ctx context.Context) error {
	left, err := s.claimsLeft(ctx)
	if err != nil {
		return err
	}
	for _, c := range left {
		uid := types.UID(c.UID)
		err := s.w.Kube.CoreV1().PersistentVolumeClaims(s.w.CP.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("cannot delete claim %s: %w", c.Name, err)
		}
	}
	return nil
}

func (s *deleteClaims) Evident() {}

// deletePod deletes the dead node's pod (UID precondition), so that the StatefulSet
// creates it again on fresh claims. A pod re-created since the plan that still holds
// a planned claim (being deleted) is the old data's: it goes too.
type deletePod struct{ *run }

func (s *deletePod) Describe() string { return "delete pod " + s.rep.Pod }

func (s *deletePod) PlanText() string {
	if s.n.PodUID == "" {
		return fmt.Sprintf("delete pod %s if one holds the dead node's claims (it had none when planned)", s.rep.Pod)
	}
	return fmt.Sprintf("delete pod %s (UID %s); its StatefulSet creates it again on fresh claims", s.rep.Pod, s.n.PodUID)
}

// target is the pod to delete now (nil: none, the step is done).
func (s *deletePod) target(ctx context.Context) (*corev1.Pod, error) {
	p, err := s.pod(ctx, s.rep.Pod)
	if err != nil || p == nil {
		return nil, err
	}
	if s.n.PodUID != "" && string(p.UID) == s.n.PodUID {
		return p, nil
	}
	// Another pod: the new one, unless a planned claim is still there (it holds it).
	old, err := s.plannedClaims(ctx)
	if err != nil || len(old) == 0 {
		return nil, err
	}
	return p, nil
}

// Done: no pod of the name holds the dead node's data any more (the planned pod is
// gone, and no pod re-created since sits on a planned claim).
func (s *deletePod) Done(ctx context.Context) (bool, error) {
	p, err := s.target(ctx)
	return p == nil && err == nil, err
}

// Wait waits until Done. A pod the StatefulSet re-created before the claims were gone
// can be bound to a claim being deleted: it cannot start, and the claim waits on it.
// Such a pod is deleted too (UID precondition), once the node is still dead.
func (s *deletePod) Wait(ctx context.Context) error {
	start := time.Now()
	for {
		p, err := s.target(ctx)
		what := ""
		switch {
		case err != nil:
			what = "state unknown (" + err.Error() + ")"
		case p == nil:
			return nil
		case p.DeletionTimestamp != nil:
			what = "pod " + p.Name + " is being deleted"
		case string(p.UID) == s.n.PodUID:
			what = "pod " + p.Name + " is still there"
		default:
			if why, err := s.stillDead(ctx); err != nil || why != "" {
				if err != nil {
					return err
				}
				what = why
				break
			}
			uid := p.UID
			err := s.w.Kube.CoreV1().Pods(s.w.CP.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				what = "cannot delete pod " + p.Name + " (" + err.Error() + ")"
			} else {
				what = "pod " + p.Name + " was re-created on the dead node's claim being deleted: deleted it too"
			}
		}
		s.w.Reporter.Waiting(StepDeleteDeadPod+"/"+s.rep.Pod, what, time.Since(start))
		if err := s.w.SleepPoll(ctx); err != nil {
			return err
		}
	}
}

// Safe: the replace option is still in the start script (a GitOps sync may have put
// the script back since the claims were deleted: the new pod would start as a new
// node), and the node is still dead.
func (s *deletePod) Safe(ctx context.Context) error {
	return s.w.WaitSafe(ctx, StepDeleteDeadPod+"/"+s.rep.Pod, func() (string, error) {
		if err := s.optionThere(ctx, "pod "+s.rep.Pod+" was not deleted. The dead node's claims are deleted already, so abort cannot give its data back: "+
			"stop what puts the script back (a GitOps sync), then resume, which writes the option again and goes on (kubectl cassandra resume -n %s %s)"); err != nil {
			return "", err
		}
		return s.stillDead(ctx)
	})
}

// optionThere stops the run when the operation's block is no longer in the start script
// (script flow only); then says what state things are in and the way on (a format
// taking the namespace and the cluster).
func (r *run) optionThere(ctx context.Context, then string) error {
	if r.rep.ConfigMap == "" {
		return nil
	}
	ok, err := (&setOption{r}).written(ctx)
	if err != nil || ok {
		return err
	}
	cp := r.w.CP
	return &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("the replace option was taken out of ConfigMap %s/%s since it was written: without it the new pod would start as a new node; "+then,
		cp.Namespace, r.rep.ConfigMap, cp.Namespace, cp.Cluster)}
}

// Recheck implements engine.Rechecker.
func (s *deletePod) Recheck(ctx context.Context) error { return s.recheck(ctx) }

func (s *deletePod) Do(ctx context.Context) error {
	p, err := s.target(ctx)
	if err != nil || p == nil {
		return err
	}
	uid := p.UID
	err = s.w.Kube.CoreV1().Pods(s.w.CP.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or another pod now: Done decides
	}
	return err
}

func (s *deletePod) Evident() {}
