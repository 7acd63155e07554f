package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

const resumeExample = `  # Continue whatever operation is in flight on the only cluster of the namespace
  kubectl cassandra resume -n cassandra

  # From a script
  kubectl cassandra resume cassandra-demo --yes -o json`

// resumeOptions are resume's flags and arguments (Complete / Validate / Run, as every
// command's).
type resumeOptions struct {
	clusterArg
	flags runFlags
}

// Validate checks -o and --progress (bad usage, nothing changed).
func (r *resumeOptions) Validate() error { return r.flags.validate() }

// Run continues the operation in flight, or says there is none.
func (r *resumeOptions) Run(ctx context.Context, o *Options) error {
	f := &r.flags
	s, cp, err := o.openInFlight(ctx, r.args)
	if err != nil {
		o.reapAfterGone(ctx, err)
		return err
	}
	o.reapGone(ctx, s, cp, "")
	if cp == nil {
		msg := fmt.Sprintf("No operation in flight on %s %s/%s: nothing to resume.", s.adapter.Kind(), s.cluster.Namespace, s.cluster.Name)
		last, _ := s.store.LastOperation(ctx)
		if f.output != "text" {
			return output.Print(o.Out, f.output, map[string]any{"result": "nothing-to-resume", "message": msg, "lastOperation": last, "next": s.statusHint()})
		}
		fmt.Fprintln(o.Out, msg)
		if last != nil {
			fmt.Fprintf(o.Out, "Last operation: %s %s %s at %s (%s)\n", last.OperationID, last.Kind, last.Result, last.FinishedAt.Format(time.RFC3339), last.Summary)
		}
		return nil
	}
	return o.resumeCheckpoint(ctx, s, cp, f)
}

func newResumeCmd(o *Options) *cobra.Command {
	r := &resumeOptions{}
	cmd := &cobra.Command{
		Use:   "resume [CLUSTER]",
		Short: "Continue the operation recorded in the cluster's checkpoint",
		Long: o.words().Replace(`Continue the operation recorded in the {Kind}'s checkpoint annotation, from any
machine. The checkpoint says what was planned; whether each step is done is asked of the real
world (API objects and nodetool), so steps that already happened are not repeated.

` + exit.Help),
		Example:           resumeExample,
		GroupID:           groupOps,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.completeClusters,
		RunE:              o.runE(r),
	}
	r.flags.add(cmd)
	return cmd
}

// resumeCheckpoint shows what is left, takes over the checkpoint and runs it.
func (o *Options) resumeCheckpoint(ctx context.Context, s *session, cp *checkpoint.Checkpoint, f *runFlags) error {
	if err := refuseDeleting(s, "resume operation "+cp.OperationID); err != nil {
		return err
	}
	if _, acts := s.adapter.(operator.Scaler); acts {
		// The operator is the one that acts (cass-operator): it must run, as when the
		// operation was planned (operatorToPause), not be refused for running.
		if err := o.requireActingOperator(ctx, s, ""); err != nil {
			return err
		}
	} else if cp.PausedOperator == nil {
		if err := o.refuseRunningOperator(ctx, s); err != nil {
			return err
		}
	}
	self := o.self()
	cp, reason, err := o.acquire(ctx, s, cp, self, f.forceTakeover)
	if err != nil {
		return err
	}
	kind, err := o.Kinds.Of(cp)
	if err != nil {
		return err
	}
	report := newPlanReport(kind, s.stepWorld(cp, o.Now), nil, false, s.resumeHint()+" --yes")
	w := o.Out
	if f.output != "text" {
		w = o.ErrOut
	}
	o.printPlanText(w, report, fmt.Sprintf("Resuming operation %s (started by %s at %s)", cp.OperationID, cp.StartedBy, cp.StartedAt.Format(time.RFC3339)))
	if err := o.confirm(f.yes, "Resume"); err != nil {
		return err
	}
	cp.TakeOver(self, o.Now().UTC(), reason)
	if err := s.store.Save(ctx, cp); err != nil {
		if errors.Is(err, checkpoint.ErrLost) {
			return exit.Refusedf("another run took operation %s over first: %v; nothing changed (see %s)", cp.OperationID, err, s.statusHint())
		}
		return fmt.Errorf("cannot take over the checkpoint: %w; nothing changed", err)
	}
	return o.execute(ctx, s, cp, f)
}

