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
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// operationTarget says what an operation does to which racks, for status and refusals
// (the kind's Target; a kind this build does not know is said as a scale).
func (o *Options) operationTarget(kind string, t checkpoint.Target) string {
	if k, ok := o.Kinds.Kind(kind); ok {
		return k.Target(t)
	}
	return operation.Scale{}.Target(t)
}

// startOperation is every operation command's way to a new operation: load the
// checkpoint (an operation in flight is resumed or refused), refuse while the operator
// is busy, find the operator to pause, check access and plan (both only read, so at
// once), show the plan, confirm, write the checkpoint and run it. What differs between
// the kinds is their Command (internal/operation/command.go).
func (o *Options) startOperation(ctx context.Context, s *session, st *operationOptions) error {
	existing, err := s.store.Load(ctx)
	if err != nil {
		return checkpointError(s, err)
	}
	o.reapGone(ctx, s, existing, s.cluster.Namespace+"/"+s.cluster.Name)
	if existing != nil {
		return o.inFlight(ctx, s, existing, st)
	}
	// The checks below only read; each pair runs at once and is judged in order, so the
	// refusal is the same as one after the other.
	toPause := future.Start(func() (*checkpoint.PausedOperator, error) {
		return o.operatorToPause(ctx, s, st.flags.operator, st.flags.pause)
	})
	var busyErr error
	if st.cmd.Busy {
		busyErr = o.refuseBusy(ctx, s)
	}
	pause, pauseErr := toPause()
	if busyErr != nil {
		return busyErr
	}
	if pauseErr != nil {
		return pauseErr
	}
	env := &pub.Env{Toolkit: o.planner(s), Cluster: s.cluster, Adapter: s.adapter, Request: st.req}
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
	return o.runPlan(ctx, s, plan, &st.flags.runFlags, st.flags.dryRun, next)
}

// inFlight answers an operation in flight as the command says: resume it, plan it
// again, or refuse.
func (o *Options) inFlight(ctx context.Context, s *session, existing *checkpoint.Checkpoint, st *operationOptions) error {
	asked := pub.Asked{Request: st.req, DC: st.req.DC, Racks: []string{st.req.Rack}, ResumeHint: s.resumeHint()}
	if dc, racks, err := s.cluster.Select(st.req.DC, st.req.Rack); err == nil {
		asked.DC, asked.Racks, asked.Selected = dc.Name, operation.RackNames(racks), true
	}
	answer := pub.InFlight{}
	if st.cmd.InFlight != nil {
		answer = st.cmd.InFlight(existing, asked)
	}
	switch {
	case answer.Refuse != nil:
		return answer.Refuse
	case answer.Replan:
		return o.replanForce(ctx, s, existing, st)
	case answer.Absorb:
		return o.absorb(ctx, s, existing, st)
	case answer.Resume:
		if answer.Say == "" {
			answer.Say = fmt.Sprintf("Operation %s is in flight; resuming it.", existing.OperationID)
		}
		fmt.Fprintln(o.ErrOut, answer.Say)
		return o.resumeCheckpoint(ctx, s, existing, &st.flags.runFlags)
	}
	return o.refuseOtherInFlight(s, existing)
}

// planner reads the real world for a plan.
func (o *Options) planner(s *session) *operation.Planner {
	return &operation.Planner{Client: s.c.Kube, Nodetool: s.nt, Clock: o.Now, Holder: o.self()}
}

// runPlan shows a fresh plan (and stops there with --dry-run), asks, writes the
// checkpoint and runs it.
func (o *Options) runPlan(ctx context.Context, s *session, plan *operation.Plan, f *runFlags, dryRun bool, next string) error {
	k, err := o.Kinds.Of(plan.CP)
	if err != nil {
		return err
	}
	report := newPlanReport(k, s.stepWorld(plan.CP, o.Now), plan.Warnings, dryRun, next)
	report.Findings = plan.Findings
	if dryRun {
		if f.output != "text" {
			return output.Print(o.Out, f.output, report)
		}
		o.printPlanText(o.Out, report, "Plan (dry run, nothing changed)")
		fmt.Fprintf(o.Out, "To run it: %s\n", next)
		return nil
	}
	o.showPlan(report, f.output)
	if err := o.confirm(f.yes, k.Info().ConfirmWord); err != nil {
		return err
	}
	if err := s.store.Create(ctx, plan.CP); err != nil {
		if errors.Is(err, checkpoint.ErrExists) {
			return exit.Refusedf("%v; see: %s", err, s.resumeHint())
		}
		return fmt.Errorf("nothing changed: %w", err)
	}
	return o.execute(ctx, s, plan.CP, f)
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
