package restart

import (
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// restart's own step kinds, as checkpoints record them; the operator's pause and the
// task's steps are the step library's.
const (
	// StepDrain runs nodetool drain on the node before its pod is deleted.
	StepDrain = "drain"
	// StepDeletePod deletes the drained node's pod (UID precondition).
	StepDeletePod = "delete-pod"
	// StepWaitRestarted waits until the pod is back (a new UID), Ready, and its node UN.
	StepWaitRestarted = "wait-restarted"
)

// Steps lists the steps of a rolling restart: for each node in order (highest ordinal
// first, rack by rack) drain it, delete its pod and wait for the new pod; with pause,
// the operator is paused first and restored last.
func Steps(nodes []record.Node, pause bool) []record.Step {
	return checkpoint.Paused(pause, checkpoint.NodeSteps(nodes, StepDrain, StepDeletePod, StepWaitRestarted))
}

// BuildSteps implements operation.Kind: restart's own steps (podsteps.go), the rest
// the library's (steps.BuildKind).
func (Kind) BuildSteps(kw pub.World) (map[string]pub.Step, error) {
	w, err := steps.Of(kw)
	if err != nil {
		return nil, err
	}
	return steps.BuildKind(w, steps.Variant{}, own(w))
}

// own builds restart's own steps from the World's capabilities (nil for the library's).
func own(w *steps.World) steps.Own {
	return func(s record.Step) (pub.Step, error) {
		switch s.Kind {
		case StepDrain, StepDeletePod, StepWaitRestarted:
		default:
			return nil, nil
		}
		n, ok := w.CP.Node(s.Pod)
		if !ok {
			return nil, fmt.Errorf("step %s names pod %s, which is not in the plan", s.ID, s.Pod)
		}
		switch s.Kind {
		case StepDrain:
			return &drain{n: n, pods: w, modes: w, ring: w, nodetool: w}, nil
		case StepDeletePod:
			return &deletePod{n: n, pods: w, delete: w, modes: w}, nil
		}
		wait := &waitRestarted{n: n, back: w}
		// A restart the operator runs as a task also watches the task.
		if _, ok := w.CP.Step(record.StepCreateTask); ok {
			return &waitTaskRestarted{waitRestarted: wait, cp: w.CP, pods: w, task: w}, nil
		}
		return wait, nil
	}
}
