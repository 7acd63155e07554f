package scaleup

import (
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// scale-up's own step kinds, as checkpoints record them; the wait for a node to join,
// the cluster resource's update, the operator's pause, the tasks' and the stream
// throughput's are the step library's.
const (
	// StepGrowSTS grows the rack's StatefulSet by one replica (growstatefulset.go).
	StepGrowSTS = "grow-statefulset"
	// StepCleanup runs nodetool cleanup on a pre-existing node (--cleanup,
	// cleanupnode.go). Its effect cannot be observed: it is done only once recorded done.
	StepCleanup = "cleanup"
)

// Steps lists the steps of a scale-up: for each new node in order (lowest ordinal
// first, rack by rack), grow the StatefulSet by one and wait until the node joined;
// then the update of the cluster resource; with pause, the operator is paused first and
// restored as soon as the cluster resource and the StatefulSets agree; then `nodetool
// cleanup` on each of the cleanup nodes, one at a time.
func Steps(newNodes, cleanup []record.Node, pause bool) []record.Step {
	list := append(checkpoint.NodeSteps(newNodes, StepGrowSTS, record.StepWaitJoined), checkpoint.PendingStep(steps.StepUpdateCluster, ""))
	return checkpoint.Paused(pause, list, checkpoint.NodeSteps(cleanup, StepCleanup)...)
}

// BuildSteps implements operation.Kind: scale-up's own steps (growstatefulset.go,
// cleanupnode.go), the rest the library's (steps.BuildKind).
func (Kind) BuildSteps(kw pub.World) (map[string]pub.Step, error) {
	w, err := steps.Of(kw)
	if err != nil {
		return nil, err
	}
	return steps.BuildKind(w, steps.Variant{}, own(w))
}

// own builds scale-up's own steps from the World's capabilities (nil for the
// library's).
func own(w *steps.World) steps.Own {
	return func(s record.Step) (pub.Step, error) {
		if s.Kind != StepGrowSTS && s.Kind != StepCleanup {
			return nil, nil
		}
		n, ok := w.CP.Node(s.Pod)
		if !ok {
			return nil, fmt.Errorf("step %s names pod %s, which is not in the plan", s.ID, s.Pod)
		}
		if s.Kind == StepGrowSTS {
			return &growStatefulSet{n: n, ns: w.Namespace, sts: w, pods: w, claims: w, seeds: w, ring: w, deleting: w, writes: w}, nil
		}
		return &cleanup{n: n, records: w, pods: w, modes: w, ring: w, nodetool: w, progress: w}, nil
	}
}
