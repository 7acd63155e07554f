// Package cassoperator is a stand-in for k8ssandra's cass-operator reconcile loop, for
// tests: the real operator cannot run here. It is written against client-go interfaces
// (dynamic for CassandraDatacenter and CassandraTask, kubernetes for StatefulSets, pods,
// PVCs and the operator's Deployment) and a simulated Cassandra (test/sim), so the same
// code drives the fake clientsets of unit tests and a real kube-apiserver in e2e. It
// never does the StatefulSet controller's job (creating or deleting pods and claims).
//
// Every rule names its source: a section of /work/shared/cass-operator/FACTS.md or a
// file/function of k8ssandra/cass-operator (v1.32.0). BEHAVIOUR.md is the table.
package cassoperator

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resources (FACTS §1, §5; config/crd/bases of cass-operator).
var (
	DatacenterGVR = schema.GroupVersionResource{Group: "cassandra.datastax.com", Version: "v1beta1", Resource: "cassandradatacenters"}
	TaskGVR       = schema.GroupVersionResource{Group: "control.k8ssandra.io", Version: "v1alpha1", Resource: "cassandratasks"}
)

// Labels and annotations (FACTS §2; apis/cassandra/v1beta1, pkg/oplabels).
const (
	LabelCluster    = "cassandra.datastax.com/cluster"
	LabelDatacenter = "cassandra.datastax.com/datacenter"
	LabelRack       = "cassandra.datastax.com/rack"
	LabelNodeState  = "cassandra.datastax.com/node-state"
	LabelSeed       = "cassandra.datastax.com/seed-node"
	LabelManagedBy  = "app.kubernetes.io/managed-by"
	ManagedBy       = "cass-operator"

	AnnotationBypassWebhook = "cassandra.datastax.com/bypass-webhook-validations"
	AnnotationNoCleanup     = "cassandra.datastax.com/no-cleanup"
)

// node-state label values (FACTS §2; pkg/reconciliation/reconcile_racks.go consts).
const (
	StateReadyToStart    = "Ready-to-Start"
	StateStarting        = "Starting"
	StateStarted         = "Started"
	StateStartedNotReady = "Started-not-Ready"
	StateDecommissioning = "Decommissioning"
)

// Condition types and progress values (FACTS §1; apis/cassandra/v1beta1/cassandradatacenter_types.go).
const (
	CondReady          = "Ready"
	CondInitialized    = "Initialized"
	CondReplacingNodes = "ReplacingNodes"
	CondScalingUp      = "ScalingUp"
	CondScalingDown    = "ScalingDown"
	CondUpdating       = "Updating"
	CondStopped        = "Stopped"
	CondResuming       = "Resuming"
	CondRollingRestart = "RollingRestart"
	CondValid          = "Valid"
	CondRequiresUpdate = "RequiresUpdate"

	ProgressUpdating = "Updating"
	ProgressReady    = "Ready"
)

// StatefulSetName is a rack's StatefulSet: <clusterName>-<dc>-<rack>-sts (FACTS §2,
// pkg/reconciliation/construct_statefulset.go NewNamespacedNameForStatefulSet).
func StatefulSetName(cluster, dc, rack string) string {
	return fmt.Sprintf("%s-%s-%s-sts", cluster, dc, rack)
}

// PodName is the pod of a rack's StatefulSet at ordinal i (FACTS §2).
func PodName(cluster, dc, rack string, i int) string {
	return fmt.Sprintf("%s-%d", StatefulSetName(cluster, dc, rack), i)
}

// DataPVCName is the server-data claim of a pod (FACTS §2).
func DataPVCName(pod string) string { return "server-data-" + pod }

// RackLabels are the labels of a rack's StatefulSet, its selector and its pods (FACTS
// §2; apis/cassandra/v1beta1 GetRackLabels, pkg/oplabels).
func RackLabels(cluster, dc, rack string) map[string]string {
	return map[string]string{LabelCluster: cluster, LabelDatacenter: dc, LabelRack: rack, LabelManagedBy: ManagedBy}
}

// SplitRacks splits n nodes over racks racks, the first racks getting the extra ones
// (FACTS §1; apis/cassandra/v1beta1/cassandradatacenter_types.go SplitRacks).
func SplitRacks(n, racks int) []int {
	per, extra := n/racks, n%racks
	out := make([]int, racks)
	for i := range out {
		out[i] = per
		if i < extra {
			out[i]++
		}
	}
	return out
}
