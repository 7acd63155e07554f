package restart

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Steps lists the steps of a rolling restart: for each node in order (highest ordinal
// first, rack by rack) drain it, delete its pod and wait for the new pod; with pause,
// the operator is paused first and restored last.
func Steps(nodes []record.Node, pause bool) []record.Step {
	return checkpoint.Paused(pause, checkpoint.NodeSteps(nodes, steps.StepDrain, steps.StepDeletePod, steps.StepWaitRestarted))
}

// BuildSteps implements operation.Kind: the library's steps (steps.Build).
func (Kind) BuildSteps(kw pub.World) (map[string]pub.Step, error) {
	w, err := steps.Of(kw)
	if err != nil {
		return nil, err
	}
	return steps.Build(w, steps.Variant{})
}
