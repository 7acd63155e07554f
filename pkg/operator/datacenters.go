package operator

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// DatacenterRemover is offered by an operator that can take a whole datacenter out of
// a cluster (remove-dc). The plugin has emptied the datacenter's replication first; who
// makes its nodes leave the ring is the operator's choice, as for a scale-down:
//   - without Scaler (CassKop), the plugin decommissioned every node while the operator
//     was paused and set the datacenter's count to 0; RemoveDatacenter then takes it out
//     of the resource with the operator running, which deletes what it kept of it;
//   - with Scaler (cass-operator), RemoveDatacenter asks the operator to decommission
//     every node itself (the datacenter's resource annotated to decommission on delete,
//     then deleted), and the plugin verifies each node leave.
type DatacenterRemover interface {
	// RemoveDatacenter asks for dc's removal from the cluster resource name, the one of
	// UID uid the plan read (a precondition: a resource re-created since is never
	// touched), for operation op: a mark it leaves on a resource before deleting it
	// carries op (record.Owner-like), so that a later command can take it back once op
	// is gone. It is idempotent: asked again once done, it does nothing.
	RemoveDatacenter(ctx context.Context, ns, name, dc, uid, op string) error
	// RemovalRequested reports whether the resource no longer asks for dc (CassKop: dc
	// is out of spec.topology; cass-operator: the CassandraDatacenter is being deleted,
	// or gone): RemoveDatacenter's effect.
	RemovalRequested(ctx context.Context, ns, name, dc string) (bool, error)
	// DatacenterLeft lists what the operator still keeps of dc ("StatefulSet x",
	// "Service y", "CassandraDatacenter z"): empty once it removed everything.
	DatacenterLeft(ctx context.Context, ns, name, dc string) ([]string, error)
}

// DatacenterMark is one mark RemoveDatacenter left on a cluster resource: the operation
// Op that asked for the removal of the resource Name (of UID UID). Deleting: the
// resource is being deleted already, so the mark is part of that deletion and can no
// longer be taken back.
type DatacenterMark struct {
	Name, UID, Op string
	Deleting      bool
}

// DatacenterMarker is offered by a DatacenterRemover whose RemoveDatacenter marks a
// resource before deleting it (cass-operator: the decommission-on-delete annotation
// and its owner). An operation that ended before the delete (aborted, or its record
// gone) leaves the mark, and with it an armed deletion; a later command lists the marks
// and takes back those whose operation is gone.
type DatacenterMarker interface {
	// DatacenterMarks lists the marks on the namespace's resources.
	DatacenterMarks(ctx context.Context, ns string) ([]DatacenterMark, error)
	// Unmark takes back op's mark from resource name of UID uid: only while the mark
	// still names op and the resource is not being deleted (a write that tests the
	// resourceVersion it judged). A resource gone, or without op's mark, is done.
	Unmark(ctx context.Context, ns, name, op, uid string) error
}

// NewDatacenter is the datacenter add-dc asks for: its name and racks, with (CassKop)
// the nodes per rack, or (cass-operator) the manifest of its own resource (-f FILE,
// YAML or JSON), which names its size and racks itself.
type NewDatacenter struct {
	Name         string
	Racks        []string
	NodesPerRack int
	Manifest     []byte
}

// DatacenterAdder is offered by an operator that can add a datacenter to a cluster
// (add-dc). The operator creates the datacenter's StatefulSets and its nodes join
// owning no replicas (no keyspace replicates to it yet); the plugin then adds it to the
// keyspaces and rebuilds its nodes one at a time:
//   - without Tasks (CassKop), the datacenter is appended to the resource's topology
//     and the plugin runs `nodetool rebuild -- SOURCE` on each node;
//   - with Tasks (cass-operator), a new CassandraDatacenter of the same clusterName is
//     created from the manifest, marked with the operation, and each node is rebuilt by
//     a rebuild task naming its pod.
type DatacenterAdder interface {
	// PlanDatacenter checks want against the cluster resource name (the manifest's
	// clusterName, no such datacenter yet unless it is want itself) and says the
	// datacenter's name (a manifest's wins over want.Name) and the racks the operator
	// will make, in order: each its StatefulSet, its pods' labels and its nodes.
	PlanDatacenter(ctx context.Context, ns, name string, want NewDatacenter) (string, []topology.Rack, error)
	// AddDatacenter asks for want's addition to the cluster of resource name, the one of
	// UID uid the plan read, for operation op (a resource it creates carries op's mark).
	// Idempotent: asked again once AdditionRequested, it does nothing.
	AddDatacenter(ctx context.Context, ns, name, uid, op string, want NewDatacenter) error
	// AdditionRequested reports whether the operator is asked for want (CassKop: it is
	// in spec.topology with its racks; cass-operator: its resource exists, not being
	// deleted).
	AdditionRequested(ctx context.Context, ns, name string, want NewDatacenter) (bool, error)
}
