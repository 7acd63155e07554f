// Package engine runs a planned operation step by step. Before a step acts, the
// checkpoint says so; whether a step is done is always asked of the real world, so a
// run can be killed anywhere and resumed from any machine.
package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
)

// Step is one small action with two questions about the real world.
type Step interface {
	// Done reports whether the real world already shows the step's effect. An error
	// means "unknown" and is never taken as done.
	Done(ctx context.Context) (bool, error)
	// Safe returns an error when acting now would be unsafe (it is re-checked right
	// before every attempt, from the real world).
	Safe(ctx context.Context) error
	// Do performs the action once. It must be idempotent: the run may have died right
	// after a previous Do.
	Do(ctx context.Context) error
}

// Waiter is implemented by steps that wait for their effect in a better way than
// polling Done (a watch, or a loop that can detect that an earlier step must be redone).
type Waiter interface {
	Wait(ctx context.Context) error
}

// ObservationKeeper is implemented by steps whose Do leaves the run's kept reads of
// the world true (it records or drops what it changed). After the Do of any other step
// the engine calls Forget, so the next check reads afresh.
type ObservationKeeper interface {
	KeepsObservations()
}

// Evident is implemented by steps whose effect the world shows in full (Done alone
// tells whether the action happened: a StatefulSet's replicas, a claim being deleted),
// or that do not act at all. The engine records their start in memory and lets the
// next checkpoint write carry it: a crash in between leaves them "pending", and resume
// asks the world anyway. Steps whose effect the world cannot show in full (a nodetool
// decommission, drain or cleanup) are written "started" before they act.
type Evident interface {
	Evident()
}

// Passive is implemented by steps whose Do does nothing (they only wait for what an
// earlier step set off): there is no action to fence.
type Passive interface {
	Passive()
}

// Rechecker is implemented by steps whose safety depends on a world that may change
// between Safe and the proof of the lock (a node going down while the "started" write
// is under way). Recheck runs after the proof, right before Do; a *NotYet answer puts
// the step back to pending (written when its start was) and the engine asks Safe
// again, which waits. Any other error stops the run, the step pending too.
type Rechecker interface {
	Recheck(ctx context.Context) error
}

// NotYet is a Recheck's or Guard's answer that the step must not act now and nothing
// happened: the step goes back to pending and Safe is asked again.
type NotYet struct{ Reason string }

func (n *NotYet) Error() string { return "not yet: " + n.Reason }

// Describer gives a human description of a step for plans and progress.
type Describer interface {
	Describe() string
}

// Redo asks the engine to run an earlier step's action again (e.g. the node came back
// NORMAL after a restart, so it must be decommissioned again).
type Redo struct {
	StepID string
	Reason string
}

func (r *Redo) Error() string { return fmt.Sprintf("redo %s: %s", r.StepID, r.Reason) }

// Retryable marks a Do error after which the action may be attempted again.
type Retryable struct{ Err error }

func (r *Retryable) Error() string { return r.Err.Error() }
func (r *Retryable) Unwrap() error { return r.Err }

// Fatal marks an error that stops the run at once (a refusal by Cassandra, a broken
// invariant); it carries the exit code the command should return.
type Fatal struct {
	Err  error
	Code int
}

func (f *Fatal) Error() string { return f.Err.Error() }
func (f *Fatal) Unwrap() error { return f.Err }

// NotStarted is returned by a Do whose action was refused before anything happened
// (Cassandra's replication-factor check refusing a decommission: the node is still
// NORMAL). The engine records the step as pending again, not started, keeping the error
// as its lastError, so abort and a re-plan see that nothing runs; the run stops with
// Code.
type NotStarted struct {
	Err  error
	Code int
}

func (n *NotStarted) Error() string { return n.Err.Error() }
func (n *NotStarted) Unwrap() error { return n.Err }

// ErrInterrupted is returned when the context was cancelled between steps or during a wait.
var ErrInterrupted = errors.New("interrupted")

// Reporter receives progress. Implementations must not block for long.
type Reporter interface {
	StepStarted(id, desc string, attempt int)
	StepDone(id, desc string, already bool)
	StepFailed(id, desc string, err error)
	Waiting(id, what string, elapsed time.Duration)
	Warn(id, msg string)
}

// ProgressReporter is implemented by reporters that show streaming progress (a bar or
// a line every 30 s, internal/output); the steps call it through steps.World.
type ProgressReporter interface {
	Progress(id string, p checkpoint.Progress)
}

