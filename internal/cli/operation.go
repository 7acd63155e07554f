package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/lifecycle"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// operationCmds are the commands of the registered kinds that have one
// (pub.Commander), in the order the table lists them: a kind's command is
// written in its package (internal/operation/*/command.go), not here. Kinds of
// different operators may share a command (repair-operator-state): it runs the kind of
// the cluster's operator (operationOptions.forAdapter), and its help says each one's.
// Any other two kinds with one command name are a programming error (a kind embedding
// another inherits its Command): it panics when the command tree is built, so every
// test shows it.
func (o *Options) operationCmds() []*cobra.Command {
	var cmds []*cobra.Command
	seen := map[string]*operationOptions{}
	for _, k := range o.Kinds.All() {
		c, ok := k.(pub.Commander)
		if !ok {
			continue
		}
		cmd, st := o.newOperationCmd(k, c.Command())
		if first, dup := seen[cmd.Name()]; dup {
			if !first.shares(k) {
				panic(fmt.Sprintf("operation kinds %s and %s both have the command %q", first.kind.Info().Name, k.Info().Name, cmd.Name()))
			}
			first.alternatives = append(first.alternatives, alternative{kind: k, cmd: c.Command()})
			first.longs = append(first.longs, c.Command().Long)
			first.cobra.Long = o.longHelp(first.longs...)
			continue
		}
		seen[cmd.Name()] = st
		cmds = append(cmds, cmd)
	}
	return cmds
}

// words replaces {Operator}, {Kind} and {Count} in help texts with the words of the
// operators this build supports (several: "A or B").
func (o *Options) words() *strings.Replacer {
	var title, kind, count []string
	for _, op := range o.Operators {
		w := op.Words()
		title, kind, count = append(title, w.Title), append(kind, w.Kind), append(count, w.Count)
	}
	return strings.NewReplacer("{Operator}", strings.Join(title, " or "), "{Kind}", strings.Join(kind, " or "), "{Count}", strings.Join(count, " or "))
}

// command is one command's flags and arguments, as kubectl's own commands have them:
// Complete takes the arguments, Validate checks them before anything is read (a usage
// error: nothing changed), Run does the work.
type command interface {
	Complete(cmd *cobra.Command, args []string)
	Validate() error
	Run(ctx context.Context, o *Options) error
}

// runE is a cobra RunE over c.
func (o *Options) runE(c command) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c.Complete(cmd, args)
		if err := c.Validate(); err != nil {
			return err
		}
		return c.Run(cmd.Context(), o)
	}
}

// clusterArg is the optional CLUSTER argument of the commands that act on a cluster.
type clusterArg struct{ args []string }

// Complete takes the arguments.
func (c *clusterArg) Complete(_ *cobra.Command, args []string) { c.args = args }

// operationOptions are one operation command's flags and arguments.
type operationOptions struct {
	clusterArg
	name    string // the command's name
	kind    pub.Kind
	cmd     pub.Command
	req     pub.Request
	flags   opFlags
	changed func(flag string) bool
	// alternatives are the kinds of other operators under the same command; cobra is
	// the command itself (its help gathers theirs).
	alternatives []alternative
	cobra        *cobra.Command
	longs        []string
}

// alternative is another operator's kind under the same command.
type alternative struct {
	kind pub.Kind
	cmd  pub.Command
}

// shares reports whether k may share st's command: both are kinds of named operators,
// and of different ones.
func (st *operationOptions) shares(k pub.Kind) bool {
	a, b := st.kind.Info().Operator, k.Info().Operator
	if a == "" || b == "" || a == b {
		return false
	}
	for _, alt := range st.alternatives {
		if alt.kind.Info().Operator == b {
			return false
		}
	}
	return true
}

// forAdapter is the kind and command to run for the cluster's operator: the command's
// own kind, or the alternative of that operator; an operator offering none is refused.
func (st *operationOptions) forAdapter(operatorName, title string) error {
	if len(st.alternatives) == 0 {
		return nil
	}
	if st.kind.Info().Operator == operatorName {
		return nil
	}
	for _, alt := range st.alternatives {
		if alt.kind.Info().Operator == operatorName {
			st.kind, st.cmd = alt.kind, alt.cmd
			return nil
		}
	}
	return exit.Refusedf("%s has no %s: nothing to do for its clusters; nothing changed", title, st.name)
}

// Complete takes the arguments and which flags were given.
func (st *operationOptions) Complete(cmd *cobra.Command, args []string) {
	st.clusterArg.Complete(cmd, args)
	st.changed = cmd.Flags().Changed
}

// Validate checks the shared flags, then the kind's own.
func (st *operationOptions) Validate() error {
	if err := st.flags.runFlags.validate(); err != nil {
		return err
	}
	if st.cmd.Validate == nil {
		return nil
	}
	return st.cmd.Validate(st.req, st.changed)
}

