// Package operation is the API an operator's own operation kind is written against
// (plugins/casskop/repair, plugins/cassoperator/repair): the Kind contract and what it
// plans with (Env, its Toolkit), the command that starts it, the Step contract the
// plugin's engine runs and the World its steps read, and the exit code its refusals
// carry. The records it writes are pkg/record's, the ring facts it judges
// pkg/nodetool's. Everything behind these interfaces (the planner's reads, the step
// library, the engine) is the plugin's own (internal/): an operator offers its kinds
// (Offerer), and the plugin runs them like its own.
package operation

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Kind is one kind of operation an operator offers: everything that differs from the
// other kinds, so that the plugin's CLI, resume and abort look it up by name.
type Kind interface {
	// Info is what the kind is, as data.
	Info() Info
	// Command is how it is started from the command line.
	Command() Command
	// Plan reads the real world and plans the operation. It changes nothing.
	Plan(ctx context.Context, env *Env) (*Plan, error)
	// Access lists the permissions the operation uses (checked before planning).
	Access(ctx context.Context, env *Env) ([]Access, error)
	// Summary says in one line what a finished operation did.
	Summary(cp *record.Checkpoint) string
	// Target says what the operation does to which racks, for status and refusals.
	Target(t record.Target) string
	// PlanLines are the plan's lines between its title and its steps (what was found).
	PlanLines(cp *record.Checkpoint, findings []string) []string
	// BuildSteps returns the implementation of every step of the checkpoint of w, by
	// step ID: the kind's own, and the plugin's library's through w.Core.
	BuildSteps(w World) (map[string]Step, error)
}

// Info is what a kind is, as data.
type Info struct {
	// Name is the kind as checkpoints record it.
	Name string
	// Checkpoint is what its checkpoint may hold: the schema version a new operation is
	// written with and its step kinds (the plugin's decode checks them).
	Checkpoint record.Schema
	// StepsHeader introduces the step list of a plan; ConfirmWord is the question asked
	// before the checkpoint is created ("Repair").
	StepsHeader, ConfirmWord string
	// Abort says how abort treats an operation of the kind.
	Abort Abort
	// Operator is the name of the operator that offers the kind: several operators may
	// offer a kind under one command, and the CLI runs the one of the cluster's operator.
	Operator string
}

// Abort is how abort treats an operation of a kind. It may be aborted only before any
// step past pausing the operator started.
type Abort struct {
	// KeepsCount: abort leaves the cluster resource's count alone (the operator's own
	// count is what the operation lets it finish).
	KeepsCount bool
}

// Offerer is an operator (operator.Operator) that offers operation kinds of its own,
// beyond the ones every operator gets: what cmd/kubectl-cassandra/main.go hands the CLI.
type Offerer interface {
	Kinds() []Kind
}
