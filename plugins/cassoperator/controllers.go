package cassoperator

import (
	"context"
	"path"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// The plugin never pauses cass-operator (operator.Scaler: it is the one that acts); it
// finds its Deployments to know whether one runs and manages the namespace, without
// which a requested size would never be acted on.

// Operators finds every cass-operator Deployment that manages ns, running or not.
func (a *Adapter) Operators(ctx context.Context, ns string) ([]operator.Controller, error) {
	return operator.FindControllers(ctx, a.Kube, ns, "cass-operator", ControllerOf)
}

// RunningOperators is Operators, the running ones only.
func (a *Adapter) RunningOperators(ctx context.Context, ns string) ([]operator.Controller, error) {
	all, err := a.Operators(ctx, ns)
	return operator.RunningOnly(all), err
}

// ControllerOf describes d if it is a cass-operator Deployment.
func (a *Adapter) ControllerOf(d *appsv1.Deployment) (operator.Controller, bool) {
	return ControllerOf(d)
}

// ControllerOf describes d if it is a cass-operator Deployment (IsCassOperator): its
// replicas, whether it runs, the namespaces it watches, and the operations that hold
// it paused (none, as the plugin never pauses cass-operator; read anyway so a stray
// annotation is seen).
func ControllerOf(d *appsv1.Deployment) (operator.Controller, bool) {
	c, ok := managerContainer(d)
	if !ok {
		return operator.Controller{}, false
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	op := operator.Controller{Namespace: d.Namespace, Name: d.Name, Replicas: replicas,
		Watch: operator.WatchNamespace(d, c), IsRunning: replicas > 0 || d.Status.Replicas > 0,
		// Only a status its controller wrote (observedGeneration) tells: a Deployment
		// nobody reconciled yet says nothing about its pods.
		NotReady: replicas > 0 && d.Status.ObservedGeneration > 0 && d.Status.ReadyReplicas == 0}
	if hs, err := record.PauseHolders(d.Annotations); err != nil {
		op.PausedBy = []record.PauseHolder{{OperationID: "(unreadable " + record.PausedByAnnotation + ")"}}
	} else {
		op.PausedBy = hs
	}
	return op, true
}

// IsCassOperator recognises a cass-operator Deployment by what is its own: a container
// whose image repository is cass-operator (k8ssandra/cass-operator, the older
// datastax/cass-operator, cr.k8ssandra.io/k8ssandra/cass-operator or a mirror), or the
// label app.kubernetes.io/name=cass-operator that both the kustomize install
// (config/manager/manager.yaml, Deployment cass-operator-controller-manager, container
// manager) and the Helm chart (k8ssandra/k8ssandra charts/cass-operator: Deployment
// <release>-cass-operator, container cass-operator) give it. k8ssandra-operator's own
// Deployment (image k8ssandra-operator) is not one.
func IsCassOperator(d *appsv1.Deployment) bool {
	_, ok := managerContainer(d)
	return ok
}

// managerContainer is the container running cass-operator's manager in d: the one whose
// image is cass-operator's, else (recognised by its label) the one named manager or
// cass-operator, or running /manager, else its first container.
func managerContainer(d *appsv1.Deployment) (corev1.Container, bool) {
	cs := d.Spec.Template.Spec.Containers
	for _, c := range cs {
		if operator.ImageRepo(c.Image) == "cass-operator" {
			return c, true
		}
	}
	if d.Labels["app.kubernetes.io/name"] != "cass-operator" || len(cs) == 0 {
		return corev1.Container{}, false
	}
	for _, c := range cs {
		if c.Name == "manager" || c.Name == "cass-operator" || (len(c.Command) > 0 && path.Base(c.Command[0]) == "manager") {
			return c, true
		}
	}
	return cs[0], true
}

// ManagedClusters lists the CassandraDatacenters op manages: those of the namespaces it
// watches, or of every namespace. Listing across namespaces may be forbidden: the error
// says so (apierrors.IsForbidden).
func (a *Adapter) ManagedClusters(ctx context.Context, op operator.Controller) ([]topology.Cluster, error) {
	list := op.Watched()
	if list == nil {
		return a.List(ctx, "")
	}
	var out []topology.Cluster
	for _, ns := range list {
		cls, err := a.List(ctx, ns)
		if err != nil {
			return nil, err
		}
		out = append(out, cls...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}
