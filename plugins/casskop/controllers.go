package casskop

import (
	"context"
	"path"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// RunningOperators finds CassKop Deployments with replicas > 0 that manage ns: in ns
// itself (the chart's default, WATCH_NAMESPACE = its own namespace) and, when the user
// may list Deployments cluster-wide, elsewhere with WATCH_NAMESPACE = ns or empty (all).
func (a *Adapter) RunningOperators(ctx context.Context, ns string) ([]operator.Controller, error) {
	all, err := a.Operators(ctx, ns)
	return operator.RunningOnly(all), err
}

// Operators finds every CassKop Deployment that manages ns, running or not.
func (a *Adapter) Operators(ctx context.Context, ns string) ([]operator.Controller, error) {
	return operator.FindControllers(ctx, a.Kube, ns, "a running CassKop", OperatorOf)
}

// OperatorOf describes d if it is a CassKop Deployment (IsCassKop).
func OperatorOf(d *appsv1.Deployment) (operator.Controller, bool) {
	if !IsCassKop(d) {
		return operator.Controller{}, false
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	op := operator.Controller{Namespace: d.Namespace, Name: d.Name, Replicas: replicas, Watch: watchOf(d),
		IsRunning: replicas > 0 || d.Status.Replicas > 0}
	op.PausedBy = record.Holders(d.Annotations)
	return op, true
}

// IsCassKop recognises a CassKop operator Deployment by what is CassKop's own: a
// container whose image repository is casskop (orangeopensource/casskop,
// ghcr.io/cscetbon/casskop, or a mirror of it) or whose command is casskop (both Helm
// charts run it so), or the labels the cscetbon chart gives it (app=casskop,
// name=casskop). Generic labels (operator=cassandra, app=cassandra-operator, which
// other Cassandra operators' charts use too) are not enough. The charts:
// Orange-OpenSource/casskop helm/cassandra-operator/templates/deployment.yaml and
// cscetbon/casskop charts/casskop/templates/deployment.yaml (image
// orangeopensource/casskop resp. ghcr.io/cscetbon/casskop, command [casskop]).
func IsCassKop(d *appsv1.Deployment) bool {
	if d.Labels["app"] == "casskop" || d.Labels["name"] == "casskop" {
		return true
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if operator.ImageRepo(c.Image) == "casskop" {
			return true
		}
		if len(c.Command) > 0 && path.Base(c.Command[0]) == "casskop" {
			return true
		}
	}
	return false
}

// watchOf is the namespace a CassKop Deployment manages: its container's
// WATCH_NAMESPACE (the charts set it to the pod's own namespace through the downward
// API); unset or empty means every namespace (CassKop's main.go: the manager's cache
// then watches all namespaces).
func watchOf(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if w := operator.WatchNamespace(d, c); w != "" {
			return w
		}
	}
	return ""
}

// ManagedClusters lists the CassandraClusters op manages: those of its namespace, or of
// every namespace when it watches all. Listing across namespaces may be forbidden: the
// error says so (apierrors.IsForbidden).
func (a *Adapter) ManagedClusters(ctx context.Context, op operator.Controller) ([]topology.Cluster, error) {
	return a.List(ctx, op.Watch)
}
