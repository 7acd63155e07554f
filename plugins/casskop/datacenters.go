package casskop

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// CassKop removes a datacenter in two steps (CheckTopologyChanges, reconcile.go; see
// the reference's FACTS §10): its nodesPerRacks to 0 first (remove-dc's nodes leave
// while the operator is paused, the count set then), and once it is restored, the DC
// out of spec.topology, which it accepts only for a DC without nodes; it then deletes
// the DC's StatefulSets and Services (deleteDCObjects).

// RemoveDatacenter implements operator.DatacenterRemover: dc out of spec.topology.dc,
// with a JSON patch testing the cluster's UID and resourceVersion and the entry's name.
// op is not written: CassKop's topology keeps no mark, the change is the operation's
// whole effect.
func (a *Adapter) RemoveDatacenter(ctx context.Context, ns, name, dc, uid, _ string) error {
	c, u, err := a.planned(ctx, ns, name, uid, "its datacenters were not touched")
	if err != nil {
		return err
	}
	ops, err := removeDCPatch(u, dc)
	if err != nil || ops == nil {
		return err
	}
	return patchPlanned(ctx, c, name, u, ops)
}

// removeDCPatch is the JSON patch taking dc out of u's topology (nil: it is not
// there). CassKop refuses to drop a datacenter that still counts nodes: so does this.
func removeDCPatch(u *unstructured.Unstructured, dc string) ([]map[string]any, error) {
	dcs, _, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "dc")
	for i, d := range dcs {
		m, ok := d.(map[string]any)
		if !ok || m["name"] != dc {
			continue
		}
		n, found, _ := unstructured.NestedInt64(m, "nodesPerRacks")
		if !found {
			n, _, _ = unstructured.NestedInt64(u.Object, "spec", "nodesPerRacks")
		}
		if n != 0 {
			return nil, fmt.Errorf("datacenter %s still asks for %d nodes per rack: CassKop takes a datacenter out of its topology only once its count is 0", dc, n)
		}
		if len(dcs) == 1 {
			return nil, fmt.Errorf("datacenter %s is the only one of the topology: CassKop cannot remove it", dc)
		}
		p := fmt.Sprintf("/spec/topology/dc/%d", i)
		return []map[string]any{{"op": "test", "path": p + "/name", "value": dc}, {"op": "remove", "path": p}}, nil
	}
	return nil, nil
}

// RemovalRequested implements operator.DatacenterRemover: dc is out of the topology.
func (a *Adapter) RemovalRequested(ctx context.Context, ns, name, dc string) (bool, error) {
	cl, _, err := a.Get(ctx, ns, name)
	if err != nil {
		return false, err
	}
	_, ok := cl.DC(dc)
	return !ok, nil
}

// DatacenterLeft implements operator.DatacenterRemover: the StatefulSets labelled with
// the cluster and dc, and the Services CassKop names after them (<cluster>-<dc>,
// <cluster>-<dc>-<rack>, <cluster>-<dc>-exporter-jmx).
func (a *Adapter) DatacenterLeft(ctx context.Context, ns, name, dc string) ([]string, error) {
	sel := labels.SelectorFromSet(labels.Set{LabelCluster: name, LabelDC: dc}).String()
	sts, err := a.Kube.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("cannot list the StatefulSets of datacenter %s: %w", dc, err)
	}
	var left []string
	for _, s := range sts.Items {
		left = append(left, "StatefulSet "+s.Name)
	}
	svcs, err := a.Kube.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot list the Services of datacenter %s: %w", dc, err)
	}
	prefix := name + "-" + dc
	for _, s := range svcs.Items {
		if s.Name == prefix || strings.HasPrefix(s.Name, prefix+"-") {
			left = append(left, "Service "+s.Name)
		}
	}
	sort.Strings(left)
	return left, nil
}

// planned reads the cluster resource name with its client, refusing (untouched says
// what was not done) when it is not the one of UID uid the plan read.
func (a *Adapter) planned(ctx context.Context, ns, name, uid, untouched string) (dynamic.ResourceInterface, *unstructured.Unstructured, error) {
	c, err := a.client(ns)
	if err != nil {
		return nil, nil, err
	}
	u, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	if string(u.GetUID()) != uid {
		return nil, nil, fmt.Errorf("%s %s/%s was re-created since the plan (UID %s, planned %s): %s", Kind, ns, name, u.GetUID(), uid, untouched)
	}
	return c, u, nil
}

// patchPlanned writes ops to the cluster resource name, u as planned read it, with a
// JSON patch testing first u's UID and resourceVersion: a resource re-created or
// changed since fails it (422) and nothing is written.
func patchPlanned(ctx context.Context, c dynamic.ResourceInterface, name string, u *unstructured.Unstructured, ops []map[string]any) error {
	ops = append([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": string(u.GetUID())},
		{"op": "test", "path": "/metadata/resourceVersion", "value": u.GetResourceVersion()},
	}, ops...)
	body, _ := json.Marshal(ops)
	_, err := c.Patch(ctx, name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: "kubectl-cassandra"})
	return err
}
