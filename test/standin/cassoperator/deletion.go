package cassoperator

import (
	"context"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The deletion of a CassandraDatacenter (BEHAVIOUR.md rows D0-D4): the operator keeps
// its finalizer on the resource, and once the API server has set deletionTimestamp it
// takes the datacenter down before it lets the resource go
// (pkg/reconciliation/reconcile_datacenter.go ProcessDeletion, handler.go addFinalizer;
// FACTS §9).

// Finalizer is cass-operator's finalizer (apis/cassandra/v1beta1 Finalizer).
const Finalizer = "finalizer.cassandra.datastax.com"

// Annotations ProcessDeletion reads (apis/cassandra/v1beta1/cassandradatacenter_types.go).
const (
	// AnnotationDecommissionOnDelete: decommission the nodes before the deletion
	// (only its presence counts).
	AnnotationDecommissionOnDelete = "cassandra.datastax.com/decommission-on-delete"
	// AnnotationDeletePVC "false": the deletion leaves the claims.
	AnnotationDeletePVC = "cassandra.datastax.com/delete-pvc"
	// AnnotationNoFinalizer: the operator adds no finalizer.
	AnnotationNoFinalizer = "cassandra.datastax.com/no-finalizer"
)

// CondDecommission is the condition of a datacenter being decommissioned on delete.
const CondDecommission = "Decommission"

// The deletion's actions.
const (
	ActAddFinalizer      Action = "add-finalizer"
	ActScaleToZero       Action = "scale-statefulset-to-zero"
	ActDeleteDCPVCs      Action = "delete-dc-pvcs"
	ActRemoveFinalizer   Action = "remove-finalizer"
	waitSingleDatacenter        = "decommission-on-delete: no other datacenter is seen in the ring (or no node to ask); requeued"
)

// addFinalizer is handler.go addFinalizer: a datacenter not being deleted gets the
// finalizer (an Update of the resource), unless annotated no-finalizer.
func (o *Operator) addFinalizer(w *world) []op {
	if w.deleting || slices.Contains(w.dc.GetFinalizers(), Finalizer) {
		return nil
	}
	if _, no := w.dc.GetAnnotations()[AnnotationNoFinalizer]; no {
		return nil
	}
	return []op{{ActAddFinalizer, func(ctx context.Context) error {
		r := o.cfg.Dyn.Resource(DatacenterGVR).Namespace(o.cfg.Namespace)
		dc, err := r.Get(ctx, o.cfg.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		dc.SetFinalizers(append(dc.GetFinalizers(), Finalizer))
		_, err = r.Update(ctx, dc, metav1.UpdateOptions{})
		return err
	}}}
}

// processDeletion is ProcessDeletion, for a datacenter being deleted. done false: the
// pass goes on (ReconcileAllRacks) after ops, with w changed as the real one changes
// its in-memory datacenter (size 0 while Decommission is True, the condition set).
func (o *Operator) processDeletion(w *world) (ops []op, wait string, done bool) {
	if !slices.Contains(w.dc.GetFinalizers(), Finalizer) {
		return nil, "being deleted without cass-operator's finalizer: nothing to do", true
	}
	ops = o.setProgressOp(w, ProgressUpdating)
	if w.cond(CondDecommission) == "True" {
		w.size = 0
	}
	if w.cond(CondScalingDown) == "True" {
		// "Waiting for the decommission to complete first, before deleting".
		return ops, "", false
	}
	if _, ok := w.dc.GetAnnotations()[AnnotationDecommissionOnDelete]; ok {
		if len(w.pods) > 0 {
			if len(o.clusterDatacenters(w)) > 1 {
				if w.cond(CondDecommission) != "True" {
					ops = append(ops, o.setConditionOp(CondDecommission, "True"))
					w.conds[CondDecommission] = "True"
				}
				return ops, "", false
			}
			// "How could we have pods if we've decommissioned everything?"
			return ops, waitSingleDatacenter, true
		}
	} else {
		// "setting all StatefulSets to 0 replicas", no decommission.
		scaled := false
		for i, s := range w.sts {
			if s == nil || w.replicas(i) == 0 {
				continue
			}
			scaled = true
			name := s.Name
			ops = append(ops, op{ActScaleToZero, func(ctx context.Context) error {
				return o.patchStatefulSetReplicas(ctx, name, 0)
			}})
		}
		if scaled {
			return ops, "", true
		}
	}
	ops = append(ops,
		op{ActDeleteDCPVCs, func(ctx context.Context) error { return o.deleteDatacenterPVCs(ctx, w) }},
		op{ActRemoveFinalizer, func(ctx context.Context) error {
			r := o.cfg.Dyn.Resource(DatacenterGVR).Namespace(o.cfg.Namespace)
			dc, err := r.Get(ctx, o.cfg.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			dc.SetFinalizers(nil)
			_, err = r.Update(ctx, dc, metav1.UpdateOptions{})
			return err
		}})
	return ops, "", true
}

// clusterDatacenters is getClusterDatacenters (decommission_node.go): the datacenters
// with a node alive and NORMAL in the endpoints of the first of the datacenter's pods
// that is up (its cassandra container ready). It skips a pod whose node-state
// *annotation* says Decommissioning, as the real one does (the operator keeps the state
// in a label, so that check never matches). No pod up: none.
func (o *Operator) clusterDatacenters(w *world) []string {
	for _, p := range w.pods {
		if p.Annotations[LabelNodeState] == StateDecommissioning || !o.ready(w, p) {
			continue
		}
		seen := map[string]bool{}
		for _, n := range w.endpoints {
			if n.PeerCode == "UN" {
				seen[n.DC] = true
			}
		}
		var out []string
		for dc := range seen {
			out = append(out, dc)
		}
		sort.Strings(out)
		return out
	}
	return nil
}

// deleteDatacenterPVCs is deletePVCs (reconcile_datacenter.go): unless delete-pvc is
// "false", every claim with the datacenter's labels, each refused while a pod mounts it
// ("PersistentVolumeClaim %s is still being used by a pod"), deleted without a
// precondition.
func (o *Operator) deleteDatacenterPVCs(ctx context.Context, w *world) error {
	if w.dc.GetAnnotations()[AnnotationDeletePVC] == "false" {
		return nil
	}
	sel := labels.SelectorFromSet(labels.Set{LabelCluster: w.cluster, LabelDatacenter: w.dcName}).String()
	pvcs := o.cfg.Kube.CoreV1().PersistentVolumeClaims(o.cfg.Namespace)
	l, err := pvcs.List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return err
	}
	pods, err := o.cfg.Kube.CoreV1().Pods(o.cfg.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, c := range l.Items {
		if usedBy(pods.Items, c.Name) {
			return fmt.Errorf("PersistentVolumeClaim %s is still being used by a pod", c.Name)
		}
		if err := pvcs.Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// usedBy is isBeingUsed: a pod's volume names the claim (the real one lists pods by the
// field spec.volumes.persistentVolumeClaim.claimName).
func usedBy(pods []corev1.Pod, claim string) bool {
	for _, p := range pods {
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
				return true
			}
		}
	}
	return false
}
