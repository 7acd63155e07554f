package cli

import (
	"bufio"
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
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// refuseBusy refuses while the operator is busy with the cluster or it is being deleted.
func (o *Options) refuseBusy(ctx context.Context, s *session) error {
	if err := refuseDeleting(s, "start an operation"); err != nil {
		return err
	}
	busy := append([]string{}, s.cluster.Busy...)
	if pods, err := s.adapter.BusyPods(ctx, s.cluster.Namespace, s.cluster.Name); err != nil {
		return fmt.Errorf("cannot check %s's pod operations: %w", s.adapter.Title(), err)
	} else {
		busy = append(busy, pods...)
	}
	if len(busy) > 0 {
		return exit.Refusedf("%s is busy with cluster %s: %s; wait until it is idle (kubectl cassandra status %s), nothing changed", s.adapter.Title(), s.cluster.Name, strings.Join(busy, "; "), s.cluster.Name)
	}
	return nil
}

// operatorToPause finds the operator Deployment the plan must pause: the one named with
// --operator, or the operator Deployment that manages the namespace and runs, or that other
// operations hold paused (this one then joins them: the operator is restored only when
// the last one ends, checkpoint.PausedByAnnotation). With pause disabled a running (or
// held) operator is refused instead.
func (o *Options) operatorToPause(ctx context.Context, s *session, named string, pause bool) (*checkpoint.PausedOperator, error) {
	if _, acts := s.adapter.(operator.Scaler); acts {
		return nil, o.requireActingOperator(ctx, s, named)
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
			return nil, o.refuseRunningOperator(ctx, s)
		}
		op, err := activeOperator(ctx, s)
		if op == nil || err != nil {
			return nil, err
		}
		ns, name = op.Namespace, op.Name
	}
	d, err := s.c.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
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
		return nil, o.refuseRunningOperator(ctx, s)
	}
	p := &checkpoint.PausedOperator{Namespace: ns, Name: name, UID: string(d.UID), Replicas: replicas}
	if len(holders) > 0 {
		// Joining: restore what the operator had before the first pause. A holder of this
		// cluster whose operation is gone is taken over instead (the pause step drops it).
		p.Replicas = holders[0].Replicas
		stale := map[string]bool{}
		for _, h := range steps.JudgeHolders(ctx, s.pauseJudge(), holders, "") {
			stale[h.OperationID] = h.Namespace == s.cluster.Namespace && h.Cluster == s.cluster.Name
		}
		for _, h := range holders {
			if stale[h.OperationID] {
				p.Adopted = append(p.Adopted, h)
			} else {
				p.Joined = append(p.Joined, h)
			}
		}
	}
	op, isOperator := s.adapter.ControllerOf(d)
	if named != "" && !isOperator {
		op = operator.Controller{Namespace: d.Namespace, Name: d.Name}
		op.Watch = s.cluster.Namespace // named by the user: assume it manages this namespace
	}
	others, err := s.adapter.ManagedClusters(ctx, op)
	switch {
	case apierrors.IsForbidden(err):
		p.UnmanagedUnknown = fmt.Sprintf("it manages %s and listing %ss there is forbidden to you", op.Scope(), s.adapter.Kind())
	case err != nil:
		p.UnmanagedUnknown = fmt.Sprintf("it manages %s and listing %ss there failed: %v", op.Scope(), s.adapter.Kind(), err)
	}
	for _, c := range others {
		if c.Namespace != s.cluster.Namespace || c.Name != s.cluster.Name {
			p.Unmanaged = append(p.Unmanaged, c.Namespace+"/"+c.Name)
		}
	}
	return p, nil
}

// activeOperator is the one operator managing the cluster's namespace that runs or
// that other operations hold paused (nil when none; several are refused).
func activeOperator(ctx context.Context, s *session) (*operator.Controller, error) {
	all, err := s.adapter.Operators(ctx, s.cluster.Namespace)
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
	return nil, exit.Refusedf("several %s operators manage namespace %s (%s): name the one to pause with --operator NAMESPACE/NAME; nothing changed", s.adapter.Title(), s.cluster.Namespace, strings.Join(names, ", "))
}

