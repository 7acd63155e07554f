package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// pauseOperator scales the operator's Deployment to 0 and waits until its pods are gone,
// so it cannot grow a StatefulSet back while the rack shrinks (CassKop has no pause
// switch).
type pauseOperator struct{ operatorStep }

// operatorStep is what the operator's pause and its restore share: the World and the
// Deployment as planned.
type operatorStep struct {
	w  *World
	op record.PausedOperator
}

// deployment names the operator's Deployment in messages.
func (s operatorStep) deployment() string {
	return "operator Deployment " + s.op.Namespace + "/" + s.op.Name
}

// done is the pause's and the restore's Done: a Deployment that is gone leaves nothing
// to pause or restore; otherwise test decides from it and its holders.
func (s operatorStep) done(ctx context.Context, test func(d *appsv1.Deployment, holders []record.PauseHolder) (bool, error)) (bool, error) {
	d, holders, err := readOperator(ctx, s.w, s.op)
	if d == nil || err != nil {
		return d == nil && err == nil, err
	}
	return test(d, holders)
}

// Describe implements engine.Describer.
func (s *pauseOperator) Describe() string {
	return fmt.Sprintf("pause %s (scale %d -> 0)", s.deployment(), s.op.Replicas)
}

// PlanText implements PlanTexter.
func (s *pauseOperator) PlanText() string {
	return fmt.Sprintf("pause %s: scale %d -> 0 and wait for its pods to go", s.deployment(), s.op.Replicas)
}

// Done: paused now with this operation among its holders (or the Deployment is gone).
// Once the restore that follows the pause has started, the pause stays done: a resume
// after the restore was written (the run died before the restore's done mark or the
// checkpoint's removal reached the server) must not pause the operator again. The
// restore is written "started" before it acts (it is not engine.Evident), so this also
// covers a crash between the restore's write and its done mark (TestResumeAfterOperatorRestore).
func (s *pauseOperator) Done(ctx context.Context) (bool, error) {
	if s.w.restoreStarted() {
		return true, nil
	}
	return s.done(ctx, func(d *appsv1.Deployment, holders []record.PauseHolder) (bool, error) {
		if record.HolderIndex(holders, s.w.CP.OperationID) < 0 {
			return false, nil
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
			return false, nil
		}
		if d.Spec.Selector == nil || len(d.Spec.Selector.MatchLabels)+len(d.Spec.Selector.MatchExpressions) == 0 {
			return d.Status.Replicas == 0, nil
		}
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			return false, err
		}
		pods, err := s.w.Kube.CoreV1().Pods(s.op.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return false, fmt.Errorf("cannot list the operator's pods: %w", err)
		}
		return len(pods.Items) == 0, nil
	})
}

// Safe: it is still the operator that was planned. A Deployment re-created under the
// same name (a reinstall, a GitOps replace) is the operator again when the adapter
// recognises it as one by what it is (image, command, labels), not by the UID read at
// planning: it is paused in its turn, and its UID recorded.
func (s *pauseOperator) Safe(ctx context.Context) error {
	d, err := s.w.Kube.AppsV1().Deployments(s.op.Namespace).Get(ctx, s.op.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("cannot read Deployment %s/%s: %w", s.op.Namespace, s.op.Name, err)
	}
	if string(d.UID) == s.op.UID {
		return nil
	}
	if s.w.IsOperator == nil || !s.w.IsOperator(d) {
		return fmt.Errorf("Deployment %s/%s was re-created (UID %s, planned %s) and is not recognised as the operator", s.op.Namespace, s.op.Name, d.UID, s.op.UID)
	}
	if s.w.Reporter != nil {
		s.w.Reporter.Warn(record.StepPauseOperator, fmt.Sprintf("%s was re-created (UID %s, planned %s); it is the operator: pausing it", s.deployment(), d.UID, s.op.UID))
	}
	uid := string(d.UID)
	s.w.amend(func() {
		if s.w.CP.PausedOperator != nil {
			s.w.CP.PausedOperator.UID = uid
		}
	})
	return nil
}