// Saver persists the checkpoint (checkpoint.Store in production). Fence proves with a
// fresh read that cp's session still holds the checkpoint at the seq it last wrote
// (checkpoint.ErrLost otherwise).
type Saver interface {
	Save(ctx context.Context, cp *checkpoint.Checkpoint) error
	Fence(ctx context.Context, cp *checkpoint.Checkpoint) error
}

// Engine runs the steps of a checkpoint.
type Engine struct {
	CP       *checkpoint.Checkpoint
	Steps    map[string]Step // by step ID
	Store    Saver
	Reporter Reporter
	Now      func() time.Time
	// Poll is the interval between reads of the real world while waiting or when a read
	// failed.
	Poll time.Duration
	// StepTimeout bounds how long one step may wait for its effect.
	StepTimeout time.Duration
	// MaxAttempts bounds how often one step's action is attempted in one run. The
	// checkpoint's Attempts counts every attempt of the operation's life (information
	// only): a later run, the fault gone, tries again.
	MaxAttempts int
	// Transient tells API errors worth retrying (a write is retried with backoff, then
	// the run stops with exit 4).
	Transient func(error) bool
	// Lease, when set, makes the engine renew the holder's lease every Lease/3 while it
	// runs, so other runs can tell a live holder from a dead one.
	Lease time.Duration
	// Forget, when set, drops the reads of the world the steps keep between their
	// checks: called after every sleep (time passed) and after an action that does not
	// keep them up to date (steps.World.Forget).
	Forget func()
	// Guard, when set, is asked right before every action (after the proof of the lock
	// and the step's Recheck; not for passive steps), with the step's ID: an error stops
	// the run before the action (steps.OperatorGuard: the paused operator still at 0).
	Guard func(ctx context.Context, id string) error

	// mu serializes changes to CP and their writes (the lease renewer writes too).
	mu      sync.Mutex
	current string
	// tries counts the attempts of each step in this run, lastErr the last error each
	// step met in this run (for the message when the cap is reached).
	tries   map[string]int
	lastErr map[string]string
	// stop is why the run must stop at its next safe point (a failed lease renewal); halt
	// cancels the run's waits with it.
	stop error
	halt context.CancelCauseFunc
	// progress is the last streaming progress per step, not yet written (NoteProgress);
	// pmu guards it apart from mu, which is held during writes.
	pmu      sync.Mutex
	progress map[string]checkpoint.Progress
}

// NoteProgress keeps p as the last progress of step id. The next checkpoint write (a
// step's record or the lease renewal) carries it: progress never costs a write of its own.
func (e *Engine) NoteProgress(id string, p checkpoint.Progress) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	if e.progress == nil {
		e.progress = map[string]checkpoint.Progress{}
	}
	e.progress[id] = p
}

// applyProgress moves the noted progress into the step records (mu held).
func (e *Engine) applyProgress() {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	for id, p := range e.progress {
		if i := e.index(id); i >= 0 {
			e.CP.Steps[i].Progress = &p
		}
	}
	clear(e.progress)
}

// Current is the ID of the step being worked on (for interruption messages).
func (e *Engine) Current() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.current
}

// Run executes every step that is not done. Cancelling ctx interrupts the run at the
// next safe point: never between an action and the checkpoint write that records it.
//
// Every action is fenced: right before a step's Do, this run has proved that its
// session still holds the checkpoint — by the conditional write that records the step
// "started", or (for evident steps, whose start is not written) by Store.Fence's fresh
// read. A lost checkpoint or a failed lease renewal stops the run before its next
// action (a *Fatal with code 4 wrapping checkpoint.ErrLost when another run holds it).
func (e *Engine) Run(ctx context.Context) error {
	parent := ctx
	ctx, halt := context.WithCancelCause(ctx)
	defer halt(nil)
	e.mu.Lock()
	e.halt = halt
	e.mu.Unlock()
	err := e.run(ctx, parent)
	if stop := e.stopped(); stop != nil && parent.Err() == nil && err != nil && (errors.Is(err, ErrInterrupted) || ctx.Err() != nil) {
		return stop
	}
	return err
}

