// Package adddc is the addition of a datacenter (add-dc): the operator creates it and
// its nodes join owning no replicas; the keyspaces then get replicas in it (ALTER
// KEYSPACE through cqlsh, or by the user, verified), and each new node is rebuilt from
// the source datacenter one at a time (CassKop: `nodetool rebuild -- SOURCE` through
// exec; cass-operator: a rebuild task naming the pod), verified from what Cassandra
// reports: no rebuild stream left, the node's Load against the source's.
package adddc

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Name is the kind as checkpoints record it.
const Name = "add-dc"

// Kind is add-dc.
type Kind struct{}

// Info implements operation.Kind. Abort is always allowed: what joined stays, and the
// abort says what is left to rebuild.
func (Kind) Info() pub.Info {
	return pub.Info{
		Name: Name,
		Checkpoint: record.Schema{Version: 2, NewNodes: true, Steps: []string{StepAddDC, StepWaitDatacenterJoined, StepAddToKeyspaces, StepVerifyKeyspaces, StepWaitSchema, StepRebuild,
			record.StepRecordThroughput, record.StepSetThroughput, record.StepRestoreThroughput}},
		StepsHeader: "Steps (the datacenter first, then its keyspaces, then one node rebuilt at a time):",
		ConfirmWord: "Add datacenter",
		Abort:       pub.Abort{Verb: "rebuilding", Unit: "nodes", Past: "rebuilt", NoneYet: "no node has been rebuilt", KeepsCount: true, Assess: operation.WithPlanner(assess)},
	}
}

// Access implements operation.Kind: the resource's change (CassKop: its topology;
// cass-operator: a new CassandraDatacenter), the pods' exec (nodetool, cqlsh), the
// rebuild tasks (cass-operator), and the Secret cqlsh logs in with.
func (Kind) Access(_ context.Context, env *pub.Env) ([]pub.Access, error) {
	ns, cr := env.Cluster.Namespace, env.Adapter.GroupResource()
	acc := []pub.Access{
		{Group: cr.Group, Resource: cr.Resource, Verb: "get", Namespace: ns, Why: "read the cluster resource"},
		{Group: cr.Group, Resource: cr.Resource, Verb: "patch", Namespace: ns, Why: "write the checkpoint (and, CassKop, add the datacenter to the topology)"},
		{Resource: "pods", Verb: "list", Namespace: ns, Why: "find the source's and the new datacenter's pods"},
		{Resource: "pods", Subresource: "exec", Verb: "create", Namespace: ns, Why: "run nodetool and cqlsh in the pods"},
		{Group: "apps", Resource: "statefulsets", Verb: "get", Namespace: ns, Why: "read the new datacenter's StatefulSets"},
	}
	if ts, ok := env.Adapter.(operator.Tasks); ok {
		tr := ts.TaskResource()
		acc = append(acc,
			pub.Access{Group: cr.Group, Resource: cr.Resource, Verb: "create", Namespace: ns, Why: "create the new datacenter's resource"},
			pub.Access{Group: tr.Group, Resource: tr.Resource, Verb: "create", Namespace: ns, Why: "ask the operator to rebuild each new node (a rebuild task)"},
			pub.Access{Group: tr.Group, Resource: tr.Resource, Verb: "list", Namespace: ns, Why: "watch the rebuild tasks"})
	}
	if o := pub.KindRequestOf[Options](env.Request).Options; o.CQLSecret != "" {
		acc = append(acc, pub.Access{Resource: "secrets", Verb: "get", Namespace: ns, Why: "read the CQL credentials cqlsh logs in with"})
	}
	return append(acc, operation.ThroughputAccess(env.Request, ns)...), nil
}

// Summary implements operation.Kind.
func (Kind) Summary(cp *record.Checkpoint) string {
	e, _ := extOf(cp)
	return fmt.Sprintf("datacenter %s added (%d nodes rebuilt from %s, %d keyspaces replicate to it)", cp.Target.DC, len(cp.Nodes), e.Source, len(e.Wanted))
}

// Target implements operation.Kind.
func (Kind) Target(t record.Target) string {
	return fmt.Sprintf("datacenter %s, added and rebuilt (%d nodes)", t.DC, t.Nodes)
}

// PlanLines implements operation.Kind.
func (Kind) PlanLines(cp *record.Checkpoint, findings []string) []string {
	e, _ := extOf(cp)
	var lines []string
	for _, r := range e.Racks {
		lines = append(lines, fmt.Sprintf("  rack %s: %d nodes (StatefulSet %s, made by the operator)", r.Name, r.Nodes, r.StatefulSet))
	}
	for _, k := range names(e.Wanted) {
		lines = append(lines, fmt.Sprintf("  keyspace %s: %d replicas in %s", k, e.Wanted[k], cp.Target.DC))
	}
	lines = append(lines, fmt.Sprintf("  every new node rebuilt from %s, one at a time", e.Source))
	for _, f := range findings {
		lines = append(lines, "  "+f)
	}
	return lines
}

// assess is abort's check: always allowed; what joined stays, and the abort says
// which nodes are left to rebuild (a rebuild streaming is finished by the node itself).
func assess(_ context.Context, _ operation.AbortReads, cp *record.Checkpoint) (pub.Progress, error) {
	p := pub.Progress{Total: len(cp.Nodes)}
	var left []string
	for _, s := range cp.Steps {
		if s.Kind != StepRebuild {
			continue
		}
		if s.State == record.StateDone {
			p.Done++
		} else {
			left = append(left, s.Pod)
		}
	}
	e, _ := extOf(cp)
	if len(left) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("datacenter %s stays, with its nodes; not rebuilt yet: %s. Until they are, its replicas miss the data written before the keyspaces' change: rebuild them (kubectl cassandra nodetool -n %s POD rebuild -- %s, one at a time), or run add-dc again",
			cp.Target.DC, strings.Join(left, ", "), cp.Namespace, e.Source))
	}
	return p, nil
}
