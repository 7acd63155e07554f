package steps

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operator"
)

// Maintenance is the nodetool the scale-up and restart steps need besides Nodetool
// (nodetool.Client has it).
type Maintenance interface {
	Drain(ctx context.Context, pod string) error
	Cleanup(ctx context.Context, pod string) error
}

// OperatorState reads and repairs the operator's per-rack operation status
// (repair-operator-state; internal/operator).
type OperatorState = operator.OperatorState

// Variant is how an operation kind's steps differ from the same steps in other kinds
// (each kind's package passes its own: internal/operation/*).
type Variant struct {
	// Repair: the steps finish a decommission the operator started and left stuck
	// (repair-operator-state): the plan says the decommission was already fired, the
	// claims are deleted only while no pod mounts them (RepairDeletePVCs), and the
	// operator is restored without waiting for the cluster resource and the
	// StatefulSets to agree (the operator continues its own scale-down).
	Repair bool
}

// PlanTexter is a step that says more in a plan, before it runs, than its Describe says
// in progress lines. The plan shows PlanText when a step has it, else Describe.
type PlanTexter interface {
	PlanText() string
}

// Build returns the implementations of the checkpoint's steps, one per step record.
func Build(w *World, v Variant) (map[string]engine.Step, error) {
	out := map[string]engine.Step{}
	for _, s := range w.CP.Steps {
		switch s.Kind {
		case checkpoint.StepPauseOperator:
			out[s.ID] = &PauseOperator{operatorStep{w, *w.CP.PausedOperator}}
			continue
		case checkpoint.StepResumeOperator:
			if v.Repair {
				out[s.ID] = &resumeAfterRepair{ResumeOperator: &ResumeOperator{operatorStep{w, *w.CP.PausedOperator}}}
			} else {
				out[s.ID] = &ResumeOperator{operatorStep{w, *w.CP.PausedOperator}}
			}
			continue
		case checkpoint.StepUpdateCluster:
			out[s.ID] = newUpdateCluster(w)
			continue
		}
		n, ok := w.CP.Node(s.Pod)
		if !ok {
			return nil, fmt.Errorf("step %s names pod %s, which is not in the plan", s.ID, s.Pod)
		}
		st, err := nodeStep(w, v, s.Kind, n)
		if err != nil {
			return nil, err
		}
		out[s.ID] = st
	}
	return out, nil
}

// nodeStep is the implementation of a step of kind about node n.
func nodeStep(w *World, v Variant, kind string, n checkpoint.Node) (engine.Step, error) {
	switch kind {
	case checkpoint.StepGrowSTS:
		return &GrowStatefulSet{w: w, n: n}, nil
	case checkpoint.StepWaitJoined:
		return &WaitJoined{w: w, n: n}, nil
	case checkpoint.StepCleanup:
		return &Cleanup{w: w, n: n}, nil
	case checkpoint.StepDrain:
		return &Drain{w: w, n: n}, nil
	case checkpoint.StepDeletePod:
		return &DeletePod{w: w, n: n}, nil
	case checkpoint.StepWaitRestarted:
		return &WaitRestarted{w: w, n: n}, nil
	case checkpoint.StepOperatorStatus:
		return &OperatorStatusStep{w: w, n: n}, nil
	case checkpoint.StepDecommission:
		return &Decommission{w: w, n: n, refire: v.Repair}, nil
	case checkpoint.StepVerifyLeft:
		return &VerifyLeft{w: w, n: n}, nil
	case checkpoint.StepShrinkSTS:
		return &ShrinkStatefulSet{w: w, n: n}, nil
	case checkpoint.StepWaitPodGone:
		return &WaitPodGone{w: w, n: n}, nil
	case checkpoint.StepDeletePVCs:
		if v.Repair {
			return &RepairDeletePVCs{DeletePVCs: &DeletePVCs{w: w, n: n}}, nil
		}
		return &DeletePVCs{w: w, n: n}, nil
	}
	return nil, fmt.Errorf("unknown step kind %q in a %s", kind, w.CP.Kind)
}

// resumeAfterRepair restores the operator once the repair steps are done: unlike after
// a scale, the cluster resource and the StatefulSets need not agree (a repaired CassKop
// continues its own scale-down).
type resumeAfterRepair struct{ *ResumeOperator }

// Safe: nothing to wait for; the steps before it are done.
func (s *resumeAfterRepair) Safe(context.Context) error { return nil }

