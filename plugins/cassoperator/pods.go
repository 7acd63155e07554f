package cassoperator

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Container is the Cassandra container of cass-operator's pods.
func (a *Adapter) Container() string { return Container }

// podBase selects the pods cass-operator builds for a datacenter's racks: it gives
// every one its rack labels and managed-by=cass-operator, over any label of the user's
// pod template (pkg/reconciliation/construct_podtemplatespec.go, the pod labels
// GetRackLabels + AddOperatorLabels merged last). Services carry the cluster and
// datacenter labels too, never the rack label.
const podBase = LabelManagedBy + "=" + ManagedByValue + "," + LabelCluster + "," + LabelRack

// ClusterSelector selects the Cassandra pods of the CassandraDatacenter named cluster
// (the plugin's cluster is the resource): its datacenter label is the resource's cleaned
// metadata.name, unique in a namespace. "" selects the Cassandra pods of every
// CassandraDatacenter.
func (a *Adapter) ClusterSelector(cluster string) string {
	if cluster == "" {
		return podBase + "," + LabelDatacenter
	}
	return podBase + "," + LabelDatacenter + "=" + CleanLabelValue(cluster)
}

// PodCluster is the CassandraDatacenter a pod with labels belongs to: its datacenter
// label, which is the resource's name (a resource name is already a clean label value).
func (a *Adapter) PodCluster(labels map[string]string) (string, bool) {
	dc := labels[LabelDatacenter]
	if dc == "" || labels[LabelCluster] == "" || labels[LabelRack] == "" || labels[LabelManagedBy] != ManagedByValue {
		return "", false
	}
	return dc, true
}

// BusyPods lists the pods of cluster that cass-operator is working on, by their
// node-state label: Decommissioning (it is decommissioning the node,
// pkg/reconciliation/decommission_node.go), Starting (it asked the management API to
// start Cassandra) and Ready-to-Start (a new or restarted pod it has still to start:
// MGMT_API_EXPLICIT_START, pkg/reconciliation/reconcile_racks.go startNode). Started
// and Started-not-Ready are a node it is done with or waiting on; the datacenter's
// progress and conditions (Busy) say whether it still acts then. The datacenter's
// unfinished CassandraTasks are listed too (tasks.go).
func (a *Adapter) BusyPods(ctx context.Context, ns, cluster string) ([]string, error) {
	// Both read at once, judged in this order.
	sel := a.ClusterSelector(cluster) + "," + LabelNodeState + " in (" + StateDecommissioning + "," + StateStarting + "," + StateReadyToStart + ")"
	var (
		pods    *corev1.PodList
		podsErr error
		wg      sync.WaitGroup
	)
	wg.Go(func() { pods, podsErr = a.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel}) })
	tasks, err := a.runningTasks(ctx, ns, cluster)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if err := podsErr; err != nil {
		return nil, err
	}
	out := tasks
	for _, p := range pods.Items {
		out = append(out, fmt.Sprintf("pod %s: node-state is %s", p.Name, p.Labels[LabelNodeState]))
	}
	return out, nil
}

// PodState implements operator.PodStates: the node-state label.
func (a *Adapter) PodState(labels map[string]string) string { return labels[LabelNodeState] }
