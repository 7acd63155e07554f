package steps

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// A node restarted in the middle of its decommission comes back NORMAL, and the step
// issues the decommission again. That one skips the ranges the first had already
// streamed (system.transferred_ranges), although writes to them kept reaching the node
// meanwhile: their new replicas may miss those writes (CASSANDRA-16290). The step
// records the resumption in its checkpoint record before it acts, and once the node is
// removed the run says to repair (and the last-operation record keeps it).

// describer reads describecluster (nodetool.Client does): the keyspaces to repair.
type describer interface {
	DescribeCluster(ctx context.Context, pod string) (nodetool.ClusterDescription, error)
}

// noteUnderway records that this run saw pod's decommission under way (leaving or
// streaming out).
func (w *World) noteUnderway(pod string) { w.underway.set(pod, true) }

// wasUnderway: pod's decommission was under way before, as this run saw it or as the
// checkpoint records it (the step done: a run saw the node leaving; or streaming
// progress kept for it).
func (w *World) wasUnderway(pod string) bool {
	if seen, _ := w.underway.get(pod); seen {
		return true
	}
	recorded := false
	w.amend(func() {
		for _, s := range w.CP.Steps {
			if s.Pod != pod {
				continue
			}
			switch s.Kind {
			case record.StepDecommission:
				recorded = recorded || s.State == record.StateDone || s.Progress != nil
			case record.StepVerifyLeft:
				recorded = recorded || s.Progress != nil
			}
		}
	})
	return recorded
}

// markResumed records in pod's decommission record that it resumes after a restart;
// the "started" write before the call carries it.
func (w *World) markResumed(pod string) {
	id := record.StepID(record.StepDecommission, pod)
	w.amend(func() {
		for i := range w.CP.Steps {
			if w.CP.Steps[i].ID == id {
				w.CP.Steps[i].ResumedAfterRestart = true
			}
		}
	})
}

// resumedAfterRestart: pod's decommission record says it resumed after a restart.
func (w *World) resumedAfterRestart(pod string) bool {
	id := record.StepID(record.StepDecommission, pod)
	resumed := false
	w.amend(func() {
		s, ok := w.CP.Step(id)
		resumed = ok && s.ResumedAfterRestart
	})
	return resumed
}

// adviseRepair, once node n is confirmed removed, says to repair when its decommission
// resumed after a restart: the keyspaces with replicas in its datacenter, read with
// describecluster on reader (a remaining node), or every keyspace when that fails.
func (w *World) adviseRepair(ctx context.Context, n record.Node, reader string) {
	if !w.resumedAfterRestart(n.Pod) {
		return
	}
	var keyspaces []string
	if d, ok := w.Nodetool.(describer); ok && reader != "" {
		if desc, err := d.DescribeCluster(ctx, reader); err == nil {
			keyspaces = desc.ReplicatedIn(n.DC)
		}
	}
	advice := repairAdvice(n.Pod, n.DC, w.Namespace, reader, keyspaces)
	w.advice.set(n.Pod, advice)
	w.Reporter.Warn(record.StepID(record.StepVerifyLeft, n.Pod), advice)
}

// repairAdvice is what the run says about pod, removed after its decommission resumed
// past a restart: repair keyspaces (every one when none is named) on every remaining
// node of datacenter dc; reader, a remaining node, names the command's pod.
func repairAdvice(pod, dc, ns, reader string, keyspaces []string) string {
	what := "`nodetool repair -pr` (every keyspace)"
	example := "repair -pr"
	if len(keyspaces) > 0 {
		what = "`nodetool repair -pr <keyspace>` for each of " + strings.Join(keyspaces, ", ")
		example += " " + keyspaces[0]
	}
	if reader == "" {
		reader = "POD"
	}
	return fmt.Sprintf("node %s was removed, but its decommission was issued again after the node restarted in the middle of it: a resumed decommission skips the ranges "+
		"it had already streamed, and writes to them since may be missing on their new replicas (CASSANDRA-16290). Run %s on every remaining node of datacenter %s "+
		"(e.g. kubectl cassandra nodetool -n %s %s -- %s)", pod, what, dc, ns, reader, example)
}

// Warnings are what this run said needs the user's action after the operation, one
// per node, in pod order (operation.Runner keeps them in the last-operation record).
func (w *World) Warnings() []string {
	w.advice.mu.Lock()
	defer w.advice.mu.Unlock()
	pods := make([]string, 0, len(w.advice.m))
	for p := range w.advice.m {
		pods = append(pods, p)
	}
	sort.Strings(pods)
	var out []string
	for _, p := range pods {
		out = append(out, w.advice.m[p])
	}
	return out
}
