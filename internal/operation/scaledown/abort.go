package scaledown

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// assess is abort's check (operation.Abort) for a scale-down, which stops between two
// nodes; the same check lets a scale-down in flight be planned again with another
// --force (internal/cli/replan.go). It refuses unless every planned node is either
// removed in full (all its steps done, its pod gone) or untouched (untouched: a plain
// member that is not leaving). A decommission recorded started counts as untouched when
// the world shows it never reached the node (the run died between the "started" write
// and the exec): abort then leaves it a member and execs nothing. Never while a node is
// LEAVING, nor a node left with its pod or claims still there: resume finishes it.
func assess(ctx context.Context, r operation.AbortReads, cp *record.Checkpoint) (p pub.Progress, err error) {
	if r.Progress != nil {
		return assessDriven(ctx, r, cp)
	}
	p = pub.Progress{Total: len(cp.Nodes)}
	if len(cp.Leftovers) > 0 {
		p.Notes = append(p.Notes, "the left-over PVCs this operation has not deleted yet stay; the same scale command, run again, finds them again")
	}
	var gone []string // removed in full, in the world
	defer func() { withRemoved(err, gone) }()
	for _, n := range cp.Nodes {
		inFull, note, err := assessNode(ctx, r, cp, n)
		if err != nil {
			return p, err
		}
		if note != "" {
			p.Notes = append(p.Notes, note)
		}
		if inFull {
			p.Done++
			gone = append(gone, n.Pod)
		}
	}
	return p, nil
}

// assessNode is assess for one planned node: removed in full (inFull), or untouched
// (note may say why it stays), or err refusing abort (a FinishFirst when abort can
// finish its removal).
func assessNode(ctx context.Context, r operation.AbortReads, cp *record.Checkpoint, n record.Node) (inFull bool, note string, err error) {
	dec, unfinished := nodeSteps(cp, n.Pod)
	switch {
	case n.Unstarted:
		// No decommission: removed in full, or its taking away is under way and
		// resume finishes it (a never-started pod is not brought back), or the pod
		// started since it was planned and was not touched: it stays.
		return goneUnlessNoted(takenAway(ctx, r, cp, n))
	case dec.Kind == steps.StepRemoveNode:
		return goneUnlessNoted(deadAssess(ctx, r, cp, n, dec))
	case dec.State == record.StatePending:
		note, err := pendingAssess(ctx, r, n)
		return false, note, err
	}
	// Removed in full is what the world says (the steps after the decommission are
	// evident ones: their done mark may not have been written yet).
	err = removed(ctx, r, cp.Namespace, n)
	switch {
	case err == nil:
		return true, "", nil
	case dec.State == record.StateStarted:
		note, err := startedAssess(ctx, r, n, dec)
		return false, note, err
	case !unfinished:
		return false, "", exit.Refusedf("the checkpoint records node %s as removed but the cluster does not agree (%v): resume checks and finishes it: %s", n.Pod, err, r.ResumeHint)
	}
	return false, "", err
}

// goneUnlessNoted reads a check that answers a note when the node stays and none when
// it is removed in full.
func goneUnlessNoted(note string, err error) (inFull bool, _ string, _ error) {
	if err != nil {
		return false, "", err
	}
	return note == "", note, nil
}

// pendingAssess judges a node whose removal never started: untouched (a note may say
// more), or a refusal when it is leaving or left all the same.
func pendingAssess(ctx context.Context, r operation.AbortReads, n record.Node) (string, error) {
	note, why, leaving, err := untouched(ctx, r, n, false)
	switch {
	case err != nil:
		return "", exit.Refusedf("%v: abort needs to know no node is leaving; nothing changed", err)
	case why != "" && leaving:
		return "", finishFirst(n.Pod, "it "+why, exit.Refusedf("node %s %s: it cannot be brought back by abort; resume finishes removing it: %s", n.Pod, why, r.ResumeHint))
	case why != "":
		return "", exit.Refusedf("node %s %s: it cannot be brought back by abort; resume finishes removing it: %s", n.Pod, why, r.ResumeHint)
	}
	return note, nil
}

