package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
)

const abortExample = `  # Stop the operation in flight at a safe point: the cluster resource is set to what the
  # racks have, a paused operator is restored, the checkpoint cleared
  kubectl cassandra abort -n cassandra cassandra-demo

  # From a script
  kubectl cassandra abort cassandra-demo --yes -o json`

// abortOptions are abort's flags and arguments (Complete / Validate / Run, as every
// command's).
type abortOptions struct {
	clusterArg
	// flags are a run's: abort --grow-back runs a plan.
	flags    runFlags
	growBack bool
}

// Validate checks -o and --progress (bad usage, nothing changed).
func (a *abortOptions) Validate() error { return a.flags.validate() }

func newAbortCmd(o *Options) *cobra.Command {
	a := &abortOptions{}
	cmd := &cobra.Command{
		Use:   "abort [CLUSTER]",
		Short: "Stop the operation in flight at a safe point, leaving the cluster consistent",
		Long: o.words().Replace(`Stop the operation recorded in the cluster's checkpoint where it stands, at any safe point:
between two nodes of a scale-down (or after a decommission Cassandra refused), anywhere in a
scale-up, between two pods of a restart. Abort sets the {Kind}'s {Count} to what
the racks' StatefulSets have, restores anything the plan paused (the operator Deployment), clears
the checkpoint and records the last operation as "aborted after removing k of n nodes" (or added,
or restarted pods). Every write is guarded, and the checkpoint is re-read before each one.

A decommission cannot be cancelled once the node is LEAVING: abort then first finishes removing
that node (it waits until the node left, then takes its pod and claims away, never starting a
removal of its own), and stops the operation there; so it does for a node half removed (left, its
pod or claims still there). Abort refuses while a pod is drained or on its way back, or the
datacenter's racks have sizes its {Count} cannot hold: it says which rack to finish first, and offers --grow-back,
which ends the operation by growing the smaller racks back to the largest (a scale-up planned
from the world under the same operation, the operator restored at its end).

` + exit.Help),
		Example:           abortExample,
		GroupID:           groupOps,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.completeClusters,
		RunE:              o.runE(a),
	}
	a.flags.add(cmd)
	cmd.Flags().BoolVar(&a.growBack, "grow-back", false, "When the racks were left at sizes the operator cannot keep, end the operation by growing the smaller racks back to the largest (a planned scale-up under the same operation) instead of refusing")
	return cmd
}

