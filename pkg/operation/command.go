package operation

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// DefaultDryRun is what --dry-run prints for a kind whose Command says nothing else.
const DefaultDryRun = "Print the plan and change nothing"

// Command is how a kind is started from the command line (Commander). The plugin builds
// one command from it, with the flags every operation shares (--dry-run,
// --pause-operator, --operator, --yes, -o, …) and the shared orchestration, so that a
// kind's name, wording, flags and checks live with the kind.
type Command struct {
	// Use, Short, Long and Example are the command's help; {Operator}, {Kind} and
	// {Count} in them stand for the operator's words (operator.Words), and the plugin
	// adds what every operation command shares (CLUSTER, the exit codes).
	Use, Short, Long, Example string
	// DryRun says what --dry-run prints (DefaultDryRun when empty); During, what the
	// operator is paused during.
	DryRun, During string
	// Flags registers the kind's own flags: the shared ones into req, the kind's own
	// into a value of the kind's own type it sets as req.Ext. A flag named "rack" or
	// "dc" is completed with the cluster's racks or datacenters.
	Flags func(fs *pflag.FlagSet, req *Request)
	// Validate checks the request before anything is read (a usage error: nothing
	// changed); changed says whether a flag was given.
	Validate func(req Request, changed func(flag string) bool) error
	// Busy refuses while the operator is busy with the cluster. An operator's own kind
	// that repairs it leaves it unset: a stuck operator looks busy for good.
	Busy bool
	// InFlight answers an operation already in flight on the cluster; nil, or the zero
	// answer, refuses the command while it is.
	InFlight func(existing *record.Checkpoint, asked Asked) InFlight
	// Plan, when set, plans instead of the kind's Plan (scale: a scale-down or, when
	// the racks grow, a scale-up).
	Plan func(ctx context.Context, env *Env) (*Plan, error)
	// Next is the command that runs the plan --dry-run showed.
	Next func(ns, cluster string, plan *Plan, req Request) string
	// Retry, when set, is offered after Cassandra refused a step of cp: what skips that
	// check and the command that plans cp again so (scale: --force), or "" when there
	// is no such way.
	Retry func(cp *record.Checkpoint) string
}

// Asked is a request as the cluster resolves it now: the datacenter and racks --dc and
// --rack select (Selected false: they select nothing, and DC and Racks say what was
// asked), and the command that resumes what is in flight.
type Asked struct {
	Request    Request
	DC         string
	Racks      []string
	Selected   bool
	ResumeHint string
}

// InFlight is a command's answer to an operation already in flight.
type InFlight struct {
	// Resume: it is this operation; Say is printed before resuming it.
	Resume bool
	Say    string
	// Replan: the same target asked with another --force; it is planned again when
	// no node of it is half removed.
	Replan bool
	// Absorb: the command is planned with the operation in flight handed to its plan
	// (Env.InFlight), which carries what is left of it; the new plan replaces it under
	// its ID (repair-operator-state on a cass-operator scale stuck mid-way).
	Absorb bool
	// Refuse, when set, is the refusal; else (neither Resume, Replan nor Absorb) the
	// generic "another operation is in flight" one.
	Refuse error
}
