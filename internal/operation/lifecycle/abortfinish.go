package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	puboperation "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// finishPlan is what abort runs for a node half removed (operation.FinishFirst): the
// steps left of that node, up to its last one, none of another node. Empty steps: the
// checkpoint has none left, or a step of an earlier node is not done (abort never acts
// on a node it did not find half removed), and abort refuses with ff.Err.
type finishPlan struct {
	ff    *operation.FinishFirst
	steps []record.Step
	last  string
}

// planFinish is finishPlan's decision over the checkpoint. An earlier node the
// assessment found removed in full counts as done whatever its steps record (the world,
// not the record: an evident step's done mark rides on a later write).
func planFinish(cp *record.Checkpoint, ff *operation.FinishFirst) finishPlan {
	p := finishPlan{ff: ff}
	first := slices.IndexFunc(cp.Steps, func(st record.Step) bool { return st.Pod == ff.Pod })
	if first < 0 {
		return p
	}
	for _, st := range cp.Steps[:first] {
		if st.Pod != "" && st.State != record.StateDone && !slices.Contains(ff.Removed, st.Pod) {
			return p
		}
	}
	for _, st := range cp.Steps[first:] {
		if st.Pod == ff.Pod {
			p.last = st.ID
			if st.State != record.StateDone {
				p.steps = append(p.steps, st)
			}
		}
	}
	if len(p.steps) == 0 {
		p.last = ""
	}
	return p
}

// forbid refuses, right before it acts, any step abort must not take while finishing:
// one that starts a removal (the node stopped leaving since: it stays a member), or one
// of another node.
func (p finishPlan) forbid(cp *record.Checkpoint) func(id string) error {
	return func(id string) error {
		st, ok := cp.Step(id)
		switch {
		case !ok:
			return nil
		case st.Pod != "" && st.Pod != p.ff.Pod:
			return exit.Refusedf("abort finishes node %s only, and step %s is another node's: nothing was done; run abort again", p.ff.Pod, id)
		case slices.Contains(p.ff.NeverAct, st.Kind):
			return exit.Refusedf("node %s is no longer leaving (step %s would start its removal again), and abort never starts a removal: it stays a member. "+
				"Nothing was done; run abort again: it finds the node a member and stops the operation there", p.ff.Pod, id)
		}
		return nil
	}
}

// describeFinish says what abort does first, before it asks.
func (l *Lifecycle) describeFinish(cp *record.Checkpoint, p finishPlan) {
	ids := make([]string, len(p.steps))
	for i, st := range p.steps {
		ids[i] = st.ID
	}
	fmt.Fprintf(l.ErrOut, "Aborting operation %s (%s, %s): node %s is half removed (%s). A removal cannot be cancelled once under way: abort first finishes removing it (%s; it never starts a removal), "+
		"then stops the operation there: the count set to what the racks have, the operator restored, the checkpoint cleared.\n",
		cp.OperationID, cp.Kind, l.target(cp), p.ff.Pod, p.ff.Why, strings.Join(ids, ", "))
}

// finishNode runs p's steps under this abort's hold (the checkpoint taken over): the
// run ends once the node's last step is done, and abort assesses again.
func (l *Lifecycle) finishNode(ctx context.Context, cp *record.Checkpoint, p finishPlan, f RunFlags) error {
	if _, acts := l.Adapter.(operator.Scaler); acts {
		// The operator finishes the removal it was asked for: it must run.
		if err := l.requireActingOperator(ctx, ""); err != nil {
			l.releaseAbort(ctx, cp)
			return err
		}
	}
	kind, err := l.Kinds.Of(cp)
	if err != nil {
		return err
	}
	runner, progress, flush := l.newRunner(cp, f, kind)
	defer flush()
	runner.Until, runner.Forbid = p.last, p.forbid(cp)
	progress.Info(fmt.Sprintf("abort: finishing the removal of node %s (%d steps) before stopping operation %s", p.ff.Pod, len(p.steps), cp.OperationID))
	if _, err := runner.Run(ctx, cp); err != nil {
		step := nonEmptyStep(runner.CurrentStep())
		if errors.Is(err, engine.ErrInterrupted) {
			return exit.Interruptedf("abort interrupted while finishing the removal of node %s, during %s; the checkpoint is saved and the operation not aborted yet. run abort again: %s", p.ff.Pod, step, l.abortHint())
		}
		code := exit.Code(err)
		var fatal *puboperation.Fatal
		if errors.As(err, &fatal) && fatal.Code != 0 {
			code = fatal.Code
		}
		return exit.WithCode(code, fmt.Errorf("%w\nabort stopped while finishing the removal of node %s, at step %s; the operation is not aborted yet and its checkpoint is kept. Check with: %s; then run abort again: %s",
			err, p.ff.Pod, step, l.StatusHint(), l.abortHint()))
	}
	return nil
}
