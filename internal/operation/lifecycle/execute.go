package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine/events"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// RefuseBusy refuses while the operator is busy with the cluster or it is being deleted.
func (l *Lifecycle) RefuseBusy(ctx context.Context) error {
	if err := l.refuseDeleting("start an operation"); err != nil {
		return err
	}
	busy := append([]string{}, l.Cluster.Busy...)
	if pods, err := l.Adapter.BusyPods(ctx, l.Cluster.Namespace, l.Cluster.Name); err != nil {
		return fmt.Errorf("cannot check %s's pod operations: %w", l.Adapter.Title(), err)
	} else {
		busy = append(busy, pods...)
	}
	if len(busy) > 0 {
		return exit.Refusedf("%s is busy with cluster %s: %s; wait until it is idle (kubectl cassandra status %s), nothing changed", l.Adapter.Title(), l.Cluster.Name, strings.Join(busy, "; "), l.Cluster.Name)
	}
	return nil
}

// OperatorToPause finds the operator Deployment the plan must pause: the one named with
// --operator, or the operator Deployment that manages the namespace and runs, or that other
// operations hold paused (this one then joins them: the operator is restored only when
// the last one ends, checkpoint.PausedByAnnotation). With pause disabled a running (or
// held) operator is refused instead.
func (l *Lifecycle) OperatorToPause(ctx context.Context, named string, pause bool) (*checkpoint.PausedOperator, error) {
	if _, acts := l.Adapter.(operator.Scaler); acts {
		return nil, l.requireActingOperator(ctx, named)
	}
	var ns, name string
	if named != "" {
		parts := strings.Split(named, "/")
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			return nil, exit.Usagef("--operator must be NAMESPACE/NAME, got %q", named)
		}
		ns, name = parts[0], parts[1]
	} else {
		if !pause {
			return nil, l.refuseRunningOperator(ctx)
		}
		op, err := l.activeOperator(ctx)
		if op == nil || err != nil {
			return nil, err
		}
		ns, name = op.Namespace, op.Name
	}
	d, err := l.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, exit.Usagef("operator Deployment %s/%s not found; nothing changed", ns, name)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read operator Deployment %s/%s: %w", ns, name, err)
	}
	holders, err := checkpoint.PauseHolders(d.Annotations)
	if err != nil {
		return nil, exit.Refusedf("operator Deployment %s/%s: %v; whether another operation holds it paused is unknown: fix or remove the annotation (kubectl annotate deployment -n %s %s %s-); nothing changed",
			ns, name, err, ns, name, checkpoint.PausedByAnnotation)
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	if replicas == 0 && len(holders) == 0 {
		return nil, nil // stopped by someone else: nothing to pause or restore
	}
	if !pause {
		return nil, l.refuseRunningOperator(ctx)
	}
	p := &checkpoint.PausedOperator{Namespace: ns, Name: name, UID: string(d.UID), Replicas: replicas}
	if len(holders) > 0 {
		// Joining: restore what the operator had before the first pause. A holder of this
		// cluster whose operation is gone is taken over instead (the pause step drops it).
		p.Replicas = holders[0].Replicas
		stale := map[string]bool{}
		for _, h := range steps.JudgeHolders(ctx, l.pauseJudge(), holders, "") {
			stale[h.OperationID] = h.Namespace == l.Cluster.Namespace && h.Cluster == l.Cluster.Name
		}
		for _, h := range holders {
			if stale[h.OperationID] {
				p.Adopted = append(p.Adopted, h)
			} else {
				p.Joined = append(p.Joined, h)
			}
		}
	}
	op, isOperator := l.Adapter.ControllerOf(d)
	if named != "" && !isOperator {
		op = operator.Controller{Namespace: d.Namespace, Name: d.Name}
		op.Watch = l.Cluster.Namespace // named by the user: assume it manages this namespace
	}
	others, err := l.Adapter.ManagedClusters(ctx, op)
	switch {
	case apierrors.IsForbidden(err):
		p.UnmanagedUnknown = fmt.Sprintf("it manages %s and listing %ss there is forbidden to you", op.Scope(), l.Adapter.Kind())
	case err != nil:
		p.UnmanagedUnknown = fmt.Sprintf("it manages %s and listing %ss there failed: %v", op.Scope(), l.Adapter.Kind(), err)
	}
	for _, c := range others {
		if c.Namespace != l.Cluster.Namespace || c.Name != l.Cluster.Name {
			p.Unmanaged = append(p.Unmanaged, c.Namespace+"/"+c.Name)
		}
	}
	return p, nil
}