// acquire decides whether this run may take the checkpoint over: at once when its holder
// provably stopped (released; or on this machine, process gone); never while a live
// process on this machine holds it; for a holder elsewhere, only once its record (seq,
// session, renewal) has not changed for a whole lease measured on this machine's clock
// — the rule of client-go's leader election, so a clock that is off on either side
// neither shortens nor stretches the wait — or at once with --force-takeover (the
// displaced run then stops before its next action: every action is fenced, see
// internal/engine).
func (o *Options) acquire(ctx context.Context, s *session, cp *checkpoint.Checkpoint, self checkpoint.Holder, force bool) (*checkpoint.Checkpoint, string, error) {
	state, lease, reason := checkpoint.Lock(cp, self, o.Now().UTC(), o.alive)
	switch state {
	case checkpoint.Mine, checkpoint.Free:
		return cp, reason, nil
	case checkpoint.HeldHere:
		return nil, "", exit.Refusedf("operation %s is being run by %s (a live process on this host) since %s; wait for it or stop it, then resume; nothing changed",
			cp.OperationID, cp.Holder, cp.Holder.RenewedAtOr(cp.UpdatedAt).Format(time.RFC3339))
	}
	if force {
		return cp, fmt.Sprintf("--force-takeover from %s (lease %s, not waited for)", cp.Holder, lease), nil
	}
	seen := checkpoint.Sighting{}.Sight(cp, o.Now())
	fmt.Fprintf(o.ErrOut, "Operation %s is held by %s (lease renewed at %s by its clock); waiting %s for the lease to expire (or use --force-takeover)...\n",
		cp.OperationID, cp.Holder, cp.Holder.RenewedAtOr(cp.UpdatedAt).Format(time.RFC3339), lease.Round(time.Second))
	for {
		left := lease - seen.Quiet(o.Now())
		if left <= 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil, "", exit.Interruptedf("interrupted while waiting for the lease of %s; nothing changed", cp.Holder)
		case <-o.after(min(left, 5*time.Second)):
		}
		if left := lease - seen.Quiet(o.Now()); left > 0 {
			fmt.Fprintf(o.ErrOut, "  waiting for the lease of %s: %s left\n", cp.Holder, left.Round(time.Second))
		}
	}
	fresh, err := s.store.Load(ctx)
	if err != nil {
		return nil, "", checkpointError(s, err)
	}
	if fresh == nil || fresh.OperationID != cp.OperationID {
		return nil, "", exit.Refusedf("operation %s finished or was removed while waiting; run %s", cp.OperationID, s.statusHint())
	}
	// The one rule status judges by too (checkpoint.Judge): stopped if released or its
	// record stayed unchanged for the whole lease just waited.
	live, _ := checkpoint.Judge(fresh, self, seen, o.Now(), o.alive)
	if !live.Stopped {
		return nil, "", exit.Refusedf("operation %s is alive: %s wrote its checkpoint while this run waited (seq %d, lease renewed at %s by its clock); nothing changed",
			cp.OperationID, fresh.Holder, fresh.Seq, fresh.Holder.RenewedAtOr(fresh.UpdatedAt).Format(time.RFC3339))
	}
	return fresh, live.Why, nil
}

// refuseRunningOperator refuses while an operator Deployment would fight the operation:
// one that runs, or one other operations hold paused (the last of them restores it,
// maybe in the middle of this one).
func (o *Options) refuseRunningOperator(ctx context.Context, s *session) error {
	all, err := s.adapter.Operators(ctx, s.cluster.Namespace)
	if err != nil {
		return err
	}
	var ops []operator.Controller
	for _, op := range all {
		if op.Running() {
			ops = append(ops, op)
		}
	}
	if len(ops) > 0 {
		var names []string
		for _, op := range ops {
			names = append(names, op.String())
		}
		first := ops[0]
		return exit.Refusedf("the %s operator %s is running and manages namespace %s: it would grow the StatefulSet back within seconds of the scale-down. "+
			"Stop it first (kubectl scale deployment -n %s %s --replicas=0), run this again, then restore it (--replicas=%d) when the %s and the StatefulSets agree; nothing changed",
			s.adapter.Title(), strings.Join(names, ", "), s.cluster.Namespace, first.Namespace, first.Name, first.Replicas, s.adapter.Kind())
	}
	for _, op := range all {
		if len(op.PausedBy) > 0 {
			var hs []string
			for _, h := range op.PausedBy {
				hs = append(hs, h.String())
			}
			return exit.Refusedf("the %s operator %s, which manages namespace %s, is paused by operation %s, which restores it when it ends, maybe in the middle of this one. "+
				"Wait until it ended, or let this operation share the pause (plan it with --pause-operator at its default, true); nothing changed",
				s.adapter.Title(), op, s.cluster.Namespace, strings.Join(hs, ", "))
		}
	}
	return nil
}
