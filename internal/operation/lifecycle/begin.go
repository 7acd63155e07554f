package lifecycle

import (
	"context"
	"errors"
	"fmt"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/future"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
)

// Order is what an operation command asks for: an operation of Kind as its Command
// describes it, with the request its flags made; Name is the command's name (the
// command a plan says runs it, unless the Command's Next says another).
type Order struct {
	Name    string
	Kind    pub.Kind
	Command pub.Command
	Request pub.Request
	Flags   StartFlags
}

// Begin is every operation command's way to a new operation: load the
// checkpoint (an operation in flight is resumed or refused), refuse while the operator
// is busy, find the operator to pause, check access and plan (both only read, so at
// once), show the plan, confirm, write the checkpoint and run it. What differs between
// the kinds is their Command (internal/operation/command.go).
func (l *Lifecycle) Begin(ctx context.Context, st Order) error {
	existing, err := l.Store.LoadAsOpened(ctx)
	if err != nil {
		return l.CheckpointError(err)
	}
	env := &pub.Env{Toolkit: l.Planner(), Cluster: l.Cluster, Adapter: l.Adapter, Request: st.Request}
	var checks func() (*record.PausedOperator, error)
	if existing == nil {
		if pf, ok := st.Kind.(prefetcher); ok {
			pf.Prefetch(ctx, env)
		}
		// The checks only read: they start beside the reapers, and are made again after
		// them when a reaper changed something (it said so), so that they judge the world
		// the reapers left.
		checks = l.startChecks(ctx, st)
	}
	if l.ReapGone(ctx, existing, l.Cluster.Namespace+"/"+l.Cluster.Name) && checks != nil {
		_, _ = checks()
		checks = l.startChecks(ctx, st)
	}
	if existing != nil {
		return l.inFlight(ctx, existing, st)
	}
	pause, err := checks()
	if err != nil {
		return err
	}
	env.Request.Pause = pause
	access := future.Start(func() (struct{}, error) {
		acc, err := st.Kind.Access(ctx, env)
		if err != nil {
			return struct{}{}, err
		}
		acc = append(acc, operation.ThroughputAccess(env.Request, l.Cluster.Namespace)...)
		return struct{}{}, operation.CheckAccess(ctx, l.Kube, acc)
	})
	planFn := st.Command.Plan
	if planFn == nil {
		planFn = st.Kind.Plan
	}
	plan, err := planFn(ctx, env)
	if _, aerr := access(); aerr != nil {
		return aerr
	}
	var nothing *pub.ErrNothingToDo
	if errors.As(err, &nothing) {
		return l.UI.NothingToDo(nothing.Msg)
	}
	if err != nil {
		return err
	}
	next := fmt.Sprintf("kubectl cassandra %s -n %s %s --yes", st.Name, l.Cluster.Namespace, l.Cluster.Name)
	if st.Command.Next != nil {
		next = st.Command.Next(l.Cluster.Namespace, l.Cluster.Name, plan, st.Request)
	}
	return l.start(ctx, plan, st.Flags, next, operation.PlannerOf(env).RingReaders())
}

// startChecks starts a new operation's checks, which only read: the operator is not
// busy with the cluster, and which operator to pause. Both run at once and are judged
// in that order, so the refusal is the same as one after the other.
func (l *Lifecycle) startChecks(ctx context.Context, st Order) func() (*record.PausedOperator, error) {
	toPause := future.Start(func() (*record.PausedOperator, error) {
		return l.OperatorToPause(ctx, st.Flags.Operator, st.Flags.Pause)
	})
	busy := future.Start(func() (struct{}, error) {
		if !st.Command.Busy {
			return struct{}{}, nil
		}
		return struct{}{}, l.RefuseBusy(ctx)
	})
	return func() (*record.PausedOperator, error) {
		pause, pauseErr := toPause()
		if _, err := busy(); err != nil {
			return nil, err
		}
		return pause, pauseErr
	}
}

// prefetcher is a kind that starts its plan's slowest reads ahead, once no operation is
// in flight (scale-down's ring read through exec): they run beside the lifecycle's own
// reads, and its Plan takes them up. They only read.
type prefetcher interface {
	Prefetch(ctx context.Context, env *pub.Env)
}

// inFlight answers an operation in flight as the command says: resume it, plan it
// again, or refuse.
func (l *Lifecycle) inFlight(ctx context.Context, existing *record.Checkpoint, st Order) error {
	asked := pub.Asked{Request: st.Request, DC: st.Request.DC, Racks: []string{st.Request.Rack}, ResumeHint: l.ResumeHint()}
	if dc, racks, err := l.Cluster.Select(st.Request.DC, st.Request.Rack); err == nil {
		asked.DC, asked.Racks, asked.Selected = dc.Name, operation.RackNames(racks), true
	}
	answer := pub.InFlight{}
	if st.Command.InFlight != nil {
		answer = st.Command.InFlight(existing, asked)
	}
	switch {
	case answer.Refuse != nil:
		return answer.Refuse
	case answer.Replan:
		return l.Replan(ctx, existing, st.Kind, st.Command.Busy, st.Request, st.Flags)
	case answer.Absorb:
		return l.Absorb(ctx, existing, st.Kind, st.Request, st.Flags)
	case answer.Resume:
		if answer.Say == "" {
			answer.Say = fmt.Sprintf("Operation %s is in flight; resuming it.", existing.OperationID)
		}
		fmt.Fprintln(l.ErrOut, answer.Say)
		return l.Resume(ctx, existing, st.Flags.RunFlags)
	}
	return l.refuseOtherInFlight(existing)
}

// refuseOtherInFlight refuses a new operation while another is in flight.
func (l *Lifecycle) refuseOtherInFlight(cp *record.Checkpoint) error {
	return exit.Refusedf("operation %s (%s, %s, started by %s at %s) is in flight on %s; finish it first: %s",
		cp.OperationID, cp.Kind, l.target(cp), cp.StartedBy, cp.StartedAt.Format(time.RFC3339), l.Cluster.Name, l.ResumeHint())
}
