// Package scaledown is the scale-down operation: remove nodes from racks, highest
// ordinal first, one node at a time (nodetool decommission, verify it left, shrink the
// StatefulSet, wait for the pod to go, delete its claims), then set the cluster
// resource's count.
package scaledown

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/future"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Kind is the scale-down.
type Kind struct{ operation.Scale }

// Info implements operation.Kind.
func (Kind) Info() pub.Info {
	return pub.Info{
		Name: checkpoint.KindScaleDown,
		Checkpoint: record.Schema{Version: 1, // readable by the oldest plugins
			Steps: []string{record.StepDecommission, steps.StepRemoveNode, record.StepVerifyLeft, record.StepShrinkSTS, record.StepWaitPodGone, record.StepDeletePVCs, steps.StepUpdateCluster, record.StepPauseOperator, record.StepResumeOperator, record.StepDeleteLeftoverPVCs, record.StepRequestRemoval, record.StepWaitLeaving, record.StepWaitClaimsGone, record.StepWaitReleased, record.StepRecordThroughput, record.StepSetThroughput, record.StepRestoreThroughput}},
		StepsHeader: "Steps (one node at a time, highest ordinal first):",
		ConfirmWord: "Scale down",
		Abort:       pub.Abort{Verb: "removing", Unit: "nodes", Past: "removed", NoneYet: "no node has started leaving", Assess: operation.WithPlanner(assess)},
	}
}

// PlanLines implements operation.Kind: a line per rack, then what the planner found
// (a node that already left the ring).
func (k Kind) PlanLines(cp *record.Checkpoint, findings []string) []string {
	lines := k.Scale.PlanLines(cp, findings)
	for _, f := range findings {
		lines = append(lines, "  "+f)
	}
	return lines
}

// Access implements operation.Kind.
func (Kind) Access(_ context.Context, env *pub.Env) ([]pub.Access, error) {
	if _, ok := env.Adapter.(operator.Scaler); ok {
		return operation.DrivenAccess(env.Cluster.Namespace, env.Adapter.GroupResource(), env.Adapter.CountWords()), nil
	}
	return NeededAccess(env.Cluster.Namespace, env.Adapter.GroupResource(), env.Adapter.CountWords(), env.Request.Pause), nil
}

// NeededAccess lists the permissions a scale-down uses; count names the spec's count
// (operator.Counts.CountWords).
func NeededAccess(ns string, cr schema.GroupResource, count string, pause *record.PausedOperator) []pub.Access {
	return operation.PauseAccess(append(operation.CommonAccess(ns, cr, "write the checkpoint annotation and "+count),
		pub.Access{Resource: "pods", Verb: "watch", Namespace: ns, Why: "wait until a pod is gone"},
		pub.Access{Group: "apps", Resource: "statefulsets", Verb: "patch", Namespace: ns, Why: "shrink the StatefulSet"},
		pub.Access{Resource: "persistentvolumeclaims", Verb: "get", Namespace: ns, Why: "read the removed pod's PVCs"},
		pub.Access{Resource: "persistentvolumeclaims", Verb: "delete", Namespace: ns, Why: "delete the removed pod's PVCs"},
	), pause)
}

// Summary implements operation.Kind. A plan that removes no node settled what a
// removal whose record is gone left (settle.go).
func (Kind) Summary(cp *record.Checkpoint) string {
	racks := strings.Join(cp.Target.Racks, ",")
	if len(cp.Nodes) == 0 {
		claims := 0
		for _, l := range cp.Leftovers {
			claims += len(l.PVCs)
		}
		return fmt.Sprintf("datacenter %s racks %s settled at %d nodes (0 removed, %d left-over PVCs deleted)", cp.Target.DC, racks, cp.Target.Nodes, claims)
	}
	return fmt.Sprintf("datacenter %s racks %s scaled to %d nodes (%d removed)", cp.Target.DC, racks, cp.Target.Nodes, len(cp.Nodes))
}

