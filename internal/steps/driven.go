package steps

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// scaler is the operator that acts, or an error saying this world has none.
func (w *World) scaler() (operator.Scaler, error) {
	if w.Scaler == nil {
		return nil, errors.New("this operation asks the operator to scale, and the operator read has no such interface")
	}
	return w.Scaler, nil
}

// progress is what the operator says now about the DC and pod.
func (w *World) progress(ctx context.Context, pod string) (operator.Progress, error) {
	sc, err := w.scaler()
	if err != nil {
		return operator.Progress{}, err
	}
	return sc.Progress(ctx, w.CP.Namespace, w.CP.Cluster, w.CP.Target.DC, pod)
}

// operatorMayAct is what must hold before the operator is asked for a change: it runs
// and is ready (operatorDown), it is not stopped, not blocked, and no resize of its own
// is under way (its webhook would refuse the change; waiting is the answer). "" when it
// may. Its reads are made at once and judged in this order: each consistent LIST made
// right after the checkpoint's write waits for the API server's watch cache (up to
// 100 ms), and two of them one after the other waited twice.
func (w *World) operatorMayAct(ctx context.Context, pod string) (operator.Progress, string, error) {
	var (
		down, tasks string
		p           operator.Progress
		perr, terr  error
		wg          sync.WaitGroup
	)
	wg.Go(func() { down = w.operatorDown(ctx) })
	wg.Go(func() { p, perr = w.progress(ctx, pod) })
	if w.HoldForTasks {
		wg.Go(func() { tasks, terr = w.otherTaskRuns(ctx) })
	}
	wg.Wait()
	if down != "" {
		return operator.Progress{}, down, nil
	}
	if perr != nil {
		return p, "cannot read the operator's progress: " + perr.Error(), nil
	}
	switch {
	case p.Stopped:
		return p, "", &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("datacenter %s is stopped (spec.stopped): nothing is asked of the operator while it is; start it again, then resume", w.CP.Target.DC)}
	case p.Blocked != "":
		return p, "the operator says it cannot go on: " + p.Blocked, nil
	case p.ScalingDown || p.ScalingUp:
		return p, "the operator is still resizing the datacenter", nil
	}
	return p, tasks, terr
}

// otherTaskRuns says which of the operator's tasks on the datacenter, not the
// operation's own, has not finished ("" when none, or when the operator has no tasks):
// nothing is asked of the operator while one runs. A resize during a cleanup breaks the
// cleanup (cass-operator #902), and cass-operator creates one itself after each node it
// adds (pkg/reconciliation/reconcile_racks.go cleanupAfterScaling).
func (w *World) otherTaskRuns(ctx context.Context) (string, error) {
	if w.Tasks == nil {
		return "", nil
	}
	ts, err := w.Tasks.ListTasks(ctx, w.CP.Namespace, w.CP.Cluster)
	if err != nil {
		return "cannot list the operator's tasks: " + err.Error(), nil
	}
	for _, t := range ts {
		if !t.Finished && (t.OperationID == "" || t.OperationID != w.CP.OperationID) {
			return fmt.Sprintf("the operator's task %s (%s) has not finished: nothing is asked of the operator while it runs (a resize during a cleanup breaks it: cass-operator #902)", t.Name, t.Command), nil
		}
	}
	return "", nil
}

// sizeRequest is what the two request steps share: ask the operator to take the DC's
// size from Size∓1 to Size for the planned node.
type sizeRequest struct {
	node
	down bool
}

func (s *sizeRequest) from() int {
	if s.down {
		return s.n.Size + 1
	}
	return s.n.Size - 1
}

func (s *sizeRequest) id() string {
	if s.down {
		return record.StepID(record.StepRequestRemoval, s.n.Pod)
	}
	return record.StepID(record.StepRequestGrowth, s.n.Pod)
}

// Done: the resource asks for the planned size already (or beyond it, in the
// operation's direction).
func (s *sizeRequest) Done(ctx context.Context) (bool, error) {
	p, err := s.w.progress(ctx, "")
	if err != nil {
		return false, err
	}
	return s.reached(p.Size), nil
}

