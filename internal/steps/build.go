package steps

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Variant is how an operation kind's steps differ from the same steps in other kinds
// (each kind's package passes its own: internal/operation/*).
type Variant struct {
	// Repair: the steps finish a decommission the operator started and left stuck
	// (repair-operator-state): the plan says the decommission was already fired, the
	// claims are deleted only while no pod mounts them (repairDeletePVCs), and the
	// operator is restored without waiting for the cluster resource and the
	// StatefulSets to agree (the operator continues its own scale-down).
	Repair bool
	// RingReaders (scale-down): the safety checks read the ring first from the ring
	// readers, pods outside the plan remembered between reads (they stay while the
	// plan's nodes leave). Without it they read it from any Ready pod but the one acted on.
	RingReaders bool
	// Driven: the operator acts (operator.Scaler) and the steps ask it and verify
	// (driven.go); the waits also watch the operator for its stuck states.
	Driven bool
	// Force (remove-dc on 5.0): each decommission asks Now right before it runs, and
	// runs with --force when it says so (the plan says When). nil: the checkpoint's
	// Force alone decides.
	Force *ForceRule
}

// ForceRule is a kind's condition for a decommission with --force (Variant.Force).
type ForceRule struct {
	// When says in the plan when --force is given.
	When string
	// Now reads the world right before the decommission; an error is "unknown": the
	// decommission is not called and the step retries.
	Now func(ctx context.Context) (bool, error)
}

// Build returns the implementations of the checkpoint's steps, one per step record.
func Build(w *World, v Variant) (map[string]operation.Step, error) {
	out := map[string]operation.Step{}
	for _, s := range w.CP.Steps {
		st, err := BuildOne(w, v, s)
		if err != nil {
			return nil, err
		}
		out[s.ID] = st
	}
	return out, nil
}

// BuildOne returns the implementation of one step record of the library (a kind that
// owns steps of its own builds the rest: its BuildSteps).
func BuildOne(w *World, v Variant, s record.Step) (operation.Step, error) {
	v.Driven = v.Driven || w.Scaler != nil
	w.variant = v
	switch s.Kind {
	case record.StepPauseOperator:
		return &pauseOperator{operatorStep{w, *w.CP.PausedOperator}}, nil
	case record.StepResumeOperator:
		if v.Repair {
			return &resumeAfterRepair{resumeOperator: &resumeOperator{operatorStep{w, *w.CP.PausedOperator}}}, nil
		}
		return &resumeOperator{operatorStep{w, *w.CP.PausedOperator}}, nil
	case StepUpdateCluster:
		return newUpdateCluster(w), nil
	case record.StepCreateTask:
		return &createTask{w}, nil
	case record.StepWaitTaskDone:
		return &waitTaskDone{taskWait{w}}, nil
	case record.StepDeleteLeftoverPVCs:
		return newLeftoverStep(w, s.Pod)
	case record.StepRecordThroughput, record.StepSetThroughput, record.StepRestoreThroughput:
		return newThroughputStep(w, s)
	}
	n, ok := w.CP.Node(s.Pod)
	if !ok {
		return nil, fmt.Errorf("step %s names pod %s, which is not in the plan", s.ID, s.Pod)
	}
	return newNodeStep(w, v, s.Kind, n)
}

// node is what every node step holds: the World and the planned node it is about.
type node struct {
	w *World
	n record.Node
}

// nodeStep is a step about one planned node. Each type says which checkpoint step kind
// it implements, next to its Describe, so a step's kind, wording and logic are in one
// place.
type nodeStep interface {
	operation.Step

	kind() string
}

// nodeSteps is one step of every node step type, about on: adding a step type is
// adding it here.
func nodeSteps(on node) []nodeStep {
	return []nodeStep{&waitJoined{waiting{on}}, &decommission{node: on}, &removeNode{node: on},
		&verifyLeft{node: on}, &shrinkStatefulSet{node: on}, &waitPodGone{node: on}, &deletePVCs{node: on},
		&requestRemoval{sizeRequest{on, true}}, &waitLeaving{driven: driven{on}}, &waitClaimsGone{driven{on}}, &waitReleased{driven{on}},
		&requestGrowth{sizeRequest{on, false}}, &waitCleaned{driven{on}}}
}

