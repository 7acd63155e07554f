package steps

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// decommission runs `nodetool decommission` on the node. It is done as soon as the node
// is leaving or has left: a call that errors, times out or returns is no proof either
// way, so the node's state is what counts.
type decommission struct {
	node
	// refire: the operator already fired this decommission (repair-operator-state); the
	// plan says so (like any decommission, it runs again only on a NORMAL node).
	refire bool
	// forceRule: the kind's condition for --force (Variant.Force), nil when none.
	forceRule *ForceRule
}

func (*decommission) kind() string { return record.StepDecommission }

// variant: in a repair, the operator already fired the decommission (refire).
func (s *decommission) variant(v Variant) operation.Step {
	s.refire = v.Repair
	s.forceRule = v.Force
	return s
}

// Describe implements engine.Describer.
func (s *decommission) Describe() string { return "decommission " + s.n.Pod }

// PlanText implements PlanTexter.
func (s *decommission) PlanText() string {
	force, when := "", ""
	if s.w.CP.Force {
		force = " --force"
	} else if s.forceRule != nil {
		when = ", with --force " + s.forceRule.When
	}
	if s.refire {
		return fmt.Sprintf("nodetool decommission%s on %s (Host ID %s), only if it is NORMAL again (it was already fired)%s", force, s.n.Pod, s.n.HostID, when)
	}
	return fmt.Sprintf("nodetool decommission%s on %s (Host ID %s)%s", force, s.n.Pod, s.n.HostID, when)
}

// Done: the node reports LEAVING or DECOMMISSIONED, or DECOMMISSION_FAILED while
// something shows it still leaving (stillLeaving), or its pod is gone and a ring read no
// longer lists it. The node is asked first; the pod is read only when the node cannot
// answer or is not leaving (it may be another incarnation, on a new volume).
func (s *decommission) Done(ctx context.Context) (bool, error) {
	ns, nerr := s.w.netstats(ctx, s.n.Pod)
	if nerr == nil {
		switch ns.Mode {
		case pubnodetool.ModeLeaving, pubnodetool.ModeDecommissioned:
			s.w.noteUnderway(s.n.Pod)
			return true, nil
		case pubnodetool.ModeDecommissionFailed:
			why, err := s.w.stillLeaving(ctx, s.n, ns)
			if err != nil {
				return false, err // neither failed nor leaving: unknown
			}
			if why != "" {
				s.w.noteUnderway(s.n.Pod)
				return true, nil
			}
		}
	}
	_, gone, err := s.w.pod(ctx, s.n)
	if err != nil {
		return false, err
	}
	if gone || nerr != nil {
		// The node cannot say (its pod gone, or its JVM: a decommissioned node refuses
		// to start again, E4): the ring of the others says whether it left.
		r, _, err := s.w.ring(ctx)
		if err != nil {
			if nerr != nil {
				return false, nerr
			}
			return false, err
		}
		_, member := inRing(r, s.n)
		if !gone && member {
			return false, nerr
		}
		return !member, nil
	}
	return false, nil
}

