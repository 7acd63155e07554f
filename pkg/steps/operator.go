package steps

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/engine"
)

// PauseOperator scales the operator's Deployment to 0 and waits until its pods are gone,
// so it cannot grow a StatefulSet back while the rack shrinks (CassKop has no pause
// switch).
type PauseOperator struct {
	w  *World
	op checkpoint.PausedOperator
}

// Describe implements engine.Describer.
func (s *PauseOperator) Describe() string {
	return fmt.Sprintf("pause operator Deployment %s/%s (scale %d -> 0)", s.op.Namespace, s.op.Name, s.op.Replicas)
}

// Done: replicas 0 and no pod of the Deployment left (or the Deployment is gone).
func (s *PauseOperator) Done(ctx context.Context) (bool, error) {
	d, err := s.w.Kube.AppsV1().Deployments(s.op.Namespace).Get(ctx, s.op.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("cannot read Deployment %s/%s: %w", s.op.Namespace, s.op.Name, err)
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
}

// Safe: it is still the Deployment that was planned.
func (s *PauseOperator) Safe(ctx context.Context) error {
	d, err := s.w.Kube.AppsV1().Deployments(s.op.Namespace).Get(ctx, s.op.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("cannot read Deployment %s/%s: %w", s.op.Namespace, s.op.Name, err)
	}
	if string(d.UID) != s.op.UID {
		return fmt.Errorf("Deployment %s/%s was re-created (UID %s, planned %s)", s.op.Namespace, s.op.Name, d.UID, s.op.UID)
	}
	return nil
}

// Do scales the Deployment to 0 with a resourceVersion precondition.
func (s *PauseOperator) Do(ctx context.Context) error {
	return scaleDeployment(ctx, s.w, s.op, 0)
}

// ResumeOperator restores the operator's recorded replicas once the cluster resource
// and every StatefulSet agree, so the operator finds nothing to change.
type ResumeOperator struct {
	w  *World
	op checkpoint.PausedOperator
}

// Describe implements engine.Describer.
func (s *ResumeOperator) Describe() string {
	return fmt.Sprintf("restore operator Deployment %s/%s to %d replicas", s.op.Namespace, s.op.Name, s.op.Replicas)
}

// Done: the Deployment has its recorded replicas again (or is gone).
func (s *ResumeOperator) Done(ctx context.Context) (bool, error) {
	d, err := s.w.Kube.AppsV1().Deployments(s.op.Namespace).Get(ctx, s.op.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("cannot read Deployment %s/%s: %w", s.op.Namespace, s.op.Name, err)
	}
	return d.Spec.Replicas != nil && *d.Spec.Replicas == s.op.Replicas, nil
}

// Safe: only when the cluster resource asks for what every StatefulSet has.
func (s *ResumeOperator) Safe(ctx context.Context) error {
	done, err := (&UpdateCluster{w: s.w, target: s.w.CP.Target.Nodes}).Done(ctx)
	if err != nil {
		return err
	}
	if !done {
		return fmt.Errorf("the cluster resource and the StatefulSets do not agree yet; the operator would change them")
	}
	return nil
}

// Do restores the replicas.
func (s *ResumeOperator) Do(ctx context.Context) error {
	return scaleDeployment(ctx, s.w, s.op, s.op.Replicas)
}

// RestoreOperator puts a paused operator back (used by abort); it does nothing if the
// Deployment is gone or already scaled.
func RestoreOperator(ctx context.Context, w *World, op checkpoint.PausedOperator) error {
	return scaleDeployment(ctx, w, op, op.Replicas)
}

func scaleDeployment(ctx context.Context, w *World, op checkpoint.PausedOperator, replicas int32) error {
	ctx, cancel := writeContext(ctx)
	defer cancel()
	d, err := w.Kube.AppsV1().Deployments(op.Namespace).Get(ctx, op.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return &engine.Retryable{Err: fmt.Errorf("cannot read Deployment %s/%s: %w", op.Namespace, op.Name, err)}
	}
	if d.Spec.Replicas != nil && *d.Spec.Replicas == replicas {
		return nil
	}
	body, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": d.ResourceVersion},
		"spec":     map[string]any{"replicas": replicas},
	})
	_, err = w.Kube.AppsV1().Deployments(op.Namespace).Patch(ctx, op.Name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "kubectl-cassandra"})
	if apierrors.IsConflict(err) {
		return &engine.Retryable{Err: err}
	}
	return err
}