// Run stops the operation in flight at a safe point (see the command's help).
func (a *abortOptions) Run(ctx context.Context, o *Options) error {
	yes, forceTakeover, out := a.flags.yes, a.flags.forceTakeover, a.flags.output
	s, cp, err := o.openInFlight(ctx, a.args)
	if err != nil {
		o.reapAfterGone(ctx, err)
		return err
	}
	o.reapGone(ctx, s, cp, "")
	if cp == nil {
		msg := fmt.Sprintf("No operation in flight on %s %s/%s: nothing to abort.", s.adapter.Kind(), s.cluster.Namespace, s.cluster.Name)
		if out != "text" {
			return output.Print(o.Out, out, map[string]any{"result": "nothing-to-abort", "message": msg, "next": s.statusHint()})
		}
		fmt.Fprintln(o.Out, msg)
		return nil
	}
	self := o.self()
	cp, reason, err := o.acquire(ctx, s, cp, self, forceTakeover)
	if err != nil {
		return err
	}
	// A first look, to refuse with nothing written and to say what abort will do.
	assess := o.assessAbort
	if s.cluster.Deleting {
		assess = o.deletingPoint
	}
	point, err := assess(ctx, s, cp)
	var unequal *unequalRacks
	if errors.As(err, &unequal) && a.growBack {
		return o.growBack(ctx, s, cp, self, reason, unequal, &a.flags)
	}
	var ff *operation.FinishFirst
	finish := finishPlan{}
	if errors.As(err, &ff) {
		// A node half removed: abort finishes it first, if the checkpoint lets it
		// (planFinish), else refuses as before.
		if finish = planFinish(cp, ff); finish.last == "" {
			return err
		}
	} else if err != nil {
		return err
	}
	if finish.last != "" {
		o.describeFinish(cp, finish)
	} else {
		o.describeAbort(cp, point, o.operatorHold(ctx, s, cp))
	}
	if err := o.confirm(yes, "Abort"); err != nil {
		return err
	}
	cp.TakeOver(self, o.Now().UTC(), reason)
	if err := s.store.Save(ctx, cp); err != nil {
		if errors.Is(err, checkpoint.ErrLost) {
			return exit.Refusedf("another run took operation %s over first: %v; nothing changed", cp.OperationID, err)
		}
		return fmt.Errorf("cannot take over the checkpoint: %w; nothing changed", err)
	}
	// Safe now: the world is read again, with the checkpoint ours (time passed while
	// the question was asked); each node found half removed is finished, once.
	finished := map[string]bool{}
	for {
		point, err = assess(ctx, s, cp)
		if !errors.As(err, &ff) || finished[ff.Pod] {
			break
		}
		if finish = planFinish(cp, ff); finish.last == "" {
			break
		}
		if err := o.finishNode(ctx, s, cp, finish, &a.flags); err != nil {
			return err
		}
		finished[ff.Pod] = true
	}
	if errors.As(err, &unequal) && a.growBack {
		return o.growBack(ctx, s, cp, self, reason, unequal, &a.flags)
	}
	if err != nil {
		o.releaseAbort(ctx, s, cp)
		return err
	}
	if len(finished) > 0 {
		o.describeAbort(cp, point, o.operatorHold(ctx, s, cp))
	}
	if err := o.undoAbort(ctx, s, cp, self, point); err != nil {
		return err
	}
	if err := o.fenceAbort(ctx, s, cp, self); err != nil {
		return err
	}
	now := o.Now().UTC()
	summary := point.summary()
	last := checkpoint.LastOperation{OperationID: cp.OperationID, Kind: cp.Kind, Result: "aborted",
		Summary: summary, StartedBy: cp.StartedBy, StartedAt: cp.StartedAt, FinishedAt: now}
	if err := s.store.Finish(ctx, cp, last); err != nil {
		return fmt.Errorf("cannot clear the checkpoint: %w; run abort again", err)
	}
	if out != "text" {
		return output.Print(o.Out, out, map[string]any{"result": "aborted", "operationID": cp.OperationID, "summary": summary, "next": s.statusHint()})
	}
	fmt.Fprintf(o.Out, "Aborted operation %s (%s); the checkpoint is cleared.\n", cp.OperationID, summary)
	return nil
}

// undoAbort leaves the cluster consistent: the stream throughput the operation set put
// back, the cluster resource's count set to what the racks' StatefulSets have, the
// operator restored if the operation paused it.
func (o *Options) undoAbort(ctx context.Context, s *session, cp *checkpoint.Checkpoint, self checkpoint.Holder, point *abortPoint) error {
	// A cluster being deleted takes its nodes' settings with it.
	if !point.deleting && len(steps.ThroughputToRestore(cp, nil)) > 0 {
		if err := o.fenceAbort(ctx, s, cp, self); err != nil {
			return err
		}
		if err := o.putBackThroughput(ctx, s, cp, nil); err != nil {
			o.releaseAbort(ctx, s, cp)
			return fmt.Errorf("%w; nothing else changed and the checkpoint is kept, run abort again", err)
		}
	}
	if err := o.takeAwayUnstarted(ctx, s, cp, self, point); err != nil {
		return err
	}
	if err := o.undoKind(ctx, s, cp, self, point); err != nil {
		return err
	}
	if point.changesCount() {
		if err := o.fenceAbort(ctx, s, cp, self); err != nil {
			return err
		}
		// Guarded by the resourceVersion the assessment read: a cluster resource changed
		// since (by anyone) fails the write, and abort says to run it again.
		if err := s.adapter.SetRackNodesAt(ctx, cp.Namespace, cp.Cluster, cp.Target.DC, point.counts, point.rv); err != nil {
			o.releaseAbort(ctx, s, cp)
			return fmt.Errorf("cannot set %s of datacenter %s to %s: %w; nothing else changed and the checkpoint is kept, run abort again", point.countWords, cp.Target.DC, countText(point.counts), err)
		}
		fmt.Fprintf(o.ErrOut, "Set %s of datacenter %s to %s (was %s), the racks' StatefulSet replicas.\n", point.countWords, cp.Target.DC, countText(point.counts), countText(point.spec))
	}
	// Whether or not its pause step is recorded started: a plan made again after a
	// crash (replan) keeps the operation's hold under the same ID with its new pause
	// step pending, and the operator must not stay paused for an operation abort ends.
	if cp.PausedOperator != nil {
		if err := o.fenceAbort(ctx, s, cp, self); err != nil {
			return err
		}
		dropped, err := steps.RestoreOperator(ctx, s.stepWorld(cp, o.Now), *cp.PausedOperator, cp.Started(steps.StepPauseOperator))
		if err != nil {
			o.releaseAbort(ctx, s, cp)
			return fmt.Errorf("cannot restore operator Deployment %s/%s: %w; the checkpoint is kept, run abort again", cp.PausedOperator.Namespace, cp.PausedOperator.Name, err)
		}
		if len(dropped) > 0 {
			fmt.Fprintf(o.ErrOut, "Removed stale pause holders of operator Deployment %s/%s: %s.\n", cp.PausedOperator.Namespace, cp.PausedOperator.Name, steps.StaleText(dropped))
		}
	}
	return nil
}

