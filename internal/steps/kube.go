package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// shrinkStatefulSet sets the rack's StatefulSet replicas to the node's ordinal, so the
// StatefulSet controller removes exactly that pod.
type shrinkStatefulSet struct {
	node
	// redo, set by Safe, says why the pod is not removed now: a new node joined the ring
	// on it (regrown.go). Do then does nothing and Wait sends the run back to the node's
	// decommission.
	redo string
	// record, set by Safe, says the pod's new claims were just recorded: Do does not act,
	// and its retry writes the checkpoint first (the claims are recorded before anything
	// removes them).
	record string
}

func (*shrinkStatefulSet) kind() string { return record.StepShrinkSTS }

// Describe implements engine.Describer.
func (s *shrinkStatefulSet) Describe() string {
	return fmt.Sprintf("shrink StatefulSet %s to %d replicas", s.n.StatefulSet, s.n.Ordinal)
}

// replicasOf is a StatefulSet's spec.replicas (1 when unset, as the API server defaults it).
func replicasOf(sts *appsv1.StatefulSet) int {
	if sts.Spec.Replicas == nil {
		return 1
	}
	return int(*sts.Spec.Replicas)
}

// replicas reads the StatefulSet's replicas afresh (or from this pause's reads).
func (s *shrinkStatefulSet) replicas(ctx context.Context) (int, error) {
	sts, err := s.w.getSTS(ctx, s.n.StatefulSet)
	if err != nil {
		return 0, err
	}
	return replicasOf(sts), nil
}

// lastSeen is the replica count of the last read or write of the StatefulSet in this
// run, however old. The shrink may rely on it because its patch tests the count it
// expects: an old count can make the write fail (and the step read again), never make
// it remove the wrong pod. It spares the read a decommission's wait would otherwise
// cost, since the previous node's claims step read the StatefulSet last.
func (s *shrinkStatefulSet) lastSeen() (int, bool) {
	sts := s.w.lastSTS(s.n.StatefulSet)
	if sts == nil {
		return 0, false
	}
	return replicasOf(sts), true
}

// Done: replicas are at most the ordinal. An old count above the ordinal is enough to
// say "not yet" (the patch checks it); "done" is only ever said from a fresh read.
func (s *shrinkStatefulSet) Done(ctx context.Context) (bool, error) {
	if r, ok := s.lastSeen(); ok && r > s.n.Ordinal {
		return false, nil
	}
	r, err := s.replicas(ctx)
	return err == nil && r <= s.n.Ordinal, err
}

// Safe: the node is confirmed gone from the ring and the pod is the highest ordinal
// (replicas is still ordinal+1: last seen so, which the patch then tests, or read now).
// A pod re-created under the node's name that does not run the planned node is judged
// first (regrown.go): a node of the ring on it is decommissioned before it goes (redo),
// new claims of one that never joined are recorded before it goes (record).
func (s *shrinkStatefulSet) Safe(ctx context.Context) error {
	s.redo, s.record = "", ""
	if s.n.Unstarted {
		// No node ever ran on it: nothing to decommission or confirm gone. Recheck
		// judges it again right before the shrink.
		return s.highest(ctx)
	}
	g, err := s.w.judgeRegrownPod(ctx, s.n)
	if err != nil {
		return err
	}
	switch g.what {
	case regrowJoined:
		s.redo = s.w.recordJoined(s.n, g)
		return nil
	case regrowUnrecorded:
		s.record = s.w.recordUnjoined(s.n, g)
		return nil
	}
	left, err := s.w.nodeLeft(ctx, s.n)
	if err != nil {
		return fmt.Errorf("cannot confirm %s left the ring: %w", s.n.Pod, err)
	}
	if !left {
		return fmt.Errorf("node %s is not confirmed gone from the ring", s.n.Pod)
	}
	if err := s.newNodeLeft(ctx); err != nil {
		return err
	}
	return s.highest(ctx)
}

// highest: the pod is the StatefulSet's highest ordinal (replicas is still ordinal+1:
// last seen so, which the patch then tests, or read now).
func (s *shrinkStatefulSet) highest(ctx context.Context) error {
	if r, ok := s.lastSeen(); ok && r == s.n.Ordinal+1 {
		return nil
	}
	r, err := s.replicas(ctx)
	if err != nil {
		return err
	}
	if r != s.n.Ordinal+1 {
		return fmt.Errorf("StatefulSet %s has %d replicas, expected %d: pod %s is not its highest ordinal (%s)", s.n.StatefulSet, r, s.n.Ordinal+1, s.n.Pod, s.w.changedBy(ctx, r > s.n.Ordinal+1))
	}
	return nil
}

