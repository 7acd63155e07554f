package lifecycle

import (
	"strings"
	"testing"

	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// TestRackToFinish: abort names the first rack of the plan not at its target, or else
// the first of the smallest racks; counts are said as one number when the racks agree.
func TestRackToFinish(t *testing.T) {
	racks := []topology.Rack{{Name: "r1"}, {Name: "r2"}, {Name: "r3"}}
	plan := record.Target{Racks: []string{"r2", "r3"}, Nodes: 2}
	if got := rackToFinish(plan, racks, map[string]int{"r1": 3, "r2": 2, "r3": 3}); got != "r3" {
		t.Errorf("plan rack not at target: got %s, want r3", got)
	}
	if got := rackToFinish(plan, racks, map[string]int{"r1": 1, "r2": 2, "r3": 2}); got != "r1" {
		t.Errorf("plan racks at target: got %s, want the smallest, r1", got)
	}
	if got := countText(map[string]int{"r1": 2, "r2": 2}); got != "2" {
		t.Errorf("equal racks: %q", got)
	}
	if got := countText(map[string]int{"r2": 2, "r1": 3}); got != "r1=3, r2=2" {
		t.Errorf("unequal racks: %q", got)
	}
	if got := sizesText(racks, map[string]int{"r1": 3, "r2": 2, "r3": 2}); got != "r1 3, r2 2, r3 2" {
		t.Errorf("sizes: %q", got)
	}
}

// TestAbortPointSummary: what abort records as the last operation, and whether it
// sets the counts (only when the racks' replicas differ from what the resource asks).
func TestAbortPointSummary(t *testing.T) {
	rule := pub.Abort{Verb: "removing", Unit: "nodes", Past: "removed"}
	p := &abortPoint{Progress: pub.Progress{Done: 1, Total: 3}, rule: rule,
		counts: map[string]int{"r1": 2, "r2": 3}, spec: map[string]int{"r1": 2, "r2": 3}}
	if got := p.summary(); got != "aborted after removing 1 of 3 nodes" {
		t.Errorf("summary %q", got)
	}
	if p.changesCount() {
		t.Error("counts equal to the spec: nothing to set")
	}
	p.counts["r1"] = 1
	if !p.changesCount() {
		t.Error("a rack's replicas below the spec: the count must be set")
	}
	if got := (&abortPoint{}).summary(); got != "aborted before anything in the cluster changed" {
		t.Errorf("a kind counting no progress: %q", got)
	}
	if got := (&abortPoint{rule: rule, deleting: true}).summary(); !strings.Contains(got, "being deleted") {
		t.Errorf("deleting: %q", got)
	}
}
