package lifecycle

import (
	"context"
	"slices"
	"sync"
	"testing"

	authv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	puboperation "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/fakeadapter/fakeworld"
)

// nodetoolCalls counts the nodetool commands asked of the world, by command.
type nodetoolCalls struct {
	w     *fakeworld.World
	mu    sync.Mutex
	calls map[string]int
}

func (c *nodetoolCalls) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	c.mu.Lock()
	for _, cmd := range []string{"status", "describecluster"} {
		if slices.Contains(argv, cmd) {
			c.calls[cmd]++
		}
	}
	c.mu.Unlock()
	return c.w.Exec(ctx, pod, argv)
}

// TestBeginPrefetchesTheRingOnce: a scale-down's ring and keyspace reads start as soon
// as no operation is in flight (the kind's Prefetch) and its plan takes them up: one
// of each per plan, not two. A request that lowers nothing reads no ring ahead.
func TestBeginPrefetchesTheRingOnce(t *testing.T) {
	ctx := context.Background()
	w := fakeworld.New(t, fakeworld.Opts{Nodes: 3, Racks: []string{"r1"}})
	w.Kube.PrependReactor("create", "selfsubjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		r := action.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = true
		return true, r, nil
	})
	l, ui, errOut := newLifecycle(t, w)
	c := &nodetoolCalls{w: w, calls: map[string]int{}}
	l.Nodetool = nodetool.Client{Exec: c}
	k, ok := l.Kinds.Kind("scale-down")
	if !ok {
		t.Fatal("no scale-down kind")
	}
	order := Order{Name: "scale", Kind: k, Request: puboperation.Request{Rack: "r1", Nodes: 2}, Flags: StartFlags{DryRun: true}}
	if err := l.Begin(ctx, order); err != nil {
		t.Fatalf("dry run: %v\n%s", err, errOut)
	}
	if len(ui.dryRuns) != 1 || c.calls["status"] != 1 || c.calls["describecluster"] != 1 {
		t.Fatalf("dry runs %d, nodetool %v: want one plan from one ring read and one keyspace read", len(ui.dryRuns), c.calls)
	}
	// The rack's reads started ahead too, and taken up: one of each.
	reads := map[string]int{}
	for _, a := range w.Kube.Actions() {
		reads[a.GetVerb()+" "+a.GetResource().Resource]++
	}
	if reads["get statefulsets"] != 1 || reads["list persistentvolumeclaims"] != 1 {
		t.Fatalf("reads %v: want the rack's StatefulSet read once and its claims listed once", reads)
	}
	if pf, ok := k.(prefetcher); ok {
		c.calls = map[string]int{}
		pf.Prefetch(ctx, &puboperation.Env{Toolkit: l.Planner(), Cluster: l.Cluster, Adapter: l.Adapter, Request: puboperation.Request{Rack: "r1", Nodes: 3}})
		if len(c.calls) != 0 {
			t.Fatalf("a request that lowers nothing read %v ahead", c.calls)
		}
	} else {
		t.Fatalf("scale's kind %T starts no reads ahead", k)
	}
}
