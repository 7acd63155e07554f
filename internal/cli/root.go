// Package cli wires the `kubectl cassandra` commands: flags and arguments here, the work
// in the engine, steps and operator plugins.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// Command groups shown in --help.
const (
	groupOps     = "operations"
	groupInspect = "inspection"
	groupOther   = "other"
)

// StdStreams returns the process's standard streams.
func StdStreams() genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// Main runs the plugin with args for the given operators and returns the process exit
// code.
func Main(args []string, streams genericiooptions.IOStreams, operators ...operator.Operator) int {
	quietKlog()
	o := NewOptions(streams, operators...)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return o.Execute(ctx, args)
}

// quietKlog silences client-go's internal logging (e.g. "Copying stderr failed" when an
// exec stream is cut by Ctrl-C): the plugin reports what matters itself.
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

// Execute runs the root command with args, prints the error if any, and returns the exit code.
func (o *Options) Execute(ctx context.Context, args []string) int {
	root := NewRootCmd(o)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if code, ok := asPassthrough(err); ok {
		return code // nodetool printed why
	}
	if err != nil {
		if isUsageError(err) {
			err = exit.WithCode(exit.Usage, err)
		}
		fmt.Fprintf(o.ErrOut, "Error: %v\n", err)
	}
	return exit.Code(err)
}

// NewRootCmd builds the command tree around one Options value.
func NewRootCmd(o *Options) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-cassandra",
		Short: "Resumable rack operations for Apache Cassandra on Kubernetes",
		Long: `kubectl cassandra performs dangerous multi-step rack operations on Cassandra clusters
run by Kubernetes operators (CassKop first): it plans every step, records it in a checkpoint
annotation on the cluster resource before running it, and checks the real world (API objects,
nodetool) on resume. An interrupted run is finished from any machine with "kubectl cassandra resume".

` + exit.Help,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl cassandra"},
		CompletionOptions: cobra.CompletionOptions{
			HiddenDefaultCmd: true,
		},
	}
	root.SetOut(o.Out)
	root.SetErr(o.ErrOut)
	root.SetIn(o.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exit.WithCode(exit.Usage, fmt.Errorf("%w\nSee '%s --help'.", err, c.CommandPath()))
	})
	o.AddFlags(root.PersistentFlags())
	_ = root.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		switch o.Color {
		case "auto", "always", "never":
			return nil
		}
		return exit.Usagef("--color must be auto, always or never, got %q", o.Color)
	}
	root.AddGroup(
		&cobra.Group{ID: groupOps, Title: "Operations:"},
		&cobra.Group{ID: groupInspect, Title: "Inspection:"},
		&cobra.Group{ID: groupOther, Title: "Other:"},
	)
	for _, c := range append(o.operationCmds(),
		newResumeCmd(o),
		newAbortCmd(o),
		newStatusCmd(o),
		newNodetoolCmd(o),
		newReportCmd(o),
		newVersionCmd(o),
		newCompletionCmd(o),
	) {
		root.AddCommand(c)
	}
	return root
}

func isUsageError(err error) bool {
	if exit.Code(err) != exit.Error {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "required flag", "requires at least", "requires exactly", "accepts at most", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// addOutputFlag registers -o/--output with the allowed formats, and their completion.
func addOutputFlag(cmd *cobra.Command, target *string, formats ...string) {
	cmd.Flags().StringVarP(target, "output", "o", formats[0], "Output format: "+strings.Join(formats, "|"))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

func checkOutput(value string, formats ...string) error {
	for _, f := range formats {
		if value == f {
			return nil
		}
	}
	return exit.Usagef("unknown output format %q (want one of %s)", value, strings.Join(formats, ", "))
}
