// Package operation is the contract every operation kind is written against, the
// plugin's own (internal/operation/scaledown, …) and an operator's
// (plugins/casskop/repair, plugins/cassoperator/repair) alike: the Kind and what it
// plans with (Env, its Toolkit), the command that starts it, how abort treats it, the
// Step contract the plugin's engine runs and the World its steps read, and the exit
// code its refusals carry. The records it writes are pkg/record's, the ring facts it
// judges pkg/nodetool's. Everything behind these interfaces (the planner's reads, the
// step library, the engine) is the plugin's own (internal/): the plugin registers its
// kinds and the ones an operator offers (Offerer) in one table and runs them alike.
package operation

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Kind is one kind of operation: everything that differs from the other kinds, so that
// the plugin's CLI, resume and abort look it up by name instead of switching on it.
type Kind interface {
	// Info is what the kind is, as data.
	Info() Info
	// Plan reads the real world and plans the operation. It changes nothing.
	Plan(ctx context.Context, env *Env) (*Plan, error)
	// Access lists the permissions the operation uses (checked before planning).
	Access(ctx context.Context, env *Env) ([]Access, error)
	// Summary says in one line what a finished operation did.
	Summary(cp *record.Checkpoint) string
	// Target says what the operation does to which racks, for status and refusals.
	Target(t record.Target) string
	// PlanLines are the plan's lines between its title and its steps (per rack, or
	// what was found).
	PlanLines(cp *record.Checkpoint, findings []string) []string
	// BuildSteps returns the implementation of every step of the checkpoint of w, by
	// step ID: the kind's own, and the plugin's library's (w.Core).
	BuildSteps(w World) (map[string]Step, error)
}

// Commander is a kind started by a command of its own (the scale-up has none: the
// scale command plans it).
type Commander interface {
	Command() Command
}

// Info is what a kind is, as data.
type Info struct {
	// Name is the kind as checkpoints record it.
	Name string
	// Checkpoint is what its checkpoint may hold: the schema version a new operation is
	// written with and its step kinds (the plugin's decode checks them).
	Checkpoint record.Schema
	// StepsHeader introduces the step list of a plan; ConfirmWord is the question asked
	// before the checkpoint is created ("Scale down").
	StepsHeader, ConfirmWord string
	// Abort says when an operation of the kind may be aborted.
	Abort Abort
	// Operator, for a kind an operator offers (Offerer), is that operator's name:
	// several operators may offer a kind under one command (repair-operator-state), and
	// the CLI runs the one of the cluster's operator. "" for the kinds every operator
	// gets.
	Operator string
}

// Abort is when an operation of a kind may be aborted, and how abort counts its
// progress. Abort asks the kind's Assess, then checks the racks against the cluster
// resource's count unless KeepsCount.
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
	// Assess reads the world and refuses (ExitRefused, nothing changed, what to run
	// instead) unless the operation stands at the kind's safe point, and says how far it
	// got. Nil: abort only before any step past pausing the operator started.
	Assess func(ctx context.Context, r AbortReads, cp *record.Checkpoint) (Progress, error)
	// Undo, when set, takes back what the operation changed that the cluster must not
	// keep (replace-node: the replace option in the start script), before the operator
	// is restored; it says what it did ("" when nothing). It runs on a cluster being
	// deleted too: what it takes back is not the cluster's.
	Undo func(ctx context.Context, r AbortReads, cp *record.Checkpoint) (string, error)
}

// AbortReads is what an abort assessment reads the world with: the plugin's Toolkit and
// the command that continues the operation, for refusals that send the user to resume.
type AbortReads struct {
	Toolkit
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

// Offerer is an operator (operator.Operator) that offers operation kinds of its own,
// beyond the ones every operator gets: what cmd/kubectl-cassandra/main.go hands the CLI.
type Offerer interface {
	Kinds() []Kind
}
