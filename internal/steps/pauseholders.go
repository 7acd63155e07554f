package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// HolderVerdict is what the world says of one operation holding an operator paused
// (checkpoint.PausedByAnnotation). The record on the Deployment is only a claim: the
// holder's own checkpoint, on its cluster, is what says the operation still stands.
type HolderVerdict int

const (
	// HolderLive: the holder's cluster carries that operation's checkpoint — or that
	// cannot be told (unreadable is unknown, never "gone").
	HolderLive HolderVerdict = iota
	// HolderStale: its operation has no checkpoint any more (cleared, wiped, replaced
	// by another, the cluster deleted) and its cluster is gone, being deleted, or has
	// the counts its StatefulSets have: the operator may run for it again.
	HolderStale
	// HolderStaleUnsettled: its operation is gone but its cluster's counts and
	// StatefulSets differ; a running operator would change the StatefulSets, so only an
	// operation on that cluster may take the pause over (and restore it once settled).
	HolderStaleUnsettled
)

// PauseJudge reads the world behind a pause holder (internal/cli implements it with the
// operator's adapter). why says what was found, for the messages.
type PauseJudge interface {
	JudgeHolder(ctx context.Context, h record.PauseHolder) (v HolderVerdict, why string, err error)
}

// StaleHolder is a holder found stale, with what was found.
type StaleHolder struct {
	record.PauseHolder

	Verdict HolderVerdict
	Why     string
}

// String names the holder and why it is stale.
func (s StaleHolder) String() string { return s.PauseHolder.String() + " (" + s.Why + ")" }

// JudgeHolders asks judge about every holder other than self; the stale ones are
// returned. A holder that cannot be judged (nil judge, a read error) is live.
func JudgeHolders(ctx context.Context, judge PauseJudge, holders []record.PauseHolder, self string) []StaleHolder {
	if judge == nil {
		return nil
	}
	var stale []StaleHolder
	for _, h := range holders {
		if h.OperationID == self {
			continue
		}
		v, why, err := judge.JudgeHolder(ctx, h)
		if err != nil || v == HolderLive {
			continue
		}
		stale = append(stale, StaleHolder{PauseHolder: h, Verdict: v, Why: why})
	}
	return stale
}

// dropStale is holders without the stale ones that may go: every HolderStale, and a
// HolderStaleUnsettled one only when it is of the cluster ns/cluster (the operation on
// that cluster adopts it: it brings the cluster to agree before it restores). dropped
// lists what went.
func dropStale(holders []record.PauseHolder, stale []StaleHolder, ns, cluster string) (kept []record.PauseHolder, dropped []StaleHolder) {
	gone := map[string]StaleHolder{}
	for _, s := range stale {
		if s.Verdict == HolderStale || (s.Namespace == ns && s.Cluster == cluster) {
			gone[s.OperationID] = s
		}
	}
	for _, h := range holders {
		if s, ok := gone[h.OperationID]; ok {
			dropped = append(dropped, s)
			continue
		}
		kept = append(kept, h)
	}
	return kept, dropped
}

// StaleText lists stale holders for a message.
func StaleText(stale []StaleHolder) string {
	var parts []string
	for _, s := range stale {
		parts = append(parts, s.String())
	}
	return strings.Join(parts, "; ")
}

// reportDropped tells the run's reporter which stale holders a write removed.
func reportDropped(w *World, id string, op record.PausedOperator, dropped []StaleHolder) {
	if len(dropped) == 0 || w.Reporter == nil {
		return
	}
	w.Reporter.Warn(id, fmt.Sprintf("removed stale pause holders of operator Deployment %s/%s: %s", op.Namespace, op.Name, StaleText(dropped)))
}
