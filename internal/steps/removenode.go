package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// remover is the nodetool the removenode step needs besides Nodetool (nodetool.Client
// has it).
type remover interface {
	RemoveNode(ctx context.Context, pod, hostID string) (nodetool.RemoveOutcome, string)
	RemovalStatus(ctx context.Context, pod string) (nodetool.RemovalStatus, error)
}

// removeNode removes a dead node from the ring: `nodetool removenode <Host ID>` on a
// live node outside the plan (the coordinator), which blocks while the nodes gaining
// its ranges stream them from the surviving replicas (a dead node cannot stream
// anything itself: decommission is impossible). It is done once the Host ID is gone
// from a ring read on a live node. A removal already in process (the coordinator's
// `removenode status`) is waited for, never started twice.
type removeNode struct{ node }

func (*removeNode) kind() string { return StepRemoveNode }

// Describe implements engine.Describer.
func (s *removeNode) Describe() string {
	return "nodetool removenode " + s.n.HostID + " on " + s.coordinator() + " (dead node " + s.n.Pod + ")"
}

// PlanText implements PlanTexter.
func (s *removeNode) PlanText() string {
	return fmt.Sprintf("nodetool removenode %s on %s: node %s is dead (DN, its nodetool silent) and cannot be decommissioned; "+
		"its ranges are re-streamed to the remaining nodes from the other replicas (keyspaces with replication factor 1 lose its data); "+
		"re-checked right before: still DN and silent, every other node UN, nothing joining, leaving or moving, no removal already in process",
		s.n.HostID, s.coordinator(), s.n.Pod)
}

// coordinator is the pod removenode runs on: the first of the node's StatefulSet,
// which a scale-down never removes. Always the same pod, so that a resumed run asks
// the node that holds the removal's state (`removenode status` answers only there).
func (s *removeNode) coordinator() string { return CoordinatorOf(s.n) }

// CoordinatorOf is the pod that removes n (removeNode.coordinator).
func CoordinatorOf(n record.Node) string {
	if n.Ordinal == 0 {
		return topology.PodName(n.StatefulSet, 1)
	}
	return topology.PodName(n.StatefulSet, 0)
}

// Done: a ring read on a live node outside the plan no longer lists the Host ID.
func (s *removeNode) Done(ctx context.Context) (bool, error) {
	r, _, err := s.w.ring(ctx)
	if err != nil {
		return false, err
	}
	_, member := r.ByHostID(s.n.HostID)
	return !member, nil
}

// Safe: right now the node is still dead (deadNow) and every other node of the
// datacenter UN, none of the cluster joining, leaving or moving (safenow.go); the
// coordinator's pod is Running and Ready. Otherwise the step waits, and stops with
// exit 4 after StallAfter; a node that is up again stops the run (it is not dead).
func (s *removeNode) Safe(ctx context.Context) error {
	id := record.StepID(StepRemoveNode, s.n.Pod)
	return s.w.waitSafe(ctx, id, func() (string, error) {
		if what, err := s.w.ringSafeAt(ctx, id, s.n.DC, s.n.HostID, s.n.Pod); what != "" || err != nil {
			return what, err
		}
		p, err := s.w.getPod(ctx, s.coordinator())
		switch {
		case err != nil:
			return "cannot read pod " + s.coordinator() + ": " + err.Error(), nil
		case PodState(p) != "":
			return fmt.Sprintf("the coordinator %s is %s", s.coordinator(), PodState(p)), nil
		}
		return s.stillDead(ctx)
	})
}

// Recheck implements engine.Rechecker: the ring and the node's death, read right
// before the removal.
func (s *removeNode) Recheck(ctx context.Context) error {
	id := record.StepID(StepRemoveNode, s.n.Pod)
	if err := s.w.recheckRing(ctx, id, s.n.DC, s.n.HostID, s.n.Pod); err != nil {
		return err
	}
	what, err := s.stillDead(ctx)
	if err != nil {
		return err
	}
	if what != "" {
		s.w.recheckFailed.set(id, true)
		return &engine.NotYet{Reason: what}
	}
	return nil
}

