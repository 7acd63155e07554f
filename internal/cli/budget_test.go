package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// countingExec counts nodetool calls by command on top of the fake world's exec.
type countingExec struct {
	w  *world.World
	mu sync.Mutex
	n  map[string]int
}

func (c *countingExec) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	c.mu.Lock()
	c.n["exec "+nodetoolCommand(argv)]++
	c.mu.Unlock()
	return c.w.Exec(ctx, pod, argv)
}

// requestsOfScale runs one scale-down from `from` nodes to 1 and returns its requests by
// kind ("verb resource" and "exec <nodetool command>").
func requestsOfScale(t *testing.T, from int) map[string]int {
	t.Helper()
	w := world.New(t, world.Opts{Nodes: from, Version: "4.1"})
	w.Kube.ClearActions()
	w.Dyn.ClearActions()
	ex := &countingExec{w: w, n: map[string]int{}}
	_, stderr, code := runWith(w, ex, scale41...)
	if code != 0 {
		t.Fatalf("scale %d→1: exit %d\n%s", from, code, stderr)
	}
	w.AssertConverged(1, fmt.Sprintf("budget %d→1", from))
	out := map[string]int{}
	for _, a := range append(w.Kube.Actions(), w.Dyn.Actions()...) {
		out[actionKey(a)]++
	}
	for k, v := range ex.n {
		out[k] += v
	}
	return out
}

func actionKey(a k8stesting.Action) string {
	r := a.GetResource().Resource
	if s := a.GetSubresource(); s != "" {
		r += "/" + s
	}
	return a.GetVerb() + " " + r
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestRequestBudgetPerNode: each node a scale-down removes costs at most 13 API requests
// (execs included, watch events excluded), counted as the difference between two runs
// so the per-run start-up (discovery, preflight, plan) is not spread over the nodes.
// It was 12 (10 measured) before "safe means safe now": the fence reads of the
// checkpoint before the shrink and the claims deletion (internal/engine/engine.go, fence) and
// the fresh ring read before each decommission (internal/steps/safenow.go) add 3.
// The same budget is measured on the real control plane by `make bench`.
func TestRequestBudgetPerNode(t *testing.T) {
	const lo, hi = 3, 7
	a, b := requestsOfScale(t, lo), requestsOfScale(t, hi)
	per := float64(total(b)-total(a)) / float64(hi-lo)
	var keys []string
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var lines []string
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("  %-40s %5.2f per node (%d→1: %d, %d→1: %d)", k, float64(b[k]-a[k])/float64(hi-lo), hi, b[k], lo, a[k]))
	}
	t.Logf("requests per removed node: %.2f (%d→1: %d in all, %d→1: %d)\n%s", per, hi, total(b), lo, total(a), strings.Join(lines, "\n"))
	if per > 13 {
		t.Fatalf("%.2f requests per removed node, budget 13", per)
	}
}

// TestLargePlanCompressed: a 52-node plan is over the size written plain; it is stored
// compressed, and a run killed mid-way resumes from it to the end.
func TestLargePlanCompressed(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 60})
	_, stderr, _, crashed := run(w, 8, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "8", "--yes")
	if !crashed {
		t.Fatalf("the scale did not reach its 8th side effect:\n%s", stderr)
	}
	v := w.CR().GetAnnotations()[checkpoint.Annotation]
	if !strings.HasPrefix(v, `{"schemaVersion":3,"encoding":"gzip+base64"`) {
		t.Fatalf("checkpoint of a 52-node plan: %.80s…, want a compressed envelope", v)
	}
	if _, stderr, code, _ := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(8, "60→8 resumed from a compressed checkpoint")
}
