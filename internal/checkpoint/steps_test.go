package checkpoint

import "github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"

// The step kinds these tests plan, by their owners' names (internal/steps, the kinds'
// packages): the checkpoint itself defines none.
const (
	StepDecommission       = record.StepDecommission
	StepVerifyLeft         = record.StepVerifyLeft
	StepShrinkSTS          = record.StepShrinkSTS
	StepWaitPodGone        = record.StepWaitPodGone
	StepDeletePVCs         = record.StepDeletePVCs
	StepPauseOperator      = record.StepPauseOperator
	StepResumeOperator     = record.StepResumeOperator
	StepWaitJoined         = record.StepWaitJoined
	StepDeleteLeftoverPVCs = record.StepDeleteLeftoverPVCs
	StepUpdateCluster      = "update-cluster"
	StepGrowSTS            = "grow-statefulset"
	StepCleanup            = "cleanup"
	StepDrain              = "drain"
	StepDeletePod          = "delete-pod"
	StepWaitRestarted      = "wait-restarted"
	StepOperatorStatus     = "operator-status"
)

// The step lists of the kinds whose checkpoints these tests decode, as their packages
// build them (internal/operation/*/steps.go): the checkpoint itself knows no kind's steps.

func scaleDownSteps(nodes []Node, pause bool) []Step {
	steps := append(NodeSteps(nodes, StepDecommission, StepVerifyLeft, StepShrinkSTS, StepWaitPodGone, StepDeletePVCs), pending(StepUpdateCluster, ""))
	return Paused(pause, steps)
}

func scaleUpSteps(newNodes, cleanup []Node, pause bool) []Step {
	steps := append(NodeSteps(newNodes, StepGrowSTS, StepWaitJoined), pending(StepUpdateCluster, ""))
	return Paused(pause, steps, NodeSteps(cleanup, StepCleanup)...)
}

func restartSteps(nodes []Node, pause bool) []Step {
	return Paused(pause, NodeSteps(nodes, StepDrain, StepDeletePod, StepWaitRestarted))
}

func settleSteps(leftovers []Leftover, pause bool) []Step {
	var steps []Step
	for _, l := range leftovers {
		steps = append(steps, pending(StepDeleteLeftoverPVCs, l.Pod))
	}
	return Paused(pause, append(steps, pending(StepUpdateCluster, "")))
}
