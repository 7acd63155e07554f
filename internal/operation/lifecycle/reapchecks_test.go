package lifecycle

import (
	"context"
	"testing"

	authv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	puboperation "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// TestChecksJudgeTheReapedWorld: a new operation's checks start beside the reapers;
// when a reaper changed something (here: it released the operator from the pause of an
// operation that is gone), they are made again after it, so the plan pauses the operator
// the reaper restored (replicas 1), joins no gone operation's hold, and the operator's
// Deployment is read again after the reaper's write.
func TestChecksJudgeTheReapedWorld(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 3, Racks: []string{"r1"}, Operator: true})
	w.Kube.PrependReactor("create", "selfsubjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		r := action.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = true
		return true, r, nil
	})
	pausedForGone(t, w, w.Name)
	l, ui, errOut := newLifecycle(t, w)
	k, _ := l.Kinds.Kind("scale-down")
	w.Kube.ClearActions()
	order := Order{Name: "scale", Kind: k, Request: puboperation.Request{Rack: "r1", Nodes: 2}, Command: puboperation.Command{Busy: true},
		Flags: StartFlags{DryRun: true, Pause: true}}
	if err := l.Begin(ctx, order); err != nil {
		t.Fatalf("dry run: %v\n%s", err, errOut)
	}
	if len(ui.dryRuns) != 1 {
		t.Fatalf("%d dry runs, want 1\n%s", len(ui.dryRuns), errOut)
	}
	p := ui.dryRuns[0].CP.PausedOperator
	if p == nil || p.Replicas != 1 || len(p.Joined) != 0 {
		t.Fatalf("the plan pauses %+v: want the operator at the 1 replica the reaper restored, joining no hold\n%s", p, errOut)
	}
	wrote, readAfter := -1, false
	for i, a := range w.Kube.Actions() {
		if a.GetResource().Resource != "deployments" {
			continue
		}
		switch a.GetVerb() {
		case "update", "patch":
			wrote = i
		case "get", "list":
			readAfter = readAfter || wrote >= 0
		}
	}
	if wrote < 0 || !readAfter {
		t.Fatalf("the reaper's write at %d, a read of the operator after it: %v; want the checks made again after the reaper", wrote, readAfter)
	}
}