// activeOperator is the one operator managing the cluster's namespace that runs or
// that other operations hold paused (nil when none; several are refused).
func (l *Lifecycle) activeOperator(ctx context.Context) (*operator.Controller, error) {
	all, err := l.Adapter.Operators(ctx, l.Cluster.Namespace)
	if err != nil {
		return nil, err
	}
	var ops []operator.Controller
	for _, op := range all {
		if op.Running() || len(op.PausedBy) > 0 {
			ops = append(ops, op)
		}
	}
	switch len(ops) {
	case 0:
		return nil, nil
	case 1:
		return &ops[0], nil
	}
	var names []string
	for _, op := range ops {
		names = append(names, op.String())
	}
	return nil, exit.Refusedf("several %s operators manage namespace %s (%s): name the one to pause with --operator NAMESPACE/NAME; nothing changed", l.Adapter.Title(), l.Cluster.Namespace, strings.Join(names, ", "))
}

// checkpointError explains an unusable checkpoint.
func (l *Lifecycle) CheckpointError(err error) error {
	switch {
	case errors.Is(err, checkpoint.ErrNewerSchema):
		return exit.Refusedf("%v; nothing changed", err)
	case errors.Is(err, checkpoint.ErrUnknownKind), errors.Is(err, checkpoint.ErrOtherOperator):
		// Not corrupt: another build may hold it. Removing it would lose its progress.
		return exit.Refusedf("%v; nothing changed. Finish it with the kubectl-cassandra that started it (see who: kubectl get %s -n %s %s -o jsonpath='{.metadata.annotations.%s}')",
			err, l.Adapter.GroupResource(), l.Cluster.Namespace, l.Cluster.Name, strings.ReplaceAll(checkpoint.Annotation, ".", `\.`))
	case errors.Is(err, checkpoint.ErrCorrupt), errors.Is(err, checkpoint.ErrOtherCluster):
		return fmt.Errorf("%v. Nothing changed. Inspect it with: kubectl get %s -n %s %s -o jsonpath='{.metadata.annotations.%s}'; "+
			"if no operation is really in flight, remove it with: kubectl annotate %s -n %s %s %s-",
			err, l.Adapter.GroupResource(), l.Cluster.Namespace, l.Cluster.Name, strings.ReplaceAll(checkpoint.Annotation, ".", `\.`),
			l.Adapter.GroupResource(), l.Cluster.Namespace, l.Cluster.Name, checkpoint.Annotation)
	}
	return fmt.Errorf("cannot read the checkpoint of %s: %w", l.Cluster.Name, err)
}

// execute runs the checkpoint to its end and maps the outcome to output and exit code.
func (l *Lifecycle) execute(ctx context.Context, cp *checkpoint.Checkpoint, f RunFlags) error {
	kind, err := l.Kinds.Of(cp)
	if err != nil {
		return err
	}
	runner, progress, flush := l.newRunner(cp, f, kind)
	defer flush()
	progress.Info(fmt.Sprintf("operation %s: %d steps, checkpoint in annotation %s of %s/%s", cp.OperationID, len(cp.Steps), checkpoint.Annotation, cp.Namespace, cp.Cluster))
	last, err := runner.Run(ctx, cp)
	if err != nil {
		step := runner.CurrentStep()
		if errors.Is(err, engine.ErrInterrupted) {
			return exit.Interruptedf("interrupted during %s; the checkpoint is saved. run: %s", nonEmptyStep(step), l.ResumeHint())
		}
		var fatal *engine.Fatal
		code := exit.Error
		if errors.As(err, &fatal) && fatal.Code != 0 {
			code = fatal.Code
		}
		var refused *steps.RefusedError
		if errors.As(err, &refused) {
			return exit.WithCode(exit.Refused, fmt.Errorf("%w\n%s", err, l.refusalNext(kind, cp, nonEmptyStep(step))))
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
		if code == exit.Refused {
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
func (l *Lifecycle) newRunner(cp *checkpoint.Checkpoint, f RunFlags, kind operation.Kind) (*operation.Runner, *output.Progress, func()) {
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
