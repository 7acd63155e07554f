package operation

import "github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"

// Command is how a kind is started from the command line. The plugin builds the command
// with the flags every operation shares (--dry-run, --pause-operator, --yes, -o, …). It
// is not refused while the operator is busy: an operator's own kind repairs it, and a
// stuck operator looks busy for good.
type Command struct {
	// Use, Short, Long and Example are the command's help; the plugin adds what every
	// operation command shares (CLUSTER, the exit codes).
	Use, Short, Long, Example string
	// DryRun says what --dry-run prints; During, what the operator is paused during.
	DryRun, During string
	// InFlight answers an operation already in flight on the cluster; nil, or the zero
	// answer, refuses the command while it is.
	InFlight func(existing *record.Checkpoint) InFlight
	// Next is the command that runs the plan --dry-run showed.
	Next func(ns, cluster string) string
}

// InFlight is a command's answer to an operation already in flight.
type InFlight struct {
	// Resume: it is this operation; Say is printed before resuming it.
	Resume bool
	Say    string
	// Absorb: the command is planned with the operation in flight handed to its plan
	// (Env.InFlight), which carries what is left of it; the new plan replaces it under
	// its ID.
	Absorb bool
}
