package lifecycle

import (
	"context"
	"strings"
	"testing"

	authv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	puboperation "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// TestBeginDryRunThenInFlight: a command's order is planned from the world and, with
// --dry-run, only shown, with the command that runs it; once another operation is in
// flight, an order whose command says nothing about it is refused (exit 3) with the
// operation named and nothing changed.
func TestBeginDryRunThenInFlight(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 1, Racks: []string{"r1", "r2"}})
	// Every access review allowed (an access review is a question, not a write).
	w.Kube.PrependReactor("create", "selfsubjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		r := action.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = true
		return true, r, nil
	})
	l, ui, errOut := newLifecycle(t, w)
	k, _ := l.Kinds.Kind("scale-up")
	order := Order{Name: "grow", Kind: k, Request: puboperation.Request{Nodes: 2}, Flags: StartFlags{DryRun: true}}
	if err := l.Begin(ctx, order); err != nil {
		t.Fatalf("dry run: %v\n%s", err, errOut)
	}
	want := "kubectl cassandra grow -n " + w.NS + " " + w.Name + " --yes"
	if len(ui.dryRuns) != 1 || ui.dryRuns[0].Next != want || len(ui.asked) != 0 {
		t.Fatalf("dry runs %+v (want next %q), asked %v", ui.dryRuns, want, ui.asked)
	}
	cp := ui.dryRuns[0].CP
	if err := l.Store.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}
	order.Flags.DryRun = false
	err := l.Begin(ctx, order)
	if exit.Code(err) != puboperation.ExitRefused || !strings.Contains(err.Error(), "operation "+cp.OperationID) || !strings.Contains(err.Error(), "is in flight") {
		t.Fatalf("another operation in flight: exit %d: %v", exit.Code(err), err)
	}
	if got, _ := l.Store.Load(ctx); got == nil || got.OperationID != cp.OperationID || got.Seq != cp.Seq {
		t.Errorf("the operation in flight changed: %+v", got)
	}
	if len(ui.asked) != 0 || len(ui.shown) != 0 {
		t.Errorf("a refusal asked %v, showed %d plans", ui.asked, len(ui.shown))
	}
}
