package lifecycle

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// OperatorToPause finds the operator Deployment the plan must pause: the one named with
// --operator, or the operator Deployment that manages the namespace and runs, or that other
// operations hold paused (this one then joins them: the operator is restored only when
// the last one ends, checkpoint.PausedByAnnotation). With pause disabled a running (or
// held) operator is refused instead.
func (l *Lifecycle) OperatorToPause(ctx context.Context, named string, pause bool) (*record.PausedOperator, error) {
	if _, acts := l.Adapter.(operator.Scaler); acts {
		return nil, l.requireActingOperator(ctx, named)
	}
	var ns, name string
	if named != "" {
		parts := strings.Split(named, "/")
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			return nil, exit.Usagef("--operator must be NAMESPACE/NAME, got %q", named)
		}
		ns, name = parts[0], parts[1]
	} else {
		if !pause {
			return nil, l.refuseRunningOperator(ctx)
		}
		op, err := l.activeOperator(ctx)
		if op == nil || err != nil {
			return nil, err
		}
		ns, name = op.Namespace, op.Name
	}
	d, err := l.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, exit.Usagef("operator Deployment %s/%s not found; nothing changed", ns, name)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read operator Deployment %s/%s: %w", ns, name, err)
	}
	holders, err := record.PauseHolders(d.Annotations)
	if err != nil {
		return nil, exit.Refusedf("operator Deployment %s/%s: %v; whether another operation holds it paused is unknown: fix or remove the annotation (kubectl annotate deployment -n %s %s %s-); nothing changed",
			ns, name, err, ns, name, record.PausedByAnnotation)
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	if replicas == 0 && len(holders) == 0 {
		return nil, nil // stopped by someone else: nothing to pause or restore
	}
	if !pause {
		return nil, l.refuseRunningOperator(ctx)
	}
	p := &record.PausedOperator{Namespace: ns, Name: name, UID: string(d.UID), Replicas: replicas}
	if len(holders) > 0 {
		// Joining: restore what the operator had before the first pause. A holder of this
		// cluster whose operation is gone is taken over instead (the pause step drops it).
		p.Replicas = holders[0].Replicas
		stale := map[string]bool{}
		for _, h := range steps.JudgeHolders(ctx, l.pauseJudge(), holders, "") {
			stale[h.OperationID] = h.Namespace == l.Cluster.Namespace && h.Cluster == l.Cluster.Name
		}
		for _, h := range holders {
			if stale[h.OperationID] {
				p.Adopted = append(p.Adopted, h)
			} else {
				p.Joined = append(p.Joined, h)
			}
		}
	}
	op, isOperator := l.Adapter.ControllerOf(d)
	if named != "" && !isOperator {
		op = operator.Controller{Namespace: d.Namespace, Name: d.Name}
		op.Watch = l.Cluster.Namespace // named by the user: assume it manages this namespace
	}
	others, err := l.Adapter.ManagedClusters(ctx, op)
	switch {
	case apierrors.IsForbidden(err):
		p.UnmanagedUnknown = fmt.Sprintf("it manages %s and listing %ss there is forbidden to you", op.Scope(), l.Adapter.Kind())
	case err != nil:
		p.UnmanagedUnknown = fmt.Sprintf("it manages %s and listing %ss there failed: %v", op.Scope(), l.Adapter.Kind(), err)
	}
	for _, c := range others {
		if c.Namespace != l.Cluster.Namespace || c.Name != l.Cluster.Name {
			p.Unmanaged = append(p.Unmanaged, c.Namespace+"/"+c.Name)
		}
	}
	return p, nil
}

// activeOperator is the one operator managing the cluster's namespace that runs or
// that other operations hold paused (nil when none; several are refused).
func (l *Lifecycle) activeOperator(ctx context.Context) (*operator.Controller, error) {
	all, err := l.Adapter.Operators(ctx, l.Cluster.Namespace)
	if err != nil {
		return nil, err
	}
	var ops []operator.Controller
	for _, op := range all {
		if op.Running() || len(op.PausedBy) > 0 {
			ops = append(ops, op)
		}
	}
	switch len(ops) {
	case 0:
		return nil, nil
	case 1:
		return &ops[0], nil
	}
	var names []string
	for _, op := range ops {
		names = append(names, op.String())
	}
	return nil, exit.Refusedf("several %s operators manage namespace %s (%s): name the one to pause with --operator NAMESPACE/NAME; nothing changed", l.Adapter.Title(), l.Cluster.Namespace, strings.Join(names, ", "))
}