// varies is a node step that differs by operation kind (Variant): it returns the step
// to run for v.
type varies interface {
	variant(v Variant) operation.Step
}

// newNodeStep is the implementation of a step of kind about node n.
func newNodeStep(w *World, v Variant, kind string, n record.Node) (operation.Step, error) {
	for _, s := range nodeSteps(node{w, n}) {
		if s.kind() != kind {
			continue
		}
		if vs, ok := s.(varies); ok {
			return vs.variant(v), nil
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown step kind %q in a %s", kind, w.CP.Kind)
}

// resumeAfterRepair restores the operator once the repair steps are done: unlike after
// a scale, the cluster resource and the StatefulSets need not agree (a repaired CassKop
// continues its own scale-down).
type resumeAfterRepair struct{ *resumeOperator }

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
	return ok && s.State == record.StateDone
}

// restoreStarted reports whether the checkpoint records the operator's restore as
// started or done (pauseOperator.Done: the pause then stays done, for every kind).
func (w *World) restoreStarted() bool {
	return w.CP.Started(record.StepResumeOperator)
}

// ringExcept reads `nodetool status` from a Ready pod of the cluster other than except
// (the pod the step is about), trying each in turn. Only a successful, non-empty read
// counts; an unreadable ring is "unknown".
func (w *World) ringExcept(ctx context.Context, except string) (pubnodetool.Ring, string, error) {
	r, reader, failed, err := RingExcept(ctx, w.Kube, w.Nodetool, w.Namespace, w.ClusterSelector, except)
	switch {
	case err != nil:
		return r, "", fmt.Errorf("cannot list the cluster's pods: %w", err)
	case reader != "":
		return r, reader, nil
	case len(failed) == 0:
		return r, "", fmt.Errorf("no Ready pod%s to read the ring from%s", otherThan(except), w.notReadyWords(ctx, except))
	}
	return r, "", fmt.Errorf("ring unreadable: %s", strings.Join(failed, "; "))
}

func otherThan(pod string) string {
	if pod == "" {
		return ""
	}
	return " other than " + pod
}

// notReadyWords names the cluster's pods but except that cannot read the ring, with
// their state (" (pod a: Running, not Ready)"): why no reader was found. A second list,
// only on that path.
func (w *World) notReadyWords(ctx context.Context, except string) string {
	l, err := w.Kube.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.ClusterSelector})
	if err != nil {
		return ""
	}
	var bad []string
	for i := range l.Items {
		p := &l.Items[i]
		if p.Name == except {
			continue
		}
		if st := PodState(p); st != "" {
			bad = append(bad, "pod "+p.Name+": "+st)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	sort.Strings(bad)
	return " (" + strings.Join(bad, "; ") + ")"
}

// RingExcept is the one way the plugin reads the ring from any node: from the Ready,
// not terminating pods selected by selector other than except, in name order, the
// first successful, non-empty read (nodetool.FirstRing). reader is "" when none
// answered; failed then says why each candidate failed (none: there was no candidate).
// err is a failed pod list.
func RingExcept(ctx context.Context, kube kubernetes.Interface, nt nodetool.StatusReader, ns, selector, except string) (r pubnodetool.Ring, reader string, failed []string, err error) {
	pods, err := readyPods(ctx, kube, ns, selector, "", func(pod string) bool { return pod == except })
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
// skip does not leave out: the pods a ring may be read from. rv is the list's
// resourceVersion: "" for a consistent read, fromCache for the API server's watch cache.
func readyPods(ctx context.Context, client kubernetes.Interface, ns, selector, rv string, skip func(pod string) bool) ([]string, error) {
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: rv})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range pods.Items {
		if !skip(p.Name) && p.DeletionTimestamp == nil && kube.PodReady(&p) {
			names = append(names, p.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// PodState says in words why a pod is not (yet) a working node, for progress and
// stuck reports: "" when it is Running and Ready.
func PodState(p *corev1.Pod) string {
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
	if !kube.PodReady(p) {
		return string(p.Status.Phase) + ", not Ready"
	}
	return ""
}
