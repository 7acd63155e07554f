package cassoperator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// cass-operator keeps one count per datacenter, spec.size, and splits it over the racks
// itself (SplitRacks): rack counts can be written only when they are that split of
// their sum.

// FieldManager names the plugin's writes.
const FieldManager = "kubectl-cassandra"

// CountWords names cass-operator's count in messages and plans.
func (a *Adapter) CountWords() string { return CountField }

// CheckRackNodes says why spec.size cannot ask for these counts of dc's racks (nil: it
// can). The split depends on the racks' spec order, which the adapter learns from the
// datacenters it read; a datacenter it has not read (or two of that name with different
// orders) can only be checked for what holds in any order: equal racks.
func (a *Adapter) CheckRackNodes(dc string, racks map[string]int) error {
	order, known := a.order(dc)
	if !known {
		n, equal := -1, true
		for _, c := range racks {
			if n >= 0 && c != n {
				equal = false
			}
			n = c
		}
		if equal && n > 0 {
			return nil
		}
		return fmt.Errorf("cass-operator splits size over the racks of datacenter %s in their spec order, which is not known here (read the datacenter first); rack counts %s cannot be checked", dc, topology.CountsText(racks))
	}
	_, err := SizeFor(dc, order, racks)
	return err
}

// SizeFor is the spec.size that asks for exactly racks (rack name -> nodes) over the
// racks of dc in spec order, or why none does: every rack must be named, have a node
// (cass-operator refuses a size below the rack count: CalculateRackInformation in
// pkg/reconciliation/reconcile_racks.go), and the counts must be SplitRacks of their sum.
func SizeFor(dc string, order []string, racks map[string]int) (int, error) {
	var missing, unknown []string
	for _, r := range order {
		if _, ok := racks[r]; !ok {
			missing = append(missing, r)
		}
	}
	for r := range racks {
		if !slices.Contains(order, r) {
			unknown = append(unknown, r)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return 0, fmt.Errorf("datacenter %s has no rack %s (racks: %s)", dc, strings.Join(unknown, ", "), strings.Join(order, ","))
	}
	if len(missing) > 0 {
		return 0, fmt.Errorf("cass-operator keeps one size for datacenter %s: a count is needed for every rack, %s missing", dc, strings.Join(missing, ", "))
	}
	size := 0
	for _, r := range order {
		size += racks[r]
	}
	asked := splitText(order, racks)
	if size < len(order) {
		return 0, fmt.Errorf("cass-operator needs at least one node per rack: size %d over racks %s is too small; rack counts %s cannot be asked", size, strings.Join(order, ","), asked)
	}
	split := SplitRacks(size, len(order))
	for i, r := range order {
		if racks[r] != split[i] {
			return 0, fmt.Errorf("cass-operator splits size %d over racks %s as %s; rack counts %s cannot be asked",
				size, strings.Join(order, ","), splitText(order, splitMap(order, split)), asked)
		}
	}
	return size, nil
}

// splitMap is counts in rack order as a map by rack name.
func splitMap(order []string, counts []int) map[string]int {
	m := make(map[string]int, len(order))
	for i, r := range order {
		m[r] = counts[i]
	}
	return m
}

// remember records dc's rack order for CheckRackNodes; a second datacenter of the same
// name with another order makes the name ambiguous (nil).
func (a *Adapter) remember(dc topology.DC) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.racks == nil {
		a.racks = map[string][]string{}
	}
	order := rackOrder(dc)
	if prev, ok := a.racks[dc.Name]; ok && !slices.Equal(prev, order) {
		a.racks[dc.Name] = nil
		return
	}
	a.racks[dc.Name] = order
}

// order is dc's rack order as last read, if known and unambiguous.
func (a *Adapter) order(dc string) ([]string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	o, ok := a.racks[dc]
	return o, ok && o != nil
}

// SetRackNodesAt is SetRackNodes only if the CassandraDatacenter is still at
// resourceVersion rv (the version whose size and StatefulSets the caller judged): the
// JSON patch's first operation tests metadata.resourceVersion, so any change since
// fails it (422) and nothing is written. abort uses it (internal/cli/abort.go).
func (a *Adapter) SetRackNodesAt(ctx context.Context, ns, name, dc string, racks map[string]int, rv string) error {
	return a.setSize(ctx, ns, name, dc, racks, rv)
}

// setSize reads the datacenter, checks racks against its rack order and writes the
// size with a JSON patch that tests the rack names it judged by (and rv when set).
func (a *Adapter) setSize(ctx context.Context, ns, name, dc string, racks map[string]int, rv string) error {
	u, err := a.get(ctx, ns, name)
	if err != nil {
		return err
	}
	if rv != "" && u.GetResourceVersion() != rv {
		return fmt.Errorf("%s %s changed since it was read (resourceVersion %s, read at %s)", Kind, name, u.GetResourceVersion(), rv)
	}
	d, err := read(u)
	if err != nil {
		return err
	}
	a.remember(d.DC())
	if d.DCName() != dc {
		return fmt.Errorf("%s %s is datacenter %s, not %s", Kind, name, d.DCName(), dc)
	}
	size, err := SizeFor(dc, d.RackNames(), racks)
	if err != nil {
		return err
	}
	var ops []map[string]any
	if rv != "" {
		ops = append(ops, map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": rv})
	}
	for i, r := range d.Spec.Racks {
		ops = append(ops, map[string]any{"op": "test", "path": fmt.Sprintf("/spec/racks/%d/name", i), "value": r.Name})
	}
	ops = append(ops, map[string]any{"op": "add", "path": "/spec/size", "value": size})
	c, err := a.client(ns)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(ops)
	if _, err := c.Patch(ctx, name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return classify(err, fmt.Sprintf("cannot set %s of %s/%s to %d", CountField, ns, name, size))
	}
	return nil
}