// run is Run's loop: waits and checks use ctx (halted by a failed renewal), actions the
// caller's actx (an action under way is never cut by a renewal failure).
func (e *Engine) run(ctx, actx context.Context) error {
	if e.MaxAttempts == 0 {
		e.MaxAttempts = 5
	}
	if e.Poll == 0 {
		e.Poll = 2 * time.Second
	}
	if e.StepTimeout == 0 {
		e.StepTimeout = 30 * time.Minute
	}
	if e.Lease > 0 {
		rctx, stop := context.WithCancel(ctx)
		defer stop()
		go e.renew(rctx)
	}
	e.mu.Lock()
	e.tries, e.lastErr = map[string]int{}, map[string]string{}
	e.mu.Unlock()
	forced := map[int]string{}
	for i := 0; i < len(e.CP.Steps); i++ {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		if err := e.stopped(); err != nil {
			return err
		}
		rec := &e.CP.Steps[i]
		st, ok := e.Steps[rec.ID]
		if !ok {
			return fmt.Errorf("no implementation for step %s", rec.ID)
		}
		e.mu.Lock()
		e.current = rec.ID
		e.mu.Unlock()
		desc := describe(st, rec.ID)
		reason, force := forced[i]
		delete(forced, i)
		if !force {
			done, err := e.doneWithRetry(ctx, rec.ID, st)
			if err != nil {
				return err
			}
			if done {
				already := rec.State != checkpoint.StateStarted
				if err := e.markDone(ctx, rec); err != nil {
					return err
				}
				e.Reporter.StepDone(rec.ID, desc, already)
				continue
			}
		}
		if tries := e.triesOf(rec.ID); tries >= e.MaxAttempts {
			return &Fatal{Code: 1, Err: fmt.Errorf("step %s failed %d times in this run (last error: %s)", rec.ID, tries, e.lastError(rec, reason))}
		}
		if err := e.safe(ctx, rec.ID, st); err != nil {
			if ctx.Err() != nil {
				return ErrInterrupted
			}
			return fmt.Errorf("not safe to %s: %w", desc, err)
		}
		start := func(now time.Time) {
			rec.State = checkpoint.StateStarted
			rec.Attempts++
			e.tries[rec.ID]++
			rec.StartedAt = &now
			rec.FinishedAt = nil
			if reason != "" {
				rec.LastError = reason
			}
		}
		_, evident := st.(Evident)
		_, passive := st.(Passive)
		if evident {
			e.mu.Lock()
			start(e.now())
			e.mu.Unlock()
			if !passive {
				// Nothing was written since the last proof: read it afresh.
				if err := e.fence(ctx, rec.ID); err != nil {
					return err
				}
			}
		} else if err := e.commit(ctx, start); err != nil {
			// The checkpoint says "started" before the action happens; the conditional
			// write is also the proof that this run still holds it.
			return err
		}
		if err := e.stopped(); err != nil {
			return err
		}
		if again, err := e.recheck(ctx, rec, st, evident, passive); err != nil {
			return err
		} else if again {
			i-- // back to Safe, which waits for the world
			continue
		}
		e.Reporter.StepStarted(rec.ID, desc, rec.Attempts)
		err := st.Do(actx)
		if _, keeps := st.(ObservationKeeper); !keeps {
			e.forget()
		}
		var rt *Retryable
		var fatal *Fatal
		var refused *NotStarted
		switch {
		case errors.As(err, &refused):
			// Nothing happened: the step is pending again, with the refusal as its error.
			e.Reporter.StepFailed(rec.ID, rec.ID, err)
			if serr := e.commit(ctx, func(time.Time) {
				rec.State = checkpoint.StatePending
				rec.StartedAt = nil
				rec.LastError = err.Error()
				e.lastErr[rec.ID] = err.Error()
			}); serr != nil {
				// The checkpoint still says "started": resume asks the world, abort
				// refuses until it does. Say so rather than hide it.
				e.Reporter.Warn(rec.ID, "could not record the refusal in the checkpoint (the step stays \"started\"): "+serr.Error())
			}
			return &Fatal{Code: refused.Code, Err: err}
		case errors.As(err, &fatal):
			e.recordError(ctx, rec, err)
			return err
		case errors.As(err, &rt):
			e.recordError(ctx, rec, err)
			e.Reporter.Warn(rec.ID, fmt.Sprintf("%s failed (attempt %d): %v; retrying", desc, rec.Attempts, err))
			if err := e.sleep(ctx, backoff(e.Poll, e.triesOf(rec.ID))); err != nil {
				return err
			}
			i-- // ask the real world again before the next attempt
			continue
		case err != nil && ctx.Err() != nil:
			return ErrInterrupted
		case err != nil && e.Transient != nil && e.Transient(err):
			e.recordError(ctx, rec, err)
			if e.triesOf(rec.ID) >= e.MaxAttempts {
				return &Fatal{Code: 4, Err: fmt.Errorf("%s: the API server keeps failing: %w", desc, err)}
			}
			e.Reporter.Warn(rec.ID, fmt.Sprintf("%s: transient API error (attempt %d): %v; retrying", desc, rec.Attempts, err))
			if err := e.sleep(ctx, backoff(e.Poll, e.triesOf(rec.ID))); err != nil {
				return err
			}
			i-- // ask the real world again before the next attempt
			continue
		case err != nil:
			e.recordError(ctx, rec, err)
			return fmt.Errorf("%s: %w", desc, err)
		}
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		if err := e.wait(ctx, rec.ID, st); err != nil {
			var redo *Redo
			if errors.As(err, &redo) {
				j := e.index(redo.StepID)
				if j < 0 || j > i {
					return fmt.Errorf("step %s asked to redo unknown step %s", rec.ID, redo.StepID)
				}
				e.Reporter.Warn(rec.ID, fmt.Sprintf("%s; going back to %s", redo.Reason, redo.StepID))
				e.mu.Lock()
				for k := j; k <= i; k++ {
					e.CP.Steps[k].State = checkpoint.StatePending
				}
				// The reason is the step's last error: markDone cleared the one its
				// action met, and a later run must be able to name it.
				e.CP.Steps[j].LastError = redo.Reason
				e.lastErr[redo.StepID] = redo.Reason
				e.mu.Unlock()
				forced[j] = redo.Reason
				i = j - 1
				continue
			}
			if errors.Is(err, ErrInterrupted) || ctx.Err() != nil {
				return ErrInterrupted
			}
			e.recordError(ctx, rec, err)
			return err
		}
		if err := e.markDone(ctx, rec); err != nil {
			return err
		}
		e.Reporter.StepDone(rec.ID, desc, false)
	}
	e.mu.Lock()
	e.current = ""
	e.mu.Unlock()
	return nil
}