// reached reports whether size is the planned one or beyond it, in the operation's
// direction.
func (s *sizeRequest) reached(size int) bool {
	if s.down {
		return size <= s.n.Size
	}
	return size >= s.n.Size
}

// ReadAfterLock starts the ring read of the request's recheck (recheckAhead): the run
// calls it as soon as it holds the lock, when this request is its first step.
func (s *sizeRequest) ReadAfterLock(ctx context.Context) { s.w.recheckAhead(ctx, s.id()) }

// Do asks for the size, testing the value it was computed from.
func (s *sizeRequest) Do(ctx context.Context) error {
	if err := s.w.refuseDeleting(s.id()); err != nil {
		return err
	}
	sc, err := s.w.scaler()
	if err != nil {
		return err
	}
	ctx, cancel := writeContext(ctx)
	defer cancel()
	err = sc.RequestSize(ctx, s.w.CP.Namespace, s.w.CP.Cluster, s.w.CP.Target.DC, s.from(), s.n.Size)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, operator.ErrNotYet):
		return &operation.Retryable{Err: err}
	case errors.Is(err, operator.ErrSizeMoved):
		return &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("%w: the plan asked for size %d -> %d; someone else changed the datacenter's size. Nothing was written; see: kubectl cassandra status -n %s %s",
			err, s.from(), s.n.Size, s.w.CP.Namespace, s.w.CP.Cluster)}
	}
	return &operation.Retryable{Err: err}
}

// Wait: right after the request the resource asks for the planned size (Done). When it
// does not, someone else changed the size since (a kubectl edit, a GitOps sync; the
// operator never writes it): the run stops naming it rather than wait for a size
// nobody asks any more, and asks nothing over their change. An unreadable size is
// unknown: read again.
func (s *sizeRequest) Wait(ctx context.Context) error {
	for {
		p, err := s.w.progress(ctx, "")
		if err == nil {
			if s.reached(p.Size) {
				return nil
			}
			return &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("the datacenter's %s is %d right after this run set it %d -> %d: someone else changed it since. Nothing more was asked of the operator. "+
				"See: kubectl cassandra status -n %s %s; then resume (it asks for %d again, only while the size is %d) or abort",
				s.w.countWords(), p.Size, s.from(), s.n.Size, s.w.CP.Namespace, s.w.CP.Cluster, s.n.Size, s.from())}
		}
		s.w.Reporter.Waiting(s.id(), "cannot read the datacenter's size ("+err.Error()+"): unknown, reading again", 0)
		if err := s.w.sleep(ctx, s.w.poll()); err != nil {
			return err
		}
	}
}

// requestRemoval lowers the size by one so that the operator removes the planned node.
type requestRemoval struct{ sizeRequest }

func (*requestRemoval) kind() string { return record.StepRequestRemoval }

// Describe implements engine.Describer.
func (s *requestRemoval) Describe() string {
	return fmt.Sprintf("ask the operator to remove %s (size %d -> %d)", s.n.Pod, s.n.Size+1, s.n.Size)
}

// PlanText implements PlanTexter.
func (s *requestRemoval) PlanText() string {
	return fmt.Sprintf("set %s %d -> %d (a patch that tests the current value): the operator decommissions %s (Host ID %s), then removes its pod and claims",
		s.w.countWords(), s.n.Size+1, s.n.Size, s.n.Pod, s.n.HostID)
}

