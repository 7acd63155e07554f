package checkpoint

import "github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"

// The step kinds these tests plan, by their owners' names (internal/steps, the kinds'
// packages): the checkpoint itself defines none.
const (
	StepUpdateCluster  = "update-cluster"
	StepGrowSTS        = "grow-statefulset"
	StepCleanup        = "cleanup"
	StepDrain          = "drain"
	StepDeletePod      = "delete-pod"
	StepWaitRestarted  = "wait-restarted"
	StepOperatorStatus = "operator-status"
)

// The step lists of the kinds whose checkpoints these tests decode, as their packages
// build them (internal/operation/*/steps.go): the checkpoint itself knows no kind's steps.

func scaleDownSteps(nodes []record.Node, pause bool) []record.Step {
	steps := append(NodeSteps(nodes, record.StepDecommission, record.StepVerifyLeft, record.StepShrinkSTS, record.StepWaitPodGone, record.StepDeletePVCs), pending(StepUpdateCluster, ""))
	return Paused(pause, steps)
}

func scaleUpSteps(newNodes, cleanup []record.Node, pause bool) []record.Step {
	steps := append(NodeSteps(newNodes, StepGrowSTS, record.StepWaitJoined), pending(StepUpdateCluster, ""))
	return Paused(pause, steps, NodeSteps(cleanup, StepCleanup)...)
}

func restartSteps(nodes []record.Node, pause bool) []record.Step {
	return Paused(pause, NodeSteps(nodes, StepDrain, StepDeletePod, StepWaitRestarted))
}

func settleSteps(leftovers []record.Leftover, pause bool) []record.Step {
	var steps []record.Step
	for _, l := range leftovers {
		steps = append(steps, pending(record.StepDeleteLeftoverPVCs, l.Pod))
	}
	return Paused(pause, append(steps, pending(StepUpdateCluster, "")))
}