// startedAssess judges a node whose decommission is recorded started and that is not
// removed in full: untouched (startedUntouched), or a refusal, which abort finishes
// first when the node is leaving.
func startedAssess(ctx context.Context, r operation.AbortReads, n record.Node, dec record.Step) (string, error) {
	note, why, leaving := startedUntouched(ctx, r, n, dec)
	if why == "" {
		return note, nil
	}
	refusal := exit.Refusedf("node %s may have started leaving (decommission %s at attempt %d; %s): a decommission cannot be cancelled once it runs. "+
		"resume will finish removing it (wait until it left, shrink the StatefulSet, delete its PVCs) and continue the plan: %s",
		n.Pod, dec.State, dec.Attempts, why, r.ResumeHint)
	if leaving {
		return "", finishFirst(n.Pod, why, refusal)
	}
	return "", refusal
}

// startedUntouched judges a node whose decommission is recorded started: untouched,
// with a note saying so, when untouched's strict reading finds a plain member and the
// record is older than execSettle; else why not (unreadable included: unknown is never
// "not sent").
func startedUntouched(ctx context.Context, r operation.AbortReads, n record.Node, dec record.Step) (note, why string, leaving bool) {
	note, why, leaving, err := untouched(ctx, r, n, true)
	switch {
	case err != nil:
		return "", err.Error(), false
	case why != "":
		return "", "it " + why, leaving
	}
	if wait := settleLeft(dec.StartedAt, r.Now()); wait > 0 {
		return "", fmt.Sprintf("it shows no sign of it yet, but it was recorded %s ago and a nodetool started then may still reach it: try again in %s",
			(time.Minute - wait).Round(time.Second), wait.Round(time.Second)), false
	}
	if note == "" {
		note = fmt.Sprintf("node %s: its decommission was recorded started but never reached it (NORMAL, UN on %s, no stream); it stays a member", n.Pod, peerOf(n))
	}
	return note, "", false
}

// settleLeft is how much longer abort must wait before a decommission recorded started
// at started may be judged by the node alone (0: none). No start time is "just now".
func settleLeft(started *time.Time, now time.Time) time.Duration {
	if started == nil {
		return time.Minute
	}
	return max(0, time.Minute-now.Sub(*started))
}

// nodeSteps is the step that starts pod's removal in cp (its decommission, or its
// removenode when it is dead), and whether any of pod's steps is not done.
func nodeSteps(cp *record.Checkpoint, pod string) (dec record.Step, unfinished bool) {
	for _, st := range cp.Steps {
		if st.Pod != pod {
			continue
		}
		if st.Kind == record.StepDecommission || st.Kind == steps.StepRemoveNode {
			dec = st
		}
		unfinished = unfinished || st.State != record.StateDone
	}
	return dec, unfinished
}