// Safe: right now the operator may act (safeNow), the planned pod is there with its
// planned UID and is the one the operator removes next (its StatefulSet at the planned
// replicas), and the ring is safe (Recheck).
func (s *requestRemoval) Safe(ctx context.Context) error {
	id := s.id()
	s.w.recheckAhead(ctx, id)
	return s.w.waitSafe(ctx, id, func() (string, error) {
		// The operator's progress without its pod (nothing of the pod's label is judged
		// here): the pod is read once, as the plan knew it. All is read at once (see
		// operatorMayAct), then judged in order.
		var (
			may, pwhy string
			merr, err error
			sts       *appsv1.StatefulSet
			p         *corev1.Pod
			gone      bool
			wg        sync.WaitGroup
		)
		wg.Go(func() { _, may, merr = s.w.operatorMayAct(ctx, "") })
		wg.Go(func() { p, gone, pwhy = s.readPlannedPod(ctx) })
		wg.Go(func() { sts, err = s.w.readSTS(s.n.StatefulSet)(ctx) })
		wg.Wait()
		switch {
		case may != "" || merr != nil:
			return may, merr
		case pwhy != "":
			return pwhy, nil
		case gone:
			return "", &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("pod %s is not the planned one any more (planned UID %s): nothing asked; see: kubectl cassandra status -n %s %s", s.n.Pod, s.w.podUID(s.n), s.w.CP.Namespace, s.w.CP.Cluster)}
		case p.DeletionTimestamp != nil:
			return "pod " + s.n.Pod + " is being deleted", nil
		case err != nil:
			return "cannot read StatefulSet " + s.n.StatefulSet + ": " + err.Error(), nil
		}
		if r := replicasOf(sts); r != s.n.Ordinal+1 {
			return "", &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("StatefulSet %s has %d replicas, so the operator would not remove %s next: the world changed since the plan; nothing asked. Plan again: kubectl cassandra abort, then scale",
				s.n.StatefulSet, r, s.n.Pod)}
		}
		return s.w.ringSafeAt(ctx, id, s.n.DC, "", "")
	})
}

// readPlannedPod reads the planned pod: why it cannot be read ("" when it was), and
// whether it is gone (not the planned one any more).
func (s *requestRemoval) readPlannedPod(ctx context.Context) (*corev1.Pod, bool, string) {
	p, gone, err := s.w.pod(ctx, s.n)
	if err != nil {
		return nil, false, "cannot read pod " + s.n.Pod + ": " + err.Error()
	}
	return p, gone, ""
}

// Recheck implements engine.Rechecker: the ring, read right before the request.
func (s *requestRemoval) Recheck(ctx context.Context) error {
	return s.w.recheckRing(ctx, s.id(), s.n.DC, "", "")
}

// Evident implements engine.Evident: the size shows whether it was asked.
func (s *requestRemoval) Evident() {}

// requestGrowth raises the size by one so that the operator creates the planned pod.
type requestGrowth struct{ sizeRequest }

func (*requestGrowth) kind() string { return record.StepRequestGrowth }

// Describe implements engine.Describer.
func (s *requestGrowth) Describe() string {
	return fmt.Sprintf("ask the operator to add %s (size %d -> %d)", s.n.Pod, s.n.Size-1, s.n.Size)
}

// PlanText implements PlanTexter.
func (s *requestGrowth) PlanText() string {
	return fmt.Sprintf("set %s %d -> %d (a patch that tests the current value): the operator creates %s, whose node bootstraps",
		s.w.countWords(), s.n.Size-1, s.n.Size, s.n.Pod)
}

// Safe: right now the operator may act, the new pod and its claims do not exist (a pod
// on an old claim would start a decommissioned node), and the ring is safe (Recheck).
func (s *requestGrowth) Safe(ctx context.Context) error {
	id := s.id()
	return s.w.waitSafe(ctx, id, func() (string, error) {
		var (
			may, err error
			what     string
			sts      *appsv1.StatefulSet
			wg       sync.WaitGroup
		)
		wg.Go(func() { _, what, may = s.w.operatorMayAct(ctx, "") })
		wg.Go(func() { sts, err = s.w.readSTS(s.n.StatefulSet)(ctx) })
		wg.Wait()
		if what != "" || may != nil {
			return what, may
		}
		if err != nil {
			return "cannot read StatefulSet " + s.n.StatefulSet + ": " + err.Error(), nil
		}
		if r := replicasOf(sts); r != s.n.Ordinal {
			return "", &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("StatefulSet %s has %d replicas, expected %d: pod %s is not the next one the operator creates (the world changed since the plan); nothing asked",
				s.n.StatefulSet, r, s.n.Ordinal, s.n.Pod)}
		}
		for _, tpl := range sts.Spec.VolumeClaimTemplates {
			name := tpl.Name + "-" + s.n.Pod
			pvc, err := s.w.readPVC(name)(ctx)
			if err != nil {
				return "cannot read PVC " + name + ": " + err.Error(), nil
			}
			if pvc != nil {
				return "", &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("PVC %s already exists: the new pod would start on its old data (a decommissioned node refuses to start; cass-operator leaves such a claim when it is killed between its StatefulSet shrink and its claim delete). Nothing asked. Run: kubectl cassandra repair-operator-state -n %s %s",
					name, s.w.CP.Namespace, s.w.CP.Cluster)}
			}
		}
		return s.w.ringSafeAt(ctx, id, s.n.DC, "", "")
	})
}

