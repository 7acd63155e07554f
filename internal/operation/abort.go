package operation

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// AbortReads is pkg/operation's AbortReads as the plugin's own kinds' assessments read
// it (ReadsOf): with the Planner's reads (pods, claims, StatefulSets, Cassandra) in
// place of the Toolkit it is.
type AbortReads struct {
	*Planner
	ResumeHint string
	// Progress, for an operator that scales itself (operator.Scaler), reads what it says
	// about the datacenter and a pod; nil otherwise.
	Progress func(ctx context.Context, pod string) (operator.Progress, error)
	// Tasks, for an operator that runs an operation as a task of its own
	// (operator.Tasks), reads the operation's task; nil otherwise.
	Tasks operator.Tasks
}

// ReadsOf is r with its Planner (the Toolkit it is: PlannerOf).
func ReadsOf(r pub.AbortReads) AbortReads {
	return AbortReads{Planner: plannerOf(r.Toolkit), ResumeHint: r.ResumeHint, Progress: r.Progress, Tasks: r.Tasks}
}

// WithPlanner is an assessment (Abort.Assess) or undo (Abort.Undo) of the plugin's own
// kinds, which read through the Planner, as pkg/operation's Abort holds it.
func WithPlanner[T any](f func(context.Context, AbortReads, *record.Checkpoint) (T, error)) func(context.Context, pub.AbortReads, *record.Checkpoint) (T, error) {
	return func(ctx context.Context, r pub.AbortReads, cp *record.Checkpoint) (T, error) {
		return f(ctx, ReadsOf(r), cp)
	}
}

// RefuseStarted is the assessment of a kind aborted only before it changed the cluster
// (Abort.Assess nil): it refuses once any step past pausing the operator started.
func RefuseStarted(cp *record.Checkpoint, resumeHint string) error {
	for _, st := range cp.Steps {
		if st.Kind == record.StepPauseOperator || st.State == record.StatePending {
			continue
		}
		return exit.Refusedf("operation %s (%s) has started changing the cluster (step %s is %s): abort cannot undo that; resume finishes it: %s",
			cp.OperationID, cp.Kind, st.ID, st.State, resumeHint)
	}
	return nil
}

// FinishFirst is an assessment's answer for a node half removed (leaving, or left with
// its pod or claims still there): a removal cannot be cancelled once under way, so
// abort finishes that node's steps first (never starting a removal: NeverAct), then
// assesses again and stops the operation there. Err is the refusal it replaces, for a
// caller that cannot finish.
type FinishFirst struct {
	Pod string
	// Why says in words what shows the node half removed.
	Why string
	// NeverAct are the step kinds whose action abort must not take while finishing
	// (the ones that start a removal): reaching one refuses.
	NeverAct []string
	// Removed are the nodes of the plan before Pod that the assessment found removed
	// in full in the world: their steps may still be recorded not done (evident steps'
	// marks ride on a later write), and they are no reason to refuse.
	Removed []string
	Err     error
}

func (f *FinishFirst) Error() string { return f.Err.Error() }
func (f *FinishFirst) Unwrap() error { return f.Err }
