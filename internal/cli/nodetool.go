package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

const nodetoolExample = `  # The ring as one node sees it
  kubectl cassandra nodetool -n cassandra cassandra-demo-dc1-rack1-0 status

  # Options for nodetool itself go after --
  kubectl cassandra nodetool cassandra-demo-dc1-rack1-0 -- netstats -H

  # With JMX authentication (LOCAL_JMX=no): the credentials of a Secret with keys
  # username and password; they go to nodetool on its stdin, never on a command line
  kubectl cassandra nodetool --jmx-secret cassandra-jmx cassandra-demo-dc1-rack1-0 info`

// passthroughError is nodetool's own non-zero exit: its output said why, so nothing more
// is printed and the plugin exits with nodetool's code.
type passthroughError struct{ code int }

func (e *passthroughError) Error() string { return fmt.Sprintf("nodetool exited with code %d", e.code) }

func newNodetoolCmd(o *Options) *cobra.Command {
	var cluster string
	cmd := &cobra.Command{
		Use:   "nodetool POD [--] ARGS...",
		Short: "Run nodetool in the cassandra container of a pod of the cluster",
		Long: o.words().Replace(`Runs nodetool in the Cassandra container of POD, a pod of a {Kind} (the operator's
cluster label; --cluster checks it names that cluster), with the environment the
plugin's own calls use (LANG=C, JAVA_TOOL_OPTIONS=-Dcom.sun.jndi.rmiURLParsing=legacy) and
the JMX credentials of --jmx-secret (or the Secret the cluster's spec names), given to
nodetool on its standard input (-pwf /dev/stdin), never on a command line. nodetool's output
is streamed as it comes and its exit code is the plugin's.

Exit codes: nodetool's own when it ran; otherwise the plugin's: 1 error (the pod could not
be reached), 2 bad usage (no POD, or a pod that is not a {Kind}'s).`),
		Example:           nodetoolExample,
		GroupID:           groupInspect,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: o.completePods,
		RunE: func(cmd *cobra.Command, args []string) error {
			rest := args[1:]
			if len(rest) > 0 && rest[0] == "--" {
				rest = rest[1:] // flag parsing stopped at POD: "--" is still there
			}
			return o.runNodetool(cmd.Context(), cluster, args[0], rest)
		},
	}
	// Everything after POD is nodetool's (its -h, -p, -r...), not the plugin's.
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&cluster, "cluster", "", o.words().Replace("the {Kind} POD must belong to (default: the one its label names)"))
	_ = cmd.RegisterFlagCompletionFunc("cluster", o.completeClusters)
	return cmd
}

func (o *Options) runNodetool(ctx context.Context, cluster, pod string, args []string) error {
	c, err := o.clients()
	if err != nil {
		return err
	}
	ns := o.namespace(c)
	p, err := c.Kube.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return exit.Usagef("pod %q not found in namespace %s", pod, ns)
	}
	if err != nil {
		return fmt.Errorf("cannot read pod %s/%s: %w", ns, pod, err)
	}
	a, owner, ok := o.podOwner(c, p.Labels)
	if a == nil {
		return fmt.Errorf("this build supports no operator")
	}
	if !ok {
		return exit.Usagef("pod %s/%s is not a Cassandra pod of a %s (its labels name none): nothing run", ns, pod, o.words().Replace("{Kind}"))
	}
	if cluster != "" && owner != cluster {
		return exit.Usagef("pod %s/%s belongs to %s %s, not %s: nothing run", ns, pod, a.Kind(), owner, cluster)
	}
	s, err := o.open(ctx, []string{owner})
	if err != nil {
		return err
	}
	err = s.nt.Stream(ctx, pod, o.Out, o.ErrOut, args...)
	if code, ok := kube.ExitCode(err); ok && code != 0 {
		return &passthroughError{code: code}
	}
	if err != nil {
		// The user's own -pw would be quoted here: masked (nodetool.Redact).
		return fmt.Errorf("nodetool %s on %s/%s: %w", strings.Join(nodetool.Redact(args), " "), ns, pod, err)
	}
	return nil
}

// asPassthrough reports nodetool's exit code when err is its own non-zero exit.
func asPassthrough(err error) (int, bool) {
	var p *passthroughError
	if errors.As(err, &p) {
		return p.code, true
	}
	return 0, false
}

// completePods lists the Cassandra pods of the namespace's CassandraClusters.
func (o *Options) completePods(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return bounded(cmd, func(ctx context.Context) []string {
		c, err := o.clients()
		if err != nil {
			return nil
		}
		ns := o.namespace(c)
		cl, _ := cmd.Flags().GetString("cluster")
		var names []string
		for _, op := range o.Operators {
			a := op.Connect(operatorClients(c))
			a.Assume()
			list, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: a.ClusterSelector(cl)})
			if err != nil {
				continue
			}
			for _, p := range list.Items {
				if _, ok := a.PodCluster(p.Labels); ok { // a Cassandra pod of the operator's
					names = append(names, p.Name)
				}
			}
		}
		return names
	})
}

// podOwner is the operator whose Cassandra pod has labels, and the cluster they name
// (labels only: no read). The first operator's adapter when none claims it (ok false);
// nil when the build supports none.
func (o *Options) podOwner(c *kube.Clients, labels map[string]string) (operator.Adapter, string, bool) {
	var first operator.Adapter
	for _, op := range o.Operators {
		a := op.Connect(operatorClients(c))
		a.Assume()
		if first == nil {
			first = a
		}
		if owner, ok := a.PodCluster(labels); ok {
			return a, owner, true
		}
	}
	return first, "", false
}