// Safe: right now, every node of the datacenter is UN and no other node of the cluster
// is leaving, joining or moving (safenow.go); the planned node's pod exists (a pod
// re-created with the same node is adopted); and the node is in a state where
// decommission may be called. LEAVING is accepted only where a repeated call is
// harmless (4.0+). While the world is not there yet the step waits, and stops with
// exit 4 after StallAfter.
func (s *decommission) Safe(ctx context.Context) error {
	id := record.StepID(record.StepDecommission, s.n.Pod)
	return s.w.waitSafe(ctx, id, func() (string, error) {
		// Any member may read the ring here, the node itself too (it is not leaving yet).
		if what, err := s.w.ringSafeAt(ctx, id, s.n.DC, s.n.HostID, ""); what != "" || err != nil {
			return what, err
		}
		p, gone, err := s.w.pod(ctx, s.n)
		switch {
		case err != nil:
			return "cannot read pod " + s.n.Pod + ": " + err.Error(), nil
		case p == nil:
			return fmt.Sprintf("pod %s (UID %s) is gone while node %s is still in the ring; waiting for its StatefulSet to create it again", s.n.Pod, s.w.podUID(s.n), s.n.HostID), nil
		case gone:
			return fmt.Sprintf("pod %s was re-created (UID %s, planned %s) and the ring does not show it as node %s (yet)", s.n.Pod, p.UID, s.w.podUID(s.n), s.n.HostID), nil
		case p.DeletionTimestamp != nil:
			return "pod " + s.n.Pod + " is being deleted", nil
		}
		ns, err := s.w.netstats(ctx, s.n.Pod)
		if err != nil {
			return "cannot read the mode of node " + s.n.Pod + ": " + err.Error() + s.w.deadWords(ctx, s.n, err), nil
		}
		switch ns.Mode {
		case pubnodetool.ModeNormal:
			// NORMAL after being seen leaving: the node restarted under its
			// decommission, and this one resumes it (resumed.go).
			if s.w.wasUnderway(s.n.Pod) {
				s.w.markResumed(s.n.Pod)
			}
			return "", nil
		case pubnodetool.ModeDecommissionFailed:
			return "", nil
		case pubnodetool.ModeLeaving:
			if s.w.reissueSafe() {
				return "", nil
			}
			return "", fmt.Errorf("node %s is LEAVING and Cassandra %s has no guard against a second decommission", s.n.Pod, s.w.ServerVersion)
		case pubnodetool.ModeStarting, pubnodetool.ModeJoining:
			return fmt.Sprintf("node %s is %s", s.n.Pod, ns.Mode), nil
		default:
			return "", fmt.Errorf("node %s is in mode %s; decommission needs NORMAL", s.n.Pod, ns.Mode)
		}
	})
}

// Recheck implements engine.Rechecker: the ring, read right before the decommission.
func (s *decommission) Recheck(ctx context.Context) error {
	return s.w.recheckRing(ctx, record.StepID(record.StepDecommission, s.n.Pod), s.n.DC, s.n.HostID, "")
}

// KeepsObservations implements engine.ObservationKeeper: Do forgets what was read
// before the call itself (and starts the ring read verify-left will need).
func (s *decommission) KeepsObservations() {}

// Do calls decommission and blocks while it runs, reporting the node's mode meanwhile.
func (s *decommission) Do(ctx context.Context) error {
	if err := s.w.refuseDeleting(record.StepID(record.StepDecommission, s.n.Pod)); err != nil {
		return err
	}
	force, err := s.force(ctx)
	if err != nil {
		return err
	}
	s.w.setFailed(s.n.Pod, "")
	done := make(chan struct{})
	go s.progress(ctx, done)
	outcome, msg := s.w.Nodetool.Decommission(ctx, s.n.Pod, force)
	close(done)
	// The call lasted as long as the decommission: what was read before is stale.
	s.w.Forget()
	if outcome == nodetool.OutcomeReturned || outcome == nodetool.OutcomeAlreadyDone {
		// The node has almost surely left: read the ring from a remaining node while the
		// next check asks the node itself, instead of one after the other.
		go func() { _, _, _ = s.w.ring(ctx) }()
	}
	switch outcome {
	case nodetool.OutcomeRefused:
		// Cassandra refused before anything happened (docs/how-it-works/nodetool.md E1, E5-E9, E13). The
		// node itself confirms it: still a member that is not leaving. Unreadable or
		// leaving is "the node's state decides", as for any other outcome.
		if ns, err := s.w.Nodetool.Netstats(ctx, s.n.Pod); err != nil || ns.Mode == pubnodetool.ModeLeaving || ns.Mode == pubnodetool.ModeDecommissioned {
			return nil
		}
		return &engine.NotStarted{Code: operation.ExitRefused, Err: &RefusedError{Pod: s.n.Pod, Msg: msg}}
	case nodetool.OutcomeFailed:
		s.w.setFailed(s.n.Pod, msg)
		return &operation.Retryable{Err: fmt.Errorf("decommission of %s failed: %s", s.n.Pod, msg)}
	case nodetool.OutcomeUnreachable:
		return &operation.Retryable{Err: fmt.Errorf("nodetool cannot reach Cassandra on %s: %s", s.n.Pod, msg)}
	}
	// Returned, already running, already decommissioned, or unknown (the exec broke):
	// the node's state decides.
	return nil
}

