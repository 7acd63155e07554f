// Package engine runs a planned operation step by step. Whether a step is done is
// always asked of the real world; a step whose effect the world cannot show in full is
// written "started" in the checkpoint before it acts; and no action runs before this run
// has proved it still holds the checkpoint. So a run can be killed anywhere and resumed
// from any machine.
package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Waiter is implemented by steps that wait for their effect in a better way than
// polling Done (a watch, or a loop that can detect that an earlier step must be redone).
type Waiter interface {
	Wait(ctx context.Context) error
}

// Redoer is implemented by steps whose action found that an earlier step must be done
// again first (a shrink that met a new node of the ring on its pod: decommission it);
// asked before the wait, a non-nil answer sends the run back there.
type Redoer interface {
	PendingRedo() *Redo
}

// ObservationKeeper is implemented by steps whose Do leaves the run's kept reads of
// the world true (it records or drops what it changed). After the Do of any other step
// the engine calls Forget, so the next check reads afresh.
type ObservationKeeper interface {
	KeepsObservations()
}

// Passive is implemented by steps whose Do does nothing (they only wait for what an
// earlier step set off): there is no action to fence.
type Passive interface {
	Passive()
}

// CarrierDeleter is implemented by steps during which the operation itself deletes the
// resource its checkpoint lives on (remove-dc of a CassandraDatacenter): a lease
// renewal that finds the resource gone then stops renewing, not the run; the step's
// own Done verifies the end in the world.
type CarrierDeleter interface {
	DeletesCarrier()
}

// Rechecker is implemented by steps whose safety depends on a world that may change
// between Safe and the proof of the lock (a node going down while the "started" write
// is under way). Recheck runs after the proof, right before Do; a *NotYet answer puts
// the step back to pending (written when its start was) and the engine asks Safe
// again, which waits. Any other error stops the run, the step pending too.
type Rechecker interface {
	Recheck(ctx context.Context) error
}

// NotYet is a Recheck's answer that the step must not act now and nothing
// happened: the step goes back to pending and Safe is asked again.
type NotYet struct{ Reason string }

func (n *NotYet) Error() string { return "not yet: " + n.Reason }

// Redo asks the engine to run an earlier step's action again (e.g. the node came back
// NORMAL after a restart, so it must be decommissioned again).
type Redo struct {
	StepID string
	Reason string
}

func (r *Redo) Error() string { return fmt.Sprintf("redo %s: %s", r.StepID, r.Reason) }

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
	Progress(id string, p record.Progress)
}

// Saver persists the checkpoint (checkpoint.Store in production). Fence proves with a
// fresh read that cp's session still holds the checkpoint at the seq it last wrote
// (checkpoint.ErrLost otherwise).
type Saver interface {
	Save(ctx context.Context, cp *record.Checkpoint) error
	Fence(ctx context.Context, cp *record.Checkpoint) error
}

// Engine runs the steps of a checkpoint.
type Engine struct {
	CP       *record.Checkpoint
	Steps    map[string]pub.Step // by step ID
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
	// Until, when set, ends the run once the step with this ID is done (abort finishing
	// a node half removed runs that node's steps only); Run then returns nil with the
	// later steps untouched.
	Until string
	// Settle, when set, waits once every step is done (not with Until), while the lease
	// is still renewed, for what must hold before the run may end (steps.AwaitSettled:
	// the operator that carried the operation out agrees it is done), at most
	// StepTimeout. A run that dies in it is resumed with every step done: it waits again.
	Settle func(ctx context.Context) error

	// mu serializes changes to CP and their writes (the lease renewer writes too).
	mu      sync.Mutex
	current string
	// tries counts the attempts of each step in this run, lastErr the last error each
	// step met in this run (for the message when the cap is reached).
	tries   map[string]int
	lastErr map[string]string
	// forced holds the steps a Redo sent the run back to, by index, with the reason:
	// their action runs again without asking Done (used by the run's goroutine only).
	forced map[int]string
	// stop is why the run must stop at its next safe point (a failed lease renewal); halt
	// cancels the run's waits with it.
	stop error
	halt context.CancelCauseFunc
	// progress is the last streaming progress per step, not yet written (NoteProgress);
	// pmu guards it apart from mu, which is held during writes.
	pmu      sync.Mutex
	progress map[string]record.Progress
}

