package casskop

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// CassKop adds a datacenter when it is appended to spec.topology.dc with its racks: it
// creates one StatefulSet per rack and the nodes bootstrap (FACTS §10). Its
// CheckTopologyChanges (controllers/cassandracluster/reconcile.go, cscetbon/casskop
// 40f5dfa9) refuses every other change of the topology: a DC or rack renamed, a rack
// added to or taken from an existing DC.

var _ operator.DatacenterAdder = (*Adapter)(nil)

// dcRackName is the form CassKop requires of "<dc>-<rack>", which names the rack's
// StatefulSet and Services (regexDCRackName, api/v2/cassandracluster_types.go; a name
// outside it gets no StatefulSet).
var dcRackName = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// PlanDatacenter implements operator.DatacenterAdder: want must be new to the topology,
// or be there already with exactly its racks and count (its addition was asked by an
// earlier run). The racks are CassKop's StatefulSets <cluster>-<dc>-<rack>, with its
// rack labels (dcOf, as the mapping reads a DC of the topology).
func (a *Adapter) PlanDatacenter(ctx context.Context, ns, name string, want operator.NewDatacenter) (string, []topology.Rack, error) {
	_, u, err := a.Get(ctx, ns, name)
	if err != nil {
		return "", nil, err
	}
	if err := checkNewDC(u, want); err != nil {
		return "", nil, err
	}
	return want.Name, dcOf(name, want.Name, want.NodesPerRack, want.Racks).Racks, nil
}

// checkNewDC says why want cannot be added to u's topology (nil: it can, or it is
// there already as want asks).
func checkNewDC(u *unstructured.Unstructured, want operator.NewDatacenter) error {
	if want.Name == "" || len(want.Racks) == 0 || want.NodesPerRack <= 0 {
		return fmt.Errorf("datacenter %q: a name, at least one rack and a count of nodes per rack above 0 are needed (got racks %v, %d per rack)", want.Name, want.Racks, want.NodesPerRack)
	}
	seen := map[string]bool{}
	for _, r := range want.Racks {
		if seen[r] {
			return fmt.Errorf("datacenter %s: rack %s is named twice", want.Name, r)
		}
		seen[r] = true
		if !dcRackName.MatchString(want.Name + "-" + r) {
			return fmt.Errorf("datacenter %s, rack %s: CassKop names the rack's StatefulSet %s-%s, which must be lower case letters, digits and '-', starting with a letter", want.Name, r, want.Name, r)
		}
	}
	dcs, _, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "dc")
	if len(dcs) == 0 && want.Name == "dc1" {
		// CassKop's implicit datacenter (DefaultCassandraDC, api/v2/cassandracluster_types.go).
		return fmt.Errorf("datacenter dc1 is the cluster's own (CassKop's default when spec.topology names none): choose another name")
	}
	entry, ok := topologyDC(u, want.Name)
	if !ok {
		return nil
	}
	racks, count := entryRacks(u, entry)
	if !slices.Equal(racks, want.Racks) || count != want.NodesPerRack {
		return fmt.Errorf("datacenter %s is already in the topology of %s/%s with racks %v and %d nodes per rack, not racks %v and %d: it is not a new datacenter", want.Name, u.GetNamespace(), u.GetName(), racks, count, want.Racks, want.NodesPerRack)
	}
	return nil
}

// topologyDC is dc's entry in spec.topology.dc, when it is written there.
func topologyDC(u *unstructured.Unstructured, dc string) (map[string]any, bool) {
	dcs, _, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "dc")
	for _, d := range dcs {
		if m, ok := d.(map[string]any); ok && m["name"] == dc {
			return m, true
		}
	}
	return nil, false
}

// entryRacks are the racks and count of a topology entry as CassKop reads them: rack1
// when it lists none (DefaultCassandraRack), the spec's nodesPerRacks when it has none
// (getDCNodesPerRacksFromIndex), 1 when neither says (the mapping's default).
func entryRacks(u *unstructured.Unstructured, entry map[string]any) ([]string, int) {
	var racks []string
	rs, _, _ := unstructured.NestedSlice(entry, "rack")
	for _, r := range rs {
		if m, ok := r.(map[string]any); ok {
			n, _ := m["name"].(string)
			racks = append(racks, n)
		}
	}
	if len(racks) == 0 {
		racks = []string{"rack1"}
	}
	n, found, _ := unstructured.NestedInt64(entry, "nodesPerRacks")
	if !found {
		n, found, _ = unstructured.NestedInt64(u.Object, "spec", "nodesPerRacks")
		if !found || n <= 0 {
			n = 1
		}
	}
	return racks, int(n)
}

// AddDatacenter implements operator.DatacenterAdder: want appended to spec.topology.dc
// with a JSON patch testing the cluster's UID and resourceVersion. op is not written:
// CassKop's topology keeps no mark, the entry is the operation's whole effect.
func (a *Adapter) AddDatacenter(ctx context.Context, ns, name, uid, _ string, want operator.NewDatacenter) error {
	c, u, err := a.planned(ctx, ns, name, uid, "no datacenter was added")
	if err != nil {
		return err
	}
	if err := checkNewDC(u, want); err != nil {
		return err
	}
	if _, ok := topologyDC(u, want.Name); ok {
		return nil
	}
	ops, err := addDCPatch(u, want)
	if err != nil {
		return err
	}
	return patchPlanned(ctx, c, name, u, ops)
}

// addDCPatch is the JSON patch appending want to u's topology. Without a topology,
// CassKop runs its implicit dc1/rack1 (DefaultCassandraDC, DefaultCassandraRack); the
// patch writes it out first, without a count so that it keeps the spec's. CassKop
// accepts that: CheckTopologyChanges (hasChange) refuses a rack created only inside a
// DC that was not created with it, and both DCs are created whole here; the implicit
// DC's StatefulSet <cluster>-dc1-rack1 keeps its name.
func addDCPatch(u *unstructured.Unstructured, want operator.NewDatacenter) ([]map[string]any, error) {
	racks := make([]any, 0, len(want.Racks))
	for _, r := range want.Racks {
		racks = append(racks, map[string]any{"name": r})
	}
	entry := map[string]any{"name": want.Name, "nodesPerRacks": want.NodesPerRack, "rack": racks}
	dcs, _, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "dc")
	if len(dcs) > 0 {
		return []map[string]any{{"op": "add", "path": "/spec/topology/dc/-", "value": entry}}, nil
	}
	implicit := map[string]any{"name": "dc1", "rack": []any{map[string]any{"name": "rack1"}}}
	list := []any{implicit, entry}
	if _, ok := u.Object["spec"].(map[string]any); !ok {
		return nil, fmt.Errorf("%s %s/%s has no spec: no datacenter can be added to it", Kind, u.GetNamespace(), u.GetName())
	}
	if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "topology"); ok {
		return []map[string]any{{"op": "add", "path": "/spec/topology/dc", "value": list}}, nil
	}
	return []map[string]any{{"op": "add", "path": "/spec/topology", "value": map[string]any{"dc": list}}}, nil
}

// AdditionRequested implements operator.DatacenterAdder: want is in spec.topology.dc
// with its racks.
func (a *Adapter) AdditionRequested(ctx context.Context, ns, name string, want operator.NewDatacenter) (bool, error) {
	_, u, err := a.Get(ctx, ns, name)
	if err != nil {
		return false, err
	}
	entry, ok := topologyDC(u, want.Name)
	if !ok {
		return false, nil
	}
	racks, _ := entryRacks(u, entry)
	return slices.Equal(racks, want.Racks), nil
}
