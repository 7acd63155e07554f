package scaledown

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// nodeKinds are a removed node's steps, in the order they run.
var nodeKinds = []string{record.StepDecommission, record.StepVerifyLeft, record.StepShrinkSTS, record.StepWaitPodGone, record.StepDeletePVCs}

// Steps lists the steps of a scale-down for nodes, in execution order: every step of a
// node before the next node, then the final update of the cluster resource; with
// pause, the operator is paused first and restored last.
// A node that never started (Node.Unstarted) has no decommission nor its verification:
// its pod is taken away (shrink, wait until it is gone, delete its claims).
func Steps(nodes []record.Node, pause bool) []record.Step {
	return RemovalSteps(nodes, pause, nil)
}

// RemovalSteps is Steps where the nodes of the pods in dead are dead: each is removed
// with removenode from a live node instead of a decommission (deadKinds).
func RemovalSteps(nodes []record.Node, pause bool, dead map[string]bool) []record.Step {
	var list []record.Step
	for _, n := range nodes {
		kinds := nodeKinds
		switch {
		case n.Unstarted:
			kinds = unstartedKinds
		case dead[n.Pod]:
			kinds = deadKinds
		}
		list = append(list, checkpoint.NodeSteps([]record.Node{n}, kinds...)...)
	}
	list = append(list, checkpoint.PendingStep(steps.StepUpdateCluster, ""))
	return checkpoint.Paused(pause, list)
}

// deadKinds are a dead node's steps: removed from the ring by a live node, verified
// gone, then its pod and claims taken away as for any removed node.
var deadKinds = []string{steps.StepRemoveNode, record.StepVerifyLeft, record.StepShrinkSTS, record.StepWaitPodGone, record.StepDeletePVCs}

// unstartedKinds are the steps that take away a pod that never started.
var unstartedKinds = []string{record.StepShrinkSTS, record.StepWaitPodGone, record.StepDeletePVCs}

// settleSteps lists the steps of a scale-down whose racks are at the target already but
// whose world is not settled (a removal whose record is gone): delete each removed
// pod's left-over claims, then the update of the cluster resource; with pause, the
// operator is paused first and restored last. It removes no node.
func settleSteps(leftovers []record.Leftover, pause bool) []record.Step {
	var list []record.Step
	for _, l := range leftovers {
		list = append(list, checkpoint.PendingStep(record.StepDeleteLeftoverPVCs, l.Pod))
	}
	list = append(list, checkpoint.PendingStep(steps.StepUpdateCluster, ""))
	return checkpoint.Paused(pause, list)
}

// throttled is steps with each removed node's stream throughput set around its
// streaming: recorded and set right before the node is asked to leave (its
// decommission, or the size that asks the operator for it), restored once it left
// (after verify-left). Nodes whose removal streams nothing (never started, or already
// left when planned: their decommission is done) get none.
func throttled(list []record.Step) []record.Step {
	var out []record.Step
	set := map[string]bool{} // a dead node's removenode sets nothing: nothing to restore
	for _, s := range list {
		starts := s.Kind == record.StepDecommission || s.Kind == record.StepRequestRemoval
		if starts && s.State == record.StatePending {
			out = append(out, checkpoint.PendingStep(record.StepRecordThroughput, s.Pod), checkpoint.PendingStep(record.StepSetThroughput, s.Pod))
			set[s.Pod] = true
		}
		out = append(out, s)
		if s.Kind == record.StepVerifyLeft && s.State == record.StatePending && set[s.Pod] {
			out = append(out, checkpoint.PendingStep(record.StepRestoreThroughput, s.Pod))
		}
	}
	return out
}

// BuildSteps implements operation.Kind: the library's steps (steps.Build).
func (Kind) BuildSteps(kw pub.World) (map[string]pub.Step, error) {
	w, err := steps.Of(kw)
	if err != nil {
		return nil, err
	}
	return steps.Build(w, steps.Variant{RingReaders: true})
}