// removed checks the world shows node n removed in full: its pod (the planned UID)
// gone, the StatefulSet below its ordinal, every planned claim gone or being deleted,
// its node out of a ring read on a remaining node. Unreadable is "not shown".
func removed(ctx context.Context, r operation.AbortReads, ns string, n record.Node) error {
	half := func(what string) error {
		return finishFirst(n.Pod, what, exit.Refusedf("node %s was decommissioned but its removal is not finished (%s): the cluster is consistent again only once its pod and claims are gone; "+
			"resume finishes removing it and goes on (abort finishes removing it and stops there): %s", n.Pod, what, r.ResumeHint))
	}
	pod, err := r.Pod(ctx, ns, n.Pod)
	if err != nil {
		return exit.Refusedf("%v: abort needs to know whether it is gone; nothing changed", err)
	}
	if pod != nil && string(pod.UID) == n.PodUID {
		if st, nerr := r.Nodetool.Netstats(ctx, n.Pod); nerr == nil && st.Mode == pubnodetool.ModeLeaving {
			return finishFirst(n.Pod, "it is LEAVING", exit.Refusedf("node %s is LEAVING: it cannot be brought back by abort; resume finishes removing it: %s", n.Pod, r.ResumeHint))
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

// takenAway checks the world shows the never-started pod of n taken away: the pod
// (its planned UID) gone, the StatefulSet below its ordinal, every planned claim gone
// or being deleted. A pod that started since it was planned, its StatefulSet not
// shrunk, was not touched: it stays, and note says so (the steps that take it away
// refuse it now). Otherwise resume finishes taking it away.
func takenAway(ctx context.Context, r operation.AbortReads, cp *record.Checkpoint, n record.Node) (note string, err error) {
	ns := cp.Namespace
	half := func(what string) error {
		return finishFirst(n.Pod, "it never started and is being taken away: "+what, exit.Refusedf("pod %s never started and is being taken away (%s): resume finishes taking it away (no node ran on it, nothing is decommissioned): %s", n.Pod, what, r.ResumeHint))
	}
	pod, err := r.Pod(ctx, ns, n.Pod)
	if err != nil {
		return "", exit.Refusedf("%v: abort needs to know whether it is gone; nothing changed", err)
	}
	replicas, err := r.Replicas(ctx, ns, n.StatefulSet)
	if err != nil {
		return "", exit.Refusedf("%v; nothing changed", err)
	}
	if pod != nil && string(pod.UID) == n.PodUID {
		if replicas == n.Ordinal+1 && pod.DeletionTimestamp == nil && !steps.NeverStarted(pod) && stepPending(cp, record.StepShrinkSTS, n.Pod) {
			return fmt.Sprintf("pod %s started since it was planned (phase %s): it was not taken away and stays", n.Pod, pod.Status.Phase), nil
		}
		return "", half("its pod is still there")
	}
	if replicas > n.Ordinal {
		return "", half(fmt.Sprintf("StatefulSet %s still has %d replicas", n.StatefulSet, replicas))
	}
	for _, c := range n.PVCs {
		pvc, err := r.Claim(ctx, ns, c.Name)
		if err != nil {
			return "", exit.Refusedf("%v; nothing changed", err)
		}
		if pvc != nil && string(pvc.UID) == c.UID && pvc.DeletionTimestamp == nil {
			return "", half("its claim " + c.Name + " is still there")
		}
	}
	return "", nil
}

// stepPending: the step of kind for pod is recorded pending (never started).
func stepPending(cp *record.Checkpoint, kind, pod string) bool {
	for _, st := range cp.Steps {
		if st.Kind == kind && st.Pod == pod {
			return st.State == record.StatePending
		}
	}
	return false
}

// untouched reads whether a planned node is a plain member that is not leaving
// (judgeUntouched): why it is not ("" when it is), a note worth telling, or err when it
// could not be read (unknown: never untouched). The ring is read from a peer only when
// the judgment needs it.
func untouched(ctx context.Context, r operation.AbortReads, n record.Node, sent bool) (note, why string, leaving bool, err error) {
	ns, err := r.Nodetool.Netstats(ctx, n.Pod)
	if err != nil {
		if note := deadUntouched(ctx, r, n, sent, err); note != "" {
			return note, "", false, nil
		}
		return "", "", false, fmt.Errorf("cannot read the state of %s (%v)", n.Pod, err)
	}
	seen := peerView{reader: peerOf(n)}
	if needsPeer(ns, sent) {
		ring, err := r.Nodetool.Status(ctx, seen.reader)
		if err != nil {
			return "", "", false, fmt.Errorf("node %s is %s and the ring cannot be read from %s (%v)", n.Pod, ns.Mode, seen.reader, err)
		}
		seen.row, seen.listed = ring.ByHostID(n.HostID)
		seen.read = true
	}
	note, why, err = judgeUntouched(n.Pod, ns, seen, sent)
	return note, why, why != "" && leavingMode(ns.Mode), err
}

// leavingMode: a node not untouched in this mode is leaving or left (DECOMMISSION_FAILED
// only comes with evidence of leaving: judgeUntouched), so abort finishes its removal;
// in any other (STARTING, JOINING, DRAINED) it is not known to leave, and abort refuses.
func leavingMode(m pubnodetool.Mode) bool {
	return m == pubnodetool.ModeLeaving || m == pubnodetool.ModeDecommissioned || m == pubnodetool.ModeDecommissionFailed
}

// finishFirst is the answer for a node half removed (operation.FinishFirst): abort
// finishes its steps, never starting a removal, then stops.
func finishFirst(pod, why string, refusal error) error {
	return &operation.FinishFirst{Pod: pod, Why: why, NeverAct: []string{record.StepDecommission, steps.StepRemoveNode, record.StepRequestRemoval}, Err: refusal}
}

// withRemoved gives a FinishFirst answer the nodes found removed in full before it.
func withRemoved(err error, gone []string) {
	var ff *operation.FinishFirst
	if errors.As(err, &ff) {
		ff.Removed = gone
	}
}

// peerView is how a peer's successful ring read showed a node (read false: not read).
type peerView struct {
	reader       string
	row          pubnodetool.Node
	listed, read bool
}

// needsPeer: a NORMAL node whose decommission was never sent is judged by its own
// netstats; any other needs a peer's view (a started one may have been sent, and 5.0 may
// read DECOMMISSION_FAILED while the node still leaves).
func needsPeer(ns nodetool.Netstats, sent bool) bool {
	return sent || ns.Mode != pubnodetool.ModeNormal
}

// judgeUntouched is untouched's decision over what was read: a plain member is NORMAL,
// or DECOMMISSION_FAILED (5.0 sets it when its replication check refuses; a note says
// so), sends no Unbootstrap stream, and, when a peer's view is needed (needsPeer), is
// seen UN by that peer: CASSANDRA-21493/21583, DECOMMISSION_FAILED can be read while
// the node still leaves. why is what shows it is not ("" when it is).
func judgeUntouched(pod string, ns nodetool.Netstats, seen peerView, sent bool) (note, why string, err error) {
	if ns.Mode != pubnodetool.ModeNormal && ns.Mode != pubnodetool.ModeDecommissionFailed {
		return "", "is " + string(ns.Mode), nil
	}
	if ns.SendsUnbootstrap() {
		return "", fmt.Sprintf("is %s but streams out its data (an Unbootstrap plan in its netstats)", ns.Mode), nil
	}
	if !needsPeer(ns, sent) {
		return "", "", nil
	}
	if !seen.read {
		return "", "", fmt.Errorf("node %s is %s and no ring was read to tell whether it leaves", pod, ns.Mode)
	}
	if !seen.listed || seen.row.Code() != "UN" {
		what := nodetool.LeavingEvidence(ns, seen.row, seen.listed, seen.reader)
		if what == "" {
			what = seen.reader + " sees it " + seen.row.Code()
		}
		return "", fmt.Sprintf("is %s but %s", ns.Mode, what), nil
	}
	if ns.Mode == pubnodetool.ModeDecommissionFailed {
		return fmt.Sprintf("node %s reports DECOMMISSION_FAILED after Cassandra's refusal; it is still a member of the ring (UN on %s, no stream) and keeps serving", pod, seen.reader), "", nil
	}
	return "", "", nil
}

// peerOf is the pod whose ring read tells how the others see n: the first of its
// StatefulSet (a scale-down keeps at least one node per rack, so ordinal 0 is never
// planned), or the second when n is the first.
func peerOf(n record.Node) string {
	if n.Ordinal == 0 {
		return topology.PodName(n.StatefulSet, 1)
	}
	return topology.PodName(n.StatefulSet, 0)
}

// assessDriven is assess for an operator that scales itself: a node whose removal the
// datacenter's size asks for (asked by this operation or not: the size is what the
// operator acts on) is the operator's to finish, and abort never cancels a
// decommission: it refuses until the node is removed in full. Nodes the size does not
// ask for yet are untouched: abort stops asking, and leaves the size as it is (equal to
// what exists once each asked-for node is gone).
func assessDriven(ctx context.Context, r operation.AbortReads, cp *record.Checkpoint) (pub.Progress, error) {
	p := pub.Progress{Total: len(cp.Nodes)}
	var gone []string // removed in full, in the world
	now, err := r.Progress(ctx, "")
	if err != nil {
		return p, exit.Refusedf("cannot read the operator's progress (%v): abort needs to know which removals the datacenter's size asks for; nothing changed", err)
	}
	for _, n := range cp.Nodes {
		if now.Size > n.Size {
			continue // not asked for: untouched
		}
		if err := removed(ctx, r, cp.Namespace, n); err != nil {
			refusal := exit.Refusedf("the datacenter's size (%d) asks the operator to remove node %s, and it is not removed in full yet (%v): a removal cannot be cancelled once asked for. "+
				"Wait until the operator has removed it (kubectl cassandra status shows it gone), then run abort again: it stops the operation there (resume would finish it and go on with the rest of the plan: %s)",
				now.Size, n.Pod, err, r.ResumeHint)
			var ff *operation.FinishFirst
			if errors.As(err, &ff) {
				ff.Err = refusal
				ff.Why = fmt.Sprintf("the datacenter's size (%d) asks the operator to remove it and %s", now.Size, ff.Why)
				withRemoved(ff, gone)
				return p, ff
			}
			return p, refusal
		}
		p.Done++
		gone = append(gone, n.Pod)
	}
	return p, nil
}