// Recheck implements engine.Rechecker: the ring, read right before the request.
func (s *requestGrowth) Recheck(ctx context.Context) error {
	return s.w.recheckRing(ctx, s.id(), s.n.DC, "", "")
}

// Evident implements engine.Evident: the size shows whether it was asked.
func (s *requestGrowth) Evident() {}

// driven is what the waiting steps share: they change nothing.
type driven struct{ node }

// Safe: nothing is changed by a waiting step.
func (driven) Safe(context.Context) error { return nil }

// Do: nothing; the operator acts.
func (driven) Do(context.Context) error { return nil }

// Evident implements engine.Evident: it does not act.
func (driven) Evident() {}

// Passive implements engine.Passive.
func (driven) Passive() {}

// poll waits until done answers true, reading again when one of the objects named by
// keys changes (awaitEvidence; every poll interval without a feed, or after a read that
// failed), reporting what it waits for and what keeps the operator from going on (stallGuard: a cause that lasts StallAfter stops the wait);
// done may stop the wait with an error (a stuck operator). A wait that times out says
// what it waited for and what explains it.
func (s driven) poll(ctx context.Context, id string, keys []string, done func() (bool, string, error)) error {
	start := s.w.Clock()
	guard := s.w.guardStall(id, s.n)
	for {
		since := s.w.markEvidence()
		ok, what, err := done()
		if err != nil || ok {
			return err
		}
		if err := s.w.waiting(ctx, guard, id, what, start, since, keys...); err != nil {
			return err
		}
		if err := s.w.awaitEvidence(ctx, since, s.w.poll(), s.w.unknownDue(what, guard.due()), keys...); err != nil {
			if timedOut(ctx) {
				return fmt.Errorf("%s; read now: %s. %s", what, s.w.explainStall(ctx, s.n), s.w.drivenNext())
			}
			return err
		}
	}
}

// waitLeaving waits until the node is leaving or left: the operator's decommission
// reached Cassandra.
type waitLeaving struct {
	driven
	// asked is the evidence mark taken before Done last read the node; read says
	// whether it did.
	asked uint64
	read  bool
}

func (*waitLeaving) kind() string { return record.StepWaitLeaving }

// Describe implements engine.Describer.
func (s *waitLeaving) Describe() string {
	return "wait until the operator's decommission of " + s.n.Pod + " is under way"
}

// Done: the node says LEAVING or DECOMMISSIONED, or its pod is gone and a successful
// ring read no longer lists it (decommission.Done: the same evidence).
func (s *waitLeaving) Done(ctx context.Context) (bool, error) {
	s.asked, s.read = s.w.markEvidence(), true
	return (&decommission{node: s.node}).Done(ctx)
}

