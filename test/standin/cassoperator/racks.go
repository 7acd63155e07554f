package cassoperator

import (
	"context"
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ActCreateStatefulSet is a rack's StatefulSet created (CheckRackCreation).
const ActCreateStatefulSet Action = "create-statefulset"

// checkRackCreation is CheckRackCreation (pkg/reconciliation/reconcile_racks.go): every
// rack of the spec, in spec order, whose StatefulSet is missing gets one
// (GetStatefulSetForRack → newStatefulSetForCassandraDatacenter with the rack's
// SplitRacks count as replicas, CalculateRackInformation), the progress set to
// Updating first (ReconcileNextRack: setOperatorProgressStatus, then Create). A new
// datacenter (add-dc: a second CassandraDatacenter of the cluster) starts here; the
// StatefulSet controller then makes its pods, Ready-to-Start (the template's label),
// and the start rules (5d/5e) start them one at a time. The real pass goes on after the
// creation; here it ends, and the next one finds the StatefulSets (same writes).
func (o *Operator) checkRackCreation(w *world) []op {
	var ops []op
	for i, s := range w.sts {
		if s != nil {
			continue
		}
		ops = append(ops, o.setProgressOp(w, ProgressUpdating)...)
		sts := newStatefulSet(w, i)
		ops = append(ops, op{ActCreateStatefulSet, func(ctx context.Context) error {
			_, err := o.cfg.Kube.AppsV1().StatefulSets(o.cfg.Namespace).Create(ctx, sts, metav1.CreateOptions{})
			return err
		}})
	}
	return ops
}

// newStatefulSet is the StatefulSet of rack i as newStatefulSetForCassandraDatacenter
// (pkg/reconciliation/construct_statefulset.go) makes it, reduced to what the world
// reads and the API server requires: its name, the rack labels (GetRackLabels + the
// operator's), the selector (the rack labels), parallel pod management, the replicas,
// the pod template (construct_podtemplatespec.go: node-state Ready-to-Start, the
// cassandra container of the management API image with MGMT_API_EXPLICIT_START, its
// ports and data mount, the system-logger container), the server-data claim template
// (spec.storageConfig.cassandraDataVolumeClaimSpec), and the datacenter as its
// controlling owner (setControllerReference: the garbage collector deletes it with the
// datacenter).
func newStatefulSet(w *world, i int) *appsv1.StatefulSet {
	rack := w.racks[i]
	replicas := int32(SplitRacks(w.size, len(w.racks))[i])
	labels := RackLabels(w.cluster, w.dcName, rack)
	selector := map[string]string{LabelCluster: w.cluster, LabelDatacenter: w.dcName, LabelRack: rack}
	tpl := RackLabels(w.cluster, w.dcName, rack)
	tpl[LabelNodeState] = StateReadyToStart
	version, _, _ := unstructured.NestedString(w.dc.Object, "spec", "serverVersion")
	var claim corev1.PersistentVolumeClaimSpec
	if m, ok, _ := unstructured.NestedMap(w.dc.Object, "spec", "storageConfig", "cassandraDataVolumeClaimSpec"); ok {
		b, _ := json.Marshal(m)
		_ = json.Unmarshal(b, &claim)
	}
	yes := true
	grace := int64(120)
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: StatefulSetName(w.cluster, w.dcName, rack), Namespace: w.dc.GetNamespace(), Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: w.dc.GetAPIVersion(), Kind: w.dc.GetKind(), Name: w.dc.GetName(),
				UID: w.dc.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			Selector:            &metav1.LabelSelector{MatchLabels: selector},
			PodManagementPolicy: appsv1.ParallelPodManagement,
			ServiceName:         w.cluster + "-" + w.dcName + "-all-pods-service",
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tpl}, Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: &grace,
				Containers: []corev1.Container{{
					Name: "cassandra", Image: "cr.k8ssandra.io/k8ssandra/cass-management-api:" + version,
					Env: []corev1.EnvVar{{Name: "MGMT_API_EXPLICIT_START", Value: "true"}},
					Ports: []corev1.ContainerPort{{Name: "native", ContainerPort: 9042}, {Name: "internode", ContainerPort: 7000},
						{Name: "mgmt-api-http", ContainerPort: 8080}},
					VolumeMounts: []corev1.VolumeMount{{Name: "server-data", MountPath: "/var/lib/cassandra"}},
				}, {Name: "server-system-logger", Image: "cr.k8ssandra.io/k8ssandra/system-logger:v1.32.0"}},
			}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "server-data",
				Labels: RackLabels(w.cluster, w.dcName, rack)}, Spec: claim}},
		},
	}
}

// cassandraDC is the datacenter's name in Cassandra: spec.datacenterName when set, else
// metadata.name (apis/cassandra/v1beta1/cassandradatacenter_types.go DatacenterName);
// the nodes the stand-in starts are in it (the cassandra-yaml's dc, from
// construct_podtemplatespec.go's config).
func cassandraDC(dc *unstructured.Unstructured) string {
	if n, _, _ := unstructured.NestedString(dc.Object, "spec", "datacenterName"); n != "" {
		return n
	}
	return dc.GetName()
}
