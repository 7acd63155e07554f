package fakeadapter

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Operators finds every fake operator Deployment that manages ns, running or not: one
// list across namespaces, or ns alone when that is forbidden.
func (a *Adapter) Operators(ctx context.Context, ns string) ([]operator.Controller, error) {
	sel := metav1.ListOptions{LabelSelector: LabelOperator}
	l, err := a.Kube.AppsV1().Deployments("").List(ctx, sel)
	if apierrors.IsForbidden(err) {
		l, err = a.Kube.AppsV1().Deployments(ns).List(ctx, sel)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list Deployments to look for the %s: %w", Title, err)
	}
	var out []operator.Controller
	for i := range l.Items {
		c, ok := a.ControllerOf(&l.Items[i])
		if ok && (c.Watch == "" || c.Watch == ns) {
			out = append(out, c)
		}
	}
	return out, nil
}

// RunningOperators is Operators, the running ones only.
func (a *Adapter) RunningOperators(ctx context.Context, ns string) ([]operator.Controller, error) {
	all, err := a.Operators(ctx, ns)
	if err != nil {
		return nil, err
	}
	var out []operator.Controller
	for _, c := range all {
		if c.Running() {
			out = append(out, c)
		}
	}
	return out, nil
}

// ControllerOf describes d if it carries LabelOperator.
func (a *Adapter) ControllerOf(d *appsv1.Deployment) (operator.Controller, bool) {
	if _, ok := d.Labels[LabelOperator]; !ok {
		return operator.Controller{}, false
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	return operator.Controller{Namespace: d.Namespace, Name: d.Name, Replicas: replicas, Watch: d.Annotations[AnnotationWatch],
		PausedBy: record.Holders(d.Annotations), IsRunning: replicas > 0 || d.Status.Replicas > 0}, true
}

// ManagedClusters lists the clusters c manages.
func (a *Adapter) ManagedClusters(ctx context.Context, c operator.Controller) ([]topology.Cluster, error) {
	return a.List(ctx, c.Watch)
}