// undoKind runs the kind's own undo (pub.Abort.Undo), the lock proved first. It
// runs on a cluster being deleted too: what it takes back is not the cluster's (a
// user's ConfigMap) and outlives it. There a failure is said and abort goes on, since
// the deletion waits for the operator.
func (o *Options) undoKind(ctx context.Context, s *session, cp *checkpoint.Checkpoint, self checkpoint.Holder, point *abortPoint) error {
	k, err := o.Kinds.Of(cp)
	if err != nil || k.Info().Abort.Undo == nil {
		return nil
	}
	if err := o.fenceAbort(ctx, s, cp, self); err != nil {
		return err
	}
	said, err := k.Info().Abort.Undo(ctx, o.abortReads(s), cp)
	if err != nil && point.deleting {
		fmt.Fprintf(o.ErrOut, "warning: %v; the cluster is being deleted, so abort goes on and releases the operator: take it out by hand (the lines between the marks naming operation %s)\n", err, cp.OperationID)
		return nil
	}
	if err != nil {
		o.releaseAbort(ctx, s, cp)
		return fmt.Errorf("%w; nothing else changed and the checkpoint is kept, run abort again", err)
	}
	if said != "" {
		fmt.Fprintln(o.ErrOut, said)
	}
	return nil
}

// describeAbort says where the operation stands and what abort will change; hold is
// what the operation's pause of the operator is now (operatorHold).
func (o *Options) describeAbort(cp *checkpoint.Checkpoint, p *abortPoint, hold string) {
	where := "nothing in the cluster was changed yet"
	switch {
	case p.Done > 0:
		where = fmt.Sprintf("%d of %d %s %s so far, no node in the middle of a change", p.Done, p.Total, p.rule.Unit, p.rule.Past)
	case p.rule.NoneYet != "":
		where = p.rule.NoneYet
	}
	fmt.Fprintf(o.ErrOut, "Aborting operation %s (%s, %s); %s.\n", cp.OperationID, cp.Kind, o.operationTarget(cp.Kind, cp.Target), where)
	for _, n := range p.Notes {
		fmt.Fprintf(o.ErrOut, "Note: %s.\n", n)
	}
	for _, u := range p.unstarted {
		fmt.Fprintf(o.ErrOut, "Pod %s never started (%s) and has no node in the ring: it will be taken away with its claims.\n", u.Node.Pod, u.Why)
	}
	if p.changesCount() {
		fmt.Fprintf(o.ErrOut, "%s of datacenter %s will be set to %s (now %s), what every rack's StatefulSet has.\n", p.countWords, cp.Target.DC, countText(p.counts), countText(p.spec))
	}
	if hold != "" {
		fmt.Fprintln(o.ErrOut, hold)
	}
}

