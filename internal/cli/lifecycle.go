package cli

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/lifecycle"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// lifecycle is the lifecycle of the operations of s's cluster, showing and asking as f
// says (-o, --yes; nil: a command that only reaps or reads, and asks nothing).
func (o *Options) lifecycle(s *session, f *runFlags) *lifecycle.Lifecycle {
	d := o.lifecycleDeps(s.c, s.adapter)
	d.Cluster, d.Store, d.Nodetool = s.cluster, s.store, s.nt
	if f != nil {
		d.UI = ui{o: o, s: s, yes: f.yes, output: f.output}
	}
	return lifecycle.New(d)
}

// lifecycleDeps are the Deps every lifecycle of this process shares.
func (o *Options) lifecycleDeps(c *kube.Clients, a operator.Adapter) lifecycle.Deps {
	return lifecycle.Deps{
		Kube: c.Kube, Adapter: a, Kinds: o.Kinds,
		Now: o.Now, Self: o.self, Alive: o.alive, After: o.after,
		ErrOut: o.ErrOut, Color: o.Color,
		ProgressEvery: o.ProgressEvery, SampleEvery: o.SampleEvery, SampleMax: o.SampleMax,
	}
}

// run is what a run of the steps takes of the flags.
func (f *runFlags) run() lifecycle.RunFlags {
	return lifecycle.RunFlags{ForceTakeover: f.forceTakeover, Progress: f.progress, Poll: f.pollInterval, StepTimeout: f.stepTimeout, StallAfter: f.stallAfter}
}

// start is what starting an operation takes of the flags.
func (f *opFlags) start() lifecycle.StartFlags {
	return lifecycle.StartFlags{RunFlags: f.run(), Operator: f.operator, Pause: f.pause, DryRun: f.dryRun}
}

// ui is how a command shows and asks for the lifecycle (lifecycle.UI): plans on stdout
// when they are the command's output (-o text), else on stderr beside the progress, so
// stdout stays machine-readable; questions on the terminal unless --yes.
type ui struct {
	o      *Options
	s      *session
	yes    bool
	output string
}

// Confirm implements lifecycle.UI.
func (u ui) Confirm(what string) error { return u.o.confirm(u.yes, what) }

// ShowPlan implements lifecycle.UI.
func (u ui) ShowPlan(p lifecycle.Shown) {
	w := u.o.ErrOut
	if u.output == "text" {
		w = u.o.Out
	}
	u.o.printPlanText(w, newPlanReport(p, u.s.adapter.Kind(), false), p.Title)
}

// DryRun implements lifecycle.UI.
func (u ui) DryRun(p lifecycle.Shown) error {
	report := newPlanReport(p, u.s.adapter.Kind(), true)
	if u.output != "text" {
		return output.Print(u.o.Out, u.output, report)
	}
	u.o.printPlanText(u.o.Out, report, "Plan (dry run, nothing changed)")
	fmt.Fprintf(u.o.Out, "To run it: %s\n", p.Next)
	return nil
}

// Done implements lifecycle.UI.
func (u ui) Done(last *checkpoint.LastOperation) error {
	if u.output != "text" {
		return output.Print(u.o.Out, u.output, map[string]any{"result": last.Result, "operationID": last.OperationID, "summary": last.Summary, "startedAt": last.StartedAt, "finishedAt": last.FinishedAt, "next": u.s.statusHint()})
	}
	fmt.Fprintf(u.o.Out, "Done: %s (operation %s, %s).\n", last.Summary, last.OperationID, last.FinishedAt.Sub(last.StartedAt).Round(time.Second))
	return nil
}

// NothingToDo implements lifecycle.UI.
func (u ui) NothingToDo(msg string) error {
	if u.output != "text" {
		return output.Print(u.o.Out, u.output, map[string]any{"result": "nothing-to-do", "message": msg, "next": u.s.statusHint()})
	}
	fmt.Fprintln(u.o.Out, msg)
	return nil
}

// operationTarget says what an operation does to which racks, for status and refusals.
func (o *Options) operationTarget(kind string, t record.Target) string {
	return lifecycle.OperationTarget(o.Kinds, kind, t)
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
