package cassoperator

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// WatchResource watches the CassandraDatacenter name of ns (operator.Watches): its
// status (progress, conditions, nodeStatuses) is the operator's evidence.
func (a *Adapter) WatchResource(ctx context.Context, ns, name string) (watch.Interface, error) {
	c, err := a.client(ns)
	if err != nil {
		return nil, err
	}
	return c.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(), ResourceVersion: "0"})
}

// WatchTasks watches the CassandraTasks of ns (operator.Watches).
func (a *Adapter) WatchTasks(ctx context.Context, ns string) (watch.Interface, error) {
	return a.Dynamic.Resource(TaskGVR).Namespace(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
}

// Unsettled says what cass-operator still does with the datacenter dc of resource
// name (operator.Settler; "" when it is settled): its progress is Ready, no scaling
// condition is True, and it labels every pod of the datacenter node-state Started
// (reconcile_racks.go labels a pod Started once its node runs and the pod is Ready).
// The resource is read each time; the pods are listed unless kept is the list a former
// call returned and the caller saw no pod change since: a LIST right after other writes
// waits for the API server's watch cache to catch up (tens of ms), a GET does not.
func (a *Adapter) Unsettled(ctx context.Context, ns, name, dc string, kept *corev1.PodList) (string, *corev1.PodList, error) {
	u, err := a.get(ctx, ns, name)
	if err != nil {
		return "", nil, err
	}
	d, err := read(u)
	if err != nil {
		return "", nil, err
	}
	if d.DCName() != dc {
		return "", nil, fmt.Errorf("%s %s is datacenter %s, not %s", Kind, name, d.DCName(), dc)
	}
	l := kept
	if l == nil {
		if l, err = a.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: a.ClusterSelector(name)}); err != nil {
			return "", nil, fmt.Errorf("cannot list the pods of %s %s/%s: %w", Kind, ns, name, err)
		}
	}
	return unsettled(d, l.Items), l, nil
}

// unsettled is Unsettled's judgement over what was read.
func unsettled(d datacenter, pods []corev1.Pod) string {
	var why []string
	if p := d.Status.CassandraOperatorProgress; p != "Ready" {
		why = append(why, fmt.Sprintf("its progress is %q, not Ready", p))
	}
	for _, c := range []string{"ScalingUp", "ScalingDown"} {
		if d.isTrue(c) {
			why = append(why, c+"=True")
		}
	}
	var states []string
	for i := range pods {
		if s := pods[i].Labels[LabelNodeState]; s != StateStarted {
			if s == "" {
				s = "no node-state"
			}
			states = append(states, fmt.Sprintf("pod %s is %s", pods[i].Name, s))
		}
	}
	sort.Strings(states)
	return strings.Join(append(why, states...), ", ")
}