// Plan implements operation.Kind: remove nodes from the selected racks down to
// Request.Nodes each, highest ordinal first, rack by rack. A request that grows a rack
// is answered *operation.ErrScaleUp; racks at Request.Nodes already are settled
// (planSettle).
func (k Kind) Plan(ctx context.Context, env *pub.Env) (*pub.Plan, error) {
	if sc, ok := env.Adapter.(operator.Scaler); ok {
		return k.planDriven(ctx, env, sc)
	}
	if err := operation.RequireRack(env.Request); err != nil {
		return nil, err
	}
	p, cl, req := operation.PlannerOf(env), env.Cluster, pub.KindRequestOf[Options](env.Request)
	plan, err := k.NewScalePlan(env)
	if err != nil {
		return nil, err
	}
	dc, racks := plan.DC, plan.Racks
	// The ring is read from the first rack's first pod while the StatefulSets and pods
	// are (nodetool is the slowest read); the answer serves only if that pod is the
	// reader, and a failed one is asked again then. The keyspaces' replication too.
	early := newEarly(ctx, p, racks[0].StatefulSet+"-0")
	from, states, err := readRacks(ctx, p, cl.Namespace, racks, req.Nodes)
	if err != nil {
		return nil, err
	}
	if from == nil {
		settle, err := k.planSettle(ctx, env, plan, states, early)
		if err == nil && req.StreamThroughput != "" {
			settle.Warnings = append(settle.Warnings, noStreamWarning)
		}
		return settle, err
	}
	unready, err := deferUnready(cl.Namespace, states, func(string) int { return req.Nodes })
	if err != nil {
		return nil, err
	}
	reader := states[0].Pods[0].Name
	pf := &preflight{p: p, ns: cl.Namespace, states: states, nodes: req.Nodes, claims: map[string]*corev1.PersistentVolumeClaim{},
		reader: reader, unready: unready, left: map[string]bool{}, selector: env.Adapter.ClusterSelector(cl.Name), container: env.Adapter.Container()}
	describe := early.describeFrom(ctx, reader)
	// The claims do not depend on the ring: they are listed while it is read.
	claimsRead := future.Start(func() (struct{}, error) { pf.listClaims(ctx); return struct{}{}, nil })
	ring, err := early.readRing(ctx, reader)
	_, _ = claimsRead() // listClaims keeps what it could read; a claim it missed is asked by name
	if err != nil {
		return nil, err
	}
	if !onlyDown(ring, dc.Name) {
		return nil, operation.CheckUN(ring, cl, dc)
	}
	nodes, warnings, err := pf.leaving(ctx, ring)
	if err != nil {
		return nil, err
	}
	if err := pf.judgeDead(ctx, ring, nodes, cl, dc, req.Options.RemoveDead); err != nil {
		return nil, err
	}
	if req.Options.RemoveDead && len(pf.dead) == 0 {
		warnings = append(warnings, "--remove-dead: no node to remove is dead; each is decommissioned")
	}
	plan.Warnings = append(plan.Warnings, warnings...)
	if err := pf.checks(ctx, plan, ring, nodes, reader, describe, req.Force); err != nil {
		return nil, err
	}
	plan.CP = p.NewCheckpoint(cl, k, "scale", req.Request)
	plan.CP.Target = record.Target{DC: dc.Name, Racks: operation.RackNames(racks), Nodes: req.Nodes, From: from}
	plan.CP.Nodes = nodes
	plan.CP.Steps = RemovalSteps(nodes, req.Pause != nil, pf.dead)
	markLeft(plan.CP.Steps, pf.left, plan.CP.StartedAt)
	plan.Findings = append(plan.Findings, removalFindings(nodes, pf.left, pf.dead, reader)...)
	if err := throttle(ctx, env, plan, ring, reader, pf.dead); err != nil {
		return nil, err
	}
	plan.CP.SchemaVersion = max(plan.CP.SchemaVersion, removalSchema(len(pf.unstarted) > 0, len(pf.dead) > 0))
	plan.Warnings = append(plan.Warnings, operation.PauseWarnings(req.Pause, env.Adapter.Kind())...)
	return plan, nil
}

// removalFindings is what the planner found about the nodes to remove: one that
// already left the ring, one that is dead (removed by removenode), one that never
// started.
func removalFindings(nodes []record.Node, left, dead map[string]bool, reader string) []string {
	var out []string
	for _, n := range nodes {
		switch {
		case left[n.Pod]:
			out = append(out, leftFinding(n.Pod))
		case dead[n.Pod]:
			out = append(out, deadFinding(n, reader))
		case n.Unstarted:
			out = append(out, unstartedFinding(n.Pod))
		}
	}
	return out
}

// removalSchema is the lowest checkpoint schema that can read the removal: a plugin
// that reads only schema 1 would not know that an unstarted node's removal has no
// decommission (Node.Unstarted), nor any step kind but the decommission's (removenode).
func removalSchema(unstarted, dead bool) int {
	if unstarted || dead {
		return 2
	}
	return 1
}
