package lifecycle

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/kinds"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// fakeUI answers the lifecycle's questions yes and records what it was shown.
type fakeUI struct {
	asked   []string
	shown   []Shown
	dryRuns []Shown
	done    []*checkpoint.LastOperation
	nothing []string
}

func (u *fakeUI) Confirm(what string) error { u.asked = append(u.asked, what); return nil }
func (u *fakeUI) ShowPlan(p Shown)          { u.shown = append(u.shown, p) }
func (u *fakeUI) DryRun(p Shown) error      { u.dryRuns = append(u.dryRuns, p); return nil }
func (u *fakeUI) NothingToDo(msg string) error {
	u.nothing = append(u.nothing, msg)
	return nil
}
func (u *fakeUI) Done(last *checkpoint.LastOperation) error {
	u.done = append(u.done, last)
	return nil
}

// newLifecycle is the lifecycle of w's cluster on the neutral adapter, with the
// build's kinds, a fixed clock and a UI that says yes.
func newLifecycle(t *testing.T, w *fakeworld.World) (*Lifecycle, *fakeUI, *bytes.Buffer) {
	t.Helper()
	a := w.Adapter()
	cl, _, err := a.Get(context.Background(), w.NS, w.Name)
	if err != nil {
		t.Fatal(err)
	}
	reg := kinds.Registry()
	now := func() time.Time { return time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC) }
	ui, errOut := &fakeUI{}, &bytes.Buffer{}
	self := record.Holder{Host: "here", PID: 1, Session: "s1", LeaseSeconds: 60}
	return New(Deps{
		Kube: w.Kube, Nodetool: nodetool.Client{Exec: w}, Adapter: a, Cluster: cl, Kinds: reg,
		Store: &checkpoint.Store{Obj: a.Object(w.NS, w.Name), Kinds: reg.Schemas(), Operator: a.Name(), Now: now},
		Now:   now, Self: func() record.Holder { return self }, Alive: func(record.Holder) bool { return true },
		ErrOut: errOut, UI: ui,
	}), ui, errOut
}

// TestStartDryRunThenAbortUnstarted: a dry run shows the plan and writes nothing; a plan
// written and aborted before any step ran is cleared, asked once, with the count left
// alone (the racks have what the resource asks) and no step run.
func TestStartDryRunThenAbortUnstarted(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 1, Racks: []string{"r1", "r2"}})
	l, ui, errOut := newLifecycle(t, w)
	k, _ := l.Kinds.Kind("scale-up")
	plan, err := k.Plan(ctx, &pub.Env{Toolkit: l.Planner(), Cluster: l.Cluster, Adapter: l.Adapter, Request: pub.Request{Nodes: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Start(ctx, plan, StartFlags{DryRun: true}, "run it"); err != nil {
		t.Fatal(err)
	}
	if len(ui.dryRuns) != 1 || ui.dryRuns[0].Next != "run it" || len(ui.dryRuns[0].Texts) != len(plan.CP.Steps) || len(ui.asked) != 0 {
		t.Fatalf("dry run: shown %+v, asked %v", ui.dryRuns, ui.asked)
	}
	if cp, err := l.Store.Load(ctx); err != nil || cp != nil {
		t.Fatalf("a dry run wrote the checkpoint: %v %v", cp, err)
	}
	if err := l.Store.Create(ctx, plan.CP); err != nil {
		t.Fatal(err)
	}
	done, err := l.Abort(ctx, plan.CP, AbortFlags{})
	if err != nil {
		t.Fatalf("abort: %v\n%s", err, errOut)
	}
	if done == nil || done.OperationID != plan.CP.OperationID || len(ui.asked) != 1 || ui.asked[0] != "Abort" {
		t.Fatalf("aborted %+v, asked %v", done, ui.asked)
	}
	if cp, err := l.Store.Load(ctx); err != nil || cp != nil {
		t.Fatalf("the checkpoint is still there: %v %v", cp, err)
	}
	if n := w.SpecWrites(); n != 0 {
		t.Errorf("%d writes of the cluster resource's spec, want none", n)
	}
	if len(ui.done) != 0 {
		t.Errorf("abort ran steps: %v", ui.done)
	}
}
