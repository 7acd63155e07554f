package cli

import (
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
)

// Options is the one value every command receives: kubectl's standard flags, the
// streams, the clock and the plugin-wide flags. Tests inject fakes through Clients.
type Options struct {
	genericiooptions.IOStreams
	ConfigFlags *genericclioptions.ConfigFlags
	// Color is auto, always or never.
	Color string
	// Now is the clock; tests set it.
	Now func() time.Time
	// Clients, when set, replaces the clients built from ConfigFlags (tests).
	Clients *Clients
	// Execer, when set, replaces pod exec (tests).
	Execer nodetool.Execer
}

// NewOptions returns Options with kubectl's standard flags.
func NewOptions(streams genericiooptions.IOStreams) *Options {
	return &Options{
		IOStreams:   streams,
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		Color:       "auto",
		Now:         time.Now,
	}
}

// AddFlags registers kubectl's standard flags and the plugin-wide ones.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.ConfigFlags.AddFlags(fs)
	fs.StringVar(&o.Color, "color", o.Color, "Colorize output: auto (only on a terminal, off with NO_COLOR or TERM=dumb), always, never")
}