// stillDead reads the node's row from a live node, its pod and its nodetool, and judges
// them (deadNow).
func (s *removeNode) stillDead(ctx context.Context) (string, error) {
	r, reader, err := s.w.ring(ctx)
	if err != nil {
		return "the ring cannot be read (" + err.Error() + "): its state is unknown", nil
	}
	row, listed := r.ByHostID(s.n.HostID)
	p, err := s.w.getPod(ctx, s.n.Pod)
	if err != nil {
		return "cannot read pod " + s.n.Pod + ": " + err.Error(), nil
	}
	var ntErr error
	var mode pubnodetool.Mode
	if ContainerRunning(p, s.w.Container) {
		var ns nodetool.Netstats
		ns, ntErr = s.w.netstats(ctx, s.n.Pod)
		mode = ns.Mode
	}
	silent, unknown := NodetoolSilent(p, s.w.Container, ntErr)
	if unknown != "" {
		return "whether node " + s.n.Pod + " is dead is unknown: " + unknown, nil
	}
	return deadNow(s.n.Pod, row, listed, reader, silent, mode)
}

// ContainerRunning reports whether pod p has its Cassandra container running (named
// container, or any container when none is named): without it, nodetool cannot answer.
func ContainerRunning(p *corev1.Pod, container string) bool {
	if p == nil || p.DeletionTimestamp != nil {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if (container == "" || cs.Name == container) && cs.State.Running != nil {
			return true
		}
	}
	// A pod whose status lists no container (a fake, or a kubelet that never
	// reported) is taken at its phase: nodetool is asked and decides.
	return len(p.Status.ContainerStatuses) == 0 && p.Status.Phase == corev1.PodRunning
}

// NodetoolSilent judges whether a node's nodetool is silent: no pod, no running
// container, or nodetool that cannot connect to the JVM (*nodetool.UnreachableError).
// An answer is "not silent"; any other failure is unknown (unknown says why).
func NodetoolSilent(p *corev1.Pod, container string, ntErr error) (silent bool, unknown string) {
	if !ContainerRunning(p, container) {
		return true, ""
	}
	var unreachable *pubnodetool.UnreachableError
	switch {
	case ntErr == nil:
		return false, ""
	case errors.As(ntErr, &unreachable):
		return true, ""
	}
	return false, ntErr.Error()
}

// deadNow is the removal's judgment of the node: dead is DN in a ring read on a live
// node (DL once a removal of it runs) with its nodetool silent. Up again (U) is an
// error: the node is not dead and must be decommissioned instead; unknown states and a
// nodetool that answers (a JVM starting) are waited for. A node the ring no longer
// lists is left (Done tells).
func deadNow(pod string, row pubnodetool.Node, listed bool, reader string, silent bool, mode pubnodetool.Mode) (string, error) {
	switch {
	case !listed:
		return "", nil
	case row.Status == "U":
		return "", &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("node %s (Host ID %s) is %s again on %s: it is not dead, and removenode is only for a dead node. "+
			"Stop this operation (kubectl cassandra abort) and scale again without --remove-dead: a live node is decommissioned", pod, row.HostID, row.Code(), reader)}
	case row.Status != "D":
		return fmt.Sprintf("node %s is %s on %s (state unknown)", pod, row.Code(), reader), nil
	case !silent:
		return fmt.Sprintf("node %s is %s on %s but its nodetool answers (mode %s): its JVM runs again", pod, row.Code(), reader, mode), nil
	}
	return "", nil
}

// removalMove is what the removal step does next.
type removalMove int

const (
	removalIssue removalMove = iota // call removenode
	removalWait                     // a removal runs: wait for it
	removalGone                     // the node left the ring
)

// removalNext decides, from the coordinator's `removenode status` and the node's row,
// whether to call removenode: never while the coordinator processes a removal (a
// resumed run waits for its own), nor while the node is DL from a removal this
// operation never issued (someone else's); after an attempt of this operation (issued
// before: the coordinator restarted and dropped it, peers keep it DL) it is issued
// again.
func removalNext(st nodetool.RemovalStatus, row pubnodetool.Node, listed, issuedBefore bool) (removalMove, string) {
	switch {
	case !listed:
		return removalGone, "the node is gone from the ring"
	case st.Removing:
		return removalWait, "a removal is in process on the coordinator" + waitingFor(st)
	case row.State == "L" && !issuedBefore:
		return removalWait, "the node is " + row.Code() + ": a removal this operation did not issue runs from another node"
	}
	return removalIssue, ""
}