// recheck asks the step's Recheck and the Guard right before the action. A *NotYet
// from Recheck undoes the start (nothing happened): in memory for evident steps, with
// a write for the others (their "started" is on the server), and says to ask Safe
// again.
func (e *Engine) recheck(ctx context.Context, rec *checkpoint.Step, st Step, evident, passive bool) (bool, error) {
	undo := func() error {
		change := func(time.Time) {
			rec.State = checkpoint.StatePending
			rec.StartedAt = nil
			rec.Attempts--
			e.tries[rec.ID]--
		}
		if evident {
			e.mu.Lock()
			change(e.now())
			e.mu.Unlock()
			return nil
		}
		return e.commit(ctx, change)
	}
	if rc, ok := st.(Rechecker); ok {
		err := rc.Recheck(ctx)
		var ny *NotYet
		switch {
		case errors.As(err, &ny):
			e.Reporter.Waiting(rec.ID, "not acting yet: "+ny.Reason, 0)
			return true, undo()
		case err != nil:
			// Nothing happened: the step is not left "started".
			if uerr := undo(); uerr != nil {
				e.Reporter.Warn(rec.ID, "could not record that the step did not start: "+uerr.Error())
			}
			return false, err
		}
	}
	if e.Guard != nil && !passive {
		if err := e.Guard(ctx, rec.ID); err != nil {
			// Nothing happened: the step is not left "started" (abort may go on).
			if uerr := undo(); uerr != nil {
				e.Reporter.Warn(rec.ID, "could not record that the step did not start: "+uerr.Error())
			}
			return false, err
		}
	}
	return false, nil
}

// stopped is the reason the run must stop, if a lease renewal failed.
func (e *Engine) stopped() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stop
}