// confirm asks on the terminal unless --yes; without a terminal it refuses.
func (o *Options) confirm(yes bool, what string) error {
	if yes {
		return nil
	}
	if !output.IsTerminal(o.In) {
		return exit.Usagef("%s needs confirmation and stdin is not a terminal: pass --yes to proceed non-interactively; nothing changed", strings.ToLower(what))
	}
	fmt.Fprintf(o.ErrOut, "%s? [y/N]: ", what)
	line, _ := bufio.NewReader(o.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return exit.Usagef("not confirmed; nothing changed")
}

// checkpointError explains an unusable checkpoint.
func checkpointError(s *session, err error) error {
	switch {
	case errors.Is(err, checkpoint.ErrNewerSchema):
		return exit.Refusedf("%v; nothing changed", err)
	case errors.Is(err, checkpoint.ErrUnknownKind), errors.Is(err, checkpoint.ErrOtherOperator):
		// Not corrupt: another build may hold it. Removing it would lose its progress.
		return exit.Refusedf("%v; nothing changed. Finish it with the kubectl-cassandra that started it (see who: kubectl get %s -n %s %s -o jsonpath='{.metadata.annotations.%s}')",
			err, s.adapter.GroupResource(), s.cluster.Namespace, s.cluster.Name, strings.ReplaceAll(checkpoint.Annotation, ".", `\.`))
	case errors.Is(err, checkpoint.ErrCorrupt), errors.Is(err, checkpoint.ErrOtherCluster):
		return fmt.Errorf("%v. Nothing changed. Inspect it with: kubectl get %s -n %s %s -o jsonpath='{.metadata.annotations.%s}'; "+
			"if no operation is really in flight, remove it with: kubectl annotate %s -n %s %s %s-",
			err, s.adapter.GroupResource(), s.cluster.Namespace, s.cluster.Name, strings.ReplaceAll(checkpoint.Annotation, ".", `\.`),
			s.adapter.GroupResource(), s.cluster.Namespace, s.cluster.Name, checkpoint.Annotation)
	}
	return fmt.Errorf("cannot read the checkpoint of %s: %w", s.cluster.Name, err)
}

// execute runs the checkpoint to its end and maps the outcome to output and exit code.
func (o *Options) execute(ctx context.Context, s *session, cp *checkpoint.Checkpoint, f *runFlags) error {
	kind, err := o.Kinds.Of(cp)
	if err != nil {
		return err
	}
	runner, progress, flush := o.newRunner(s, cp, f, kind)
	defer flush()
	progress.Info(fmt.Sprintf("operation %s: %d steps, checkpoint in annotation %s of %s/%s", cp.OperationID, len(cp.Steps), checkpoint.Annotation, cp.Namespace, cp.Cluster))
	last, err := runner.Run(ctx, cp)
	if err != nil {
		step := runner.CurrentStep()
		if errors.Is(err, engine.ErrInterrupted) {
			return exit.Interruptedf("interrupted during %s; the checkpoint is saved. run: %s", nonEmptyStep(step), s.resumeHint())
		}
		var fatal *engine.Fatal
		code := exit.Error
		if errors.As(err, &fatal) && fatal.Code != 0 {
			code = fatal.Code
		}
		var refused *steps.RefusedError
		if errors.As(err, &refused) {
			return exit.WithCode(exit.Refused, fmt.Errorf("%w\n%s", err, refusalNext(s, kind, cp, nonEmptyStep(step))))
		}
		if errors.Is(err, checkpoint.ErrRemoved) {
			// Nobody holds it: the world is as the steps left it, and a command run again
			// plans from there.
			return exit.WithCode(exit.Interrupted, fmt.Errorf("%w\nThe checkpoint of operation %s was removed from %s %s/%s while this run held it (a GitOps sync or a `kubectl annotate`?); nobody holds it now. "+
				"This run stopped at step %s before acting again. Run the command that started it again: it plans from what the cluster shows now, finishes a node left half removed and takes over the operator's pause. Check with: %s",
				err, cp.OperationID, s.adapter.Kind(), cp.Namespace, cp.Cluster, nonEmptyStep(step), s.statusHint()))
		}
		if errors.Is(err, checkpoint.ErrLost) {
			// Another run holds the checkpoint: resuming from here would fight it.
			return exit.WithCode(exit.Interrupted, fmt.Errorf("%w\nAnother run holds operation %s now; this run stopped at step %s and changed nothing after it lost the lock. Check with: %s",
				err, cp.OperationID, nonEmptyStep(step), s.statusHint()))
		}
		if code == exit.Refused {
			// Not "nothing changed": earlier steps may have run. Keep exit 3 for scripts
			// but say where things stand.
			return exit.WithCode(code, fmt.Errorf("%w\nThe operation stopped at step %s; the checkpoint is kept. Check with: %s; then run: %s", err, nonEmptyStep(step), s.statusHint(), s.resumeHint()))
		}
		return exit.WithCode(code, fmt.Errorf("%w\nThe operation stopped at step %s; the checkpoint is kept and every finished step stays done. Check with: %s; then run: %s", err, nonEmptyStep(step), s.statusHint(), s.resumeHint()))
	}
	if f.output != "text" {
		return output.Print(o.Out, f.output, map[string]any{"result": last.Result, "operationID": last.OperationID, "summary": last.Summary, "startedAt": last.StartedAt, "finishedAt": last.FinishedAt, "next": s.statusHint()})
	}
	fmt.Fprintf(o.Out, "Done: %s (operation %s, %s).\n", last.Summary, last.OperationID, last.FinishedAt.Sub(last.StartedAt).Round(time.Second))
	return nil
}

// newRunner is the runner of cp's steps with the run's progress display and events
// (flush sends the events still buffered).
func (o *Options) newRunner(s *session, cp *checkpoint.Checkpoint, f *runFlags, kind pub.Kind) (*operation.Runner, *output.Progress, func()) {
	progress := output.NewProgress(o.ErrOut, o.Color)
	progress.Now = o.Now
	progress.Mode, progress.PlainEvery = f.progress, o.ProgressEvery
	self := cp.Holder
	reporter := &events.Reporter{
		Inner: progress, Client: s.c.Kube, Host: self.Host, Now: o.Now,
		Object: events.NewObjectReference(s.cluster.APIVersion, s.adapter.Kind(), cp.Namespace, cp.Cluster, cp.ClusterUID),
	}
	w := s.stepWorld(cp, o.Now)
	w.Reporter, w.Poll, w.StallAfter, w.SampleEvery, w.SampleMax = reporter, f.pollInterval, f.stallAfter, o.SampleEvery, o.SampleMax
	if d, ok := s.store.Obj.(interface{ Deleting() bool }); ok {
		w.Deleting = d.Deleting
	}
	runner := &operation.Runner{
		Kind: kind, World: w, Store: s.store,
		Lease:       time.Duration(self.LeaseSeconds) * time.Second,
		StepTimeout: f.stepTimeout,
	}
	return runner, progress, reporter.Flush
}

func nonEmptyStep(s string) string {
	if s == "" {
		return "(between steps)"
	}
	return s
}

// operatorState is the operator's per-rack status of cp's cluster, for the steps that
// repair it (nil when the operator keeps none).
func operatorState(a operator.Adapter, cp *checkpoint.Checkpoint, now func() time.Time) operator.OperatorState {
	if r, ok := a.(operator.StatusRepair); ok {
		return r.OperatorStatus(cp.Namespace, cp.Cluster, now)
	}
	return nil
}
