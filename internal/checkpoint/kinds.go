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

// ScaleDownSteps lists the steps of a scale-down for nodes, in execution order: every
// step of a node before the next node (strictly one node at a time), then the final
// update of the cluster resource; with pause, the operator is paused first and
// restored last.
func ScaleDownSteps(nodes []Node, pause ...bool) []Step {
	var steps []Step
	for _, n := range nodes {
		for _, k := range []string{StepDecommission, StepVerifyLeft, StepShrinkSTS, StepWaitPodGone, StepDeletePVCs} {
			steps = append(steps, pending(k, n.Pod))
		}
	}
	steps = append(steps, pending(StepUpdateCluster, ""))
	return Paused(len(pause) > 0 && pause[0], steps)
}

// SettleSteps lists the steps of a scale-down whose racks are at the target already but
// whose world is not settled (a removal whose record is gone): delete each removed
// pod's left-over claims, then the update of the cluster resource; with pause, the
// operator is paused first and restored last. It removes no node.
func SettleSteps(leftovers []Leftover, pause bool) []Step {
	var steps []Step
	for _, l := range leftovers {
		steps = append(steps, pending(StepDeleteLeftoverPVCs, l.Pod))
	}
	steps = append(steps, pending(StepUpdateCluster, ""))
	return Paused(pause, steps)
}

// ScaleUpSteps lists the steps of a scale-up: for each new node in order (lowest
// ordinal first, rack by rack), grow the StatefulSet by one and wait until the node
// joined; then the update of the cluster resource; with pause, the operator is paused
// first and restored as soon as the cluster resource and the StatefulSets agree; then
// `nodetool cleanup` on each of the cleanup nodes, one at a time.
func ScaleUpSteps(newNodes, cleanup []Node, pause bool) []Step {
	var steps, after []Step
	for _, n := range newNodes {
		steps = append(steps, pending(StepGrowSTS, n.Pod), pending(StepWaitJoined, n.Pod))
	}
	steps = append(steps, pending(StepUpdateCluster, ""))
	for _, n := range cleanup {
		after = append(after, pending(StepCleanup, n.Pod))
	}
	return Paused(pause, steps, after...)
}

// RestartSteps lists the steps of a rolling restart: for each node in order (highest
// ordinal first, rack by rack) drain it, delete its pod and wait for the new pod; with
// pause, the operator is paused first and restored last.
func RestartSteps(nodes []Node, pause bool) []Step {
	var steps []Step
	for _, n := range nodes {
		steps = append(steps, pending(StepDrain, n.Pod), pending(StepDeletePod, n.Pod), pending(StepWaitRestarted, n.Pod))
	}
	return Paused(pause, steps)
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
