package cli

import (
	"net/http"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/kinds"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Options is the one value every command receives: kubectl's standard flags, the
// streams, the clock and the plugin-wide flags. Tests inject fakes through Clients.
type Options struct {
	genericiooptions.IOStreams
	ConfigFlags *genericclioptions.ConfigFlags
	// Operators are the operators this build supports, in order of preference
	// (cmd/kubectl-cassandra/main.go composes them).
	Operators []operator.Operator
	// Kinds is the table of operation kinds (internal/operation/kinds, and those the
	// Operators offer).
	Kinds operation.Registry
	// Color is auto, always or never.
	Color string
	// JMXSecret names the Secret (keys username, password) whose JMX credentials every
	// nodetool call passes (see jmxAuth).
	JMXSecret string
	// Now is the clock; tests set it.
	Now func() time.Time
	// Clients, when set, replaces the clients built from ConfigFlags (tests).
	Clients *kube.Clients
	// Execer, when set, replaces pod exec (tests).
	Execer nodetool.Execer
	// Identity and Alive, when set, replace this process's identity as a checkpoint
	// holder and the check that a holder's process still runs (tests simulate processes).
	Identity func() record.Holder
	Alive    func(pid int) bool
	// After, when set, replaces time.After for the wait on another holder's lease
	// (tests: a clock that jumps with Now).
	After func(d time.Duration) <-chan time.Time
	// WrapTransport, when set, wraps the HTTP transport of every API client (tests
	// inject API faults with it).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// ProgressEvery is the interval of plain progress lines (0: 30 s), SampleEvery and
	// SampleMax the shortest and longest intervals between progress reads while a
	// decommission call runs (0: 5 s and 3 min); tests shorten them instead of waiting,
	// and the bench scales them with the simulated stream's time.
	ProgressEvery time.Duration
	SampleEvery   time.Duration
	SampleMax     time.Duration
}

func (o *Options) self() record.Holder {
	if o.Identity != nil {
		return o.Identity()
	}
	return operation.Self()
}

// alive tells whether the process a holder on this machine names still runs.
func (o *Options) alive(h record.Holder) bool {
	if o.Alive != nil {
		return o.Alive(h.PID)
	}
	return operation.HolderAlive(h)
}

// after is the timer of lease waits (tests pass a clock that jumps).
func (o *Options) after(d time.Duration) <-chan time.Time {
	if o.After != nil {
		return o.After(d)
	}
	return time.After(d)
}

// NewOptions returns Options with kubectl's standard flags, for the given operators.
func NewOptions(streams genericiooptions.IOStreams, operators ...operator.Operator) *Options {
	return &Options{
		IOStreams:   streams,
		Operators:   operators,
		Kinds:       kinds.Registry(offered(operators)...),
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		Color:       "auto",
		Now:         time.Now,
	}
}

// offered are the operation kinds the operators offer beyond the common ones.
func offered(operators []operator.Operator) []pub.Kind {
	var out []pub.Kind
	for _, op := range operators {
		out = append(out, operation.Offered(op)...)
	}
	return out
}

// AddFlags registers kubectl's standard flags and the plugin-wide ones.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.ConfigFlags.AddFlags(fs)
	fs.StringVar(&o.Color, "color", o.Color, "Colorize output: auto (only on a terminal, off with NO_COLOR or TERM=dumb), always, never")
	fs.StringVar(&o.JMXSecret, "jmx-secret", o.JMXSecret, "Secret (keys username, password) with the JMX credentials for nodetool; default: the cluster's spec.imageJolokiaSecret, if any")
}