// Recheck implements engine.Rechecker: for a pod that never started (Node.Unstarted),
// the judgment again from fresh reads right before the shrink (recheckUnstarted).
func (s *shrinkStatefulSet) Recheck(ctx context.Context) error {
	if !s.n.Unstarted {
		return nil
	}
	return s.w.recheckUnstarted(ctx, s.n)
}

// newNodeLeft confirms that a new node recorded on the pod during this run (regrown.go:
// the steps hold the planned Host ID) left the ring too, from the same ring read.
func (s *shrinkStatefulSet) newNodeLeft(ctx context.Context) error {
	cur := s.w.current(s.n)
	if cur.HostID == s.n.HostID || cur.HostID == "" {
		return nil
	}
	r, reader, err := s.w.ring(ctx)
	if err != nil {
		return fmt.Errorf("cannot confirm the new node of %s (Host ID %s) left the ring: %w", s.n.Pod, cur.HostID, err)
	}
	if row, member := r.ByHostID(cur.HostID); member {
		return fmt.Errorf("the new node of %s (Host ID %s) is %s in the ring read from %s: not gone", s.n.Pod, cur.HostID, row.Code(), reader)
	}
	return nil
}

// Do lowers replicas from ordinal+1 to ordinal with a JSON patch that tests the count
// first: the API server applies it only if nobody changed the count since it was seen,
// and a status update by the controller does not get in the way (as a resourceVersion
// precondition would).
func (s *shrinkStatefulSet) Do(ctx context.Context) error {
	switch {
	case s.redo != "":
		return nil // Wait goes back to the decommission
	case s.record != "":
		// Nothing acted: the retry's write records the claims, then Safe looks again.
		return &operation.Retryable{Err: errors.New(s.record)}
	}
	ctx, cancel := writeContext(ctx)
	defer cancel()
	body, _ := json.Marshal([]map[string]any{
		{"op": "test", "path": "/spec/replicas", "value": s.n.Ordinal + 1},
		{"op": "replace", "path": "/spec/replicas", "value": s.n.Ordinal},
	})
	// The StatefulSet controller removes the pod from now on: forget it.
	s.w.dropPod(s.n.Pod)
	sts, err := s.w.Kube.AppsV1().StatefulSets(s.w.Namespace).Patch(ctx, s.n.StatefulSet, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: "kubectl-cassandra"})
	if err != nil {
		// Whatever the count is now, it must be read again.
		s.w.Forget()
		s.w.lastSeenSTS.drop(s.n.StatefulSet) // a write found it changed
		if apierrors.IsInvalid(err) || apierrors.IsConflict(err) || isUnprocessable(err) {
			if r, rerr := s.replicas(ctx); rerr == nil && r <= s.n.Ordinal {
				return nil // shrunk already (a previous Do): idempotent
			}
			return &operation.Retryable{Err: fmt.Errorf("StatefulSet %s no longer has %d replicas (changed while shrinking it: %s): %w", s.n.StatefulSet, s.n.Ordinal+1, s.w.changedBy(ctx, true), err)}
		}
		return err
	}
	s.w.keepSTS(sts)
	return nil
}

// setReplicasAt sets the StatefulSet's replicas only if it is still at the
// resourceVersion of sts, as read right before (grow: any change since is a reason to
// look again); doing ("growing") names the write in its error.
func (w *World) setReplicasAt(ctx context.Context, sts *appsv1.StatefulSet, replicas int, doing string) error {
	body, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": sts.ResourceVersion},
		"spec":     map[string]any{"replicas": replicas},
	})
	_, err := w.Kube.AppsV1().StatefulSets(w.Namespace).Patch(ctx, sts.Name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "kubectl-cassandra"})
	if apierrors.IsConflict(err) {
		return &operation.Retryable{Err: fmt.Errorf("StatefulSet %s changed while %s it: %w", sts.Name, doing, err)}
	}
	return err
}

// deletePodUID deletes pod name only if it still has the planned UID; gone, or already
// another incarnation, is no error (the step's Done decides).
func (w *World) deletePodUID(ctx context.Context, name, uid string) error {
	u := types.UID(uid)
	err := w.Kube.CoreV1().Pods(w.Namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &u}})
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return &operation.Retryable{Err: fmt.Errorf("cannot delete pod %s: %w", name, err)}
}

