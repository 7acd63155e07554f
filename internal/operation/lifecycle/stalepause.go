package lifecycle

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// reapStalePauses is what every command that acts does first with the operators that
// manage namespace ns: a pause held for an operation whose checkpoint is gone (its
// record wiped or cleared, its cluster deleted, another operation in its place) keeps
// the operator paused for nobody. Such holders are removed and the operator restored
// when no standing holder remains — each write guarded by the Deployment's
// resourceVersion, and said on stderr. A stale holder whose cluster's racks differ from
// its resource stays (a running operator would change them): the message says how to
// settle that cluster — unless it is adopting, the cluster ("ns/name") whose new
// operation takes that pause over. Failures are warnings: the command goes on, and its
// own checks see the pause as it is.
func (l *Lifecycle) reapStalePauses(ctx context.Context, ns, adopting string) {
	a := l.Adapter
	ops, err := a.Operators(ctx, ns)
	if err != nil {
		fmt.Fprintf(l.ErrOut, "warning: cannot look for %s operators holding a stale pause: %v\n", a.Title(), err)
		return
	}
	for _, op := range ops {
		if len(op.PausedBy) == 0 {
			continue
		}
		stale := steps.JudgeHolders(ctx, l.pauseJudge(), op.PausedBy, "")
		if len(stale) == 0 {
			continue
		}
		l.releaseStale(ctx, op, stale, adopting)
	}
}

// releaseStale removes op's stale holders that may go and restores it if none remain.
func (l *Lifecycle) releaseStale(ctx context.Context, op operator.Controller, stale []steps.StaleHolder, adopting string) {
	w := &steps.World{Kube: l.Kube, CP: &record.Checkpoint{}}
	paused := record.PausedOperator{Namespace: op.Namespace, Name: op.Name, Replicas: op.PausedBy[0].Replicas}
	// The holders were judged a moment ago (reapStalePauses): not read and judged again.
	dropped, err := steps.ReleaseStale(ctx, w, paused, stale)
	if err != nil {
		fmt.Fprintf(l.ErrOut, "warning: operator Deployment %s is paused for operations that are gone (%s), and releasing it failed: %v; run the command again\n",
			op, steps.StaleText(stale), err)
		return
	}
	if len(dropped) > 0 {
		left := len(op.PausedBy) - len(dropped)
		then := fmt.Sprintf("restored it to %d replicas", paused.Replicas)
		if left > 0 {
			then = fmt.Sprintf("%d other operation(s) still hold it paused", left)
		}
		fmt.Fprintf(l.ErrOut, "Operator Deployment %s was paused for operations that are gone: removed their hold (%s); %s.\n", op, steps.StaleText(dropped), then)
	}
	var unsettled []string
	for _, s := range stale {
		if s.Verdict == steps.HolderStaleUnsettled && s.Namespace+"/"+s.Cluster != adopting {
			unsettled = append(unsettled, fmt.Sprintf("%s: settle it with `kubectl cassandra scale -n %s %s --rack RACK --nodes N` (it takes the pause over and restores the operator when the racks agree)", s, s.Namespace, s.Cluster))
		}
	}
	if len(unsettled) > 0 {
		fmt.Fprintf(l.ErrOut, "Operator Deployment %s stays paused for operations that are gone but left their cluster unsettled: %s.\n", op, strings.Join(unsettled, "; "))
	}
}

// StalePauses says which of holders, an operator's pause holders, hold it for
// operations that are gone ("" when none; status says so and changes nothing).
func (l *Lifecycle) StalePauses(ctx context.Context, holders []record.PauseHolder) string {
	if stale := steps.JudgeHolders(ctx, l.pauseJudge(), holders, ""); len(stale) > 0 {
		return steps.StaleText(stale)
	}
	return ""
}