// NoteProgress keeps p as the last progress of step id. The next checkpoint write (a
// step's record or the lease renewal) carries it: progress never costs a write of its own.
func (e *Engine) NoteProgress(id string, p record.Progress) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	if e.progress == nil {
		e.progress = map[string]record.Progress{}
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

func (e *Engine) setCurrent(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.current = id
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
	e.setDefaults()
	if e.Lease > 0 {
		// The renewer is stopped and joined before Run returns: the caller's last write
		// (Release, or Finish clearing the checkpoint) must be the last, never followed
		// by a renewal that writes the checkpoint back.
		rctx, stop := context.WithCancel(ctx)
		var renewer sync.WaitGroup
		renewer.Go(func() { e.renew(rctx) })
		defer func() {
			stop()
			renewer.Wait()
		}()
	}
	e.mu.Lock()
	e.tries, e.lastErr = map[string]int{}, map[string]string{}
	e.mu.Unlock()
	e.forced = map[int]string{}
	for i := 0; i < len(e.CP.Steps); {
		next, err := e.runStep(ctx, actx, i)
		if err != nil {
			return err
		}
		if u := e.index(e.Until); u >= 0 && next > u {
			e.setCurrent("")
			return nil
		}
		i = next
	}
	e.setCurrent("")
	if e.Settle == nil || e.Until != "" {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, e.StepTimeout)
	defer cancel()
	err := e.Settle(sctx)
	if err != nil && ctx.Err() == nil && sctx.Err() != nil {
		return &pub.Fatal{Code: 4, Err: fmt.Errorf("timed out after %s: %w", e.StepTimeout, err)}
	}
	return err
}

func (e *Engine) setDefaults() {
	if e.MaxAttempts == 0 {
		e.MaxAttempts = 5
	}
	if e.Poll == 0 {
		e.Poll = 2 * time.Second
	}
	if e.StepTimeout == 0 {
		e.StepTimeout = 30 * time.Minute
	}
}

// turn is one pass of the run over one step.
type turn struct {
	i    int
	rec  *record.Step
	st   pub.Step
	desc string
	// forced says the step is being redone (its Done is not asked); reason is why.
	forced  bool
	reason  string
	evident bool
	passive bool
}

// runStep works on step i and says which step comes next: i+1 once it is done, i again
// to ask the world before another attempt, an earlier one to redo it. The runbook: done
// already? may it be attempted, is it safe? record its start (the proof of the lock);
// recheck right before the action; act; wait for the effect; done.
func (e *Engine) runStep(ctx, actx context.Context, i int) (int, error) {
	s, err := e.turnFor(ctx, i)
	if err != nil {
		return i, err
	}
	if !s.forced {
		if done, err := e.doneAlready(ctx, s); err != nil || done {
			return i + 1, err
		}
	}
	if err := e.mayAct(ctx, s); err != nil {
		return i, err
	}
	if err := e.recordStart(ctx, s); err != nil {
		return i, err
	}
	if err := e.stopped(); err != nil {
		return i, err
	}
	if again, err := e.recheck(ctx, s); err != nil || again {
		return i, err // again: back to Safe, which waits for the world
	}
	if again, err := e.act(ctx, actx, s); err != nil || again {
		return i, err // again: ask the real world before the next attempt
	}
	if ctx.Err() != nil {
		return i, ErrInterrupted
	}
	if err := e.wait(ctx, s.rec.ID, s.st); err != nil {
		return e.waitFailed(ctx, s, err)
	}
	e.finish(s, false)
	return i + 1, nil
}

// turnFor starts a pass over step i, unless the run was interrupted or must stop.
func (e *Engine) turnFor(ctx context.Context, i int) (*turn, error) {
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	if err := e.stopped(); err != nil {
		return nil, err
	}
	rec := &e.CP.Steps[i]
	st, ok := e.Steps[rec.ID]
	if !ok {
		return nil, fmt.Errorf("no implementation for step %s", rec.ID)
	}
	e.setCurrent(rec.ID)
	s := &turn{i: i, rec: rec, st: st, desc: describe(st, rec.ID)}
	s.reason, s.forced = e.forced[i]
	delete(e.forced, i)
	_, s.evident = st.(pub.Evident)
	_, s.passive = st.(Passive)
	return s, nil
}

// doneAlready asks the real world whether the step's effect is there (a resumed run,
// or an action whose record a crash lost) and records it done if so.
func (e *Engine) doneAlready(ctx context.Context, s *turn) (bool, error) {
	done, err := e.doneWithRetry(ctx, s.rec.ID, s.st)
	if err != nil || !done {
		return false, err
	}
	e.finish(s, s.rec.State != record.StateStarted)
	return true, nil
}

// mayAct refuses a step whose action failed MaxAttempts times in this run, then waits
// for Safe.
func (e *Engine) mayAct(ctx context.Context, s *turn) error {
	if tries := e.triesOf(s.rec.ID); tries >= e.MaxAttempts {
		return &pub.Fatal{Code: 1, Err: fmt.Errorf("step %s failed %d times in this run (last error: %s)", s.rec.ID, tries, e.lastError(s.rec, s.reason))}
	}
	if err := e.safe(ctx, s.rec.ID, s.st); err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return fmt.Errorf("not safe to %s: %w", s.desc, err)
	}
	return nil
}

