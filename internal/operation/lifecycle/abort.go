package lifecycle

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// AbortFlags are abort's settings: a run's (abort --grow-back and the finishing of a
// node half removed run steps) and --grow-back.
type AbortFlags struct {
	RunFlags
	GrowBack bool
}

// Aborted is how an abort that stopped the operation ended (nil from Abort: it ended
// by growing the racks back, a run the UI said the end of).
type Aborted struct {
	OperationID, Summary string
}

// Abort stops operation cp at a safe point, leaving the cluster consistent: the count
// set to what the racks have, the operator restored, the checkpoint cleared; a node
// half removed is finished first, racks the operator cannot keep are refused or, with
// GrowBack, grown back.
func (l *Lifecycle) Abort(ctx context.Context, cp *record.Checkpoint, f AbortFlags) (*Aborted, error) {
	self := l.Self()
	cp, reason, err := l.acquire(ctx, cp, self, f.ForceTakeover)
	if err != nil {
		return nil, err
	}
	// A first look, to refuse with nothing written and to say what abort will do.
	assess := l.assessAbort
	if l.Cluster.Deleting {
		assess = l.deletingPoint
	}
	point, err := assess(ctx, cp)
	var unequal *unequalRacks
	if errors.As(err, &unequal) && f.GrowBack {
		return nil, l.growBack(ctx, cp, self, reason, unequal, f.RunFlags)
	}
	var ff *operation.FinishFirst
	finish := finishPlan{}
	if errors.As(err, &ff) {
		// A node half removed: abort finishes it first, if the checkpoint lets it
		// (planFinish), else refuses as before.
		if finish = planFinish(cp, ff); finish.last == "" {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if finish.last != "" {
		l.describeFinish(cp, finish)
	} else {
		l.describeAbort(cp, point, l.operatorHold(ctx, cp))
	}
	if err := l.UI.Confirm("Abort"); err != nil {
		return nil, err
	}
	cp.TakeOver(self, l.Now().UTC(), reason)
	if err := l.Store.Save(ctx, cp); err != nil {
		if errors.Is(err, checkpoint.ErrLost) {
			return nil, exit.Refusedf("another run took operation %s over first: %v; nothing changed", cp.OperationID, err)
		}
		return nil, fmt.Errorf("cannot take over the checkpoint: %w; nothing changed", err)
	}
	return l.abortTaken(ctx, cp, self, reason, assess, f)
}

// abortTaken is abort once the checkpoint is its own. Safe now: the world is read
// again (time passed while the question was asked); each node found half removed is
// finished, once; then the cluster is left consistent and the checkpoint cleared.
func (l *Lifecycle) abortTaken(ctx context.Context, cp *record.Checkpoint, self record.Holder, reason string,
	assess func(context.Context, *record.Checkpoint) (*abortPoint, error), f AbortFlags) (*Aborted, error) {
	var ff *operation.FinishFirst
	finished := map[string]bool{}
	var point *abortPoint
	var err error
	for {
		point, err = assess(ctx, cp)
		if !errors.As(err, &ff) || finished[ff.Pod] {
			break
		}
		finish := planFinish(cp, ff)
		if finish.last == "" {
			break
		}
		if err := l.finishNode(ctx, cp, finish, f.RunFlags); err != nil {
			return nil, err
		}
		finished[ff.Pod] = true
	}
	var unequal *unequalRacks
	if errors.As(err, &unequal) && f.GrowBack {
		return nil, l.growBack(ctx, cp, self, reason, unequal, f.RunFlags)
	}
	if err != nil {
		l.releaseAbort(ctx, cp)
		return nil, err
	}
	if len(finished) > 0 {
		l.describeAbort(cp, point, l.operatorHold(ctx, cp))
	}
	if err := l.undoAbort(ctx, cp, self, point); err != nil {
		return nil, err
	}
	if err := l.fenceAbort(ctx, cp, self); err != nil {
		return nil, err
	}
	summary := point.summary()
	last := checkpoint.LastOperation{OperationID: cp.OperationID, Kind: cp.Kind, Result: "aborted",
		Summary: summary, StartedBy: cp.StartedBy, StartedAt: cp.StartedAt, FinishedAt: l.Now().UTC()}
	if err := l.Store.Finish(ctx, cp, last); err != nil {
		return nil, fmt.Errorf("cannot clear the checkpoint: %w; run abort again", err)
	}
	return &Aborted{OperationID: cp.OperationID, Summary: summary}, nil
}

// undoAbort leaves the cluster consistent: the stream throughput the operation set put
// back, the cluster resource's count set to what the racks' StatefulSets have, the
// operator restored if the operation paused it.
func (l *Lifecycle) undoAbort(ctx context.Context, cp *record.Checkpoint, self record.Holder, point *abortPoint) error {
	// A cluster being deleted takes its nodes' settings with it.
	if !point.deleting && len(steps.ThroughputToRestore(cp, nil)) > 0 {
		if err := l.fenceAbort(ctx, cp, self); err != nil {
			return err
		}
		if err := l.putBackThroughput(ctx, cp, nil); err != nil {
			l.releaseAbort(ctx, cp)
			return fmt.Errorf("%w; nothing else changed and the checkpoint is kept, run abort again", err)
		}
	}
	if err := l.takeAwayUnstarted(ctx, cp, self, point); err != nil {
		return err
	}
	if err := l.undoKind(ctx, cp, self, point); err != nil {
		return err
	}
	if point.changesCount() {
		if err := l.fenceAbort(ctx, cp, self); err != nil {
			return err
		}
		// Guarded by the resourceVersion the assessment read: a cluster resource changed
		// since (by anyone) fails the write, and abort says to run it again.
		if err := l.Adapter.SetRackNodesAt(ctx, cp.Namespace, cp.Cluster, cp.Target.DC, point.counts, point.rv); err != nil {
			l.releaseAbort(ctx, cp)
			return fmt.Errorf("cannot set %s of datacenter %s to %s: %w; nothing else changed and the checkpoint is kept, run abort again", point.countWords, cp.Target.DC, countText(point.counts), err)
		}
		fmt.Fprintf(l.ErrOut, "Set %s of datacenter %s to %s (was %s), the racks' StatefulSet replicas.\n", point.countWords, cp.Target.DC, countText(point.counts), countText(point.spec))
	}
	// Whether or not its pause step is recorded started: a plan made again after a
	// crash (replan) keeps the operation's hold under the same ID with its new pause
	// step pending, and the operator must not stay paused for an operation abort ends.
	if cp.PausedOperator != nil {
		if err := l.fenceAbort(ctx, cp, self); err != nil {
			return err
		}
		dropped, err := steps.RestoreOperator(ctx, l.stepWorld(cp), *cp.PausedOperator, cp.Started(record.StepPauseOperator))
		if err != nil {
			l.releaseAbort(ctx, cp)
			return fmt.Errorf("cannot restore operator Deployment %s/%s: %w; the checkpoint is kept, run abort again", cp.PausedOperator.Namespace, cp.PausedOperator.Name, err)
		}
		if len(dropped) > 0 {
			fmt.Fprintf(l.ErrOut, "Removed stale pause holders of operator Deployment %s/%s: %s.\n", cp.PausedOperator.Namespace, cp.PausedOperator.Name, steps.StaleText(dropped))
		}
	}
	return nil
}

// undoKind runs the kind's own undo (operation.Abort.Undo), the lock proved first. It
// runs on a cluster being deleted too: what it takes back is not the cluster's (a
// user's ConfigMap) and outlives it. There a failure is said and abort goes on, since
// the deletion waits for the operator.
func (l *Lifecycle) undoKind(ctx context.Context, cp *record.Checkpoint, self record.Holder, point *abortPoint) error {
	k, err := l.Kinds.Of(cp)
	if err != nil || k.Info().Abort.Undo == nil {
		return nil
	}
	if err := l.fenceAbort(ctx, cp, self); err != nil {
		return err
	}
	said, err := k.Info().Abort.Undo(ctx, l.abortReads(), cp)
	if err != nil && point.deleting {
		fmt.Fprintf(l.ErrOut, "warning: %v; the cluster is being deleted, so abort goes on and releases the operator: take it out by hand (the lines between the marks naming operation %s)\n", err, cp.OperationID)
		return nil
	}
	if err != nil {
		l.releaseAbort(ctx, cp)
		return fmt.Errorf("%w; nothing else changed and the checkpoint is kept, run abort again", err)
	}
	if said != "" {
		fmt.Fprintln(l.ErrOut, said)
	}
	return nil
}

// describeAbort says where the operation stands and what abort will change; hold is
// what the operation's pause of the operator is now (operatorHold).
func (l *Lifecycle) describeAbort(cp *record.Checkpoint, p *abortPoint, hold string) {
	where := "nothing in the cluster was changed yet"
	switch {
	case p.Done > 0:
		where = fmt.Sprintf("%d of %d %s %s so far, no node in the middle of a change", p.Done, p.Total, p.rule.Unit, p.rule.Past)
	case p.rule.NoneYet != "":
		where = p.rule.NoneYet
	}
	fmt.Fprintf(l.ErrOut, "Aborting operation %s (%s, %s); %s.\n", cp.OperationID, cp.Kind, l.target(cp), where)
	for _, n := range p.Notes {
		fmt.Fprintf(l.ErrOut, "Note: %s.\n", n)
	}
	for _, u := range p.unstarted {
		fmt.Fprintf(l.ErrOut, "Pod %s never started (%s) and has no node in the ring: it will be taken away with its claims.\n", u.Node.Pod, u.Why)
	}
	if p.changesCount() {
		fmt.Fprintf(l.ErrOut, "%s of datacenter %s will be set to %s (now %s), what every rack's StatefulSet has.\n", p.countWords, cp.Target.DC, countText(p.counts), countText(p.spec))
	}
	if hold != "" {
		fmt.Fprintln(l.ErrOut, hold)
	}
}

// operatorHold says, in a sentence, what abort will do with the operator the plan
// pauses: restore it, or release this operation's hold while others keep it paused.
// Empty when the operation does not hold it (its pause never ran, the Deployment is
// gone or unreadable): abort then leaves it as it is, and says nothing false.
func (l *Lifecycle) operatorHold(ctx context.Context, cp *record.Checkpoint) string {
	op := cp.PausedOperator
	if op == nil {
		return ""
	}
	d, err := l.Kube.AppsV1().Deployments(op.Namespace).Get(ctx, op.Name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	holders, err := record.PauseHolders(d.Annotations)
	if err != nil {
		return ""
	}
	i := record.HolderIndex(holders, cp.OperationID)
	paused := d.Spec.Replicas != nil && *d.Spec.Replicas == 0
	switch {
	case i >= 0 && len(holders) > 1:
		return fmt.Sprintf("Operation %s's hold on the operator Deployment %s/%s will be released; %d other operation(s) still hold it paused.", cp.OperationID, op.Namespace, op.Name, len(holders)-1)
	case i >= 0:
		return fmt.Sprintf("The operator Deployment %s/%s will be restored to %d replicas.", op.Namespace, op.Name, holders[i].Replicas)
	case len(holders) == 0 && paused && cp.Started(record.StepPauseOperator):
		// Paused by a plugin version before the holder list (steps.RestoreOperator).
		return fmt.Sprintf("The operator Deployment %s/%s will be restored to %d replicas.", op.Namespace, op.Name, op.Replicas)
	}
	return ""
}

// fenceAbort re-reads the checkpoint right before abort acts: it must still be this
// operation, held by this session at the seq this run wrote (checkpoint.Lock says
// Mine). Otherwise another run took it over, and abort stops with nothing more changed.
// The re-read also gives the store the resourceVersion the next guarded write tests.
func (l *Lifecycle) fenceAbort(ctx context.Context, cp *record.Checkpoint, self record.Holder) error {
	fresh, err := l.Store.Load(ctx)
	if err != nil {
		return fmt.Errorf("cannot re-read the checkpoint before acting: %w; run abort again", err)
	}
	if fresh == nil || fresh.OperationID != cp.OperationID {
		return exit.Refusedf("operation %s was finished or replaced by someone else while aborting; see %s", cp.OperationID, l.StatusHint())
	}
	if state, _, _ := checkpoint.Lock(fresh, self, l.Now().UTC(), l.Alive); state != checkpoint.Mine || fresh.Seq != cp.Seq {
		return exit.Refusedf("operation %s was taken over by %s (seq %d, this abort wrote %d) while aborting: it stops here; see %s",
			cp.OperationID, fresh.Holder, fresh.Seq, cp.Seq, l.StatusHint())
	}
	return nil
}

// releaseAbort marks the checkpoint released after abort refused or failed past its
// takeover, so the next run takes over at once (best effort).
func (l *Lifecycle) releaseAbort(ctx context.Context, cp *record.Checkpoint) {
	now := l.Now().UTC()
	cp.Holder.ReleasedAt = &now
	if err := l.Store.Save(ctx, cp); err != nil {
		fmt.Fprintf(l.ErrOut, "warning: could not mark the checkpoint as released: %v\n", err)
	}
}

// deletingPoint is abort's answer for a cluster resource being deleted: whatever its
// nodes are doing, nothing of the operation will survive, and a finalizer may wait for
// the operator the operation paused. So abort sets no count and only releases the
// operator, so that the deletion can complete, and clears the checkpoint.
func (l *Lifecycle) deletingPoint(_ context.Context, cp *record.Checkpoint) (*abortPoint, error) {
	kind, err := l.Kinds.Of(cp)
	if err != nil {
		return nil, err
	}
	p := &abortPoint{rule: kind.Info().Abort, deleting: true}
	p.Notes = append(p.Notes, fmt.Sprintf("%s %s/%s is being deleted: abort changes no count and releases the operator so that the deletion can complete", l.Adapter.Kind(), cp.Namespace, cp.Cluster))
	return p, nil
}
