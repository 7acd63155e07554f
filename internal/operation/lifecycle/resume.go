package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	puboperation "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Resume continues operation cp: it shows what is left, takes the checkpoint over and
// runs it.
func (l *Lifecycle) Resume(ctx context.Context, cp *record.Checkpoint, f RunFlags) error {
	return l.resume(ctx, cp, f)
}

// resume shows what is left, takes over the checkpoint and runs it.
func (l *Lifecycle) resume(ctx context.Context, cp *record.Checkpoint, f RunFlags) error {
	if err := l.refuseDeleting("resume operation " + cp.OperationID); err != nil {
		return err
	}
	if _, acts := l.Adapter.(operator.Scaler); acts {
		// The operator is the one that acts (cass-operator): it must run, as when the
		// operation was planned (OperatorToPause), not be refused for running.
		if err := l.requireActingOperator(ctx, ""); err != nil {
			return err
		}
	} else if cp.PausedOperator == nil {
		if err := l.refuseRunningOperator(ctx); err != nil {
			return err
		}
	}
	self := l.Self()
	cp, reason, err := l.acquire(ctx, cp, self, f.ForceTakeover)
	if err != nil {
		return err
	}
	kind, err := l.Kinds.Of(cp)
	if err != nil {
		return err
	}
	l.show(fmt.Sprintf("Resuming operation %s (started by %s at %s)", cp.OperationID, cp.StartedBy, cp.StartedAt.Format(time.RFC3339)),
		kind, &puboperation.Plan{CP: cp}, l.ResumeHint()+" --yes")
	if err := l.UI.Confirm("Resume"); err != nil {
		return err
	}
	cp.TakeOver(self, l.Now().UTC(), reason)
	if err := l.Store.Save(ctx, cp); err != nil {
		if errors.Is(err, checkpoint.ErrLost) {
			return exit.Refusedf("another run took operation %s over first: %v; nothing changed (see %s)", cp.OperationID, err, l.StatusHint())
		}
		return fmt.Errorf("cannot take over the checkpoint: %w; nothing changed", err)
	}
	return l.execute(ctx, cp, f)
}

// acquire decides whether this run may take the checkpoint over: at once when its holder
// provably stopped (released; or on this machine, process gone); never while a live
// process on this machine holds it; for a holder elsewhere, only once its record (seq,
// session, renewal) has not changed for a whole lease measured on this machine's clock
// — the rule of client-go's leader election, so a clock that is off on either side
// neither shortens nor stretches the wait — or at once with --force-takeover (the
// displaced run then stops before its next action: every action is fenced, see
// internal/engine).
func (l *Lifecycle) acquire(ctx context.Context, cp *record.Checkpoint, self record.Holder, force bool) (*record.Checkpoint, string, error) {
	state, lease, reason := checkpoint.Lock(cp, self, l.Now().UTC(), l.Alive)
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
	seen := checkpoint.Sighting{}.Sight(cp, l.Now())
	fmt.Fprintf(l.ErrOut, "Operation %s is held by %s (lease renewed at %s by its clock); waiting %s for the lease to expire (or use --force-takeover)...\n",
		cp.OperationID, cp.Holder, cp.Holder.RenewedAtOr(cp.UpdatedAt).Format(time.RFC3339), lease.Round(time.Second))
	for {
		left := lease - seen.Quiet(l.Now())
		if left <= 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil, "", exit.Interruptedf("interrupted while waiting for the lease of %s; nothing changed", cp.Holder)
		case <-l.After(min(left, 5*time.Second)):
		}
		if left := lease - seen.Quiet(l.Now()); left > 0 {
			fmt.Fprintf(l.ErrOut, "  waiting for the lease of %s: %s left\n", cp.Holder, left.Round(time.Second))
		}
	}
	fresh, err := l.Store.Load(ctx)
	if err != nil {
		return nil, "", l.CheckpointError(err)
	}
	if fresh == nil || fresh.OperationID != cp.OperationID {
		return nil, "", exit.Refusedf("operation %s finished or was removed while waiting; run %s", cp.OperationID, l.StatusHint())
	}
	// The one rule status judges by too (checkpoint.Judge): stopped if released or its
	// record stayed unchanged for the whole lease just waited.
	live, _ := checkpoint.Judge(fresh, self, seen, l.Now(), l.Alive)
	if !live.Stopped {
		return nil, "", exit.Refusedf("operation %s is alive: %s wrote its checkpoint while this run waited (seq %d, lease renewed at %s by its clock); nothing changed",
			cp.OperationID, fresh.Holder, fresh.Seq, fresh.Holder.RenewedAtOr(fresh.UpdatedAt).Format(time.RFC3339))
	}
	return fresh, live.Why, nil
}

// refuseRunningOperator refuses while an operator Deployment would fight the operation:
// one that runs, or one other operations hold paused (the last of them restores it,
// maybe in the middle of this one).
func (l *Lifecycle) refuseRunningOperator(ctx context.Context) error {
	all, err := l.Adapter.Operators(ctx, l.Cluster.Namespace)
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
			l.Adapter.Title(), strings.Join(names, ", "), l.Cluster.Namespace, first.Namespace, first.Name, first.Replicas, l.Adapter.Kind())
	}
	for _, op := range all {
		if len(op.PausedBy) > 0 {
			var hs []string
			for _, h := range op.PausedBy {
				hs = append(hs, h.String())
			}
			return exit.Refusedf("the %s operator %s, which manages namespace %s, is paused by operation %s, which restores it when it ends, maybe in the middle of this one. "+
				"Wait until it ended, or let this operation share the pause (plan it with --pause-operator at its default, true); nothing changed",
				l.Adapter.Title(), op, l.Cluster.Namespace, strings.Join(hs, ", "))
		}
	}
	return nil
}
