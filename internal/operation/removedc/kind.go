// Package removedc is the removal of a whole datacenter (remove-dc): the keyspaces
// stop replicating to it (ALTER KEYSPACE through cqlsh, schema agreement verified),
// every node of it leaves the ring one at a time (verified from a datacenter that
// stays), then the operator takes it out of the cluster (operator.DatacenterRemover)
// and the end is verified in the world.
package removedc

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaledown"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Name is the kind as checkpoints record it.
const Name = "remove-dc"

// Kind is remove-dc.
type Kind struct{}

// Info implements operation.Kind. Abort is allowed until the first node started
// leaving (assess): a datacenter half decommissioned can only go on.
func (Kind) Info() pub.Info {
	return pub.Info{
		Name: Name,
		Checkpoint: record.Schema{Version: 2, Empties: true, Steps: []string{StepAlterKeyspaces, StepAlterAuth, StepWaitLeft, StepWaitSchema, StepRemoveDC, StepWaitRemoved,
			record.StepDecommission, record.StepVerifyLeft, record.StepShrinkSTS, record.StepWaitPodGone, record.StepDeletePVCs,
			steps.StepUpdateCluster, record.StepPauseOperator, record.StepResumeOperator}},
		StepsHeader: "Steps (the keyspaces first, then one node at a time, highest ordinal first across the racks):",
		ConfirmWord: "Remove datacenter",
		Abort:       pub.Abort{Verb: "removing", Unit: "nodes", Past: "removed", NoneYet: "no node has started leaving", KeepsCount: true, Assess: operation.WithPlanner(assess)},
	}
}

// Access implements operation.Kind: a scale-down's (CassKop) or a driven scale's
// (cass-operator, plus the deletion), what verifies the operator removed the
// datacenter, and the Secret cqlsh logs in with.
func (Kind) Access(_ context.Context, env *pub.Env) ([]pub.Access, error) {
	ns, cr := env.Cluster.Namespace, env.Adapter.GroupResource()
	var acc []pub.Access
	if _, driven := env.Adapter.(operator.Scaler); driven {
		acc = append(operation.DrivenAccess(ns, cr, "the removal annotations"),
			pub.Access{Group: cr.Group, Resource: cr.Resource, Verb: "delete", Namespace: ns, Why: "delete the datacenter's resource (decommission-on-delete)"},
			pub.Access{Resource: "persistentvolumeclaims", Verb: "list", Namespace: ns, Why: "verify the operator deleted the datacenter's claims"})
	} else {
		acc = append(scaledown.NeededAccess(ns, cr, env.Adapter.CountWords(), env.Request.Pause),
			pub.Access{Resource: "services", Verb: "list", Namespace: ns, Why: "verify the operator deleted the datacenter's Services"})
	}
	acc = append(acc, pub.Access{Group: "apps", Resource: "statefulsets", Verb: "list", Namespace: ns, Why: "verify the operator deleted the datacenter's StatefulSets"})
	if o := pub.KindRequestOf[Options](env.Request).Options; o.CQLSecret != "" {
		acc = append(acc, pub.Access{Resource: "secrets", Verb: "get", Namespace: ns, Why: "read the CQL credentials cqlsh logs in with"})
	}
	return acc, nil
}

// Summary implements operation.Kind.
func (Kind) Summary(cp *record.Checkpoint) string {
	e, _ := extOf(cp)
	changed := len(e.Keyspaces)
	if hasKind(cp, StepAlterAuth) {
		changed++
	}
	return fmt.Sprintf("datacenter %s removed (%d nodes decommissioned, %d keyspaces changed)", cp.Target.DC, len(cp.Nodes), changed)
}

// Target implements operation.Kind.
func (Kind) Target(t record.Target) string {
	return fmt.Sprintf("datacenter %s, removed", t.DC)
}

// PlanLines implements operation.Kind.
func (Kind) PlanLines(cp *record.Checkpoint, findings []string) []string {
	var lines []string
	e, _ := extOf(cp)
	for _, k := range e.Keyspaces {
		lines = append(lines, fmt.Sprintf("  keyspace %s: drop datacenter %s from its replication", k, cp.Target.DC))
	}
	for _, r := range cp.Target.Racks {
		lines = append(lines, fmt.Sprintf("  rack %s: %d → 0 nodes", r, cp.Target.From[r]))
	}
	if hasKind(cp, StepAlterAuth) {
		lines = append(lines, fmt.Sprintf("  keyspace system_auth: drop datacenter %s from its replication once no node of it is left in the ring (Cassandra 5.0 refuses it before)", cp.Target.DC))
	}
	for _, f := range findings {
		lines = append(lines, "  "+f)
	}
	return lines
}

// assess is abort's check: nothing of the datacenter left the ring yet (a keyspace
// change made is kept, and said).
func assess(_ context.Context, _ operation.AbortReads, cp *record.Checkpoint) (pub.Progress, error) {
	p := pub.Progress{Total: len(cp.Nodes)}
	for _, s := range cp.Steps {
		switch {
		case s.Kind == record.StepDecommission && s.State != record.StatePending:
			return p, exit.Refusedf("a node of datacenter %s started leaving (%s): a datacenter half decommissioned cannot be given back; resume to finish removing it (kubectl cassandra resume -n %s %s); nothing changed", cp.Target.DC, s.Pod, cp.Namespace, cp.Cluster)
		case s.Kind == StepRemoveDC && s.State != record.StatePending && len(cp.Steps) > 0 && hasKind(cp, StepWaitLeft):
			return p, exit.Refusedf("the deletion of %s %s was asked (decommission-on-delete): the operator is decommissioning datacenter %s and a deletion cannot be taken back; resume to verify its end (kubectl cassandra resume -n %s %s); nothing changed", cp.Cluster, cp.Namespace, cp.Target.DC, cp.Namespace, cp.Cluster)
		case s.Kind == StepAlterKeyspaces && s.State != record.StatePending:
			e, _ := extOf(cp)
			p.Notes = append(p.Notes, fmt.Sprintf("keyspaces %s may no longer replicate to %s: abort keeps that (to give it back: ALTER KEYSPACE with %s again, then nodetool rebuild on its nodes)", strings.Join(e.Keyspaces, ", "), cp.Target.DC, cp.Target.DC))
		}
	}
	return p, nil
}

// hasKind reports whether cp has a step of kind (a driven removal has wait-node-left).
func hasKind(cp *record.Checkpoint, kind string) bool {
	for _, s := range cp.Steps {
		if s.Kind == kind {
			return true
		}
	}
	return false
}
