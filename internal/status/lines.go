package status

import (
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
)

// Lines is the plain form of a report for `status --watch` without a terminal: one line
// per thing that can change, keyed so that two reports can be compared line by line.
func Lines(rep Report) (keys []string, lines map[string]string) {
	lines = map[string]string{}
	add := func(key, line string) {
		keys = append(keys, key)
		lines[key] = line
	}
	operationLines(rep, add)
	for _, b := range rep.OperatorBusy {
		add("busy/"+b, "operator: "+b)
	}
	for _, s := range rep.StalePauses {
		add("stale/"+s, "operator: "+s)
	}
	for _, dc := range rep.Datacenters {
		add("dc/"+dc.Name, fmt.Sprintf("datacenter %s: %s", dc.Name, dc.Spec))
		for _, r := range dc.Racks {
			rackLines(r, add)
		}
	}
	for _, w := range rep.Warnings {
		add("warn/"+w, "warning: "+w)
	}
	return keys, lines
}

// operationLines are the operation in flight, its progress and the last operation.
func operationLines(rep Report, add func(key, line string)) {
	switch op := rep.Operation; {
	case op == nil:
		add("operation", "operation: none in flight")
	case op.Error != "":
		add("operation", "operation: checkpoint unusable: "+op.Error)
	default:
		cur := ""
		if op.CurrentStep != nil {
			cur = fmt.Sprintf(", current step %s (%s, attempts %d)", op.CurrentStep.ID, op.CurrentStep.State, op.CurrentStep.Attempts)
			if op.CurrentStep.LastError != "" {
				cur += ", last error: " + op.CurrentStep.LastError
			}
		}
		holder := "running"
		if !op.Running {
			holder = "stopped"
		}
		add("operation", fmt.Sprintf("operation: %s %s %s (holder %s), step %d/%d done%s", op.Kind, op.ID, holder, op.Holder, op.StepsDone, op.StepsTotal, cur))
		if op.Progress != nil {
			add("progress", "progress: "+output.ProgressText(*op.Progress))
		}
	}
	if lo := rep.LastOperation; lo != nil {
		add("last", fmt.Sprintf("last operation: %s %s %s: %s", lo.Kind, lo.OperationID, lo.Result, lo.Summary))
	}
}

// rackLines are a rack, its pods and its claims.
func rackLines(r Rack, add func(key, line string)) {
	if !r.Exists {
		add("rack/"+r.Name, fmt.Sprintf("rack %s: StatefulSet %s missing", r.Name, r.StatefulSet))
		return
	}
	add("rack/"+r.Name, fmt.Sprintf("rack %s: StatefulSet %s %d/%d ready", r.Name, r.StatefulSet, r.ReadyReplicas, r.Replicas))
	for _, p := range r.Pods {
		state := "ready"
		if !p.Ready {
			state = "not ready"
		}
		if p.Terminating {
			state = "terminating"
		}
		add("pod/"+p.Name, fmt.Sprintf("pod %s: %s, node %s, load %s, owns %s", p.Name, state, dash(p.NodeState), dash(p.Load), dash(p.Owns)))
	}
	for _, c := range r.PVCs {
		add("pvc/"+c.Name, fmt.Sprintf("pvc %s: %s, %s", c.Name, c.phase(), dash(c.Capacity)))
	}
}
