package lifecycle

import (
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestAbortFinishTakesRemovedNodesFromTheWorld: planFinish acts on the half-removed node
// when an earlier node's steps are recorded not done but the assessment found it
// removed in full; it refuses (no steps) when the earlier node was not found removed.
func TestAbortFinishTakesRemovedNodesFromTheWorld(t *testing.T) {
	cp := &record.Checkpoint{Steps: []record.Step{
		{ID: "request-removal/p3", Kind: "request-removal", Pod: "p3", State: record.StatePending},
		{ID: "wait-pvcs-gone/p3", Kind: "wait-pvcs-gone", Pod: "p3", State: record.StatePending},
		{ID: "request-removal/p2", Kind: "request-removal", Pod: "p2", State: record.StatePending},
		{ID: "wait-pvcs-gone/p2", Kind: "wait-pvcs-gone", Pod: "p2", State: record.StatePending},
		{ID: "request-removal/p1", Kind: "request-removal", Pod: "p1", State: record.StatePending},
	}}
	if p := planFinish(cp, &operation.FinishFirst{Pod: "p2"}); p.last != "" {
		t.Errorf("p3 not found removed: planned %v, want a refusal", p.steps)
	}
	p := planFinish(cp, &operation.FinishFirst{Pod: "p2", Removed: []string{"p3"}})
	if p.last != "wait-pvcs-gone/p2" || len(p.steps) != 2 {
		t.Errorf("p3 found removed in full: last %q steps %v, want p2's two steps", p.last, p.steps)
	}
}

// TestAbortFinishForbids: while finishing a node, abort refuses right before it acts a
// step of another node or one that would start a removal again, and lets the node's
// other steps (and steps of no node) run.
func TestAbortFinishForbids(t *testing.T) {
	cp := &record.Checkpoint{Steps: []record.Step{
		{ID: "decommission/p2", Kind: "decommission", Pod: "p2"},
		{ID: "wait-pvcs-gone/p2", Kind: "wait-pvcs-gone", Pod: "p2"},
		{ID: "decommission/p1", Kind: "decommission", Pod: "p1"},
		{ID: "resume-operator", Kind: "resume-operator"},
	}}
	forbid := finishPlan{ff: &operation.FinishFirst{Pod: "p2", NeverAct: []string{"decommission"}}}.forbid(cp)
	for id, refused := range map[string]bool{
		"decommission/p2":   true, // would start p2's removal again
		"wait-pvcs-gone/p2": false,
		"decommission/p1":   true, // another node's
		"resume-operator":   false,
		"not-in-the-plan":   false,
	} {
		if err := forbid(id); (err != nil) != refused {
			t.Errorf("step %s: refused %v (%v), want %v", id, err != nil, err, refused)
		}
	}
}