// Do adds this operation to the Deployment's holders and scales it to 0, in one write
// with a resourceVersion precondition. Joining an operator another operation already
// paused records the first holder's replicas (the count from before any pause).
func (s *pauseOperator) Do(ctx context.Context) error {
	dropped, err := pauseDeployment(ctx, s.w, s.op)
	reportDropped(s.w, record.StepPauseOperator, s.op, dropped)
	return err
}

// resumeOperator restores the operator's recorded replicas once the cluster resource
// and every StatefulSet agree, so the operator finds nothing to change.
type resumeOperator struct{ operatorStep }

// Describe implements engine.Describer.
func (s *resumeOperator) Describe() string {
	return fmt.Sprintf("restore %s to %d replicas", s.deployment(), s.op.Replicas)
}

// PlanText implements PlanTexter.
func (s *resumeOperator) PlanText() string {
	return fmt.Sprintf("restore %s to %d replicas (the cluster resource and the StatefulSets agree)", s.deployment(), s.op.Replicas)
}

// Done: this operation no longer holds the Deployment paused, and it runs again unless
// another operation that still stands holds it (or the Deployment is gone). Holders
// whose operation is gone do not count: Do removes them.
func (s *resumeOperator) Done(ctx context.Context) (bool, error) {
	return s.done(ctx, func(d *appsv1.Deployment, holders []record.PauseHolder) (bool, error) {
		if record.HolderIndex(holders, s.w.CP.OperationID) >= 0 {
			return false, nil
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
			return true, nil
		}
		kept, _ := dropStale(holders, JudgeHolders(ctx, s.w.Judge, holders, s.w.CP.OperationID), s.w.CP.Namespace, s.w.CP.Cluster)
		return len(kept) > 0, nil
	})
}

// Safe: nothing here; the agreement of the cluster resource and the StatefulSets is
// checked by Recheck, from reads made after the restore's "started" write, right before
// the Deployment is written (one read of each, as Safe made before).
func (s *resumeOperator) Safe(context.Context) error { return nil }

// Recheck implements engine.Rechecker: the restore goes ahead only when the cluster
// resource asks for what every StatefulSet has, read now. Otherwise someone edited
// nodesPerRacks: stop with exit 3 naming the edit and the ways forward (the operator
// would change the StatefulSets to follow the edit).
func (s *resumeOperator) Recheck(ctx context.Context) error {
	want := newUpdateCluster(s.w).want
	spec, err := s.w.Spec.RackNodes(ctx)
	if err != nil {
		return fmt.Errorf("cannot read the cluster resource before restoring %s: %w", s.deployment(), err)
	}
	var have []string
	for _, r := range s.w.Racks {
		sts, err := s.w.Kube.AppsV1().StatefulSets(s.w.Namespace).Get(ctx, r.StatefulSet, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("cannot read StatefulSet %s before restoring %s: %w", r.StatefulSet, s.deployment(), err)
		}
		if n := replicasOf(sts); n != spec[r.Name] || n != want[r.Name] {
			have = append(have, fmt.Sprintf("%s has %d", r.StatefulSet, n))
		}
	}
	if sameCounts(spec, want) && len(have) == 0 {
		return nil
	}
	return s.editedSpec(countText(subset(spec, want)), countText(want), have)
}

// editedSpec is the refusal to restore the operator after someone edited the spec's
// counts (now) away from what the StatefulSets have (want).
func (s *resumeOperator) editedSpec(now, want string, have []string) error {
	ns, cl, dc, field := s.w.CP.Namespace, s.w.CP.Cluster, s.w.CP.Target.DC, s.w.countWords()
	if len(have) == 0 {
		have = []string{fmt.Sprintf("every StatefulSet has %s", want)}
	}
	return &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("not restoring %s: %s of %s is now %s in the cluster resource, but the StatefulSets have %s (%s): someone edited it, and the operator would change the StatefulSets to follow. "+
		"The operator stays paused. Put %s of %s back to %s and run `kubectl cassandra resume -n %s %s`, or run `kubectl cassandra abort -n %s %s`, which sets %s to the StatefulSets' replicas and restores the operator",
		s.deployment(), field, dc, now, want, strings.Join(have, ", "), field, dc, want, ns, cl, ns, cl, field)}
}