// isUnprocessable: the API server answers 422 when a JSON patch's test fails.
func isUnprocessable(err error) bool {
	var st apierrors.APIStatus
	return errors.As(err, &st) && st.Status().Code == http.StatusUnprocessableEntity
}

// KeepsObservations implements engine.ObservationKeeper: Do records the StatefulSet as
// the write returned it (or forgets everything when it failed) and forgets the pod.
func (s *shrinkStatefulSet) KeepsObservations() {}

// Evident implements engine.Evident: the replicas show whether it shrank.
func (s *shrinkStatefulSet) Evident() {}

// PendingRedo implements engine.Redoer: when Safe found a new node of the ring on the
// pod, the run goes back to the node's decommission (it is decommissioned, its leaving
// verified, then the shrink removes it); otherwise the engine waits for the replicas to
// show the shrink.
func (s *shrinkStatefulSet) PendingRedo() *engine.Redo {
	if s.redo == "" {
		return nil
	}
	why := s.redo
	s.redo = ""
	return &engine.Redo{StepID: record.StepID(record.StepDecommission, s.n.Pod), Reason: why}
}

// waitPodGone waits, with a watch, until the pod (its planned UID) no longer exists.
type waitPodGone struct {
	node
	// open is the watch Done read the pod from, left open for Wait (nil: none).
	open watch.Interface
}

func (*waitPodGone) kind() string { return record.StepWaitPodGone }

// Describe implements engine.Describer.
func (s *waitPodGone) Describe() string { return "wait until pod " + s.n.Pod + " is gone" }

// Done: no pod with the planned UID exists. A pod of the same name with another UID
// means the StatefulSet was grown again: that is an error, not "gone".
func (s *waitPodGone) Done(ctx context.Context) (bool, error) {
	p, err := s.read(ctx)
	if err != nil {
		return false, err
	}
	if p == nil {
		return true, nil
	}
	if string(p.UID) != s.w.podUID(s.n) {
		return false, s.reincarnated(ctx, p)
	}
	return false, nil
}

// reincarnated judges a pod of the planned name with another UID: re-created before the
// shrink (evicted, its Kubernetes node drained), it is the one the StatefulSet
// controller now removes, waited for like the planned one; a StatefulSet that wants the
// pod again was grown by someone else.
func (s *waitPodGone) reincarnated(ctx context.Context, p *corev1.Pod) error {
	r, err := (&shrinkStatefulSet{node: s.node}).replicas(ctx)
	if err != nil {
		return err
	}
	if r <= s.n.Ordinal {
		s.w.adopt(s.n, string(p.UID), fmt.Sprintf("StatefulSet %s has %d replicas, so its controller removes it", s.n.StatefulSet, r))
		return nil
	}
	return &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("pod %s was re-created (UID %s, planned %s): StatefulSet %s was grown again, probably by a running operator", s.n.Pod, p.UID, s.w.podUID(s.n), s.n.StatefulSet)}
}

// read returns the pod as this pause already saw it, or else from a watch that starts
// with the pod's current state, so Wait goes on with the same request instead of a GET
// and then a watch; on a server that cannot stream a watch's initial state, a GET.
func (s *waitPodGone) read(ctx context.Context) (*corev1.Pod, error) {
	if p, ok := s.w.keptPod(s.n.Pod); ok {
		return p, nil
	}
	s.stop()
	p, wi, err := s.w.watchPod(ctx, s.n.Pod)
	if errors.Is(err, errNoWatchList) {
		return s.w.getPod(ctx, s.n.Pod)
	}
	if err != nil {
		return nil, err
	}
	if p != nil && string(p.UID) == s.w.podUID(s.n) {
		s.open = wi
	} else {
		wi.Stop()
	}
	s.w.keepPod(s.n.Pod, p)
	return p, nil
}

func (s *waitPodGone) stop() {
	if s.open != nil {
		s.open.Stop()
		s.open = nil
	}
}

// Safe: nothing is changed by this step.
func (s *waitPodGone) Safe(context.Context) error { return nil }

// Do: nothing; the StatefulSet controller deletes the pod.
func (s *waitPodGone) Do(context.Context) error { return nil }

// KeepsObservations implements engine.ObservationKeeper: Do changes nothing.
func (s *waitPodGone) KeepsObservations() {}

// Evident implements engine.Evident: it does not act.
func (s *waitPodGone) Evident() {}

