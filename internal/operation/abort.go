package operation

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// Abort is when an operation of a kind may be aborted, and how abort counts its
// progress. Abort (internal/cli/abort.go) asks the kind's Assess, then checks the racks
// against the cluster resource's count unless KeepsCount.
type Abort struct {
	// Verb, Unit and Past say in words what the operation does to what ("removing",
	// "nodes", "removed"); Unit is empty for a kind that counts no progress.
	Verb, Unit, Past string
	// NoneYet says where the operation stands when no unit is done yet ("no node has
	// started leaving"); empty: nothing in the cluster was changed yet.
	NoneYet string
	// KeepsCount: abort leaves the cluster resource's count alone (the operator's own
	// count is what the operation lets it finish).
	KeepsCount bool
	// Assess reads the world and refuses (exit 3, nothing changed, what to run instead)
	// unless the operation stands at the kind's safe point, and says how far it got.
	// Nil: abort only before any step past pausing the operator started.
	Assess func(ctx context.Context, r AbortReads, cp *checkpoint.Checkpoint) (Progress, error)
	// Undo, when set, takes back what the operation changed that the cluster must not
	// keep (replace-node: the replace option in the start script), before the operator
	// is restored; it says what it did ("" when nothing). It runs on a cluster being
	// deleted too: what it takes back is not the cluster's.
	Undo func(ctx context.Context, r AbortReads, cp *checkpoint.Checkpoint) (string, error)
}

// AbortReads is what an abort assessment reads the world with: the planner's reads
// (pods, claims, StatefulSets, Cassandra) and the command that continues the
// operation, for refusals that send the user to resume.
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

// Progress is how far an operation got, as abort found the world: Done of Total units
// (Abort.Unit), and notes worth telling before abort acts.
type Progress struct {
	Done, Total int
	Notes       []string
}

// RefuseStarted is the assessment of a kind aborted only before it changed the cluster
// (Abort.Assess nil): it refuses once any step past pausing the operator started.
func RefuseStarted(cp *checkpoint.Checkpoint, resumeHint string) error {
	for _, st := range cp.Steps {
		if st.Kind == steps.StepPauseOperator || st.State == checkpoint.StatePending {
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