// Wait polls the node, and says when the operator reports it cannot go on. Its first
// round reads nothing when the watches saw no change of the resource or the pod since
// the engine's Done read the node (right after the request): the operator has not
// acted, and the reads would only compete with it; the next change, or the poll,
// starts the next round.
func (s *waitLeaving) Wait(ctx context.Context) error {
	id := record.StepID(record.StepWaitLeaving, s.n.Pod)
	// The operator labels the pod Decommissioning when it starts the decommission.
	keys := []string{keyResource, keyPod(s.n.Pod)}
	first := true
	return s.poll(ctx, id, keys, func() (bool, string, error) {
		waitFor := "waiting for the operator to decommission " + s.n.Pod
		if first && s.read && s.w.evidence().unchangedSince(s.asked, keys...) {
			first = false
			return false, waitFor, nil
		}
		first = false
		if ok, err := s.Done(ctx); ok && err == nil {
			return true, "", nil
		}
		p, err := s.w.progress(ctx, s.n.Pod)
		if err != nil {
			return false, "cannot read the operator's progress: " + err.Error(), nil
		}
		if p.Blocked != "" {
			return false, "", &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("the operator does not remove %s: %s. Fix the cause (the operator goes on by itself), then: kubectl cassandra resume -n %s %s",
				s.n.Pod, p.Blocked, s.w.CP.Namespace, s.w.CP.Cluster)}
		}
		return false, waitFor, nil
	})
}

// variant: for an operator that acts, the wait also watches what keeps it from
// creating and starting the pod (Driven).
func (s *waitJoined) variant(v Variant) operation.Step {
	return whenDriven(v, s, &waitOperatorAdds{s})
}

// whenDriven is the step for an operator that acts (Variant.Driven): driven, the wait
// that also watches the operator; plain otherwise.
func whenDriven(v Variant, plain, driven operation.Step) operation.Step {
	if v.Driven {
		return driven
	}
	return plain
}

// waitOperatorAdds is wait-joined for an operator that acts: the operator creates the
// pod and starts its node, and waits itself while another node is down or it does not
// run; such a cause, lasting StallAfter, stops the wait (stallGuard).
type waitOperatorAdds struct {
	*waitJoined
}

// Wait waits as wait-joined does, with the guard.
func (s *waitOperatorAdds) Wait(ctx context.Context) error {
	return s.wait(ctx, s.w.guardStall(record.StepID(s.kind(), s.n.Pod), s.n))
}

// variant: for an operator that acts, the wait also watches the operator (Driven).
func (s *waitPodGone) variant(v Variant) operation.Step {
	return whenDriven(v, s, &waitOperatorRemoves{s})
}

// waitOperatorRemoves is wait-pod-gone for an operator that acts: the pod goes when the
// operator shrinks its StatefulSet after the node left. A pod it never marked leaving,
// while it is no longer scaling down, is its stuck state (FACTS §8 A): said, with the
// way out.
type waitOperatorRemoves struct {
	*waitPodGone
}

// Wait waits as wait-pod-gone does, checking the operator between rounds.
func (s *waitOperatorRemoves) Wait(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stuck := make(chan error, 1)
	guard := s.w.guardStall(record.StepID(record.StepWaitPodGone, s.n.Pod), s.n)
	go func() {
		start := s.w.Clock()
		for {
			// A timer, not w.sleep: this runs beside the wait, whose reads are its own.
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.w.poll()):
			}
			if _, err := guard.check(ctx); err != nil {
				stuck <- err
				cancel(err)
				return
			}
			p, err := s.w.progress(ctx, s.n.Pod)
			if err != nil || p.Leaving || p.ScalingDown || s.w.Clock().Sub(start) < 2*s.w.poll() {
				continue
			}
			if p.PodState == "" {
				continue // the pod is going
			}
			err = &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("the operator stopped removing %s: its node left the ring, but the pod was never marked leaving (node-state %s) and the operator's scale-down is over "+
				"(cass-operator killed while its decommission call ran: it waits on the pod for ever). Run: kubectl cassandra repair-operator-state -n %s %s (it verifies the node left, un-sticks the operator, then carries this operation on)",
				s.n.Pod, p.PodState, s.w.CP.Namespace, s.w.CP.Cluster)}
			stuck <- err
			cancel(err)
			return
		}
	}()
	err := s.waitPodGone.Wait(ctx)
	select {
	case e := <-stuck:
		return e
	default:
	}
	if err != nil && timedOut(ctx) {
		return fmt.Errorf("%w; read now: %s. %s", err, s.w.explainStall(ctx, s.n), s.w.drivenNext())
	}
	return err
}

