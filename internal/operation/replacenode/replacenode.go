// Package replacenode is replace-node: a dead Cassandra node (its Kubernetes node gone,
// its volume lost, its disk corrupt) replaced by a fresh node that takes over its
// tokens, resumably and verified (docs/how-it-works/replace.md). The plan reads the dead
// node's identity from the ring before anything changes; who acts is the operator's
// choice: CassKop is paused and the plugin writes the replace option into its start
// script, deletes the claims and the pod; cass-operator is asked through its
// replacenode task. Either way the replacement is verified in the ring.
package replacenode

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Kind is replace-node.
type Kind struct{}

// Name is the kind as checkpoints record it.
const Name = "replace-node"

// Info implements operation.Kind.
func (Kind) Info() pub.Info {
	return pub.Info{
		Name:        Name,
		Checkpoint:  record.Schema{Version: 2, Steps: stepKinds, Unowned: true},
		StepsHeader: "Steps (each destructive one only once the node is, right then, still DN and its nodetool silent):",
		ConfirmWord: "Replace",
		Abort: pub.Abort{Verb: "replacing", Unit: "nodes", Past: "replaced", Assess: operation.WithPlanner(assess), Undo: operation.WithPlanner(undo), KeepsCount: true,
			NoneYet: "no node replaced yet; what the replace put in place (its option, the stream limits) is taken back"},
	}
}

// Access implements operation.Kind.
func (Kind) Access(_ context.Context, env *pub.Env) ([]pub.Access, error) {
	ns, cr := env.Cluster.Namespace, env.Adapter.GroupResource()
	acc := operation.CommonAccess(ns, cr, "write the checkpoint annotation")
	if ts, ok := env.Adapter.(operator.Tasks); ok {
		tr := ts.TaskResource()
		return append(acc, pub.Access{Group: tr.Group, Resource: tr.Resource, Verb: "create", Namespace: ns, Why: "ask the operator to replace the node"}, pub.Access{Group: tr.Group, Resource: tr.Resource, Verb: "get", Namespace: ns, Why: "follow the replace task"}, pub.Access{Group: tr.Group, Resource: tr.Resource, Verb: "delete", Namespace: ns, Why: "withdraw the replace task if the node comes back before the operator runs it"}), nil
	}
	acc = append(acc, pub.Access{Resource: "configmaps", Verb: "get", Namespace: ns, Why: "read the start script"}, pub.Access{Resource: "configmaps", Verb: "update", Namespace: ns, Why: "write and remove the replace option"}, pub.Access{Resource: "persistentvolumeclaims", Verb: "get", Namespace: ns, Why: "read the dead node's claims"}, pub.Access{Resource: "persistentvolumeclaims", Verb: "delete", Namespace: ns, Why: "discard the dead node's data"}, pub.Access{Resource: "pods", Verb: "delete", Namespace: ns, Why: "delete the dead node's pod"})
	return operation.PauseAccess(acc, env.Request.Pause), nil
}

// Summary implements operation.Kind.
func (Kind) Summary(cp *record.Checkpoint) string {
	if cp.Replace == nil {
		return "node replaced"
	}
	r := cp.Replace
	if r.NewNode != "" {
		return fmt.Sprintf("the node of pod %s (was %s, Host ID %s) not replaced: the pod's new node (Host ID %s) joined as a new node with tokens of its own, and the dead node was removed from the ring (verified: gone, the new node UN)",
			r.Pod, r.Address, r.HostID, r.NewNode)
	}
	return fmt.Sprintf("the node of pod %s (was %s, Host ID %s) replaced, its %d tokens taken over", r.Pod, r.Address, r.HostID, r.Tokens)
}

// Target implements operation.Kind.
func (Kind) Target(t record.Target) string {
	return fmt.Sprintf("datacenter %s rack %s, replace a dead node", t.DC, firstOf(t.Racks))
}

// PlanLines implements operation.Kind: the dead node as found.
func (Kind) PlanLines(cp *record.Checkpoint, _ []string) []string {
	r := cp.Replace
	if r == nil {
		return nil
	}
	lines := []string{
		fmt.Sprintf("  dead node: pod %s, address %s, Host ID %s, %d tokens, Load %s (DN as read from %s)", r.Pod, r.Address, r.HostID, r.Tokens, r.Load, r.Reader),
		fmt.Sprintf("  Cassandra %s; the replacement starts with -Dcassandra.replace_address_first_boot=%s and takes over exactly those tokens", r.Version, r.Address),
	}
	if r.Task != "" {
		lines = append(lines, "  the operator replaces it (task "+r.Task+"); the plugin verifies the result in the ring")
	} else {
		lines = append(lines, fmt.Sprintf("  through key %s of ConfigMap %s, into %s", r.Key, r.ConfigMap, r.File))
	}
	return lines
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
