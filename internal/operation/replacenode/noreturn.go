package replacenode

import (
	"context"
	"fmt"
	"strings"
)

// The point of no return of a replace through the start script: the dead node's data or
// pod is discarded. Its claims deleted (or being deleted); or, when it had no claims at
// planning, its planned pod deleted (delete-dead-pod started, or the planned UID gone):
// the replacement then starts with the option on a fresh volume, and only resume goes
// forward. Read from the world whatever the checkpoint says, but for the started mark.

// pastNoReturn says in words how the replace went past its point of no return ("": not
// yet).
func (r *run) pastNoReturn(ctx context.Context) (string, error) {
	planned, err := r.plannedClaims(ctx)
	if err != nil {
		return "", err
	}
	if len(planned) < len(r.n.PVCs) {
		return "the dead node's claims are deleted", nil
	}
	if dying := dyingClaims(planned); len(dying) > 0 {
		return "the dead node's claims are being deleted (" + strings.Join(dying, ", ") + ")", nil
	}
	if len(r.n.PVCs) > 0 {
		return "", nil // its data is intact: a pod re-created on it runs the dead node again
	}
	return r.podDiscarded(ctx)
}

// podDiscarded says how the planned pod was deleted ("": it was not).
func (r *run) podDiscarded(ctx context.Context) (string, error) {
	if r.w.CP.Started(StepDeleteDeadPod) {
		return fmt.Sprintf("the dead node's pod %s was deleted (step %s started)", r.rep.Pod, StepDeleteDeadPod), nil
	}
	if r.n.PodUID == "" {
		return "", nil
	}
	gone, err := r.plannedPodGone(ctx)
	if err != nil || !gone {
		return "", err
	}
	return fmt.Sprintf("the dead node's pod %s (UID %s) was deleted", r.rep.Pod, r.n.PodUID), nil
}

// plannedPodGone reports whether the pod of the planned UID is gone or being deleted.
func (r *run) plannedPodGone(ctx context.Context) (bool, error) {
	p, err := r.pod(ctx, r.rep.Pod)
	if err != nil {
		return false, fmt.Errorf("cannot read pod %s: %w", r.rep.Pod, err)
	}
	return p == nil || string(p.UID) != r.n.PodUID || p.DeletionTimestamp != nil, nil
}
