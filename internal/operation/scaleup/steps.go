package scaleup

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Steps lists the steps of a scale-up: for each new node in order (lowest ordinal
// first, rack by rack), grow the StatefulSet by one and wait until the node joined;
// then the update of the cluster resource; with pause, the operator is paused first and
// restored as soon as the cluster resource and the StatefulSets agree; then `nodetool
// cleanup` on each of the cleanup nodes, one at a time.
func Steps(newNodes, cleanup []record.Node, pause bool) []record.Step {
	list := append(checkpoint.NodeSteps(newNodes, steps.StepGrowSTS, record.StepWaitJoined), checkpoint.PendingStep(steps.StepUpdateCluster, ""))
	return checkpoint.Paused(pause, list, checkpoint.NodeSteps(cleanup, steps.StepCleanup)...)
}

// BuildSteps implements operation.Kind: the library's steps (steps.Build).
func (Kind) BuildSteps(kw pub.World) (map[string]pub.Step, error) {
	w, err := steps.Of(kw)
	if err != nil {
		return nil, err
	}
	return steps.Build(w, steps.Variant{})
}
