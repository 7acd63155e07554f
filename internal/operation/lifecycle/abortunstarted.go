package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// unstartedWait bounds abort's wait for a never-started pod to go once its StatefulSet
// was shrunk (an unscheduled pod goes at once; a scheduled one needs its kubelet).
const unstartedWait = 2 * time.Minute

// unstartedPods finds the operation's new pods that never started (steps.UnstartedNewPods)
// and sets p's counts below them: abort takes them away rather than keep a pod that
// will never run (or refuse racks the pod alone makes unequal). When that cannot be
// confirmed, abort keeps them, as before, and a note says why.
func (l *Lifecycle) unstartedPods(ctx context.Context, cp *record.Checkpoint, p *abortPoint) {
	if _, driven := l.Adapter.(operator.Scaler); driven {
		return // the operator acts on its StatefulSets, never the plugin (operator.Scaler)
	}
	us, err := steps.UnstartedNewPods(ctx, l.stepWorld(cp))
	if err != nil {
		p.unstarted = nil
		p.Notes = append(p.Notes, fmt.Sprintf("no never-started pod is taken away: %v", err))
		return
	}
	p.unstarted = us
	for _, u := range us {
		p.counts[u.Node.Rack] = min(p.counts[u.Node.Rack], u.Node.Ordinal)
		p.Done-- // the kind's assessment counted it added: its StatefulSet had reached it
	}
}

// takeAwayUnstarted removes the never-started pods the assessment found, before abort
// sets the counts below them.
func (l *Lifecycle) takeAwayUnstarted(ctx context.Context, cp *record.Checkpoint, self record.Holder, p *abortPoint) error {
	if len(p.unstarted) == 0 {
		return nil
	}
	if err := l.fenceAbort(ctx, cp, self); err != nil {
		return err
	}
	if err := steps.TakeAwayUnstarted(ctx, l.stepWorld(cp), p.unstarted, unstartedWait); err != nil {
		l.releaseAbort(ctx, cp)
		return fmt.Errorf("cannot take the never-started pods away: %w; the checkpoint is kept, run abort again", err)
	}
	for _, u := range p.unstarted {
		fmt.Fprintf(l.ErrOut, "Took away pod %s (never started: %s; no node of the ring on it) and its claims: StatefulSet %s shrunk below it.\n", u.Node.Pod, u.Why, u.Node.StatefulSet)
	}
	return nil
}