// Wait watches the pod until it is deleted (re-opening the watch if the server closes it).
func (s *waitPodGone) Wait(ctx context.Context) error {
	id := record.StepID(record.StepWaitPodGone, s.n.Pod)
	start := s.w.Clock()
	tick := time.NewTicker(progressEvery(s.w))
	defer tick.Stop()
	defer s.stop()
	for {
		w := s.open
		s.open = nil
		if w == nil {
			p, err := s.w.getPod(ctx, s.n.Pod)
			switch {
			case err == nil && p == nil:
				return nil
			case err != nil:
				if ctx.Err() != nil {
					return ctx.Err()
				}
				s.w.Reporter.Waiting(id, "cannot read pod: "+err.Error(), s.w.Clock().Sub(start))
				if err := s.w.sleep(ctx, s.w.poll()); err != nil {
					return err
				}
				continue
			case string(p.UID) != s.w.podUID(s.n):
				if err := s.reincarnated(ctx, p); err != nil {
					return err
				}
			}
			w, err = s.w.Kube.CoreV1().Pods(s.w.Namespace).Watch(ctx, metav1.ListOptions{
				FieldSelector:   fields.OneTermEqualSelector("metadata.name", s.n.Pod).String(),
				ResourceVersion: p.ResourceVersion,
			})
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err := s.w.sleep(ctx, s.w.poll()); err != nil {
					return err
				}
				continue
			}
		}
		gone, err := s.watch(ctx, w, id, start, tick.C)
		w.Stop()
		// Time passed while watching: what was read before is stale. The watch's own
		// last word on the pod is not.
		s.w.Forget()
		if gone {
			s.w.keepPod(s.n.Pod, nil)
			s.w.prefetchClaims(ctx, s.n)
			s.w.prefetchNext(ctx, s.n.Pod)
		}
		if gone || err != nil {
			return err
		}
	}
}

// watch consumes events until the pod is deleted (true), the watch ends (false) or ctx ends.
func (s *waitPodGone) watch(ctx context.Context, w watch.Interface, id string, start time.Time, tick <-chan time.Time) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-tick:
			s.w.Reporter.Waiting(id, "waiting for the StatefulSet controller to remove pod "+s.n.Pod, s.w.Clock().Sub(start))
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, nil
			}
			switch ev.Type {
			case watch.Deleted:
				// The server filters by name; check anyway, so a broader watch can
				// never be mistaken for this pod's deletion.
				if p, ok := ev.Object.(*corev1.Pod); ok && p.Name == s.n.Pod {
					return true, nil
				}
			case watch.Error:
				return false, nil
			}
		}
	}
}

// deletePVCs deletes the removed pod's claims (every volumeClaimTemplate), each with a
// UID precondition, once the pod is gone and the node confirmed out of the ring.
type deletePVCs struct{ node }

func (*deletePVCs) kind() string { return record.StepDeletePVCs }

// variant: a repair deletes the claims only while no pod mounts them (repairDeletePVCs).
func (s *deletePVCs) variant(v Variant) operation.Step {
	if v.Repair {
		return &repairDeletePVCs{s}
	}
	return s
}

// Describe implements engine.Describer.
func (s *deletePVCs) Describe() string {
	var names []string
	for _, p := range s.n.PVCs {
		names = append(names, p.Name)
	}
	if len(names) == 0 {
		return "delete the PVCs of " + s.n.Pod + " (none)"
	}
	return "delete PVC " + strings.Join(names, ", ")
}

// PlanText implements PlanTexter.
func (s *deletePVCs) PlanText() string {
	if len(s.n.PVCs) == 0 {
		return "no PVC to delete for " + s.n.Pod
	}
	return s.Describe()
}

// remaining lists the planned claims that still exist with their planned UID: as the
// checkpoint records them now (a regrown pod's new claims, regrown.go).
func (s *deletePVCs) remaining(ctx context.Context) ([]corev1.PersistentVolumeClaim, error) {
	return s.w.claimsLeft(ctx, s.w.current(s.n).PVCs)
}

// claimsLeft lists the planned claims that still exist with their planned UID.
func (w *World) claimsLeft(ctx context.Context, planned []record.PVC) ([]corev1.PersistentVolumeClaim, error) {
	var left []corev1.PersistentVolumeClaim
	for _, c := range planned {
		pvc, err := w.getPVC(ctx, c.Name)
		if err != nil {
			return nil, err
		}
		if pvc == nil {
			continue
		}
		if string(pvc.UID) != c.UID {
			continue // ours is gone; a claim of the same name now belongs to someone else
		}
		left = append(left, *pvc)
	}
	return left, nil
}

