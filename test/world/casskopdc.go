package world

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
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

// casskopAddDCs plays CassKop's reaction, once it runs, to a datacenter appended to
// spec.topology (the reference's casskop FACTS §10): each rack of a DC without
// StatefulSets gets one, <cluster>-<dc>-<rack>, of the DC's nodesPerRacks (else the
// spec's; getDCNodesPerRacksFromIndex, api/v2/cassandracluster_types.go), made like
// the cluster's other racks; the StatefulSet controller then creates its pods, whose
// nodes bootstrap. A rack added to or taken from a DC that has StatefulSets is refused
// by CassKop (CheckTopologyChanges, reconcile.go: "No change other than adding/removing
// a DC can happen") and the topology restored, which the world records as a violation.
// Called after casskopDeleteDCs, with w.mu held. CassKop's Services are not modelled.
func (w *World) casskopAddDCs(ns string) {
	if w.co != nil || w.DeploymentReplicasLocked("casskop") == 0 {
		return
	}
	obj, err := w.Dyn.Tracker().Get(CCGVR, ns, w.Name)
	if err != nil {
		return
	}
	if dcs, _, _ := unstructured.NestedSlice(obj.(*unstructured.Unstructured).Object, "spec", "topology", "dc"); len(dcs) == 0 {
		// CassKop's implicit dc1, which the world made: nothing to add. (The world's
		// implicit topology may have more racks than CassKop's one: not judged.)
		return
	}
	cl, err := (&casskop.Adapter{API: operator.APIVersion{Version: CCGVR.Version}}).FromObject(obj.(*unstructured.Unstructured))
	if err != nil {
		return
	}
	l, err := w.Kube.Tracker().List(stsGVR, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), ns)
	if err != nil {
		return
	}
	var own []appsv1.StatefulSet
	racks := map[string]map[string]bool{} // dc → racks with a StatefulSet
	for _, s := range l.(*appsv1.StatefulSetList).Items {
		if s.Labels[casskop.LabelCluster] != w.Name {
			continue
		}
		own = append(own, s)
		dc := s.Labels[casskop.LabelDC]
		if racks[dc] == nil {
			racks[dc] = map[string]bool{}
		}
		racks[dc][s.Labels[casskop.LabelRack]] = true
	}
	if len(own) == 0 {
		return
	}
	sort.Slice(own, func(i, j int) bool { return own[i].Name < own[j].Name })
	for _, d := range cl.DCs {
		have := racks[d.Name]
		if len(have) == 0 {
			for _, r := range d.Racks {
				w.createRack(&own[0], ns, r.DC, r.Name, r.StatefulSet, int32(r.Nodes))
			}
			continue
		}
		for _, r := range d.Racks {
			if !have[r.Name] {
				w.violate(fmt.Sprintf("rack %s added to the topology of datacenter %s, which exists (CassKop refuses it and restores the topology)", r.Name, d.Name))
			}
		}
		for _, r := range slices.Sorted(maps.Keys(have)) {
			if _, ok := d.Rack(r); !ok {
				w.violate(fmt.Sprintf("rack %s taken out of the topology of datacenter %s, which stays (CassKop refuses it and restores the topology)", r, d.Name))
			}
		}
	}
}

// createRack creates StatefulSet name for rack dc/rack as tpl, another rack's, is made,
// with the rack's labels, and runs the StatefulSet controller on it.
func (w *World) createRack(tpl *appsv1.StatefulSet, ns, dc, rack, name string, replicas int32) {
	labels := casskop.RackLabels(w.Name, dc, rack)
	relabel := func(l map[string]string) map[string]string {
		if len(l) == 0 {
			return l
		}
		out := maps.Clone(l)
		maps.Copy(out, labels)
		return out
	}
	s := tpl.DeepCopy()
	w.rv++
	s.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: ns, Labels: relabel(tpl.Labels), Annotations: tpl.Annotations,
		UID: w.nextUID("sts", name), ResourceVersion: fmt.Sprintf("%d", 100+w.rv)}
	s.Spec.Replicas = &replicas
	s.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	s.Spec.Template.Labels = relabel(tpl.Spec.Template.Labels)
	for i := range s.Spec.VolumeClaimTemplates {
		s.Spec.VolumeClaimTemplates[i].Labels = relabel(s.Spec.VolumeClaimTemplates[i].Labels)
	}
	s.Status = appsv1.StatefulSetStatus{}
	if err := w.Kube.Tracker().Add(s); err != nil {
		w.violate("world: cannot create StatefulSet " + name + ": " + err.Error())
		return
	}
	w.statefulSetController(ns, name)
}

// violate records v once.
func (w *World) violate(v string) {
	if !slices.Contains(w.violations, v) {
		w.violations = append(w.violations, v)
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
