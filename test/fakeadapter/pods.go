package fakeadapter

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Container is the Cassandra container of the fake operator's pods.
func (a *Adapter) Container() string { return Container }

// ClusterSelector selects every pod of cluster; "" selects the pods of every cluster.
func (a *Adapter) ClusterSelector(cluster string) string {
	if cluster == "" {
		return LabelCluster
	}
	return LabelCluster + "=" + cluster
}

// PodCluster is the cluster a pod with labels belongs to.
func (a *Adapter) PodCluster(labels map[string]string) (string, bool) {
	c := labels[LabelCluster]
	return c, c != ""
}

// BusyPods lists the pods of cluster labelled busy, with the label's value (what the
// operator does there).
func (a *Adapter) BusyPods(ctx context.Context, ns, cluster string) ([]string, error) {
	l, err := a.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelCluster + "=" + cluster + "," + LabelBusy})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range l.Items {
		out = append(out, "pod "+p.Name+": "+p.Labels[LabelBusy])
	}
	return out, nil
}