// Done: none of the planned claims exists any more, or is not being deleted. A claim
// whose deletion was accepted is done: deletion cannot be undone, and the
// pvc-protection finalizer lets it go once no pod uses it (the pod is gone already).
// Waiting for the object itself to go would cost a read and a watch per node for
// nothing the operation depends on.
func (s *deletePVCs) Done(ctx context.Context) (bool, error) {
	left, err := s.remaining(ctx)
	if err != nil {
		return false, err
	}
	return allDeleting(left), nil
}

// allDeleting: every claim of left is being deleted (none: true).
func allDeleting(left []corev1.PersistentVolumeClaim) bool {
	for _, pvc := range left {
		if pvc.DeletionTimestamp == nil {
			return false
		}
	}
	return true
}

// Safe: never delete a claim whose pod exists or whose node was not confirmed gone.
func (s *deletePVCs) Safe(ctx context.Context) error {
	p, err := s.w.getPod(ctx, s.n.Pod)
	if err != nil {
		return fmt.Errorf("cannot confirm pod %s is gone: %w", s.n.Pod, err)
	}
	if p != nil {
		return fmt.Errorf("pod %s exists (UID %s): its claims are in use", s.n.Pod, p.UID)
	}
	if !s.n.Unstarted { // never started: no node to confirm gone (Recheck reads the ring)
		left, err := s.w.nodeLeft(ctx, s.n)
		if err != nil {
			return fmt.Errorf("cannot confirm %s left the ring: %w", s.n.Pod, err)
		}
		if !left {
			return fmt.Errorf("node %s is not confirmed gone from the ring", s.n.Pod)
		}
	}
	// Read now (not the shrink's last-seen count): this guard has no write to test it.
	r, err := (&shrinkStatefulSet{node: s.node}).replicas(ctx)
	if err != nil {
		return err
	}
	if r > s.n.Ordinal {
		return fmt.Errorf("StatefulSet %s still wants pod %s", s.n.StatefulSet, s.n.Pod)
	}
	return nil
}

// Recheck implements engine.Rechecker: for a pod that never started (Node.Unstarted),
// the judgment again from fresh reads right before the claims go (recheckUnstarted:
// no node of the ring may have run on them).
func (s *deletePVCs) Recheck(ctx context.Context) error {
	if !s.n.Unstarted {
		return nil
	}
	return s.w.recheckUnstarted(ctx, s.n)
}

// Do deletes each remaining claim with a UID precondition (deleteClaims).
func (s *deletePVCs) Do(ctx context.Context) error {
	ctx, cancel := writeContext(ctx)
	defer cancel()
	left, err := s.remaining(ctx)
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	return s.w.deleteClaims(ctx, left)
}

// deleteClaims deletes each claim of left with a UID precondition; a claim already
// terminating is left to finish. What the server answered is kept: an accepted
// deletion is recorded as the claim terminating, so Done needs no second read.
func (w *World) deleteClaims(ctx context.Context, left []corev1.PersistentVolumeClaim) error {
	for _, pvc := range left {
		if pvc.DeletionTimestamp != nil {
			continue
		}
		uid := pvc.UID
		w.dropPVC(pvc.Name)
		err := w.Kube.CoreV1().PersistentVolumeClaims(w.Namespace).Delete(ctx, pvc.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &uid},
		})
		switch {
		case err == nil:
			now := metav1.NewTime(w.Clock())
			gone := pvc.DeepCopy()
			gone.DeletionTimestamp = &now
			w.keepPVC(pvc.Name, gone)
		case apierrors.IsNotFound(err):
			w.keepPVC(pvc.Name, nil)
		case apierrors.IsConflict(err):
			// Another claim of that name (another UID): ours is gone; read again.
		default:
			return &operation.Retryable{Err: fmt.Errorf("cannot delete PVC %s: %w", pvc.Name, err)}
		}
	}
	return nil
}

// KeepsObservations implements engine.ObservationKeeper: Do records what it deleted.
func (s *deletePVCs) KeepsObservations() {}

// Evident implements engine.Evident: the claims show whether they are being deleted.
func (s *deletePVCs) Evident() {}

