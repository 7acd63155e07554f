package operation

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Runner runs (or resumes) a checkpointed operation to its end.
type Runner struct {
	// Kind is the checkpoint's kind (Registry.Of).
	Kind pub.Kind
	// World is what the steps know of the cluster, its readers and the run's settings
	// (the CLI's session builds it: internal/cli/session.go, stepWorld); the engine
	// takes its Reporter, Poll and Now from it too, so each is set once.
	World       *steps.World
	Store       *checkpoint.Store
	StepTimeout time.Duration
	Lease       time.Duration
	// Until, when set, runs the steps up to the one with this ID only and keeps the
	// checkpoint (Run returns a nil LastOperation); Forbid, when set, is asked right
	// before every action and refuses the ones this run must not take (abort finishing
	// a node never starts a removal: FinishFirst).
	Until  string
	Forbid func(id string) error

	eng *engine.Engine
}

// CurrentStep is the step being worked on (for interruption messages).
func (r *Runner) CurrentStep() string {
	if r.eng == nil {
		return ""
	}
	return r.eng.Current()
}

// Run executes the remaining steps of cp, then clears the checkpoint and records the
// last operation.
func (r *Runner) Run(ctx context.Context, cp *record.Checkpoint) (*checkpoint.LastOperation, error) {
	w := r.World
	if w == nil || w.Reporter == nil {
		return nil, errors.New("a run needs the steps' world and its reporter")
	}
	w.CP = cp
	impl, err := BuildSteps(r.Kind, w)
	if err != nil {
		return nil, err
	}
	r.eng = &engine.Engine{CP: cp, Steps: impl, Store: r.Store, Reporter: w.Reporter, Now: w.Now, Poll: w.Poll, StepTimeout: r.StepTimeout, MaxAttempts: 10, Lease: r.Lease, Transient: kube.Transient, Forget: w.Forget}
	w.Amend = r.eng.Amend
	w.NoteProgress = r.eng.NoteProgress
	readAfterLock(ctx, cp, impl)
	// The paused operator is followed by one watch for the whole run (operatorguard.go).
	if guard := steps.NewOperatorGuard(ctx, w); guard != nil {
		defer guard.Stop()
		r.eng.Guard = guard.Check
	}
	// An operator that acts is followed by one watch per kind of evidence for the whole
	// run (steps.EvidenceFeed): its waits react to the change itself. Its operation ends
	// once it agrees (steps.AwaitSettled).
	if feed := steps.NewEvidenceFeed(ctx, w); feed != nil {
		defer feed.Stop()
	}
	r.eng.Settle = func(ctx context.Context) error { return steps.AwaitSettled(ctx, w) }
	r.eng.Until = r.Until
	if r.Forbid != nil {
		inner := r.eng.Guard
		r.eng.Guard = func(ctx context.Context, id string) error {
			if err := r.Forbid(id); err != nil {
				return err
			}
			if inner == nil {
				return nil
			}
			return inner(ctx, id)
		}
	}
	if err := r.eng.Run(ctx); err != nil {
		var lost *pub.Fatal
		if !(errors.As(err, &lost) && errors.Is(err, checkpoint.ErrLost)) {
			if rerr := r.eng.Release(ctx); rerr != nil {
				w.Reporter.Warn("", "could not mark the checkpoint as released: "+rerr.Error())
			}
		}
		return nil, err
	}
	if r.Until != "" {
		return nil, nil
	}
	now := time.Now().UTC()
	if w.Now != nil {
		now = w.Now().UTC()
	}
	last := checkpoint.LastOperation{
		OperationID: cp.OperationID, Kind: cp.Kind, Result: "succeeded",
		Summary:   r.Kind.Summary(cp),
		StartedBy: cp.StartedBy, StartedAt: cp.StartedAt, FinishedAt: now,
		Warnings: w.Warnings(),
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := r.Store.Finish(fctx, cp, last); err != nil {
		// A cluster resource the operation itself deleted (remove-dc of a
		// CassandraDatacenter) took its checkpoint with it: every step is done and
		// verified, nothing is left to clear.
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("every step is done but the checkpoint could not be cleared: %w", err)
		}
	}
	return &last, nil
}

// readsAfterLock is a step whose recheck's slowest read (the ring, through exec) may
// start as soon as the run holds the lock.
type readsAfterLock interface{ ReadAfterLock(ctx context.Context) }

// readAfterLock starts the first step's recheck read when nothing of the operation has
// started yet (a checkpoint just written, or never acted on): the checkpoint's write
// that proved the lock came last, so the read may start now, beside the run's watches
// and the step's own questions, instead of after them. The step takes it up only if
// nothing was forgotten meanwhile (a pause, an action), else reads again. A resumed
// operation's first step may be found done: it starts nothing ahead.
func readAfterLock(ctx context.Context, cp *record.Checkpoint, impl map[string]pub.Step) {
	if len(cp.Steps) == 0 {
		return
	}
	for _, s := range cp.Steps {
		if s.State != record.StatePending || s.Attempts > 0 {
			return
		}
	}
	if s, ok := impl[cp.Steps[0].ID].(readsAfterLock); ok {
		s.ReadAfterLock(ctx)
	}
}