// subset is m restricted to the racks of keys.
func subset(m, keys map[string]int) map[string]int {
	out := make(map[string]int, len(keys))
	for k := range keys {
		out[k] = m[k]
	}
	return out
}

// Do leaves the Deployment's holders and restores the replicas if no other operation
// holds it.
func (s *resumeOperator) Do(ctx context.Context) error {
	dropped, err := RestoreOperator(ctx, s.w, s.op, true)
	reportDropped(s.w, record.StepResumeOperator, s.op, dropped)
	return err
}

// RestoreOperator releases this operation's hold on a paused operator (used by the
// restore step and by abort): it removes the operation from the Deployment's holders,
// and the holders whose operation is gone (JudgeHolders: they would keep the operator
// paused for nobody), and, when no holder is left, scales it back to the replicas
// recorded before the first pause. It does nothing if the Deployment is gone, if
// another operation still holds it, or if it already runs. pausedByUs says this
// operation's pause ran: only then is an operator at 0 with no holder list its own (a
// plugin version before the list paused it). dropped lists the stale holders removed.
func RestoreOperator(ctx context.Context, w *World, op record.PausedOperator, pausedByUs bool) (dropped []StaleHolder, err error) {
	stale, err := judgeOperator(ctx, w, op)
	if err != nil {
		return nil, err
	}
	return restoreJudged(ctx, w, op, pausedByUs, stale)
}

// ReleaseStale is RestoreOperator for a caller that has just judged op's holders
// itself (stale, with no operation of its own): it spares a second read and judgement
// of every holder. The write is still guarded by the Deployment's resourceVersion.
func ReleaseStale(ctx context.Context, w *World, op record.PausedOperator, stale []StaleHolder) ([]StaleHolder, error) {
	return restoreJudged(ctx, w, op, false, stale)
}

// restoreJudged is RestoreOperator's write, with the holders judged already.
func restoreJudged(ctx context.Context, w *World, op record.PausedOperator, pausedByUs bool, stale []StaleHolder) (dropped []StaleHolder, err error) {
	err = writeDeployment(ctx, w, op, func(d *appsv1.Deployment, holders []record.PauseHolder) ([]record.PauseHolder, *int32, bool) {
		replicas := op.Replicas
		i := record.HolderIndex(holders, w.CP.OperationID)
		if i >= 0 {
			replicas = holders[i].Replicas
		} else if len(holders) > 0 {
			replicas = holders[0].Replicas
		}
		var kept []record.PauseHolder
		kept, dropped = dropStale(holders, stale, w.CP.Namespace, w.CP.Cluster)
		if j := record.HolderIndex(kept, w.CP.OperationID); j >= 0 {
			kept = append(append([]record.PauseHolder{}, kept[:j]...), kept[j+1:]...)
		}
		switch {
		case len(kept) > 0:
			return kept, nil, i >= 0 || len(dropped) > 0 // another operation still needs it paused
		case i >= 0 || len(dropped) > 0:
			return nil, &replicas, true
		case len(holders) > 0 || d.Spec.Replicas == nil || *d.Spec.Replicas != 0 || !pausedByUs:
			return nil, nil, false // not ours to restore, or running already
		}
		// Paused without a holder list (by a plugin version before the list): ours.
		return nil, &replicas, true
	})
	return dropped, err
}

// judgeOperator judges the holders of op's Deployment as they are now (none when it is
// gone or its list unreadable: writeDeployment says so).
func judgeOperator(ctx context.Context, w *World, op record.PausedOperator) ([]StaleHolder, error) {
	if w.Judge == nil {
		return nil, nil
	}
	d, holders, err := readOperator(ctx, w, op)
	if d == nil || err != nil {
		return nil, nil
	}
	return JudgeHolders(ctx, w.Judge, holders, w.CP.OperationID), nil
}

