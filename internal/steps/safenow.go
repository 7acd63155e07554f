package steps

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/observation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Safe means safe now: the steps that act on Cassandra or grow the ring (decommission,
// drain, grow, cleanup) check, right before they act and from a ring read made then,
// that every node of the datacenter is UN and no node of the cluster is leaving, joining
// or moving, other than the node the step itself is about. Anything else (or a ring
// that cannot be read: unknown) makes the step wait, saying which node and why, and
// stop with exit 4 after StallAfter: never act.

// defaultStallAfter bounds a safety wait when the run was given no StallAfter.
const defaultStallAfter = 10 * time.Minute

// check is one round of a step's safety checks: "" and nil when it may act now, what it
// waits for when the world is not there yet, or an error when it must not act at all.
type check func() (waitFor string, err error)

// waitSafe runs c until it says the step may act. Each round after a pause reads the
// world again (w.sleep forgets). After StallAfter it stops with exit 4: the step did
// nothing, and resume runs the same checks again.
func (w *World) waitSafe(ctx context.Context, id string, c check) error {
	start := w.Clock()
	stall := w.StallAfter
	if stall <= 0 {
		stall = defaultStallAfter
	}
	for {
		if err := w.refuseDeleting(id); err != nil {
			return err
		}
		what, err := c()
		if err != nil || what == "" {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		elapsed := w.Clock().Sub(start)
		if elapsed >= stall {
			return &operation.Fatal{Code: exit.Interrupted, Err: fmt.Errorf("stopped before %s after waiting %s: %s; nothing was done by this step. "+
				"Check the ring (kubectl cassandra status -n %s %s, or nodetool status on a node): every node of datacenter %s must be UN and none leaving, joining or moving",
				id, roundWait(elapsed), what, w.CP.Namespace, w.CP.Cluster, w.CP.Target.DC)}
		}
		w.Reporter.Waiting(id, "not acting yet: "+what, elapsed)
		if err := w.sleep(ctx, w.poll()); err != nil {
			return err
		}
	}
}

// ringSafe reads the ring now (never a read kept from before) and says what is not
// safe in it: a node of dc that is not UN, or a node of any datacenter leaving, joining
// or moving. self is the Host ID of the node the step acts on, left out (it may be
// LEAVING when a decommission is issued again; its own mode is checked by the step).
// The read is kept for the rest of this pause, so the step's next questions reuse it.
func (w *World) ringSafe(ctx context.Context, id, dc, self, except string) (string, error) {
	r, reader, err := w.freshRing(ctx, id, except)
	if err != nil {
		return "the ring cannot be read (" + err.Error() + "): its state is unknown", nil
	}
	if bad := w.ringProblems(r, dc, self); len(bad) > 0 {
		return strings.Join(bad, "; ") + " (ring read from " + reader + ")", nil
	}
	return "", nil
}

// freshRing reads `nodetool status` now for step id: from the ring readers (pods
// outside the plan), keeping the answer like ring() does, when the kind has them
// (Variant.RingReaders); when they cannot answer (the one remaining node is down) or it
// has none, any Ready pod but except reads it.
func (w *World) freshRing(ctx context.Context, id, except string) (pubnodetool.Ring, string, error) {
	if w.variant.RingReaders {
		// A read started for this step by recheckAhead in this pause is taken up (once),
		// else read now.
		k, err := observation.Get(ctx, &w.obs, recheckKind, id, w.readRing)
		observation.Drop(&w.obs, recheckKind, id)
		if err == nil {
			observation.Keep(&w.obs, ringKind, "", k)
			return k.r, k.reader, nil
		}
	}
	return w.ringExcept(ctx, except)
}

// ringProblems lists the nodes that make acting unsafe, named by pod when planned.
func (w *World) ringProblems(r pubnodetool.Ring, dc, self string) []string {
	names := map[string]string{}
	if w.CP != nil {
		for _, n := range w.CP.Nodes {
			if n.HostID != "" {
				names[n.HostID] = n.Pod
			}
		}
	}
	var bad []string
	for _, n := range r.Nodes {
		if self != "" && n.HostID == self {
			continue
		}
		if n.State == "N" && (n.DC != dc || n.Status == "U") {
			continue
		}
		who := "node " + n.Address
		if p := names[n.HostID]; p != "" {
			who = "node " + p + " (" + n.Address + ")"
		}
		bad = append(bad, fmt.Sprintf("%s of datacenter %s is %s (%s)", who, n.DC, n.Code(), codeWords(n)))
	}
	sort.Strings(bad)
	return bad
}

// codeWords spells out a two-letter ring state.
func codeWords(n pubnodetool.Node) string {
	s := map[string]string{"U": "up", "D": "down", "?": "state unknown"}[n.Status]
	m := map[string]string{"N": "normal", "L": "leaving", "J": "joining", "M": "moving"}[n.State]
	return s + ", " + m
}

// podUID is the UID the planned node's pod has now: the planned one, or the one of the
// pod that replaced it with the same node (adopt).
func (w *World) podUID(n record.Node) string {
	if uid, ok := w.adopted.get(n.Pod); ok {
		return uid
	}
	return n.PodUID
}

// sameNode reports whether pod p (another incarnation of n's pod: evicted, its
// Kubernetes node drained) runs n's node: a ring read lists the pod's address with n's
// Host ID. Such a pod started on n's data claim, so it is the same Cassandra node.
func (w *World) sameNode(ctx context.Context, n record.Node, p *corev1.Pod) (bool, error) {
	if n.HostID == "" || p.Status.PodIP == "" {
		return false, nil
	}
	r, _, err := w.ring(ctx)
	if err != nil {
		// The ring readers are down: any Ready pod will do, the re-created one too (it
		// lists itself with its Host ID).
		if r, _, err = w.ringExcept(ctx, ""); err != nil {
			return false, err
		}
	}
	row, ok := r.ByAddress(p.Status.PodIP)
	return ok && row.HostID == n.HostID, nil
}

// adopt carries on with the pod that replaced n's planned pod: later checks compare
// with its UID, and the checkpoint records it (nodes[].podUID) with its next write.
func (w *World) adopt(n record.Node, uid string, why string) {
	if old, had := w.adopted.set(n.Pod, uid); had && old == uid {
		return
	}
	change := func() {
		for i := range w.CP.Nodes {
			if w.CP.Nodes[i].Pod == n.Pod {
				w.CP.Nodes[i].PodUID = uid
			}
		}
	}
	w.amend(change)
	w.Reporter.Warn(record.StepID(record.StepDecommission, n.Pod), fmt.Sprintf("pod %s was re-created (UID %s, planned %s): %s; carrying on with it", n.Pod, uid, n.PodUID, why))
}

// refuseDeleting stops the run before step id acts when the cluster resource was last
// seen being deleted (the checkpoint write made just before an action returns it).
func (w *World) refuseDeleting(id string) error {
	if w.Deleting == nil || !w.Deleting() {
		return nil
	}
	return &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("the cluster resource %s/%s is being deleted (metadata.deletionTimestamp is set): stopped before %s, which did nothing. "+
		"Nothing more will be done to a cluster being deleted; if the deletion was a mistake and it is held by a finalizer, remove the deletion's cause first",
		w.CP.Namespace, w.CP.Cluster, id)}
}

// roundWait rounds a wait for messages (to the second, or the millisecond below one).
func roundWait(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// The ring is read once per action in the happy path, after the proof of the lock and
// right before the action (Recheck, engine.Rechecker): a node going down while the
// "started" write is under way is seen. A request to the operator starts that read as
// its safety checks begin (recheckAhead), after the checkpoint's write; as the run's
// first step, as soon as the run holds the lock (ReadAfterLock). Safe reads it too, and
// waits on it, only once a recheck of that step failed in this run (the step went back
// to pending).

// recheckAhead starts the ring read of step id's recheck as its safety checks begin,
// when they do not read the ring themselves (no recheck of it failed): the read starts
// after the checkpoint's write, which proved the lock, and runs beside the round's own
// reads, the consistent LISTs of which wait for the API server's watch cache meanwhile.
// Step id's recheck takes it up, no other step's, if nothing was forgotten since it
// started (a pause or an action forgets), else reads again. Only with ring readers
// (their list takes no such wait).
func (w *World) recheckAhead(ctx context.Context, id string) {
	if failed, _ := w.recheckFailed.get(id); failed || !w.variant.RingReaders {
		return
	}
	observation.ReadAhead(ctx, observation.Ahead(&w.obs, recheckKind, id, w.readRing))
}

// ringSafeAt is Safe's ring check for step id: skipped until a recheck failed.
func (w *World) ringSafeAt(ctx context.Context, id, dc, self, except string) (string, error) {
	if failed, _ := w.recheckFailed.get(id); !failed {
		return "", nil
	}
	return w.ringSafe(ctx, id, dc, self, except)
}

// recheckRing is the ring check right before step id acts: a fresh read; anything not
// safe sends the step back to Safe's wait (*engine.NotYet).
func (w *World) recheckRing(ctx context.Context, id, dc, self, except string) error {
	if err := w.refuseDeleting(id); err != nil {
		return err
	}
	what, err := w.ringSafe(ctx, id, dc, self, except)
	if err != nil {
		return err
	}
	w.recheckFailed.set(id, what != "")
	if what != "" {
		return &engine.NotYet{Reason: what}
	}
	return nil
}

// WaitSafe is waitSafe for the steps of a kind's own package (replace-node): c is asked
// until it says the step may act, or it stops the run (exit 4) after StallAfter.
func (w *World) WaitSafe(ctx context.Context, id string, c func() (waitFor string, err error)) error {
	return w.waitSafe(ctx, id, c)
}
