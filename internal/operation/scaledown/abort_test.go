package scaledown

import (
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
)

// TestNodeSteps: abort judges a node by its decommission step and whether any of its
// steps is unfinished, never by another node's steps.
func TestNodeSteps(t *testing.T) {
	cp := &checkpoint.Checkpoint{Steps: []checkpoint.Step{
		{Kind: checkpoint.StepPauseOperator, State: checkpoint.StateDone},
		{Kind: checkpoint.StepDecommission, Pod: "p-2", State: checkpoint.StateDone},
		{Kind: checkpoint.StepShrinkSTS, Pod: "p-2", State: checkpoint.StateDone},
		{Kind: checkpoint.StepDecommission, Pod: "p-1", State: checkpoint.StateStarted},
		{Kind: checkpoint.StepShrinkSTS, Pod: "p-1", State: checkpoint.StatePending},
	}}
	if dec, unfinished := nodeSteps(cp, "p-2"); dec.State != checkpoint.StateDone || unfinished {
		t.Errorf("p-2: %+v unfinished=%v", dec, unfinished)
	}
	if dec, unfinished := nodeSteps(cp, "p-1"); dec.State != checkpoint.StateStarted || !unfinished {
		t.Errorf("p-1: %+v unfinished=%v", dec, unfinished)
	}
}
