package fakeadapter

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// CountWords names the count in messages and plans.
func (a *Adapter) CountWords() string { return CountField }

// CheckRackNodes accepts any count of at least 0: the spec keeps one per rack.
func (a *Adapter) CheckRackNodes(dc string, racks map[string]int) error {
	for r, n := range racks {
		if n < 0 {
			return fmt.Errorf("rack %s of datacenter %s cannot have %d members", r, dc, n)
		}
	}
	return nil
}

// DCSpec is dc's counts in one FakeCassandra.
func (a *Adapter) DCSpec(ns, name, dc string) operator.DCSpec {
	return operator.DCCounts{Resource: "FakeCassandra " + name, DC: dc,
		Read: func(ctx context.Context) (topology.Cluster, error) {
			cl, _, err := a.Get(ctx, ns, name)
			return cl, err
		},
		Write: func(ctx context.Context, racks map[string]int) error {
			return a.patchCounts(ctx, ns, name, dc, racks, "")
		}}
}

// SetRackNodesAt writes dc's rack counts only if the resource is still at
// resourceVersion rv: the JSON patch tests it first (422 otherwise, nothing written).
func (a *Adapter) SetRackNodesAt(ctx context.Context, ns, name, dc string, racks map[string]int, rv string) error {
	return a.patchCounts(ctx, ns, name, dc, racks, rv)
}

// patchCounts writes racks' counts in dc with one JSON patch: each count after a test of
// its datacenter's and rack's names at their indexes (a reordered spec fails it), and
// with rv set a test of the resourceVersion first.
func (a *Adapter) patchCounts(ctx context.Context, ns, name, dc string, racks map[string]int, rv string) error {
	c, err := a.client(ns)
	if err != nil {
		return err
	}
	u, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	s, err := specOf(u)
	if err != nil {
		return err
	}
	var ops []map[string]any
	if rv != "" {
		ops = append(ops, map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": rv})
	}
	left := len(racks)
	for i, d := range s.Datacenters {
		if d.Name != dc {
			continue
		}
		ops = append(ops, map[string]any{"op": "test", "path": fmt.Sprintf("/spec/datacenters/%d/name", i), "value": dc})
		for j, r := range d.Racks {
			n, ok := racks[r.Name]
			if !ok {
				continue
			}
			p := fmt.Sprintf("/spec/datacenters/%d/racks/%d", i, j)
			ops = append(ops, map[string]any{"op": "test", "path": p + "/name", "value": r.Name},
				map[string]any{"op": "replace", "path": p + "/members", "value": n})
			left--
		}
	}
	if left > 0 {
		return fmt.Errorf("cluster %s has not every rack of %v in datacenter %s", name, racks, dc)
	}
	body, _ := json.Marshal(ops)
	_, err = c.Patch(ctx, name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
	return err
}