// force is whether this call passes --force: the checkpoint's Force, else the kind's
// rule read now (unreadable: retried, the decommission not called).
func (s *decommission) force(ctx context.Context) (bool, error) {
	if s.w.CP.Force || s.forceRule == nil {
		return s.w.CP.Force, nil
	}
	f, err := s.forceRule.Now(ctx)
	if err != nil {
		return false, &operation.Retryable{Err: fmt.Errorf("cannot tell whether the decommission of %s takes --force: %w", s.n.Pod, err)}
	}
	return f, nil
}

// Wait waits until the node is leaving or gone. A node that stays NORMAL (the call was
// cut before it started, or the node restarted) or reports DECOMMISSION_FAILED with
// nothing showing it still leaving (Done asks) gets the decommission again; on 3.11,
// where a second call would run a duplicate, NORMAL must last much longer before that.
func (s *decommission) Wait(ctx context.Context) error {
	id := record.StepID(record.StepDecommission, s.n.Pod)
	grace := 3 * s.w.poll()
	if !s.w.reissueSafe() && grace < 30*time.Second {
		grace = 30 * time.Second
	}
	start := s.w.Clock()
	var normalSince time.Time
	for {
		done, err := s.Done(ctx)
		if err == nil && done {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		what := "waiting for " + s.n.Pod + " to start leaving"
		if err != nil {
			what = "state unknown: " + err.Error()
		} else if ns, nerr := s.w.netstats(ctx, s.n.Pod); nerr == nil {
			switch ns.Mode {
			case pubnodetool.ModeDecommissionFailed:
				// Done found no stream out and a ring that shows it not leaving.
				return &engine.Redo{StepID: id, Reason: fmt.Sprintf("decommission of %s failed (mode DECOMMISSION_FAILED, no stream out, the ring shows it not leaving)", s.n.Pod)}
			case pubnodetool.ModeNormal:
				if normalSince.IsZero() {
					normalSince = s.w.Clock()
				}
				if s.w.Clock().Sub(normalSince) >= grace {
					return &engine.Redo{StepID: s.w.restartedRedo(s.n.Pod, id), Reason: fmt.Sprintf("node %s is still NORMAL after the decommission call (restarted, or the call never reached it)", s.n.Pod)}
				}
			default:
				normalSince = time.Time{}
			}
			what = fmt.Sprintf("node %s is %s", s.n.Pod, ns.Mode)
		}
		s.w.Reporter.Waiting(id, what, s.w.Clock().Sub(start))
		if err := s.w.sleep(ctx, s.w.poll()); err != nil {
			return err
		}
	}
}

// Reads of a decommission's progress while its call runs: the call's return is the end,
// so these only report. The first comes after decommissionReadMin (it shows the node
// leaving and what it streams), the next ones ever further apart up to
// decommissionReadMax: a 10-minute stream costs 6 to 8 reads, a 12-hour one about 250.
const (
	decommissionReadMin = 5 * time.Second
	decommissionReadMax = 3 * time.Minute
)

// reportBounds are the waits between progress reads while a decommission call runs
// (World.SampleEvery and SampleMax replace them: tests, and the bench's scaled time).
func (w *World) reportBounds() readBounds {
	b := readBounds{Min: decommissionReadMin, Max: decommissionReadMax}
	if w.SampleEvery > 0 {
		b.Min = w.SampleEvery
	}
	if w.SampleMax > 0 {
		b.Max = w.SampleMax
	}
	return b
}

func (s *decommission) progress(ctx context.Context, done <-chan struct{}) {
	start := s.w.Clock()
	b := s.w.reportBounds()
	id := record.StepID(record.StepDecommission, s.n.Pod)
	var meter StreamMeter
	for {
		wait := nextRead(streamLook{Since: s.w.Clock().Sub(start), EndSignalled: true}, b)
		if !after(ctx, done, wait) {
			return
		}
		what := "nodetool decommission running"
		if ns, err := s.w.Nodetool.Netstats(ctx, s.n.Pod); err == nil {
			if ns.Mode == pubnodetool.ModeLeaving || ns.SendsUnbootstrap() {
				s.w.noteUnderway(s.n.Pod)
			}
			what += fmt.Sprintf("; node mode %s", ns.Mode)
			if ns.Streaming {
				what += ", streaming"
			}
			s.w.reportStream(id, "decommission", s.n.Pod, ns, nodetool.PlanUnbootstrap, nodetool.DirSending, &meter)
		}
		s.w.Reporter.Waiting(id, what, s.w.Clock().Sub(start))
	}
}

// after waits d and reports true, or false as soon as done is closed or ctx ends.
func after(ctx context.Context, done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// ticks calls fn every d until done is closed or ctx ends: the progress of a long
// nodetool call that runs meanwhile.
func ticks(ctx context.Context, done <-chan struct{}, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

// RefusedError is a decommission Cassandra refused: the node did not start leaving and
// nothing was removed (the step is pending again). The command says what to do next.
type RefusedError struct {
	Pod, Msg string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("cassandra refused to decommission %s: %s. The node did not start leaving and nothing was removed", e.Pod, e.Msg)
}

// verifyLeft confirms the node left: DECOMMISSIONED on the node itself and its Host ID
// absent from a successful, non-empty ring read on a remaining node.
type verifyLeft struct{ node }

func (*verifyLeft) kind() string { return record.StepVerifyLeft }

// Describe implements engine.Describer.
func (s *verifyLeft) Describe() string { return "verify " + s.n.Pod + " left the ring" }

// PlanText implements PlanTexter.
func (s *verifyLeft) PlanText() string {
	if s.w.removedDead(s.n.Pod) {
		return "verify " + s.n.Pod + "'s Host ID " + s.n.HostID + " is gone from the ring"
	}
	return "verify " + s.n.Pod + " is DECOMMISSIONED and gone from the ring"
}

// Done is the confirmation itself.
func (s *verifyLeft) Done(ctx context.Context) (bool, error) {
	ok, _, err := s.check(ctx)
	return ok, err
}

// check returns whether the node left, and the node's own mode when it could be read.
// The node is asked first (right after a decommission its answer is already known); the
// pod is read only when the node cannot answer or is not DECOMMISSIONED (another
// incarnation's answer says nothing of the planned node). With an operator that acts,
// the pod is read first: once it is going, the ring alone decides (podGoing).
func (s *verifyLeft) check(ctx context.Context) (bool, pubnodetool.Mode, error) {
	if s.w.removedDead(s.n.Pod) {
		return s.deadLeft(ctx)
	}
	if s.w.Scaler != nil {
		p, gone, err := s.w.pod(ctx, s.n)
		if err == nil && podGoing(p, gone) {
			// The operator deletes the pod once the node left: its node, shutting down,
			// is then the slowest read and says nothing the ring does not.
			return s.ringDecides(ctx, "", nil)
		}
	}
	var mode pubnodetool.Mode
	ns, modeErr := s.w.netstats(ctx, s.n.Pod)
	if modeErr == nil && ns.Mode == pubnodetool.ModeLeaving {
		s.w.noteUnderway(s.n.Pod)
	}
	if modeErr != nil || ns.Mode != pubnodetool.ModeDecommissioned {
		_, gone, err := s.w.pod(ctx, s.n)
		if err != nil {
			return false, mode, err
		}
		if !gone && modeErr == nil {
			return false, ns.Mode, nil
		}
		if gone {
			// No pod, or another incarnation (its node is not the planned one): the
			// ring alone decides.
			modeErr = nil
		}
	} else {
		mode = ns.Mode
	}
	return s.ringDecides(ctx, mode, modeErr)
}

// podGoing reports whether the planned node's pod is gone (or another incarnation) or
// being deleted: the ring alone decides whether an operator that acts removed its node.
func podGoing(p *corev1.Pod, gone bool) bool {
	return gone || (p != nil && p.DeletionTimestamp != nil)
}

// ringDecides is check's last word: the node left once a successful ring read no longer
// lists it and its own mode (mode, or modeErr) was DECOMMISSIONED, or unreadable
// because it is not up, or not asked (its pod going).
func (s *verifyLeft) ringDecides(ctx context.Context, mode pubnodetool.Mode, modeErr error) (bool, pubnodetool.Mode, error) {
	r, reader, err := s.w.ring(ctx)
	if err != nil {
		return false, mode, err
	}
	if _, member := inRing(r, s.n); member {
		return false, mode, nil
	}
	// The node cannot answer but no longer is a member: a decommissioned node whose
	// process restarted refuses to start (docs/how-it-works/nodetool.md §8.3). Any other failure to read
	// its mode is "unknown".
	var unreachable *pubnodetool.UnreachableError
	if modeErr != nil && !errors.As(modeErr, &unreachable) {
		return false, mode, modeErr
	}
	if _, had := s.w.left.set(s.n.Pod, true); !had {
		s.w.adviseRepair(ctx, s.n, reader)
	}
	return true, mode, nil
}

// deadLeft is check for a dead node removed with removenode: its nodetool never
// answers, so a ring read on a live node alone decides.
func (s *verifyLeft) deadLeft(ctx context.Context) (bool, pubnodetool.Mode, error) {
	r, _, err := s.w.ring(ctx)
	if err != nil {
		return false, "", err
	}
	if _, member := inRing(r, s.n); member {
		return false, "", nil
	}
	s.w.left.set(s.n.Pod, true)
	return true, "", nil
}

// Safe: nothing is changed by this step.
func (s *verifyLeft) Safe(context.Context) error { return nil }

// nodeLeft is verifyLeft's confirmation, remembered for the rest of this run once given.
func (w *World) nodeLeft(ctx context.Context, n record.Node) (bool, error) {
	if left, _ := w.left.get(n.Pod); left {
		return true, nil
	}
	return (&verifyLeft{node: node{w, n}}).Done(ctx)
}

// Do: nothing to do, the step waits.
func (s *verifyLeft) Do(context.Context) error { return nil }

// KeepsObservations implements engine.ObservationKeeper: Do changes nothing.
func (s *verifyLeft) KeepsObservations() {}

// Evident implements engine.Evident: it does not act.
func (s *verifyLeft) Evident() {}

// Wait polls until the node left, and asks for the decommission to be redone when the
// node shows it is not leaving any more: restarted (NORMAL), or failed (leaving).
func (s *verifyLeft) Wait(ctx context.Context) error {
	id := record.StepID(record.StepVerifyLeft, s.n.Pod)
	decomm := record.StepID(record.StepDecommission, s.n.Pod)
	start := s.w.Clock()
	var stalledSince, endedSince time.Time
	var meter StreamMeter
	for {
		meter.forget()
		since := s.w.markEvidence()
		ok, mode, err := s.check(ctx)
		if ok {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		what := "waiting for " + s.n.Pod + " to leave"
		switch {
		case err != nil:
			what = "state unknown: " + err.Error()
		case mode == pubnodetool.ModeNormal:
			return &engine.Redo{StepID: s.w.restartedRedo(s.n.Pod, decomm), Reason: fmt.Sprintf("node %s is NORMAL again (restarted?)", s.n.Pod)}
		case mode == pubnodetool.ModeLeaving || mode == pubnodetool.ModeDecommissionFailed:
			var redo *engine.Redo
			if what, redo = s.leaving(ctx, mode, &stalledSince, &meter); redo != nil {
				return redo
			}
		case mode == pubnodetool.ModeDecommissioned:
			what = "node " + s.n.Pod + " is DECOMMISSIONED; waiting for the ring to drop it"
		case mode != "":
			what = fmt.Sprintf("node %s is in mode %s", s.n.Pod, mode)
		}
		s.w.Reporter.Waiting(id, what, s.w.Clock().Sub(start))
		// A LEAVING node whose stream was read: the next look is timed from its
		// predicted end (rare far from it, dense near it); a DECOMMISSIONED one soon;
		// anything else is read again after the poll interval.
		wait := s.w.poll()
		switch l, ok := meter.look(); {
		case err != nil:
		case mode == pubnodetool.ModeLeaving && ok:
			wait = nextRead(l, s.w.endBounds())
		case mode == pubnodetool.ModeDecommissioned:
			// The node has left; the ring drops it at once or nearly.
			if endedSince.IsZero() {
				endedSince = s.w.Clock()
			}
			wait = nextRead(streamLook{Ended: true, Since: s.w.Clock().Sub(endedSince)}, s.w.endBounds())
		}
		// An operator that acts (the evidence feed) shows the end by itself too: it
		// marks, then removes the pod once the node left.
		if err := s.w.awaitEvidence(ctx, since, wait, wait, keyResource, keyPod(s.n.Pod)); err != nil {
			return err
		}
	}
}

// endBounds are the waits between looks at a stream whose end must be seen by a read:
// within about a second of it (or the poll interval, if shorter), and at least once a
// minute (or every poll interval, if longer) far from it.
func (w *World) endBounds() readBounds {
	p := w.poll()
	return readBounds{Min: min(p, time.Second), Max: max(p, time.Minute), Fallback: p}
}

// leaving judges one look at a node that reports LEAVING or DECOMMISSION_FAILED: the
// decommission is to be redone when this run saw its call fail, when
// DECOMMISSION_FAILED comes with nothing showing the node still leaving (stillLeaving:
// Cassandra refused), or when the node has sent no stream for StallAfter (a failed
// decommission stays LEAVING on 4.x, and on 5.0 its peers keep seeing it UL: only the
// missing stream tells it from one still running; a second call answers "still
// decommissioning" if it runs). Else it says what the wait is for. stalledSince and meter
// carry over between looks.
func (s *verifyLeft) leaving(ctx context.Context, mode pubnodetool.Mode, stalledSince *time.Time, meter *StreamMeter) (string, *engine.Redo) {
	decomm := record.StepID(record.StepDecommission, s.n.Pod)
	if f, _ := s.w.failed.get(s.n.Pod); f != "" {
		return "", &engine.Redo{StepID: decomm, Reason: fmt.Sprintf("decommission of %s failed: %s", s.n.Pod, f)}
	}
	what := "node " + s.n.Pod + " is LEAVING"
	ns, err := s.w.netstats(ctx, s.n.Pod)
	if err != nil {
		*stalledSince = time.Time{}
		return "node " + s.n.Pod + " is " + string(mode) + "; state unknown: " + err.Error(), nil
	}
	// The read the stall check makes anyway: no extra nodetool call.
	s.w.reportStream(record.StepID(record.StepVerifyLeft, s.n.Pod), "decommission", s.n.Pod, ns, nodetool.PlanUnbootstrap, nodetool.DirSending, meter)
	if mode == pubnodetool.ModeDecommissionFailed {
		why, err := s.w.stillLeaving(ctx, s.n, ns)
		switch {
		case err != nil:
			*stalledSince = time.Time{}
			return "node " + s.n.Pod + " reports DECOMMISSION_FAILED; state unknown: " + err.Error(), nil
		case why == "":
			return "", &engine.Redo{StepID: decomm, Reason: fmt.Sprintf("decommission of %s failed (mode DECOMMISSION_FAILED, no stream out, the ring shows it not leaving)", s.n.Pod)}
		}
		what = "node " + s.n.Pod + " reports DECOMMISSION_FAILED but is still leaving: " + why
	}
	if ns.Streaming {
		*stalledSince = time.Time{}
		return what, nil
	}
	if stalledSince.IsZero() {
		*stalledSince = s.w.Clock()
	}
	stalled := s.w.Clock().Sub(*stalledSince)
	what += fmt.Sprintf(", no stream for %s", stalled.Round(time.Second))
	if s.w.StallAfter > 0 && stalled >= s.w.StallAfter && s.w.reissueSafe() {
		return "", &engine.Redo{StepID: decomm, Reason: fmt.Sprintf("node %s has been %s with no stream for %s; issuing decommission again (Cassandra answers 'still decommissioning' if it runs)", s.n.Pod, mode, stalled.Round(time.Second))}
	}
	return what, nil
}

// stillLeaving says what shows node n in the middle of a decommission although its
// mode (ns) reads DECOMMISSION_FAILED, or "" when nothing does: an Unbootstrap stream it
// sends, or a ring read on a node outside the plan that lists it leaving or no longer
// lists it (nodetool.LeavingEvidence). On 5.0 the mode can read DECOMMISSION_FAILED
// while the node still leaves (CASSANDRA-21493, CASSANDRA-21583): calling that a
// failure would issue the decommission again under a running one. An unreadable ring is
// an error: unknown, never "failed".
func (w *World) stillLeaving(ctx context.Context, n record.Node, ns nodetool.Netstats) (string, error) {
	if ns.SendsUnbootstrap() {
		return nodetool.LeavingEvidence(ns, pubnodetool.Node{}, true, ""), nil
	}
	r, reader, err := w.ring(ctx)
	if err != nil {
		return "", err
	}
	row, listed := inRing(r, n)
	return nodetool.LeavingEvidence(ns, row, listed, reader), nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
