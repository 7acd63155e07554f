package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine/events"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// execute runs the checkpoint to its end and maps the outcome to output and exit code.
func (l *Lifecycle) execute(ctx context.Context, cp *record.Checkpoint, f RunFlags) error {
	return l.executeReading(ctx, cp, f, nil)
}

// executeReading is execute with the pods its plan read the ring from
// (operation.Planner.RingReaders): the run asks them first (steps.World.SeedReaders).
func (l *Lifecycle) executeReading(ctx context.Context, cp *record.Checkpoint, f RunFlags, readers []string) error {
	kind, err := l.Kinds.Of(cp)
	if err != nil {
		return err
	}
	runner, progress, flush := l.newRunner(cp, f, kind)
	defer flush()
	runner.World.SeedReaders(readers)
	progress.Info(fmt.Sprintf("operation %s: %d steps, checkpoint in annotation %s of %s/%s", cp.OperationID, len(cp.Steps), checkpoint.Annotation, cp.Namespace, cp.Cluster))
	last, err := runner.Run(ctx, cp)
	if err != nil {
		step := runner.CurrentStep()
		if errors.Is(err, engine.ErrInterrupted) {
			return exit.Interruptedf("interrupted during %s; the checkpoint is saved. run: %s", nonEmptyStep(step), l.ResumeHint())
		}
		var fatal *pub.Fatal
		code := exit.Error
		if errors.As(err, &fatal) && fatal.Code != 0 {
			code = fatal.Code
		}
		var refused *steps.RefusedError
		if errors.As(err, &refused) {
			return exit.WithCode(pub.ExitRefused, fmt.Errorf("%w\n%s", err, l.refusalNext(kind, cp, nonEmptyStep(step))))
		}
		if errors.Is(err, checkpoint.ErrRemoved) {
			// Nobody holds it: the world is as the steps left it, and a command run again
			// plans from there.
			return exit.WithCode(exit.Interrupted, fmt.Errorf("%w\nThe checkpoint of operation %s was removed from %s %s/%s while this run held it (a GitOps sync or a `kubectl annotate`?); nobody holds it now. "+
				"This run stopped at step %s before acting again. Run the command that started it again: it plans from what the cluster shows now, finishes a node left half removed and takes over the operator's pause. Check with: %s",
				err, cp.OperationID, l.Adapter.Kind(), cp.Namespace, cp.Cluster, nonEmptyStep(step), l.StatusHint()))
		}
		if errors.Is(err, checkpoint.ErrLost) {
			// Another run holds the checkpoint: resuming from here would fight it.
			return exit.WithCode(exit.Interrupted, fmt.Errorf("%w\nAnother run holds operation %s now; this run stopped at step %s and changed nothing after it lost the lock. Check with: %s",
				err, cp.OperationID, nonEmptyStep(step), l.StatusHint()))
		}
		if code == pub.ExitRefused {
			// Not "nothing changed": earlier steps may have run. Keep exit 3 for scripts
			// but say where things stand.
			return exit.WithCode(code, fmt.Errorf("%w\nThe operation stopped at step %s; the checkpoint is kept. Check with: %s; then run: %s", err, nonEmptyStep(step), l.StatusHint(), l.ResumeHint()))
		}
		return exit.WithCode(code, fmt.Errorf("%w\nThe operation stopped at step %s; the checkpoint is kept and every finished step stays done. Check with: %s; then run: %s", err, nonEmptyStep(step), l.StatusHint(), l.ResumeHint()))
	}
	return l.UI.Done(last)
}

// newRunner is the runner of cp's steps with the run's progress display and events
// (flush sends the events still buffered).
func (l *Lifecycle) newRunner(cp *record.Checkpoint, f RunFlags, kind pub.Kind) (*operation.Runner, *output.Progress, func()) {
	progress := output.NewProgress(l.ErrOut, l.Color)
	progress.Now = l.Now
	progress.Mode, progress.PlainEvery = f.Progress, l.ProgressEvery
	self := cp.Holder
	reporter := &events.Reporter{
		Inner: progress, Client: l.Kube, Host: self.Host, Now: l.Now,
		Object: events.NewObjectReference(l.Cluster.APIVersion, l.Adapter.Kind(), cp.Namespace, cp.Cluster, cp.ClusterUID),
	}
	w := l.stepWorld(cp)
	w.Reporter, w.Poll, w.StallAfter, w.SampleEvery, w.SampleMax = reporter, f.Poll, f.StallAfter, l.SampleEvery, l.SampleMax
	if d, ok := l.Store.Obj.(interface{ Deleting() bool }); ok {
		w.Deleting = d.Deleting
	}
	runner := &operation.Runner{
		Kind: kind, World: w, Store: l.Store,
		Lease:       time.Duration(self.LeaseSeconds) * time.Second,
		StepTimeout: f.StepTimeout,
	}
	return runner, progress, reporter.Flush
}

func nonEmptyStep(s string) string {
	if s == "" {
		return "(between steps)"
	}
	return s
}