// recordStart records the step "started" before it acts, and proves that this run
// still holds the checkpoint: for most steps the conditional write of "started" is
// the proof; evident steps keep their start in memory and read the lock afresh
// (passive ones, which do not act, need no proof).
func (e *Engine) recordStart(ctx context.Context, s *turn) error {
	start := func(now time.Time) {
		s.rec.State = record.StateStarted
		s.rec.Attempts++
		e.tries[s.rec.ID]++
		s.rec.StartedAt = &now
		s.rec.FinishedAt = nil
		if s.reason != "" {
			s.rec.LastError = s.reason
		}
	}
	if err := e.apply(ctx, s.evident, start); err != nil {
		return err
	}
	if s.evident && !s.passive {
		// Nothing was written since the last proof: read it afresh.
		return e.fence(ctx, s.rec.ID)
	}
	return nil
}

// recheck asks the step's Recheck and the Guard right before the action. A *NotYet
// from Recheck undoes the start (nothing happened) and says to ask Safe again; any
// other error from either undoes it too and stops the run.
func (e *Engine) recheck(ctx context.Context, s *turn) (again bool, err error) {
	if rc, ok := s.st.(Rechecker); ok {
		err = rc.Recheck(ctx)
	}
	var ny *NotYet
	if errors.As(err, &ny) {
		e.Reporter.Waiting(s.rec.ID, "not acting yet: "+ny.Reason, 0)
		return true, e.undoStart(ctx, s)
	}
	if err == nil && e.Guard != nil && !s.passive {
		err = e.Guard(ctx, s.rec.ID)
	}
	if err != nil {
		// Nothing happened: the step is not left "started" (abort may go on).
		if uerr := e.undoStart(ctx, s); uerr != nil {
			e.Reporter.Warn(s.rec.ID, "could not record that the step did not start: "+uerr.Error())
		}
	}
	return false, err
}

// undoStart puts a step that did not act back to pending: in memory for evident steps,
// with a write for the others (their "started" is on the server).
func (e *Engine) undoStart(ctx context.Context, s *turn) error {
	return e.apply(ctx, s.evident, func(time.Time) {
		s.rec.State = record.StatePending
		s.rec.StartedAt = nil
		s.rec.Attempts--
		e.tries[s.rec.ID]--
	})
}