// fence proves, with a fresh read, that this run still holds the checkpoint; a read
// that fails is no proof: retried while transient, then the run stops (exit 4).
func (e *Engine) fence(ctx context.Context, id string) error {
	for attempt := 1; ; attempt++ {
		e.mu.Lock()
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		err := e.Store.Fence(wctx, e.CP)
		cancel()
		e.mu.Unlock()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, checkpoint.ErrLost):
			return e.lost(err)
		case e.Transient == nil || !e.Transient(err) || attempt >= e.MaxAttempts:
			return &Fatal{Code: 4, Err: fmt.Errorf("cannot prove this run still holds operation %s before %s: %w", e.CP.OperationID, id, err)}
		}
		e.Reporter.Waiting(id, "cannot check the lock yet ("+err.Error()+"), retrying", 0)
		if err := e.sleep(ctx, backoff(e.Poll, attempt)); err != nil {
			return err
		}
	}
}

// lost is the error that stops a run whose checkpoint another run took over.
func (e *Engine) lost(err error) error {
	return &Fatal{Code: 4, Err: fmt.Errorf("this run no longer holds operation %s and stopped before its next action: %w", e.CP.OperationID, err)}
}

// safe asks Safe, retrying while the answer is a transient API error.
func (e *Engine) safe(ctx context.Context, id string, st Step) error {
	for attempt := 1; ; attempt++ {
		err := st.Safe(ctx)
		if err == nil || e.Transient == nil || !e.Transient(err) || attempt >= e.MaxAttempts {
			return err
		}
		e.Reporter.Waiting(id, "cannot check safety yet ("+err.Error()+"), retrying", 0)
		if err := e.sleep(ctx, backoff(e.Poll, attempt)); err != nil {
			return err
		}
	}
}

// doneWithRetry asks Done until it answers, within StepTimeout. Unknown is never done.
func (e *Engine) doneWithRetry(ctx context.Context, id string, st Step) (bool, error) {
	start := e.now()
	for {
		done, err := st.Done(ctx)
		if err == nil {
			return done, nil
		}
		if ctx.Err() != nil {
			return false, ErrInterrupted
		}
		var fatal *Fatal
		if errors.As(err, &fatal) {
			return false, err
		}
		if e.now().Sub(start) > e.StepTimeout {
			return false, &Fatal{Code: 4, Err: fmt.Errorf("timed out after %s: cannot tell whether %s is done: %w", e.StepTimeout, id, err)}
		}
		e.Reporter.Waiting(id, "state unknown ("+err.Error()+"), reading again", e.now().Sub(start))
		if err := e.sleep(ctx, e.Poll); err != nil {
			return false, err
		}
	}
}

// wait blocks until the step's effect is visible.
func (e *Engine) wait(ctx context.Context, id string, st Step) error {
	wctx, cancel := context.WithTimeout(ctx, e.StepTimeout)
	defer cancel()
	if w, ok := st.(Waiter); ok {
		err := w.Wait(wctx)
		if err != nil && ctx.Err() == nil && wctx.Err() != nil {
			return &Fatal{Code: 4, Err: fmt.Errorf("timed out after %s waiting for %s: %w", e.StepTimeout, id, err)}
		}
		return err
	}
	start := e.now()
	for {
		done, err := st.Done(wctx)
		if err == nil && done {
			return nil
		}
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		if wctx.Err() != nil {
			return &Fatal{Code: 4, Err: fmt.Errorf("timed out after %s waiting for %s", e.StepTimeout, id)}
		}
		what := "waiting"
		if err != nil {
			what = "state unknown (" + err.Error() + ")"
		}
		e.Reporter.Waiting(id, what, e.now().Sub(start))
		if err := e.sleep(wctx, e.Poll); err != nil {
			if ctx.Err() != nil {
				return ErrInterrupted
			}
			return &Fatal{Code: 4, Err: fmt.Errorf("timed out after %s waiting for %s", e.StepTimeout, id)}
		}
	}
}

// markDone records a step as done in memory only: the next write (the next step's
// "started", an error, a release, or clearing the checkpoint at the end) carries it. A
// crash before that leaves the step "started", which resume re-checks in the real world
// anyway — and the run saves one API write per step.
func (e *Engine) markDone(_ context.Context, rec *checkpoint.Step) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if rec.State != checkpoint.StateDone {
		now := e.now()
		rec.State = checkpoint.StateDone
		rec.FinishedAt = &now
		rec.LastError = ""
	}
	return nil
}

