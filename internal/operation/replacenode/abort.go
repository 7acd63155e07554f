package replacenode

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
)

// A replace may be aborted until the dead node's data is discarded: before its claims
// are deleted (CassKop), or before the operator's task exists (cass-operator, which
// deletes them whenever it runs the task). After that only resume goes forward.

// assess is abort's check (operation.Abort).
func assess(ctx context.Context, r operation.AbortReads, cp *checkpoint.Checkpoint) (operation.Progress, error) {
	p := operation.Progress{Total: 1}
	if cp.Replace == nil || len(cp.Nodes) != 1 {
		return p, nil
	}
	ru := &run{w: &steps.World{Kube: r.Kube, CP: cp}, rep: cp.Replace, n: cp.Nodes[0]}
	if cp.Replace.Task != "" {
		if !cp.Started(StepCreateTask) {
			return p, nil
		}
		ru.w.Tasks = r.Tasks
		t, err := ru.task(ctx)
		if err != nil {
			return p, exit.Refusedf("cannot read task %s (%v): abort needs to know the operator was not asked yet; nothing changed", cp.Replace.Task, err)
		}
		if t != nil {
			return p, exit.Refusedf("the operator was asked to replace the node (task %s exists): it deletes the dead node's claims and pod whenever it runs it, so abort cannot undo it; resume finishes the replace: %s",
				t.Name, r.ResumeHint)
		}
		return p, nil
	}
	if !cp.Started(StepDeleteClaims) {
		return p, nil
	}
	left, err := ru.claimsLeft(ctx)
	if err != nil {
		return p, exit.Refusedf("%v: abort needs to know the dead node's claims are intact; nothing changed", err)
	}
	if len(left) < len(cp.Nodes[0].PVCs) {
		return p, exit.Refusedf("the dead node's claims are deleted (or being deleted): its data is gone, so abort cannot give it back; resume finishes the replace: %s", r.ResumeHint)
	}
	return p, nil
}

// undo takes the replace option out of the start script, so that no later start of
// the pod replaces (operation.Abort.Undo); it says what it did.
func undo(ctx context.Context, r operation.AbortReads, cp *checkpoint.Checkpoint) (string, error) {
	if cp.Replace == nil || cp.Replace.ConfigMap == "" || len(cp.Nodes) != 1 {
		return "", nil
	}
	ru := &run{w: &steps.World{Kube: r.Kube, CP: cp}, rep: cp.Replace, n: cp.Nodes[0]}
	had, err := (&setOption{ru}).written(ctx)
	if err != nil {
		return "", err
	}
	if !had {
		return "", nil
	}
	if err := ru.removeBlock(ctx); err != nil {
		return "", fmt.Errorf("cannot take the replace option out of ConfigMap %s: %w", cp.Replace.ConfigMap, err)
	}
	return fmt.Sprintf("Took the replace option for %s out of ConfigMap %s.", cp.Replace.Pod, cp.Replace.ConfigMap), nil
}
