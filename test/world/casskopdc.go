package world

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
)

// casskopDeleteDCs plays CassKop's reaction, once it runs, to a datacenter taken out
// of spec.topology (reconcile.go CheckTopologyChanges, then deleteDCObjects; the
// reference's casskop FACTS §10): a datacenter without nodes has its StatefulSets and
// Services deleted; one that still has nodes is refused and the topology restored
// (ActionCorrectCRDConfig), which the world records as a violation: the plugin must
// never ask it. Called after a write to the CassandraCluster or the operator's
// Deployment, with w.mu held.
func (w *World) casskopDeleteDCs(ns string) {
	if w.co != nil || w.DeploymentReplicasLocked("casskop") == 0 {
		return
	}
	obj, err := w.Dyn.Tracker().Get(CCGVR, ns, w.Name)
	if err != nil {
		return
	}
	inTopology := map[string]bool{}
	dcs, _, _ := unstructured.NestedSlice(obj.(*unstructured.Unstructured).Object, "spec", "topology", "dc")
	for _, d := range dcs {
		if m, ok := d.(map[string]any); ok {
			inTopology[fmt.Sprint(m["name"])] = true
		}
	}
	if len(dcs) == 0 {
		inTopology["dc1"] = true
	}
	stsGVR := appsv1.SchemeGroupVersion.WithResource("statefulsets")
	l, err := w.Kube.Tracker().List(stsGVR, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), ns)
	if err != nil {
		return
	}
	sel := labels.SelectorFromSet(labels.Set{casskop.LabelCluster: w.Name})
	for _, s := range l.(*appsv1.StatefulSetList).Items {
		dc := s.Labels[casskop.LabelDC]
		if !sel.Matches(labels.Set(s.Labels)) || inTopology[dc] {
			continue
		}
		if s.Spec.Replicas == nil || *s.Spec.Replicas > 0 {
			w.violations = append(w.violations, fmt.Sprintf("datacenter %s taken out of the topology while StatefulSet %s has replicas (CassKop refuses it and restores the topology)", dc, s.Name))
			continue
		}
		_ = w.Kube.Tracker().Delete(stsGVR, ns, s.Name)
		w.deleteDCServices(ns, dc)
	}
}

// deleteDCServices deletes the Services CassKop names after a datacenter.
func (w *World) deleteDCServices(ns, dc string) {
	svcGVR := corev1.SchemeGroupVersion.WithResource("services")
	l, err := w.Kube.Tracker().List(svcGVR, corev1.SchemeGroupVersion.WithKind("Service"), ns)
	if err != nil {
		return
	}
	prefix := w.Name + "-" + dc
	for _, s := range l.(*corev1.ServiceList).Items {
		if s.Name == prefix || strings.HasPrefix(s.Name, prefix+"-") {
			_ = w.Kube.Tracker().Delete(svcGVR, ns, s.Name)
		}
	}
}

// DeploymentReplicasLocked is DeploymentReplicas for a caller holding w.mu (0 when the
// Deployment does not exist).
func (w *World) DeploymentReplicasLocked(name string) int32 {
	obj, err := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), w.NS, name)
	if err != nil {
		return 0
	}
	d := obj.(*appsv1.Deployment)
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}
