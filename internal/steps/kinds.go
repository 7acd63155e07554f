package steps

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// buildKind returns the step implementations of a scale-up, restart or repair.
func buildKind(w *World) (map[string]engine.Step, error) {
	out := map[string]engine.Step{}
	repair := w.CP.Kind == checkpoint.KindRepairOperator
	for _, s := range w.CP.Steps {
		switch s.Kind {
		case checkpoint.StepPauseOperator:
			out[s.ID] = &PauseOperator{w: w, op: *w.CP.PausedOperator}
			continue
		case checkpoint.StepResumeOperator:
			if repair {
				out[s.ID] = &resumeAfterRepair{ResumeOperator: &ResumeOperator{w: w, op: *w.CP.PausedOperator}}
			} else {
				out[s.ID] = &ResumeOperator{w: w, op: *w.CP.PausedOperator}
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
		switch s.Kind {
		case checkpoint.StepGrowSTS:
			out[s.ID] = &GrowStatefulSet{w: w, n: n}
		case checkpoint.StepWaitJoined:
			out[s.ID] = &WaitJoined{w: w, n: n}
		case checkpoint.StepCleanup:
			out[s.ID] = &Cleanup{w: w, n: n}
		case checkpoint.StepDrain:
			out[s.ID] = &Drain{w: w, n: n}
		case checkpoint.StepDeletePod:
			out[s.ID] = &DeletePod{w: w, n: n}
		case checkpoint.StepWaitRestarted:
			out[s.ID] = &WaitRestarted{w: w, n: n}
		case checkpoint.StepOperatorStatus:
			out[s.ID] = &OperatorStatusStep{w: w, n: n}
		case checkpoint.StepDecommission:
			out[s.ID] = &Decommission{w: w, n: n}
		case checkpoint.StepVerifyLeft:
			out[s.ID] = &VerifyLeft{w: w, n: n}
		case checkpoint.StepShrinkSTS:
			out[s.ID] = &ShrinkStatefulSet{w: w, n: n}
		case checkpoint.StepWaitPodGone:
			out[s.ID] = &WaitPodGone{w: w, n: n}
		case checkpoint.StepDeletePVCs:
			if repair {
				out[s.ID] = &RepairDeletePVCs{DeletePVCs: &DeletePVCs{w: w, n: n}}
			} else {
				out[s.ID] = &DeletePVCs{w: w, n: n}
			}
		default:
			return nil, fmt.Errorf("unknown step kind %q in a %s", s.Kind, w.CP.Kind)
		}
	}
	return out, nil
}

// resumeAfterRepair restores the operator once the repair steps are done: unlike after
// a scale, the cluster resource and the StatefulSets need not agree (a repaired CassKop
// continues its own scale-down).
type resumeAfterRepair struct{ *ResumeOperator }

// Safe: nothing to wait for; the steps before it are done.
func (s *resumeAfterRepair) Safe(context.Context) error { return nil }

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
	pods, err := w.Kube.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.ClusterSelector})
	if err != nil {
		return nodetool.Ring{}, "", fmt.Errorf("cannot list the cluster's pods: %w", err)
	}
	var cands []corev1.Pod
	for _, p := range pods.Items {
		if p.Name != except && p.DeletionTimestamp == nil && PodReady(&p) {
			cands = append(cands, p)
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].Name < cands[j].Name })
	if len(cands) == 0 {
		return nodetool.Ring{}, "", fmt.Errorf("no Ready pod other than %s to read the ring from", except)
	}
	var errs []string
	for _, p := range cands {
		r, err := w.Nodetool.Status(ctx, p.Name)
		if err == nil && len(r.Nodes) > 0 {
			return r, p.Name, nil
		}
		if err == nil {
			err = nodetool.ErrEmpty
		}
		errs = append(errs, err.Error())
		if ctx.Err() != nil {
			break
		}
	}
	return nodetool.Ring{}, "", fmt.Errorf("ring unreadable: %s", strings.Join(errs, "; "))
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

// stallWatch emits one warning, with what to check, once a wait has lasted StallAfter.
type stallWatch struct {
	w      *World
	id     string
	start  time.Time
	warned bool
}

func (s *stallWatch) check(what, hint string) {
	if s.warned || s.w.StallAfter <= 0 || s.w.now().Sub(s.start) < s.w.StallAfter {
		return
	}
	s.warned = true
	s.w.Reporter.Warn(s.id, fmt.Sprintf("still waiting after %s: %s; %s", s.w.now().Sub(s.start).Round(time.Second), what, hint))
}

// podPhase is podState, or "Running and Ready".
func podPhase(p *corev1.Pod) string {
	if st := podState(p); st != "" {
		return st
	}
	return "Running and Ready"
}