// updateCluster brings the operator's cluster resource in line with the StatefulSets:
// every rack of the target DC asks for the count it must end with (want).
type updateCluster struct {
	w    *World
	want map[string]int
}

func newUpdateCluster(w *World) *updateCluster {
	racks := rackNames(w.Racks)
	if len(racks) == 0 {
		racks = w.CP.Target.Racks // a plan shown before the racks were read
	}
	return &updateCluster{w: w, want: w.CP.Target.Wanted(racks)}
}

// PlanText implements PlanTexter.
func (s *updateCluster) PlanText() string {
	return fmt.Sprintf("set %s of datacenter %s to %s in %s %s", s.w.countWords(), s.w.CP.Target.DC, countText(s.want), s.w.resourceKind(), s.w.CP.Cluster)
}

// Describe implements engine.Describer.
func (s *updateCluster) Describe() string {
	return fmt.Sprintf("set %s %s of datacenter %s to %s", s.w.CP.Cluster, s.w.countWords(), s.w.CP.Target.DC, countText(s.want))
}

// statefulSetsAtTarget: every rack's StatefulSet has the count the rack must end with.
func (s *updateCluster) statefulSetsAtTarget(ctx context.Context) error {
	var off []string
	for _, r := range s.w.Racks {
		sts, err := s.w.getSTS(ctx, r.StatefulSet)
		if err != nil {
			return err
		}
		if n := replicasOf(sts); n != s.want[r.Name] {
			off = append(off, fmt.Sprintf("%s has %d", r.StatefulSet, n))
		}
	}
	if len(off) > 0 {
		sort.Strings(off)
		return fmt.Errorf("not every rack of datacenter %s is at %s nodes: %s", s.w.CP.Target.DC, countText(s.want), strings.Join(off, ", "))
	}
	return nil
}

// Done: the spec asks for the wanted counts and every rack's StatefulSet has them.
func (s *updateCluster) Done(ctx context.Context) (bool, error) {
	have, err := s.w.Spec.RackNodes(ctx)
	if err != nil {
		return false, err
	}
	if !sameCounts(have, s.want) {
		return false, nil
	}
	return s.statefulSetsAtTarget(ctx) == nil, nil
}

// Safe: only when every rack of the DC has its wanted count, so CR and StatefulSets agree.
func (s *updateCluster) Safe(ctx context.Context) error { return s.statefulSetsAtTarget(ctx) }

// Do writes the counts.
func (s *updateCluster) Do(ctx context.Context) error {
	ctx, cancel := writeContext(ctx)
	defer cancel()
	if err := s.w.Spec.SetRackNodes(ctx, s.want); err != nil {
		return &operation.Retryable{Err: fmt.Errorf("cannot update the cluster resource: %w", err)}
	}
	return nil
}

// KeepsObservations implements engine.ObservationKeeper: Do writes only the cluster
// resource's spec, which is never kept (every check reads it).
func (s *updateCluster) KeepsObservations() {}

// Evident implements engine.Evident: the spec shows the count it asks for.
func (s *updateCluster) Evident() {}

// writeContext detaches a write from interruption (a write is never cut in half; the
// engine stops right after it) while bounding it in time.
func writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}

func progressEvery(w *World) time.Duration {
	d := 5 * w.poll()
	if d < time.Second {
		d = time.Second
	}
	return d
}

// sameCounts reports whether have gives every rack of want its count.
func sameCounts(have, want map[string]int) bool {
	for r, n := range want {
		if got, ok := have[r]; !ok || got != n {
			return false
		}
	}
	return true
}

// countText is a count per rack in words (topology.CountText).
func countText(m map[string]int) string { return topology.CountText(m) }

func rackNames(racks []topology.Rack) []string {
	names := make([]string, len(racks))
	for i, r := range racks {
		names[i] = r.Name
	}
	return names
}

// countWords names the spec's count in messages ("nodesPerRacks"), or says it plainly.
func (w *World) countWords() string {
	if w.CountWords != "" {
		return w.CountWords
	}
	return "rack counts"
}

// resourceKind names the cluster resource in messages ("CassandraCluster"), or says it
// plainly.
func (w *World) resourceKind() string {
	if w.ResourceKind != "" {
		return w.ResourceKind
	}
	return "cluster"
}

// container is the -c flag naming the Cassandra container in kubectl commands ("" when
// unknown: kubectl then picks the pod's default container).
func (w *World) container() string {
	if w.Container == "" {
		return ""
	}
	return " -c " + w.Container
}
