package restart

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
)

// Steps lists the steps of a rolling restart: for each node in order (highest ordinal
// first, rack by rack) drain it, delete its pod and wait for the new pod; with pause,
// the operator is paused first and restored last.
func Steps(nodes []checkpoint.Node, pause bool) []checkpoint.Step {
	return checkpoint.Paused(pause, checkpoint.NodeSteps(nodes, steps.StepDrain, steps.StepDeletePod, steps.StepWaitRestarted))
}
