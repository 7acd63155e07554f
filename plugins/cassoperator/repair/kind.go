// Package repair is repair-operator-state for cass-operator: the stuck states the real
// operator stays in after an interrupted scale-down (FACTS §8), each verified against
// the ring first, planned, dry-runnable and resumable, and ending with the operator
// moving on by itself. The operator is never paused: the repair gives it what it needs
// to finish on its own (a label and a condition), or removes what it left.
package repair

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
)

// Name is the kind's name in checkpoints (the command is repair-operator-state).
const Name = "repair-cass-operator"

// Kind is repair-operator-state on a CassandraDatacenter.
type Kind struct{}

// Operator is cass-operator with the operation only it has: what
// cmd/kubectl-cassandra/main.go hands the CLI.
type Operator struct{ cassoperator.Plugin }

var _ operation.Offerer = Operator{}

// Kinds implements operation.Offerer.
func (Operator) Kinds() []operation.Kind { return []operation.Kind{Kind{}} }

// Info implements operation.Kind.
func (Kind) Info() operation.Info {
	return operation.Info{
		Name: Name,
		Checkpoint: record.Schema{Version: 2, Unowned: true, NewNodes: true,
			Steps: slices.Concat([]string{record.StepVerifyLeft, record.StepWaitPodGone, record.StepWaitJoined}, record.DrivenSteps(), record.ThroughputSteps(), record.TaskSteps(), ownSteps)},
		StepsHeader: "Steps (each re-checked against the cluster right before it runs):",
		ConfirmWord: "Repair",
		Abort:       operation.Abort{KeepsCount: true},
		Operator:    cassoperator.Plugin{}.Name(),
	}
}

// Access implements operation.Kind.
func (Kind) Access(_ context.Context, env *operation.Env) ([]operation.Access, error) {
	ns, cr := env.Cluster.Namespace, env.Adapter.GroupResource()
	return append(env.CommonAccess(ns, cr, "write the checkpoint annotation"),
		operation.Access{Group: cr.Group, Resource: cr.Resource, Subresource: "status", Verb: "patch", Namespace: ns, Why: "set ScalingDown, remove a stale nodeStatuses entry"},
		operation.Access{Resource: "pods", Verb: "patch", Namespace: ns, Why: "label a pod's node-state"},
		operation.Access{Resource: "pods", Verb: "watch", Namespace: ns, Why: "wait until a pod is gone"},
		operation.Access{Resource: "persistentvolumeclaims", Verb: "list", Namespace: ns, Why: "find left-over claims"},
		operation.Access{Resource: "persistentvolumeclaims", Verb: "delete", Namespace: ns, Why: "delete a left-over claim"}), nil
}

// Summary implements operation.Kind.
func (Kind) Summary(cp *record.Checkpoint) string {
	var pods []string
	for _, n := range cp.Nodes {
		pods = append(pods, n.Pod)
	}
	if cp.Target.Size > 0 {
		return fmt.Sprintf("cass-operator's stuck state repaired, then datacenter %s scaled to size %d (nodes %s)", cp.Target.DC, cp.Target.Size, strings.Join(pods, ", "))
	}
	return fmt.Sprintf("cass-operator's stuck states repaired for %s (datacenter %s)", strings.Join(pods, ", "), cp.Target.DC)
}

// Target implements operation.Kind.
func (Kind) Target(t record.Target) string {
	return fmt.Sprintf("datacenter %s racks %s", t.DC, strings.Join(t.Racks, ","))
}

// PlanLines implements operation.Kind: what was found, verified.
func (Kind) PlanLines(_ *record.Checkpoint, findings []string) []string {
	var lines []string
	for _, f := range findings {
		lines = append(lines, "  found: "+f)
	}
	return lines
}

// BuildSteps implements operation.Kind: the repair's own steps, and the plugin's
// library's waits for the operator.
func (Kind) BuildSteps(w operation.World) (map[string]operation.Step, error) {
	out := map[string]operation.Step{}
	for _, s := range w.Checkpoint().Steps {
		st, err := ownStep(w, s)
		if err != nil {
			return nil, err
		}
		if st == nil {
			if st, err = w.Core(operation.Variant{Driven: true}, s); err != nil {
				return nil, err
			}
		}
		out[s.ID] = st
	}
	return out, nil
}