// Recheck: nothing either. The restore after a scale refuses when the cluster resource
// and the StatefulSets disagree (someone edited the count); after a repair they may
// (CassKop finishes its own scale-down once restored: other racks, or further nodes of
// this one, are still to go), and refusing would leave the operator paused for good.
func (s *resumeAfterRepair) Recheck(context.Context) error { return nil }

// PlanText implements PlanTexter.
func (s *resumeAfterRepair) PlanText() string {
	return fmt.Sprintf("restore %s to %d replicas (it continues from the repaired status)", s.deployment(), s.op.Replicas)
}

// recordDone reports whether the checkpoint records step id as done.
func (w *World) recordDone(id string) bool {
	s, ok := w.CP.Step(id)
	return ok && s.State == checkpoint.StateDone
}

// restoreStarted reports whether the checkpoint records the operator's restore as
// started or done (PauseOperator.Done: the pause then stays done, for every kind).
func (w *World) restoreStarted() bool {
	return w.CP.Started(checkpoint.StepResumeOperator)
}

func (w *World) maintenance() (Maintenance, error) {
	m, ok := w.Nodetool.(Maintenance)
	if !ok {
		return nil, errors.New("this nodetool client cannot drain or clean up")
	}
	return m, nil
}

// ringExcept reads `nodetool status` from a Ready pod of the cluster other than except
// (the pod the step is about), trying each in turn. Only a successful, non-empty read
// counts; an unreadable ring is "unknown".
func (w *World) ringExcept(ctx context.Context, except string) (nodetool.Ring, string, error) {
	r, reader, failed, err := RingExcept(ctx, w.Kube, w.Nodetool, w.Namespace, w.ClusterSelector, except)
	switch {
	case err != nil:
		return r, "", fmt.Errorf("cannot list the cluster's pods: %w", err)
	case reader != "":
		return r, reader, nil
	case len(failed) == 0:
		return r, "", fmt.Errorf("no Ready pod other than %s to read the ring from", except)
	}
	return r, "", fmt.Errorf("ring unreadable: %s", strings.Join(failed, "; "))
}

// RingReader reads the ring as one node sees it (`nodetool status`).
type RingReader = nodetool.StatusReader

// RingExcept is the one way the plugin reads the ring from any node: from the Ready,
// not terminating pods selected by selector other than except, in name order, the
// first successful, non-empty read (nodetool.FirstRing). reader is "" when none
// answered; failed then says why each candidate failed (none: there was no candidate).
// err is a failed pod list.
func RingExcept(ctx context.Context, kube kubernetes.Interface, nt RingReader, ns, selector, except string) (r nodetool.Ring, reader string, failed []string, err error) {
	pods, err := readyPods(ctx, kube, ns, selector, func(pod string) bool { return pod == except })
	if err != nil {
		return r, "", nil, err
	}
	r, i, failed := nodetool.FirstRing(ctx, nt, pods)
	if i < 0 {
		return r, "", failed, nil
	}
	return r, pods[i], nil, nil
}

// readyPods lists, sorted, the Ready pods selected by selector, not being deleted, that
// skip does not leave out: the pods a ring may be read from.
func readyPods(ctx context.Context, kube kubernetes.Interface, ns, selector string, skip func(pod string) bool) ([]string, error) {
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range pods.Items {
		if !skip(p.Name) && p.DeletionTimestamp == nil && PodReady(&p) {
			names = append(names, p.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// podState says in words why a pod is not (yet) a working node, for progress and
// stuck reports: "" when it is Running and Ready.
func podState(p *corev1.Pod) string {
	switch {
	case p == nil:
		return "no pod yet"
	case p.DeletionTimestamp != nil:
		return "terminating"
	case p.Status.Phase == corev1.PodPending:
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return fmt.Sprintf("Pending, not scheduled (%s: %s)", c.Reason, c.Message)
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Waiting != nil {
				return fmt.Sprintf("Pending, container %s waiting (%s)", cs.Name, cs.State.Waiting.Reason)
			}
		}
		return "Pending"
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
			return fmt.Sprintf("container %s waiting (%s, %d restarts)", cs.Name, cs.State.Waiting.Reason, cs.RestartCount)
		}
	}
	if !PodReady(p) {
		return string(p.Status.Phase) + ", not Ready"
	}
	return ""
}

// podPhase is podState, or "Running and Ready".
func podPhase(p *corev1.Pod) string {
	if st := podState(p); st != "" {
		return st
	}
	return "Running and Ready"
}
