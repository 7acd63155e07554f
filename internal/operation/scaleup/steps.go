package scaleup

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
)

// Steps lists the steps of a scale-up: for each new node in order (lowest ordinal
// first, rack by rack), grow the StatefulSet by one and wait until the node joined;
// then the update of the cluster resource; with pause, the operator is paused first and
// restored as soon as the cluster resource and the StatefulSets agree; then `nodetool
// cleanup` on each of the cleanup nodes, one at a time.
func Steps(newNodes, cleanup []checkpoint.Node, pause bool) []checkpoint.Step {
	list := append(checkpoint.NodeSteps(newNodes, steps.StepGrowSTS, steps.StepWaitJoined), checkpoint.PendingStep(steps.StepUpdateCluster, ""))
	return checkpoint.Paused(pause, list, checkpoint.NodeSteps(cleanup, steps.StepCleanup)...)
}
