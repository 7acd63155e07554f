package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/future"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/lifecycle"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
)

// operationTarget says what an operation does to which racks, for status and refusals.
func (o *Options) operationTarget(kind string, t checkpoint.Target) string {
	return lifecycle.OperationTarget(o.Kinds, kind, t)
}

// startOperation is every operation command's way to a new operation: load the
// checkpoint (an operation in flight is resumed or refused), refuse while the operator
// is busy, find the operator to pause, check access and plan (both only read, so at
// once), show the plan, confirm, write the checkpoint and run it. What differs between
// the kinds is their Command (internal/operation/command.go).
func (o *Options) startOperation(ctx context.Context, s *session, st *operationOptions) error {
	l := o.lifecycle(s, &st.flags.runFlags)
	existing, err := s.store.Load(ctx)
	if err != nil {
		return l.CheckpointError(err)
	}
	l.ReapGone(ctx, existing, s.cluster.Namespace+"/"+s.cluster.Name)
	if existing != nil {
		return o.inFlight(ctx, s, l, existing, st)
	}
	// The checks below only read; each pair runs at once and is judged in order, so the
	// refusal is the same as one after the other.
	toPause := future.Start(func() (*checkpoint.PausedOperator, error) {
		return l.OperatorToPause(ctx, st.flags.operator, st.flags.pause)
	})
	var busyErr error
	if st.cmd.Busy {
		busyErr = l.RefuseBusy(ctx)
	}
	pause, pauseErr := toPause()
	if busyErr != nil {
		return busyErr
	}
	if pauseErr != nil {
		return pauseErr
	}
	env := &operation.Env{Planner: l.Planner(), Cluster: s.cluster, Adapter: s.adapter, Request: st.req}
	env.Request.Pause = pause
	access := future.Start(func() (struct{}, error) {
		acc, err := st.kind.Access(ctx, env)
		if err != nil {
			return struct{}{}, err
		}
		acc = append(acc, operation.ThroughputAccess(env.Request, s.cluster.Namespace)...)
		return struct{}{}, operation.CheckAccess(ctx, s.c.Kube, acc)
	})
	planFn := st.cmd.Plan
	if planFn == nil {
		planFn = st.kind.Plan
	}
	plan, err := planFn(ctx, env)
	if _, aerr := access(); aerr != nil {
		return aerr
	}
	var nothing *operation.ErrNothingToDo
	if errors.As(err, &nothing) {
		return o.nothingToDo(s, st.flags.output, nothing.Msg)
	}
	if err != nil {
		return err
	}
	next := fmt.Sprintf("kubectl cassandra %s -n %s %s --yes", st.name, s.cluster.Namespace, s.cluster.Name)
	if st.cmd.Next != nil {
		next = st.cmd.Next(s.cluster.Namespace, s.cluster.Name, plan, st.req)
	}
	return l.Start(ctx, plan, st.flags.start(), next)
}

// inFlight answers an operation in flight as the command says: resume it, plan it
// again, or refuse.
func (o *Options) inFlight(ctx context.Context, s *session, l *lifecycle.Lifecycle, existing *checkpoint.Checkpoint, st *operationOptions) error {
	asked := operation.Asked{Request: st.req, DC: st.req.DC, Racks: []string{st.req.Rack}, ResumeHint: s.resumeHint()}
	if dc, racks, err := s.cluster.Select(st.req.DC, st.req.Rack); err == nil {
		asked.DC, asked.Racks, asked.Selected = dc.Name, operation.RackNames(racks), true
	}
	answer := operation.InFlight{}
	if st.cmd.InFlight != nil {
		answer = st.cmd.InFlight(existing, asked)
	}
	switch {
	case answer.Refuse != nil:
		return answer.Refuse
	case answer.Replan:
		return l.Replan(ctx, existing, st.kind, st.cmd.Busy, st.req, st.flags.start())
	case answer.Absorb:
		return l.Absorb(ctx, existing, st.kind, st.req, st.flags.start())
	case answer.Resume:
		if answer.Say == "" {
			answer.Say = fmt.Sprintf("Operation %s is in flight; resuming it.", existing.OperationID)
		}
		fmt.Fprintln(o.ErrOut, answer.Say)
		return l.Resume(ctx, existing, st.flags.run())
	}
	return o.refuseOtherInFlight(s, existing)
}

// nothingToDo prints a planner's "nothing to do" answer (exit 0).
func (o *Options) nothingToDo(s *session, out string, msg string) error {
	if out != "text" {
		return output.Print(o.Out, out, map[string]any{"result": "nothing-to-do", "message": msg, "next": s.statusHint()})
	}
	fmt.Fprintln(o.Out, msg)
	return nil
}

// refuseOtherInFlight refuses a new operation while another is in flight.
func (o *Options) refuseOtherInFlight(s *session, cp *checkpoint.Checkpoint) error {
	return exit.Refusedf("operation %s (%s, %s, started by %s at %s) is in flight on %s; finish it first: %s",
		cp.OperationID, cp.Kind, o.operationTarget(cp.Kind, cp.Target), cp.StartedBy, cp.StartedAt.Format(time.RFC3339), s.cluster.Name, s.resumeHint())
}
