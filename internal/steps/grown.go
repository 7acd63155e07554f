package steps

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// changedBy names who changed a StatefulSet the shrink expected at its count (grew: it
// has more replicas than that), read now: the operator Deployment the plan holds paused
// when it runs again (CassKop grows a shrunk StatefulSet back within seconds), else
// someone.
func (w *World) changedBy(ctx context.Context, grew bool) string {
	if !grew || w.CP == nil || w.CP.PausedOperator == nil {
		return grownCause(w.CP, nil, 0)
	}
	op := w.CP.PausedOperator
	d, err := w.Kube.AppsV1().Deployments(op.Namespace).Get(ctx, op.Name, metav1.GetOptions{})
	if err != nil {
		return grownCause(w.CP, nil, 0)
	}
	return grownCause(w.CP, op, deploymentReplicas(d))
}

// grownCause is changedBy's words: op is the operator the plan holds paused, running
// with replicas (nil: none, or not known to run).
func grownCause(cp *record.Checkpoint, op *record.PausedOperator, replicas int32) string {
	if op == nil || replicas == 0 {
		return "someone changed it"
	}
	return fmt.Sprintf("operator Deployment %s/%s, which this operation holds paused, runs again (%d replicas) and grew it back: it fights the change. "+
		"Run `kubectl cassandra resume -n %s %s` to pause it again and continue", op.Namespace, op.Name, replicas, cp.Namespace, cp.Cluster)
}