// apply applies a change to the checkpoint: in memory only (the next write carries
// it), or written at once.
func (e *Engine) apply(ctx context.Context, inMemory bool, change func(now time.Time)) error {
	if !inMemory {
		return e.commit(ctx, change)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	change(e.now())
	return nil
}

// act performs the step's action and sorts out its error; again says to ask the real
// world once more before another attempt.
func (e *Engine) act(ctx, actx context.Context, s *turn) (again bool, err error) {
	e.Reporter.StepStarted(s.rec.ID, s.desc, s.rec.Attempts)
	err = s.st.Do(actx)
	if _, keeps := s.st.(ObservationKeeper); !keeps {
		e.forget()
	}
	if err == nil {
		return false, nil
	}
	var rt *pub.Retryable
	var fatal *pub.Fatal
	var refused *NotStarted
	switch {
	case errors.As(err, &refused):
		return false, e.refused(ctx, s.rec, err, refused.Code)
	case errors.As(err, &fatal):
		e.recordError(ctx, s.rec, err)
		return false, err
	case errors.As(err, &rt):
		e.recordError(ctx, s.rec, err)
		return true, e.retryLater(ctx, s.rec.ID, fmt.Sprintf("%s failed (attempt %d): %v; retrying", s.desc, s.rec.Attempts, err))
	case ctx.Err() != nil:
		return false, ErrInterrupted
	case e.transient(err):
		e.recordError(ctx, s.rec, err)
		if e.triesOf(s.rec.ID) >= e.MaxAttempts {
			return false, &pub.Fatal{Code: 4, Err: fmt.Errorf("%s: the API server keeps failing: %w", s.desc, err)}
		}
		return true, e.retryLater(ctx, s.rec.ID, fmt.Sprintf("%s: transient API error (attempt %d): %v; retrying", s.desc, s.rec.Attempts, err))
	default:
		e.recordError(ctx, s.rec, err)
		return false, fmt.Errorf("%s: %w", s.desc, err)
	}
}

// refused records an action refused before anything happened: the step is pending
// again, with the refusal as its error, and the run stops with code.
func (e *Engine) refused(ctx context.Context, rec *record.Step, err error, code int) error {
	e.Reporter.StepFailed(rec.ID, rec.ID, err)
	if serr := e.commit(ctx, func(time.Time) {
		rec.State = record.StatePending
		rec.StartedAt = nil
		rec.LastError = err.Error()
		e.lastErr[rec.ID] = err.Error()
	}); serr != nil {
		// The checkpoint still says "started": resume asks the world, abort
		// refuses until it does. Say so rather than hide it.
		e.Reporter.Warn(rec.ID, "could not record the refusal in the checkpoint (the step stays \"started\"): "+serr.Error())
	}
	return &pub.Fatal{Code: code, Err: err}
}

// retryLater warns that the action will be attempted again and waits a backoff first.
func (e *Engine) retryLater(ctx context.Context, id, warning string) error {
	e.Reporter.Warn(id, warning)
	return e.sleep(ctx, backoff(e.Poll, e.triesOf(id)))
}

// waitFailed handles an error met while waiting for the step's effect: a *Redo goes
// back to an earlier step, anything else stops the run.
func (e *Engine) waitFailed(ctx context.Context, s *turn, err error) (int, error) {
	var redo *Redo
	if errors.As(err, &redo) {
		return e.redo(s, redo)
	}
	if errors.Is(err, ErrInterrupted) || ctx.Err() != nil {
		return s.i, ErrInterrupted
	}
	e.recordError(ctx, s.rec, err)
	return s.i, err
}

// redo puts the steps from redo.StepID to s back to pending and says to go back there;
// that step's action runs again without asking Done.
func (e *Engine) redo(s *turn, redo *Redo) (int, error) {
	j := e.index(redo.StepID)
	if j < 0 || j > s.i {
		return s.i, fmt.Errorf("step %s asked to redo unknown step %s", s.rec.ID, redo.StepID)
	}
	e.Reporter.Warn(s.rec.ID, fmt.Sprintf("%s; going back to %s", redo.Reason, redo.StepID))
	e.mu.Lock()
	for k := j; k <= s.i; k++ {
		e.CP.Steps[k].State = record.StatePending
	}
	// The reason is the step's last error: markDone cleared the one its action met, and
	// a later run must be able to name it.
	e.CP.Steps[j].LastError = redo.Reason
	e.lastErr[redo.StepID] = redo.Reason
	e.mu.Unlock()
	e.forced[j] = redo.Reason
	return j, nil
}

// finish records the step done and reports it.
func (e *Engine) finish(s *turn, already bool) {
	e.markDone(s.rec)
	e.Reporter.StepDone(s.rec.ID, s.desc, already)
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
		case !e.transient(err) || attempt >= e.MaxAttempts:
			return &pub.Fatal{Code: 4, Err: fmt.Errorf("cannot prove this run still holds operation %s before %s: %w", e.CP.OperationID, id, err)}
		}
		e.Reporter.Waiting(id, "cannot check the lock yet ("+err.Error()+"), retrying", 0)
		if err := e.sleep(ctx, backoff(e.Poll, attempt)); err != nil {
			return err
		}
	}
}

// lost is the error that stops a run whose checkpoint another run took over.
func (e *Engine) lost(err error) error {
	return &pub.Fatal{Code: 4, Err: fmt.Errorf("this run no longer holds operation %s and stopped before its next action: %w", e.CP.OperationID, err)}
}

// safe asks Safe, retrying while the answer is a transient API error.
func (e *Engine) safe(ctx context.Context, id string, st pub.Step) error {
	for attempt := 1; ; attempt++ {
		err := st.Safe(ctx)
		if err == nil || !e.transient(err) || attempt >= e.MaxAttempts {
			return err
		}
		e.Reporter.Waiting(id, "cannot check safety yet ("+err.Error()+"), retrying", 0)
		if err := e.sleep(ctx, backoff(e.Poll, attempt)); err != nil {
			return err
		}
	}
}