// waitingFor says which nodes a removal waits for (" (waiting for replication
// confirmation from a, b)").
func waitingFor(st nodetool.RemovalStatus) string {
	if len(st.Waiting) == 0 {
		return ""
	}
	return " (waiting for replication confirmation from " + strings.Join(st.Waiting, ", ") + ")"
}

func (w *World) remover() (remover, error) {
	r, ok := w.Nodetool.(remover)
	if !ok {
		return nil, errors.New("this nodetool client cannot run removenode")
	}
	return r, nil
}

// issuedBefore: an earlier attempt of step id may have called removenode (the record
// counts this attempt already).
func (w *World) issuedBefore(id string) bool {
	st, ok := w.CP.Step(id)
	return ok && st.Attempts > 1
}

// Do asks the coordinator first and calls removenode only when removalNext says so;
// the call blocks while the ranges are re-streamed, reporting the coordinator's status
// meanwhile. Only Cassandra's refusals are judged here: anything else is the world's
// to tell (Wait).
func (s *removeNode) Do(ctx context.Context) error {
	id := record.StepID(StepRemoveNode, s.n.Pod)
	if err := s.w.refuseDeleting(id); err != nil {
		return err
	}
	rm, err := s.w.remover()
	if err != nil {
		return err
	}
	st, err := rm.RemovalStatus(ctx, s.coordinator())
	if err != nil {
		return &operation.Retryable{Err: fmt.Errorf("cannot read the removal status on %s (whether a removal runs is unknown): %w", s.coordinator(), err)}
	}
	r, _, err := s.w.ring(ctx)
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	row, listed := r.ByHostID(s.n.HostID)
	if move, why := removalNext(st, row, listed, s.w.issuedBefore(id)); move != removalIssue {
		s.w.Reporter.Warn(id, "not calling removenode: "+why)
		return nil
	}
	done := make(chan struct{})
	go s.progress(ctx, rm, done)
	outcome, msg := rm.RemoveNode(ctx, s.coordinator(), s.n.HostID)
	close(done)
	s.w.Forget()
	return s.judge(outcome, msg)
}

// judge sorts out what removenode answered.
func (s *removeNode) judge(outcome nodetool.RemoveOutcome, msg string) error {
	switch outcome {
	case nodetool.RemoveAlive:
		return &engine.NotStarted{Code: operation.ExitRefused, Err: fmt.Errorf("cassandra refused to remove %s: %s. The node is alive: it is decommissioned, not removed; "+
			"stop this operation (kubectl cassandra abort) and scale again without --remove-dead", s.n.Pod, msg)}
	case nodetool.RemoveGenerationChanged:
		return &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("the removal of %s failed: %s. The node restarted while it was being removed; %s keeps the removal in process "+
			"until `nodetool removenode force` runs there. Check the node (kubectl cassandra status): if it is alive, finish the removal with force and decommission it instead", s.n.Pod, msg, s.coordinator())}
	case nodetool.RemoveSelf, nodetool.RemoveInvalidID, nodetool.RemoveUsage:
		return &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("removenode %s on %s was rejected: %s", s.n.HostID, s.coordinator(), msg)}
	case nodetool.RemoveUnreachable:
		return &operation.Retryable{Err: fmt.Errorf("nodetool cannot reach Cassandra on %s: %s", s.coordinator(), msg)}
	}
	// Returned, not found, not a member, busy (a removal in process), or unknown (the
	// exec broke): the ring and the coordinator decide.
	return nil
}

// KeepsObservations implements engine.ObservationKeeper: Do forgets what was read
// before the call itself.
func (s *removeNode) KeepsObservations() {}

