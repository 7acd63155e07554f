package operator

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// What every adapter needs to find its operator's Deployments: both operators are
// recognised by their image and told where they act by WATCH_NAMESPACE.

// ImageRepo is the last path element of an image reference, lower case, without tag or
// digest: "ghcr.io/cscetbon/casskop:2.3.4" -> "casskop",
// "cr.k8ssandra.io/k8ssandra/cass-operator@sha256:…" -> "cass-operator".
func ImageRepo(image string) string {
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

// WatchNamespace is what container c of d watches, from its WATCH_NAMESPACE: unset or
// empty = every namespace; the downward API's metadata.namespace = d's own namespace
// (both operators' charts set it so); several namespaces a comma list (cass-operator's
// cmd/main.go, utils.GetWatchNamespace). A value taken from a ConfigMap or a Secret
// cannot be read here: it counts as every namespace, so an operator that may act is
// never missed.
func WatchNamespace(d *appsv1.Deployment, c corev1.Container) string {
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

// Watched is the namespaces of c's Watch (nil = every namespace).
func (c Controller) Watched() []string {
	if c.Watch == "" {
		return nil
	}
	var out []string
	for _, ns := range strings.Split(c.Watch, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// Manages reports whether c manages namespace ns. A comma list counts for every
// operator: one that cannot read it (CassKop watches one namespace) acts nowhere, and
// counting it is the side that never misses an operator that may act.
func (c Controller) Manages(ns string) bool {
	list := c.Watched()
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

// FindControllers lists the Deployments that `of` recognises as the operator's (title
// names it in errors) and that manage ns, running or not. One cluster-wide list covers
// ns too; a user who may only read ns gets Forbidden and then ns alone is asked (an
// operator elsewhere cannot be seen then).
func FindControllers(ctx context.Context, kube kubernetes.Interface, ns, title string, of func(*appsv1.Deployment) (Controller, bool)) ([]Controller, error) {
	list, err := kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		list, err = kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("cannot list Deployments in %s to look for %s: %w", ns, title, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("cannot list Deployments to look for %s: %w", title, err)
	}
	var out []Controller
	for i := range list.Items {
		if op, ok := of(&list.Items[i]); ok && op.Manages(ns) {
			out = append(out, op)
		}
	}
	return out, nil
}

// RunningOnly keeps the controllers that may act now.
func RunningOnly(all []Controller) []Controller {
	var out []Controller
	for _, op := range all {
		if op.Running() {
			out = append(out, op)
		}
	}
	return out
}