// Run opens the cluster and starts the operation (the lifecycle's Begin: an operation
// in flight is resumed, planned again or refused as the command says).
func (st *operationOptions) Run(ctx context.Context, o *Options) error {
	s, err := o.open(ctx, st.args)
	if err != nil {
		return err
	}
	if err := st.forAdapter(s.adapter.Name(), s.adapter.Title()); err != nil {
		return err
	}
	order := lifecycle.Order{Name: st.name, Kind: st.kind, Command: st.cmd, Request: st.req, Flags: st.flags.start()}
	return o.lifecycle(s, &st.flags.runFlags).Begin(ctx, order)
}

// newOperationCmd is the command that starts an operation of kind k as c describes it,
// in the words of the operators this build supports.
func (o *Options) newOperationCmd(k pub.Kind, c pub.Command) (*cobra.Command, *operationOptions) {
	st := &operationOptions{kind: k, cmd: c, longs: []string{c.Long}}
	words := o.words()
	cmd := &cobra.Command{
		Use: words.Replace(c.Use), Short: words.Replace(c.Short), Long: o.longHelp(c.Long), Example: words.Replace(c.Example),
		GroupID:           groupOps,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.completeClusters,
		RunE:              o.runE(st),
	}
	if c.Flags != nil {
		c.Flags(cmd.Flags(), &st.req)
	}
	st.name = cmd.Name()
	dryRun := c.DryRun
	if dryRun == "" {
		dryRun = pub.DefaultDryRun
	}
	st.flags.add(cmd, dryRun, words.Replace("Pause a running {Operator} operator (scale its Deployment to 0) during "+c.During+" and restore it at the end; with false, refuse while it runs"))
	if cmd.Flags().Lookup("rack") != nil {
		_ = cmd.RegisterFlagCompletionFunc("rack", o.completeRacks)
	}
	if cmd.Flags().Lookup("dc") != nil {
		_ = cmd.RegisterFlagCompletionFunc("dc", o.completeDCs)
	}
	st.cobra = cmd
	return cmd, st
}

// longHelp is an operation command's long help: what its kinds say (one per operator
// sharing the command), then the words every operation command ends with.
func (o *Options) longHelp(longs ...string) string {
	return o.words().Replace(strings.Join(longs, "\n\n") + "\n\nCLUSTER is the {Kind}'s name; it may be left out when the namespace holds one.\n\n" + exit.Help)
}

// runFlags are the flags shared by the operation commands and resume.
type runFlags struct {
	yes           bool
	forceTakeover bool
	output        string
	pollInterval  time.Duration
	stepTimeout   time.Duration
	stallAfter    time.Duration
	progress      string
}

func (f *runFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "Do not ask for confirmation (required when stdin is not a terminal)")
	addOutputFlag(cmd, &f.output, "text", "json", "yaml")
	cmd.Flags().DurationVar(&f.pollInterval, "poll-interval", 5*time.Second, "How often to read the node's state while waiting (each read is a nodetool exec)")
	cmd.Flags().DurationVar(&f.stepTimeout, "timeout", 6*time.Hour, "How long one step may wait for its effect (a decommission streams the node's whole data)")
	cmd.Flags().DurationVar(&f.stallAfter, "stall-after", 10*time.Minute, "Cassandra 4.0+: re-issue decommission when the node stays LEAVING with no stream this long")
	cmd.Flags().BoolVar(&f.forceTakeover, "force-takeover", false, "Take the operation over from a holder on another machine whose lease has not expired yet")
	cmd.Flags().StringVar(&f.progress, "progress", output.ProgressAuto, "Streaming progress of a decommission or bootstrap: auto (a bar on a terminal, else plain), bar, plain (a line every 30 s), none")
}

// validate checks -o and --progress (bad usage, nothing changed).
func (f *runFlags) validate() error {
	if err := checkOutput(f.output, "text", "json", "yaml"); err != nil {
		return err
	}
	return f.checkProgress()
}

// opFlags are the flags of a command that starts an operation.
type opFlags struct {
	runFlags
	dryRun   bool
	pause    bool
	operator string
}

// add registers them; dryRun says what --dry-run prints, pause what --pause-operator does.
func (f *opFlags) add(cmd *cobra.Command, dryRun, pause string) {
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, dryRun)
	cmd.Flags().BoolVar(&f.pause, "pause-operator", true, pause)
	cmd.Flags().StringVar(&f.operator, "operator", "", "The operator Deployment to pause, as NAMESPACE/NAME (default: found by its labels or WATCH_NAMESPACE)")
	f.runFlags.add(cmd)
}

// checkProgress validates --progress (bad usage, nothing changed).
func (f *runFlags) checkProgress() error {
	for _, m := range output.ProgressModes {
		if f.progress == m || f.progress == "" {
			return nil
		}
	}
	return exit.Usagef("--progress must be auto, bar, plain or none, got %q", f.progress)
}
