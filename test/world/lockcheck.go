package world

import (
	"fmt"
	"strings"

	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// The lock check of the changing world. A run proves it holds the lock with a
// conditional write of the checkpoint (or a fresh read of it) and then acts on another
// object; a takeover landing between that proof and the action cannot be closed by the
// run (no API makes a write to one object conditional on another's state:
// docs/model.md). So an action by a run that once held the checkpoint is a violation
// when the stored holder is another session, unless it is the single in-flight action
// whose proof came right before the takeover (the run's last proof after its last
// action, and before the takeover). Anything more — a second action, or an action
// with no proof since the run's previous one — is a run acting on a lock it lost.

// proved records a proof by session (a checkpoint write it made). Called with w.mu held.
func (w *World) proved(session string) {
	if w.chg.proofAt == nil {
		w.chg.proofAt = map[string]int{}
	}
	w.chg.ev++
	w.chg.proofAt[session] = w.chg.ev
}

// checkLock records a violation when the acting run held the checkpoint once and the
// stored one (holder, as it was before the action) is not its own any more, beyond the
// one in-flight action. Called with w.mu held.
func (w *World) checkLock(what string, holder *record.Holder) {
	a := w.chg.actor
	if a == "" || !w.chg.held[a] {
		return
	}
	if w.chg.actAt == nil {
		w.chg.actAt, w.chg.inflight = map[string]int{}, map[string]bool{}
	}
	w.chg.ev++
	last := w.chg.actAt[a]
	w.chg.actAt[a] = w.chg.ev
	if holder != nil && holder.Session == a {
		return
	}
	proof := w.chg.proofAt[a]
	if w.chg.takeoverAt > 0 && !w.chg.inflight[a] && proof > last && proof < w.chg.takeoverAt {
		w.chg.inflight[a] = true // its proof came right before the takeover
		return
	}
	switch {
	case holder == nil:
		w.violations = append(w.violations, fmt.Sprintf("%s by run %s after its checkpoint was gone", what, a))
	default:
		w.violations = append(w.violations, fmt.Sprintf("%s by run %s after it lost the lock to %s", what, a, holder))
	}
}

// writesCheckpoint: the action is a write of the checkpoint annotation (a conditional
// write: the store patches with the resourceVersion it last saw), not another write to
// the cluster resource (its spec; cass-operator's size).
func (w *World) writesCheckpoint(action k8stesting.Action) bool {
	p, ok := action.(k8stesting.PatchAction)
	if !ok || action.GetResource().Resource != w.crGVR().Resource {
		return false
	}
	// A merge patch names the key; a JSON patch (the store's write fenced by content)
	// names it in a JSON pointer, where "/" is written "~1".
	body := string(p.GetPatch())
	return strings.Contains(body, checkpoint.Annotation) || strings.Contains(body, strings.ReplaceAll(checkpoint.Annotation, "/", "~1"))
}
