package scaledown

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/topology"
)

// assess is abort's check (operation.Abort) for a scale-down, which stops between two
// nodes; the same check lets a scale-down in flight be planned again with another
// --force (internal/cli/replan.go). It refuses unless every planned node is either
// removed in full (all its steps done, its pod gone) or untouched (decommission
// pending, the node NORMAL — or, on 5.0, DECOMMISSION_FAILED after a refusal while its
// peers see it UN). Never while a node is LEAVING, nor a node left with its pod or
// claims still there: resume finishes it.
func assess(ctx context.Context, r operation.AbortReads, cp *checkpoint.Checkpoint) (operation.Progress, error) {
	p := operation.Progress{Total: len(cp.Nodes)}
	for _, n := range cp.Nodes {
		dec, unfinished := nodeSteps(cp, n.Pod)
		if dec.State == checkpoint.StatePending {
			note, err := untouched(ctx, r, n)
			if err != nil {
				return p, err
			}
			if note != "" {
				p.Notes = append(p.Notes, note)
			}
			continue
		}
		// Removed in full is what the world says (the steps after the decommission are
		// evident ones: their done mark may not have been written yet).
		err := removed(ctx, r, cp.Namespace, n)
		if err == nil {
			p.Done++
			continue
		}
		if dec.State == checkpoint.StateStarted {
			return p, exit.Refusedf("node %s may have started leaving (decommission %s at attempt %d): a decommission cannot be cancelled once it runs. "+
				"resume will finish removing it (wait until it left, shrink the StatefulSet, delete its PVCs) and continue the plan: %s",
				n.Pod, dec.State, dec.Attempts, r.ResumeHint)
		}
		if !unfinished {
			return p, exit.Refusedf("the checkpoint records node %s as removed but the cluster does not agree (%v): resume checks and finishes it: %s", n.Pod, err, r.ResumeHint)
		}
		return p, err
	}
	return p, nil
}

// nodeSteps is pod's decommission step in cp, and whether any of pod's steps is not done.
func nodeSteps(cp *checkpoint.Checkpoint, pod string) (dec checkpoint.Step, unfinished bool) {
	for _, st := range cp.Steps {
		if st.Pod != pod {
			continue
		}
		if st.Kind == checkpoint.StepDecommission {
			dec = st
		}
		unfinished = unfinished || st.State != checkpoint.StateDone
	}
	return dec, unfinished
}

// removed checks the world shows node n removed in full: its pod (the planned UID)
// gone, the StatefulSet below its ordinal, every planned claim gone or being deleted,
// its node out of a ring read on a remaining node. Unreadable is "not shown".
func removed(ctx context.Context, r operation.AbortReads, ns string, n checkpoint.Node) error {
	half := func(what string) error {
		return exit.Refusedf("node %s was decommissioned but its removal is not finished (%s): the cluster is consistent again only once its pod and claims are gone; "+
			"resume finishes removing it (then stop it with Ctrl-C and abort, or let it finish): %s", n.Pod, what, r.ResumeHint)
	}
	pod, err := r.Pod(ctx, ns, n.Pod)
	if err != nil {
		return exit.Refusedf("%v: abort needs to know whether it is gone; nothing changed", err)
	}
	if pod != nil && string(pod.UID) == n.PodUID {
		if st, nerr := r.Nodetool.Netstats(ctx, n.Pod); nerr == nil && st.Mode == nodetool.ModeLeaving {
			return exit.Refusedf("node %s is LEAVING: it cannot be brought back by abort; resume finishes removing it: %s", n.Pod, r.ResumeHint)
		}
		return half("its pod is still there")
	}
	replicas, err := r.Replicas(ctx, ns, n.StatefulSet)
	if err != nil {
		return exit.Refusedf("%v; nothing changed", err)
	}
	if replicas > n.Ordinal {
		return half(fmt.Sprintf("StatefulSet %s still has %d replicas", n.StatefulSet, replicas))
	}
	for _, c := range n.PVCs {
		pvc, err := r.Claim(ctx, ns, c.Name)
		if err != nil {
			return exit.Refusedf("%v; nothing changed", err)
		}
		if pvc != nil && string(pvc.UID) == c.UID && pvc.DeletionTimestamp == nil {
			return half("its claim " + c.Name + " is still there")
		}
	}
	reader := topology.PodName(n.StatefulSet, 0)
	ring, err := r.Nodetool.Status(ctx, reader)
	if err != nil || len(ring.Nodes) == 0 {
		return exit.Refusedf("cannot read the ring from %s (%v): abort needs to know node %s left; nothing changed", reader, err, n.Pod)
	}
	if _, member := ring.ByHostID(n.HostID); member {
		return half("its node is still in the ring")
	}
	return nil
}

// untouched confirms a planned node whose decommission never started is a plain member:
// NORMAL, or DECOMMISSION_FAILED (5.0 sets it when its replication check refuses) with
// its peers seeing it UN (then a note says so).
func untouched(ctx context.Context, r operation.AbortReads, n checkpoint.Node) (string, error) {
	ns, err := r.Nodetool.Netstats(ctx, n.Pod)
	if err != nil {
		return "", exit.Refusedf("cannot read the state of %s (%v): abort needs to know no node is leaving; nothing changed", n.Pod, err)
	}
	switch ns.Mode {
	case nodetool.ModeNormal:
		return "", nil
	case nodetool.ModeDecommissionFailed:
		reader := topology.PodName(n.StatefulSet, 0)
		if n.Ordinal == 0 {
			reader = n.Pod
		}
		ring, err := r.Nodetool.Status(ctx, reader)
		if err != nil {
			return "", exit.Refusedf("node %s is DECOMMISSION_FAILED and the ring cannot be read from %s (%v): abort needs to know it is not leaving; nothing changed", n.Pod, reader, err)
		}
		if rn, ok := ring.ByHostID(n.HostID); !ok || rn.Code() != "UN" {
			code := "absent"
			if ok {
				code = rn.Code()
			}
			return "", exit.Refusedf("node %s is DECOMMISSION_FAILED and %s sees it %s: it cannot be brought back by abort; resume finishes removing it: %s", n.Pod, reader, code, r.ResumeHint)
		}
		return fmt.Sprintf("node %s reports DECOMMISSION_FAILED after Cassandra's refusal; it is still a member of the ring (UN) and keeps serving", n.Pod), nil
	}
	return "", exit.Refusedf("node %s is %s: it cannot be brought back by abort; resume finishes removing it: %s", n.Pod, ns.Mode, r.ResumeHint)
}
