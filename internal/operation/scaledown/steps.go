package scaledown

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
)

// nodeKinds are a removed node's steps, in the order they run.
var nodeKinds = []string{steps.StepDecommission, steps.StepVerifyLeft, steps.StepShrinkSTS, steps.StepWaitPodGone, steps.StepDeletePVCs}

// Steps lists the steps of a scale-down for nodes, in execution order: every step of a
// node before the next node, then the final update of the cluster resource; with
// pause, the operator is paused first and restored last.
// A node that never started (Node.Unstarted) has no decommission nor its verification:
// its pod is taken away (shrink, wait until it is gone, delete its claims).
func Steps(nodes []checkpoint.Node, pause bool) []checkpoint.Step {
	var list []checkpoint.Step
	for _, n := range nodes {
		kinds := nodeKinds
		if n.Unstarted {
			kinds = unstartedKinds
		}
		list = append(list, checkpoint.NodeSteps([]checkpoint.Node{n}, kinds...)...)
	}
	list = append(list, checkpoint.PendingStep(steps.StepUpdateCluster, ""))
	return checkpoint.Paused(pause, list)
}

// unstartedKinds are the steps that take away a pod that never started.
var unstartedKinds = []string{steps.StepShrinkSTS, steps.StepWaitPodGone, steps.StepDeletePVCs}

// settleSteps lists the steps of a scale-down whose racks are at the target already but
// whose world is not settled (a removal whose record is gone): delete each removed
// pod's left-over claims, then the update of the cluster resource; with pause, the
// operator is paused first and restored last. It removes no node.
func settleSteps(leftovers []checkpoint.Leftover, pause bool) []checkpoint.Step {
	var list []checkpoint.Step
	for _, l := range leftovers {
		list = append(list, checkpoint.PendingStep(steps.StepDeleteLeftoverPVCs, l.Pod))
	}
	list = append(list, checkpoint.PendingStep(steps.StepUpdateCluster, ""))
	return checkpoint.Paused(pause, list)
}
