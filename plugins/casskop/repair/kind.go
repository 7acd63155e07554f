package repair

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Name is the kind's name in checkpoints.
const Name = "repair-operator-state"

// Kind is repair-operator-state, an operation the CassKop adapter offers
// (operator.go: Operator.Kinds).
type Kind struct{}

// Info implements operation.Kind.
func (Kind) Info() operation.Info {
	return operation.Info{
		Name: Name,
		Checkpoint: record.Schema{Version: 2, Unowned: true, Steps: []string{record.StepDecommission, record.StepVerifyLeft, record.StepShrinkSTS, record.StepWaitPodGone, record.StepDeletePVCs,
			StepOperatorStatus, record.StepPauseOperator, record.StepResumeOperator}},
		StepsHeader: "Steps (each re-checked against the cluster right before it runs):",
		ConfirmWord: "Repair",
		Abort:       operation.Abort{KeepsCount: true},
		Operator:    "casskop",
	}
}

// repairable is the operator's status to repair, and whether it is written through a
// /status subresource; it refuses an operator that keeps no such status.
func repairable(ctx context.Context, env *operation.Env) (Status, bool, error) {
	sr, ok := env.Adapter.(operator.StatusRepair)
	st, ok2 := env.Adapter.(Status)
	if !ok || !ok2 {
		return nil, false, operation.Refusedf("the %s operator keeps no status that an interrupted operation can leave stuck: nothing to repair; nothing changed", env.Adapter.Name())
	}
	sub, err := sr.StatusSubresource(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("cannot tell whether the %s CRD has a status subresource: %w; nothing changed", env.Adapter.Kind(), err)
	}
	return st, sub, nil
}

// Access implements operation.Kind. The status is written through its /status
// subresource when the CRD has one.
func (Kind) Access(ctx context.Context, env *operation.Env) ([]operation.Access, error) {
	_, sub, err := repairable(ctx, env)
	if err != nil {
		return nil, err
	}
	ns, cr := env.Cluster.Namespace, env.Adapter.GroupResource()
	acc := append(env.CommonAccess(ns, cr, "write the checkpoint annotation"),
		operation.Access{Resource: "pods", Verb: "watch", Namespace: ns, Why: "wait until a pod is gone"},
		operation.Access{Group: "apps", Resource: "statefulsets", Verb: "patch", Namespace: ns, Why: "shrink the StatefulSet"},
		operation.Access{Resource: "persistentvolumeclaims", Verb: "get", Namespace: ns, Why: "read the leftover PVCs"},
		operation.Access{Resource: "persistentvolumeclaims", Verb: "delete", Namespace: ns, Why: "delete the leftover PVCs"})
	if sub {
		acc = append(acc, operation.Access{Group: cr.Group, Resource: cr.Resource, Subresource: "status", Verb: "patch", Namespace: ns, Why: "write the operator's status"})
	} else {
		acc[1].Why = "write the checkpoint annotation and the operator's status"
	}
	return env.PauseAccess(acc, env.Request.Pause), nil
}

// Summary implements operation.Kind.
func (Kind) Summary(cp *record.Checkpoint) string {
	var pods []string
	for _, n := range cp.Nodes {
		pods = append(pods, n.Pod)
	}
	return fmt.Sprintf("CassKop's stuck decommission of %s finished and marked done (datacenter %s racks %s)", strings.Join(pods, ", "), cp.Target.DC, strings.Join(cp.Target.Racks, ","))
}

// Target implements operation.Kind.
func (Kind) Target(t record.Target) string {
	return fmt.Sprintf("datacenter %s racks %s, repair of CassKop's stuck status", t.DC, strings.Join(t.Racks, ","))
}

// PlanLines implements operation.Kind: what was found.
func (Kind) PlanLines(_ *record.Checkpoint, findings []string) []string {
	if len(findings) == 0 {
		return nil
	}
	lines := []string{"Found (verified against the cluster):"}
	for _, f := range findings {
		lines = append(lines, "  - "+f)
	}
	return lines
}

// BuildSteps implements operation.Kind: the repair's own step (operatorstatus.go), and
// the plugin's library's steps as a repair runs them (operation.Variant.Repair).
func (Kind) BuildSteps(w operation.World) (map[string]operation.Step, error) {
	out := map[string]operation.Step{}
	for _, s := range w.Checkpoint().Steps {
		var st operation.Step
		var err error
		if s.Kind == StepOperatorStatus {
			st, err = newOperatorStatus(w, s)
		} else {
			st, err = w.Core(operation.Variant{Repair: true}, s)
		}
		if err != nil {
			return nil, err
		}
		out[s.ID] = st
	}
	return out, nil
}
