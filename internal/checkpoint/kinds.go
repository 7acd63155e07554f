package checkpoint

// Paused is steps with the operator's pause around them when pause is set: paused
// first, restored after the steps that need it paused; after runs once it is restored.
func Paused(pause bool, steps []Step, after ...Step) []Step {
	var out []Step
	if pause {
		out = append(out, pending(StepPauseOperator, ""))
	}
	out = append(out, steps...)
	if pause {
		out = append(out, pending(StepResumeOperator, ""))
	}
	return append(out, after...)
}

// NodeSteps lists, for each node in order, a pending step of each of kinds: every step
// of a node before the next node (strictly one node at a time). Which kinds, in which
// order, is each operation kind's own (internal/operation/*): the checkpoint knows no
// kind's steps.
func NodeSteps(nodes []Node, kinds ...string) []Step {
	var steps []Step
	for _, n := range nodes {
		for _, k := range kinds {
			steps = append(steps, pending(k, n.Pod))
		}
	}
	return steps
}

// PendingStep is a step record of kind for pod, not started.
func PendingStep(kind, pod string) Step { return pending(kind, pod) }

func pending(kind, pod string) Step {
	return Step{ID: StepID(kind, pod), Kind: kind, Pod: pod, State: StatePending}
}

// SameRacks reports whether the checkpoint targets exactly dc and racks.
func (cp *Checkpoint) SameRacks(dc string, racks []string) bool {
	if cp.Target.DC != dc || len(cp.Target.Racks) != len(racks) {
		return false
	}
	for i := range racks {
		if cp.Target.Racks[i] != racks[i] {
			return false
		}
	}
	return true
}

// Step returns the record of the step with id.
func (cp *Checkpoint) Step(id string) (Step, bool) {
	return find(cp.Steps, func(s Step) bool { return s.ID == id })
}
