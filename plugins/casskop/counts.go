package casskop

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// SetNodesPerRack brings the CR's count for dc in line with its StatefulSets. It writes
// only that field, with a JSON patch whose test guards the array index.
func (a *Adapter) SetNodesPerRack(ctx context.Context, ns, name, dc string, n int) error {
	return a.patchNodesPerRack(ctx, ns, name, dc, n, "")
}

// patchNodesPerRack reads the CR and writes dc's count with a JSON patch; with rv set,
// only if the CR is still at that resourceVersion (the patch tests it first, so a
// change in between fails it with 422 and nothing is written).
func (a *Adapter) patchNodesPerRack(ctx context.Context, ns, name, dc string, n int, rv string) error {
	c, err := a.client(ns)
	if err != nil {
		return err
	}
	u, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if rv != "" && u.GetResourceVersion() != rv {
		return fmt.Errorf("cluster %s changed since it was read (resourceVersion %s, read at %s)", name, u.GetResourceVersion(), rv)
	}
	ops, err := nodesPerRackPatch(u, name, dc, n)
	if err != nil {
		return err
	}
	if rv != "" {
		ops = append([]map[string]any{{"op": "test", "path": "/metadata/resourceVersion", "value": rv}}, ops...)
	}
	body, _ := json.Marshal(ops)
	_, err = c.Patch(ctx, name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: "kubectl-cassandra"})
	return err
}

// DCSpec is a datacenter's counts in one CassandraCluster (operator.DCSpec) and the
// cluster's seed list (SeedEntry, SeedRefusal), which the steps ask before creating a pod.
type DCSpec struct {
	operator.DCCounts
	A        *Adapter
	NS, Name string
}

// counts reads and writes dc's one nodesPerRacks in the cluster ns/name.
func (a *Adapter) counts(ns, name, dc string) operator.DCCounts {
	return operator.DCCounts{Resource: Kind + " " + name, DC: dc,
		Read: func(ctx context.Context) (topology.Cluster, error) {
			cl, _, err := a.Get(ctx, ns, name)
			return cl, err
		},
		Write: func(ctx context.Context, racks map[string]int) error {
			n, err := oneCount(dc, racks)
			if err != nil {
				return err
			}
			return a.SetNodesPerRack(ctx, ns, name, dc, n)
		}}
}

// CountField is the spec field CassKop keeps a datacenter's count in.
const CountField = "nodesPerRacks"

// CountWords names CassKop's count in messages and plans.
func (a *Adapter) CountWords() string { return CountField }

// CheckRackNodes refuses racks of one datacenter that differ: CassKop keeps one count.
func (a *Adapter) CheckRackNodes(dc string, racks map[string]int) error {
	_, err := oneCount(dc, racks)
	return err
}

// oneCount is the one nodesPerRacks that gives every rack its count: CassKop keeps a
// count per datacenter, not per rack, so racks that differ cannot be written.
func oneCount(dc string, racks map[string]int) (int, error) {
	n, first := 0, true
	for _, c := range racks {
		if !first && c != n {
			return 0, fmt.Errorf("CassKop keeps one %s per datacenter: the racks of %s cannot have different counts (%s)", CountField, dc, topology.CountsText(racks))
		}
		n, first = c, false
	}
	if first {
		return 0, fmt.Errorf("no rack of datacenter %s to count", dc)
	}
	return n, nil
}

// nodesPerRackPatch is the JSON patch operations that set dc's nodesPerRacks in u: the
// top-level count when the cluster has no topology (only dc1 then), else the DC's own,
// with a test of its name guarding the array index.
func nodesPerRackPatch(u *unstructured.Unstructured, name, dc string, n int) ([]map[string]any, error) {
	dcs, found, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "dc")
	if !found || len(dcs) == 0 {
		if dc != "dc1" {
			return nil, fmt.Errorf("cluster %s has no topology, so no datacenter %s", name, dc)
		}
		return []map[string]any{{"op": "add", "path": "/spec/nodesPerRacks", "value": n}}, nil
	}
	for i, d := range dcs {
		if m, ok := d.(map[string]any); ok && m["name"] == dc {
			p := fmt.Sprintf("/spec/topology/dc/%d", i)
			return []map[string]any{
				{"op": "test", "path": p + "/name", "value": dc},
				{"op": "add", "path": p + "/nodesPerRacks", "value": n},
			}, nil
		}
	}
	return nil, fmt.Errorf("cluster %s has no datacenter %s", name, dc)
}