// operatorHold says, in a sentence, what abort will do with the operator the plan
// pauses: restore it, or release this operation's hold while others keep it paused.
// Empty when the operation does not hold it (its pause never ran, the Deployment is
// gone or unreadable): abort then leaves it as it is, and says nothing false.
func (o *Options) operatorHold(ctx context.Context, s *session, cp *checkpoint.Checkpoint) string {
	op := cp.PausedOperator
	if op == nil {
		return ""
	}
	d, err := s.c.Kube.AppsV1().Deployments(op.Namespace).Get(ctx, op.Name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	holders, err := checkpoint.PauseHolders(d.Annotations)
	if err != nil {
		return ""
	}
	i := checkpoint.HolderIndex(holders, cp.OperationID)
	paused := d.Spec.Replicas != nil && *d.Spec.Replicas == 0
	switch {
	case i >= 0 && len(holders) > 1:
		return fmt.Sprintf("Operation %s's hold on the operator Deployment %s/%s will be released; %d other operation(s) still hold it paused.", cp.OperationID, op.Namespace, op.Name, len(holders)-1)
	case i >= 0:
		return fmt.Sprintf("The operator Deployment %s/%s will be restored to %d replicas.", op.Namespace, op.Name, holders[i].Replicas)
	case len(holders) == 0 && paused && cp.Started(steps.StepPauseOperator):
		// Paused by a plugin version before the holder list (steps.RestoreOperator).
		return fmt.Sprintf("The operator Deployment %s/%s will be restored to %d replicas.", op.Namespace, op.Name, op.Replicas)
	}
	return ""
}

// fenceAbort re-reads the checkpoint right before abort acts: it must still be this
// operation, held by this session at the seq this run wrote (checkpoint.Lock says
// Mine). Otherwise another run took it over, and abort stops with nothing more changed.
// The re-read also gives the store the resourceVersion the next guarded write tests.
func (o *Options) fenceAbort(ctx context.Context, s *session, cp *checkpoint.Checkpoint, self checkpoint.Holder) error {
	fresh, err := s.store.Load(ctx)
	if err != nil {
		return fmt.Errorf("cannot re-read the checkpoint before acting: %w; run abort again", err)
	}
	if fresh == nil || fresh.OperationID != cp.OperationID {
		return exit.Refusedf("operation %s was finished or replaced by someone else while aborting; see %s", cp.OperationID, s.statusHint())
	}
	if state, _, _ := checkpoint.Lock(fresh, self, o.Now().UTC(), o.alive); state != checkpoint.Mine || fresh.Seq != cp.Seq {
		return exit.Refusedf("operation %s was taken over by %s (seq %d, this abort wrote %d) while aborting: it stops here; see %s",
			cp.OperationID, fresh.Holder, fresh.Seq, cp.Seq, s.statusHint())
	}
	return nil
}

// releaseAbort marks the checkpoint released after abort refused or failed past its
// takeover, so the next run takes over at once (best effort).
func (o *Options) releaseAbort(ctx context.Context, s *session, cp *checkpoint.Checkpoint) {
	now := o.Now().UTC()
	cp.Holder.ReleasedAt = &now
	if err := s.store.Save(ctx, cp); err != nil {
		fmt.Fprintf(o.ErrOut, "warning: could not mark the checkpoint as released: %v\n", err)
	}
}

// deletingPoint is abort's answer for a cluster resource being deleted: whatever its
// nodes are doing, nothing of the operation will survive, and a finalizer may wait for
// the operator the operation paused. So abort sets no count and only releases the
// operator, so that the deletion can complete, and clears the checkpoint.
func (o *Options) deletingPoint(_ context.Context, s *session, cp *checkpoint.Checkpoint) (*abortPoint, error) {
	kind, err := o.Kinds.Of(cp)
	if err != nil {
		return nil, err
	}
	p := &abortPoint{rule: kind.Info().Abort, deleting: true}
	p.Notes = append(p.Notes, fmt.Sprintf("%s %s/%s is being deleted: abort changes no count and releases the operator so that the deletion can complete", s.adapter.Kind(), cp.Namespace, cp.Cluster))
	return p, nil
}