// recordError keeps the last error in the checkpoint (best effort: the run is stopping
// or retrying anyway, and the step stays "started", which resume re-checks).
func (e *Engine) recordError(ctx context.Context, rec *checkpoint.Step, err error) {
	e.Reporter.StepFailed(rec.ID, rec.ID, err)
	if serr := e.commit(ctx, func(time.Time) {
		rec.LastError = err.Error()
		e.lastErr[rec.ID] = err.Error()
	}); serr != nil {
		e.Reporter.Warn(rec.ID, "could not record the error in the checkpoint: "+serr.Error())
		if errors.Is(serr, checkpoint.ErrLost) {
			e.stopWith(serr) // a retry must not act: stop at the next check
		}
	}
}

// commit applies a change to the checkpoint and writes it, serialized with the lease
// renewer. Writes run on a context that ignores interruption, so a write is never cut
// in half; they still have their own timeout.
func (e *Engine) commit(ctx context.Context, change func(now time.Time)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	change(now)
	e.applyProgress()
	if e.Lease > 0 {
		e.CP.Holder.RenewedAt = &now
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var err error
	for attempt, wait := 0, 200*time.Millisecond; ; attempt, wait = attempt+1, wait*2 {
		if err = e.Store.Save(wctx, e.CP); err == nil {
			return nil
		}
		if e.Transient == nil || !e.Transient(err) || attempt >= 4 {
			break
		}
		select {
		case <-wctx.Done():
		case <-time.After(wait):
			continue
		}
		break
	}
	if errors.Is(err, checkpoint.ErrLost) {
		return e.lost(err)
	}
	if e.Transient != nil && e.Transient(err) {
		// The last good checkpoint is on the server and nothing acted after it: stop
		// like an interruption, resume continues.
		return &Fatal{Code: 4, Err: fmt.Errorf("cannot write the checkpoint (the API server keeps failing): %w", err)}
	}
	return &Fatal{Code: 1, Err: err}
}

// Amend changes the checkpoint in memory, serialized with its writes (a step that learnt
// something the checkpoint must keep, e.g. a re-created pod's UID); the next write
// carries it.
func (e *Engine) Amend(change func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	change()
}

// Release records that this run stopped (after an error or an interruption), so the
// next run takes over at once instead of waiting for the lease to expire.
func (e *Engine) Release(ctx context.Context) error {
	return e.commit(ctx, func(now time.Time) { e.CP.Holder.ReleasedAt = &now })
}

// renew keeps the holder's lease fresh while the run is alive. A renewal that fails (the
// checkpoint lost to another run, or the API server failing past commit's retries)
// stops the run at its next safe point: a run that cannot renew cannot prove to others
// that it is alive, so they may take over after a lease.
func (e *Engine) renew(ctx context.Context) {
	t := time.NewTicker(e.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := e.commit(ctx, func(time.Time) {}); err != nil {
				e.Reporter.Warn(e.Current(), "could not renew the lease, stopping at the next safe point: "+err.Error())
				e.stopWith(err)
				return
			}
		}
	}
}

// stopWith records why the run must stop and ends its waits.
func (e *Engine) stopWith(err error) {
	e.mu.Lock()
	if e.stop == nil {
		e.stop = err
	}
	h := e.halt
	e.mu.Unlock()
	if h != nil {
		h(err)
	}
}

func (e *Engine) index(id string) int {
	for i, s := range e.CP.Steps {
		if s.ID == id {
			return i
		}
	}
	return -1
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}

func (e *Engine) forget() {
	if e.Forget != nil {
		e.Forget()
	}
}

// sleep waits d; what the steps read before is forgotten: time passed.
func (e *Engine) sleep(ctx context.Context, d time.Duration) error {
	defer e.forget()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ErrInterrupted
	case <-t.C:
		return nil
	}
}

// backoff grows the wait between attempts: poll, 2×, 4×… capped at 30 s.
func backoff(poll time.Duration, attempt int) time.Duration {
	d := poll
	for i := 1; i < attempt && d < 30*time.Second; i++ {
		d *= 2
	}
	if d > 30*time.Second {
		d = 30 * time.Second
	}
	return d
}

func describe(st Step, id string) string {
	if d, ok := st.(Describer); ok {
		return d.Describe()
	}
	return id
}

// triesOf is how often the step's action was attempted in this run.
func (e *Engine) triesOf(id string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.tries[id]
}

// lastError names the last real error of a step: the one this run met, else the reason
// it is being redone, else the one the checkpoint kept.
func (e *Engine) lastError(rec *checkpoint.Step, reason string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range []string{e.lastErr[rec.ID], reason, rec.LastError} {
		if s != "" {
			return s
		}
	}
	return "none recorded"
}