// Wait waits until the Host ID is gone from the ring, reporting the coordinator's
// status. A coordinator that reports no removal in process while the node is still in
// the ring dropped it (its JVM restarted) or never got it: the removal is issued again
// (Redo) once that lasted a grace, or StallAfter while the node is DL (peers keep a
// dropped removal's DL; a removal starting elsewhere gets that long to show itself).
func (s *removeNode) Wait(ctx context.Context) error {
	id := record.StepID(StepRemoveNode, s.n.Pod)
	rm, err := s.w.remover()
	if err != nil {
		return err
	}
	grace := max(3*s.w.poll(), 5*time.Second)
	stall := s.w.StallAfter
	if stall <= 0 {
		stall = defaultStallAfter
	}
	start := s.w.Clock()
	var idleSince time.Time
	for {
		r, reader, err := s.w.ring(ctx)
		what := ""
		switch {
		case err != nil:
			what = "state unknown: " + err.Error()
		default:
			row, listed := r.ByHostID(s.n.HostID)
			if !listed {
				return nil
			}
			st, serr := rm.RemovalStatus(ctx, s.coordinator())
			switch {
			case serr != nil:
				idleSince = time.Time{}
				what = fmt.Sprintf("node %s is %s on %s; the removal status on %s is unknown: %v", s.n.Pod, row.Code(), reader, s.coordinator(), serr)
			case st.Removing:
				idleSince = time.Time{}
				what = fmt.Sprintf("node %s is %s on %s; %s is removing it%s", s.n.Pod, row.Code(), reader, s.coordinator(), waitingFor(st))
			default:
				if idleSince.IsZero() {
					idleSince = s.w.Clock()
				}
				limit := grace
				if row.State == "L" {
					limit = stall
				}
				idle := s.w.Clock().Sub(idleSince)
				if idle >= limit {
					return &engine.Redo{StepID: id, Reason: fmt.Sprintf("node %s is still %s on %s and %s has had no removal in process for %s (dropped: its JVM restarted?)",
						s.n.Pod, row.Code(), reader, s.coordinator(), idle.Round(time.Second))}
				}
				what = fmt.Sprintf("node %s is %s on %s; no removal in process on %s", s.n.Pod, row.Code(), reader, s.coordinator())
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.w.Reporter.Waiting(id, what, s.w.Clock().Sub(start))
		if err := s.w.sleep(ctx, s.w.poll()); err != nil {
			return err
		}
	}
}

// progress reports the coordinator's removal status while the removenode call blocks.
func (s *removeNode) progress(ctx context.Context, rm remover, done <-chan struct{}) {
	start := s.w.Clock()
	every := max(progressEvery(s.w), decommissionReadMin)
	if s.w.SampleEvery > 0 {
		every = s.w.SampleEvery // tests
	}
	id := record.StepID(StepRemoveNode, s.n.Pod)
	ticks(ctx, done, every, func() {
		what := "nodetool removenode running on " + s.coordinator()
		if st, err := rm.RemovalStatus(ctx, s.coordinator()); err == nil && st.Removing {
			what += "; the remaining nodes stream the ranges from the other replicas" + waitingFor(st)
		}
		s.w.Reporter.Waiting(id, what, s.w.Clock().Sub(start))
	})
}

// removedDead reports whether the plan removes pod's node with removenode: it is dead,
// and only the ring tells whether it left (its nodetool never answers).
func (w *World) removedDead(pod string) bool {
	if w.CP == nil {
		return false
	}
	_, ok := w.CP.Step(record.StepID(StepRemoveNode, pod))
	return ok
}

// deadWords is what a decommission waiting on a node whose nodetool cannot connect
// (ntErr) adds when a ring read on a live node shows it DN: if it stays dead, it cannot
// be decommissioned, and the way out ("" when not shown).
func (w *World) deadWords(ctx context.Context, n record.Node, ntErr error) string {
	var unreachable *pubnodetool.UnreachableError
	if !errors.As(ntErr, &unreachable) {
		return ""
	}
	r, reader, err := w.ring(ctx)
	if err != nil {
		return ""
	}
	if row, ok := r.ByHostID(n.HostID); !ok || row.Code() != "DN" {
		return ""
	}
	return fmt.Sprintf(" (it is DN on %s: a node that stays dead cannot be decommissioned; stop this operation with kubectl cassandra abort, then scale again with --remove-dead, or replace it with kubectl cassandra replace-node)", reader)
}
