package cassoperator

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// The plugin never pauses cass-operator (operator.Scaler: it is the one that acts); it
// finds its Deployments to know whether one runs and manages the namespace, without
// which a requested size would never be acted on.

// Operators finds every cass-operator Deployment that manages ns, running or not. One
// cluster-wide list covers ns too; a user who may only read ns gets Forbidden and then
// ns alone is asked (an operator elsewhere cannot be seen then).
func (a *Adapter) Operators(ctx context.Context, ns string) ([]operator.Controller, error) {
	list, err := a.Kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		list, err = a.Kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("cannot list Deployments in %s to look for cass-operator: %w", ns, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("cannot list Deployments to look for cass-operator: %w", err)
	}
	var out []operator.Controller
	for i := range list.Items {
		op, ok := ControllerOf(&list.Items[i])
		if ok && Manages(op, ns) {
			out = append(out, op)
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
	for _, op := range all {
		if op.Running() {
			out = append(out, op)
		}
	}
	return out, nil
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
		Watch: watchNamespace(d, c), IsRunning: replicas > 0 || d.Status.Replicas > 0,
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
		if imageRepo(c.Image) == "cass-operator" {
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

// imageRepo is the last path element of an image reference, without tag or digest:
// "cr.k8ssandra.io/k8ssandra/cass-operator:v1.32.0" -> "cass-operator".
func imageRepo(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, "/"); i >= 0 {
		image = image[i+1:]
	}
	if i := strings.Index(image, ":"); i >= 0 {
		image = image[:i]
	}
	return strings.ToLower(image)
}

// watchNamespace is what cass-operator's manager container watches, from its
// WATCH_NAMESPACE: unset or empty = every namespace; several namespaces are a comma
// list (cmd/main.go, utils.GetWatchNamespace). Both installs set it to the pod's own
// namespace through the downward API unless installed cluster-scoped (value "").
// A value taken from elsewhere (a ConfigMap, a Secret) cannot be read here: it counts
// as every namespace, so an operator that may act is never missed.
func watchNamespace(d *appsv1.Deployment, c corev1.Container) string {
	for _, e := range c.Env {
		if e.Name != "WATCH_NAMESPACE" {
			continue
		}
		if e.ValueFrom != nil {
			if e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
				return d.Namespace
			}
			return ""
		}
		return strings.TrimSpace(e.Value)
	}
	return ""
}

// watched is the namespaces of a Controller's Watch (nil = every namespace).
func watched(op operator.Controller) []string {
	if op.Watch == "" {
		return nil
	}
	var out []string
	for _, ns := range strings.Split(op.Watch, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// Manages reports whether op manages namespace ns.
func Manages(op operator.Controller, ns string) bool {
	list := watched(op)
	if list == nil {
		return true
	}
	for _, w := range list {
		if w == ns {
			return true
		}
	}
	return false
}

// ManagedClusters lists the CassandraDatacenters op manages: those of the namespaces it
// watches, or of every namespace. Listing across namespaces may be forbidden: the error
// says so (apierrors.IsForbidden).
func (a *Adapter) ManagedClusters(ctx context.Context, op operator.Controller) ([]topology.Cluster, error) {
	list := watched(op)
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