// pauseDeployment adds this operation to the holders and scales the operator to 0.
// Holders whose operation is gone are removed in the same write (this operation takes
// over a stale pause of its own cluster); the replicas to restore are still the first
// holder's, the count from before any pause.
func pauseDeployment(ctx context.Context, w *World, op record.PausedOperator) ([]StaleHolder, error) {
	stale, err := judgeOperator(ctx, w, op)
	if err != nil {
		return nil, err
	}
	var dropped []StaleHolder
	err = writeDeployment(ctx, w, op, func(d *appsv1.Deployment, holders []record.PauseHolder) ([]record.PauseHolder, *int32, bool) {
		zero := int32(0)
		running := d.Spec.Replicas == nil || *d.Spec.Replicas != 0
		me := record.PauseHolder{OperationID: w.CP.OperationID, Namespace: w.CP.Namespace, Cluster: w.CP.Cluster, Replicas: op.Replicas}
		switch {
		case len(holders) > 0:
			me.Replicas = holders[0].Replicas
		case d.Spec.Replicas == nil:
			me.Replicas = 1
		case *d.Spec.Replicas > 0:
			me.Replicas = *d.Spec.Replicas
		}
		var kept []record.PauseHolder
		kept, dropped = dropStale(holders, stale, w.CP.Namespace, w.CP.Cluster)
		if i := record.HolderIndex(kept, w.CP.OperationID); i >= 0 {
			return kept, &zero, running || len(dropped) > 0
		}
		return append(kept, me), &zero, true
	})
	return dropped, err
}

// writeDeployment reads the operator Deployment, lets change decide its new holder
// list and replicas (nil: unchanged), and writes both in one merge patch with a
// resourceVersion precondition; a conflict is retried from a fresh read.
func writeDeployment(ctx context.Context, w *World, op record.PausedOperator,
	change func(d *appsv1.Deployment, holders []record.PauseHolder) (newHolders []record.PauseHolder, replicas *int32, write bool)) error {
	ctx, cancel := writeContext(ctx)
	defer cancel()
	d, err := w.Kube.AppsV1().Deployments(op.Namespace).Get(ctx, op.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return &operation.Retryable{Err: fmt.Errorf("cannot read Deployment %s/%s: %w", op.Namespace, op.Name, err)}
	}
	holders, err := record.PauseHolders(d.Annotations)
	if err != nil {
		return fmt.Errorf("Deployment %s/%s: %w; whether another operation holds it paused is unknown: fix or remove the annotation", op.Namespace, op.Name, err)
	}
	newHolders, replicas, write := change(d, holders)
	if !write {
		return nil
	}
	var ann any // JSON null removes the annotation
	if len(newHolders) > 0 {
		b, _ := json.Marshal(newHolders)
		ann = string(b)
	}
	patch := map[string]any{"metadata": map[string]any{
		"resourceVersion": d.ResourceVersion,
		"annotations":     map[string]any{record.PausedByAnnotation: ann},
	}}
	if replicas != nil {
		patch["spec"] = map[string]any{"replicas": *replicas}
	}
	body, _ := json.Marshal(patch)
	_, err = w.Kube.AppsV1().Deployments(op.Namespace).Patch(ctx, op.Name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "kubectl-cassandra"})
	if apierrors.IsConflict(err) {
		return &operation.Retryable{Err: err}
	}
	return err
}

// readOperator reads the operator's Deployment and who holds it paused; a nil
// Deployment and no error when it is gone (then there is nothing to pause or restore).
func readOperator(ctx context.Context, w *World, op record.PausedOperator) (*appsv1.Deployment, []record.PauseHolder, error) {
	d, err := w.Kube.AppsV1().Deployments(op.Namespace).Get(ctx, op.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read Deployment %s/%s: %w", op.Namespace, op.Name, err)
	}
	holders, err := record.PauseHolders(d.Annotations)
	if err != nil {
		return nil, nil, fmt.Errorf("Deployment %s/%s: %w", op.Namespace, op.Name, err)
	}
	return d, holders, nil
}