// doneWithRetry asks Done until it answers, within StepTimeout. Unknown is never done.
func (e *Engine) doneWithRetry(ctx context.Context, id string, st pub.Step) (bool, error) {
	start := e.now()
	for {
		done, err := st.Done(ctx)
		if err == nil {
			return done, nil
		}
		if ctx.Err() != nil {
			return false, ErrInterrupted
		}
		var fatal *pub.Fatal
		if errors.As(err, &fatal) {
			return false, err
		}
		if e.now().Sub(start) > e.StepTimeout {
			return false, &pub.Fatal{Code: 4, Err: fmt.Errorf("timed out after %s: cannot tell whether %s is done: %w", e.StepTimeout, id, err)}
		}
		e.Reporter.Waiting(id, "state unknown ("+err.Error()+"), reading again", e.now().Sub(start))
		if err := e.sleep(ctx, e.Poll); err != nil {
			return false, err
		}
	}
}

// wait blocks until the step's effect is visible.
func (e *Engine) wait(ctx context.Context, id string, st pub.Step) error {
	if r, ok := st.(Redoer); ok {
		if redo := r.PendingRedo(); redo != nil {
			return redo
		}
	}
	wctx, cancel := context.WithTimeout(ctx, e.StepTimeout)
	defer cancel()
	if w, ok := st.(Waiter); ok {
		err := w.Wait(wctx)
		if err != nil && ctx.Err() == nil && wctx.Err() != nil {
			return &pub.Fatal{Code: 4, Err: fmt.Errorf("timed out after %s waiting for %s: %w", e.StepTimeout, id, err)}
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
			return &pub.Fatal{Code: 4, Err: fmt.Errorf("timed out after %s waiting for %s", e.StepTimeout, id)}
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
			return &pub.Fatal{Code: 4, Err: fmt.Errorf("timed out after %s waiting for %s", e.StepTimeout, id)}
		}
	}
}

// markDone records a step as done in memory only: the next write (the next step's
// "started", an error, a release, or clearing the checkpoint at the end) carries it. A
// crash before that leaves the step "started", which resume re-checks in the real world
// anyway — and the run saves one API write per step.
func (e *Engine) markDone(rec *record.Step) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if rec.State != record.StateDone {
		now := e.now()
		rec.State = record.StateDone
		rec.FinishedAt = &now
		rec.LastError = ""
	}
}

// recordError keeps the last error in the checkpoint (best effort: the run is stopping
// or retrying anyway, and the step stays "started", which resume re-checks).
func (e *Engine) recordError(ctx context.Context, rec *record.Step, err error) {
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
		if !e.transient(err) || attempt >= 4 {
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
	if e.transient(err) {
		// The last good checkpoint is on the server and nothing acted after it: stop
		// like an interruption, resume continues.
		return &pub.Fatal{Code: 4, Err: fmt.Errorf("cannot write the checkpoint (the API server keeps failing): %w", err)}
	}
	return &pub.Fatal{Code: 1, Err: err}
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
			if ctx.Err() != nil {
				return // a tick that raced the stop: the run is over
			}
			if err := e.commit(ctx, func(time.Time) {}); err != nil {
				if e.carrierDeleted(err) {
					return
				}
				e.Reporter.Warn(e.Current(), "could not renew the lease, stopping at the next safe point: "+err.Error())
				e.stopWith(err)
				return
			}
		}
	}
}

// carrierDeleted reports whether err says the checkpoint's resource is gone while the
// step running deletes it on purpose (CarrierDeleter).
func (e *Engine) carrierDeleted(err error) bool {
	if !apierrors.IsNotFound(err) {
		return false
	}
	e.mu.Lock()
	st := e.Steps[e.current]
	e.mu.Unlock()
	_, ok := st.(CarrierDeleter)
	return ok
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

// transient tells an API error worth retrying.
func (e *Engine) transient(err error) bool {
	return e.Transient != nil && e.Transient(err)
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

func describe(st pub.Step, id string) string {
	if d, ok := st.(pub.Describer); ok {
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
func (e *Engine) lastError(rec *record.Step, reason string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range []string{e.lastErr[rec.ID], reason, rec.LastError} {
		if s != "" {
			return s
		}
	}
	return "none recorded"
}