// waitClaimsGone waits until the removed pod's claims are gone or being deleted: the
// operator deletes them right after the StatefulSet shrink.
type waitClaimsGone struct{ driven }

func (*waitClaimsGone) kind() string { return record.StepWaitClaimsGone }

// Describe implements engine.Describer.
func (s *waitClaimsGone) Describe() string {
	return "wait until the operator deleted the PVCs of " + s.n.Pod
}

// Done: no planned claim is left, or each is being deleted.
func (s *waitClaimsGone) Done(ctx context.Context) (bool, error) {
	left, err := s.w.claimsLeft(ctx, s.w.current(s.n).PVCs)
	if err != nil {
		return false, err
	}
	return allDeleting(left), nil
}

// Wait polls the claims; claims left while the operator says it is settled are its
// stuck state (FACTS §8 C/D: killed between its shrink and its claim delete).
func (s *waitClaimsGone) Wait(ctx context.Context) error {
	id := record.StepID(record.StepWaitClaimsGone, s.n.Pod)
	start := s.w.Clock()
	keys := []string{keyResource}
	for _, c := range s.w.current(s.n).PVCs {
		keys = append(keys, keyPVC(c.Name))
	}
	return s.poll(ctx, id, keys, func() (bool, string, error) {
		ok, err := s.Done(ctx)
		if err != nil {
			return false, "cannot read the claims of " + s.n.Pod + ": " + err.Error(), nil
		}
		if ok {
			return true, "", nil
		}
		p, err := s.w.progress(ctx, s.n.Pod)
		if err == nil && p.Ready && !p.ScalingDown && s.w.Clock().Sub(start) >= 2*s.w.poll() {
			return false, "", s.orphaned()
		}
		return false, "waiting for the operator to delete the PVCs of " + s.n.Pod, nil
	})
}

func (s *waitClaimsGone) orphaned() error {
	return &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("the operator finished its scale-down but left the PVCs of %s (killed between its StatefulSet shrink and its claim delete); a later scale-up would start on them and crash-loop. "+
		"Run: kubectl cassandra repair-operator-state -n %s %s (it verifies the node is out of the ring first, then carries this operation on)",
		s.n.Pod, s.w.CP.Namespace, s.w.CP.Cluster)}
}

// waitReleased waits until the operator's status no longer lists the removed pod and
// its scale-down is over: the next removal may be asked.
type waitReleased struct{ driven }

func (*waitReleased) kind() string { return record.StepWaitReleased }

// Describe implements engine.Describer.
func (s *waitReleased) Describe() string {
	return "wait until the operator's status lets go of " + s.n.Pod
}

// Done: the pod is not tracked any more and the operator is not scaling down.
func (s *waitReleased) Done(ctx context.Context) (bool, error) {
	p, err := s.w.progress(ctx, s.n.Pod)
	if err != nil {
		return false, err
	}
	return !p.Tracked && !p.ScalingDown, nil
}

// Wait polls the operator; an entry kept while it reports Ready is stale (FACTS §8 C/D).
func (s *waitReleased) Wait(ctx context.Context) error {
	id := record.StepID(record.StepWaitReleased, s.n.Pod)
	start := s.w.Clock()
	return s.poll(ctx, id, []string{keyResource, keyPod(s.n.Pod)}, func() (bool, string, error) {
		p, err := s.w.progress(ctx, s.n.Pod)
		if err != nil {
			return false, "cannot read the operator's progress: " + err.Error(), nil
		}
		if !p.Tracked && !p.ScalingDown {
			return true, "", nil
		}
		if p.Tracked && p.Ready && !p.ScalingDown && s.w.Clock().Sub(start) >= 2*s.w.poll() {
			return false, "", &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("the operator finished its scale-down but its status still lists %s (a stale nodeStatuses entry). Run: kubectl cassandra repair-operator-state -n %s %s (it verifies the node left, then carries this operation on)",
				s.n.Pod, s.w.CP.Namespace, s.w.CP.Cluster)}
		}
		return false, "waiting for the operator to finish removing " + s.n.Pod, nil
	})
}
