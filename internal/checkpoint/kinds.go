package checkpoint

import "github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"

// Paused is steps with the operator's pause around them when pause is set: paused
// first, restored after the steps that need it paused; after runs once it is restored.
func Paused(pause bool, steps []record.Step, after ...record.Step) []record.Step {
	var out []record.Step
	if pause {
		out = append(out, pending(record.StepPauseOperator, ""))
	}
	out = append(out, steps...)
	if pause {
		out = append(out, pending(record.StepResumeOperator, ""))
	}
	return append(out, after...)
}

// NodeSteps lists, for each node in order, a pending step of each of kinds: every step
// of a node before the next node (strictly one node at a time). Which kinds, in which
// order, is each operation kind's own (internal/operation/*): the checkpoint knows no
// kind's steps.
func NodeSteps(nodes []record.Node, kinds ...string) []record.Step {
	var steps []record.Step
	for _, n := range nodes {
		for _, k := range kinds {
			steps = append(steps, pending(k, n.Pod))
		}
	}
	return steps
}

// PendingStep is record.PendingStep: a step record of kind for pod, not started.
func PendingStep(kind, pod string) record.Step { return pending(kind, pod) }

func pending(kind, pod string) record.Step { return record.PendingStep(kind, pod) }
