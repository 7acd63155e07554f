package restart

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

const example = `  # Restart every pod of rack rack1, one at a time, highest ordinal first
  kubectl cassandra restart -n cassandra cassandra-demo --rack rack1

  # Every rack of datacenter dc1, rack by rack
  kubectl cassandra restart cassandra-demo --dc dc1

  # Show the exact plan and change nothing
  kubectl cassandra restart cassandra-demo --rack rack1 --dry-run -o json`

// Command implements operation.Commander: kubectl cassandra restart.
func (Kind) Command() pub.Command {
	return pub.Command{
		Use:   "restart [CLUSTER] --rack RACK | --dc DC",
		Short: "Restart a rack's pods one at a time (drain, delete, wait until UN), resumably",
		Long: `Restart the pods of a rack (or of every rack of a datacenter) one at a time, highest ordinal
first: check that every node of the datacenter is UN, nodetool drain the node, delete its pod (with
a UID precondition), and wait until the StatefulSet's new pod (a new UID) is Ready and its node UN;
then the next pod.

Every step is written to a checkpoint annotation on the {Kind} before it runs. If the
run is interrupted, "kubectl cassandra resume" finishes it from any machine, in the middle of a
rack too: a pod that was already restarted (its UID changed) is not restarted again.

Where the operator restarts pods itself when asked through a task (cass-operator), the plugin
neither drains nor deletes a pod and never pauses the operator: it creates a CassandraTask of
command restart named after the operation (args.rack with --rack; a resumed run finds it by name),
then waits until each pod is re-created (a new UID), Ready and its node UN, in the order the
operator restarts them, and finally until the task finished Complete (Failed stops the run).`,
		Example: example,
		During:  "the operation",
		Flags: func(fs *pflag.FlagSet, req *pub.Request) {
			operation.RackFlags(fs, req, "Rack to restart")
			// Refused with its reason rather than unknown: a restart streams nothing.
			fs.StringVar(&req.StreamThroughput, "stream-throughput", "", "")
			_ = fs.MarkHidden("stream-throughput")
		},
		Validate: func(_ pub.Request, changed func(string) bool) error {
			if changed("stream-throughput") {
				return exit.Usagef("--stream-throughput does not apply to a restart: a restarted node comes back on its own data and streams nothing " +
					"(only a decommission, a bootstrap, a replace or a removenode stream; docs/how-it-works/streaming.md §1.7), and its restart brings its cassandra.yaml limits back anyway; nothing changed")
			}
			return nil
		},
		Busy: true,
		InFlight: func(existing *record.Checkpoint, asked pub.Asked) pub.InFlight {
			if existing.Kind == (Kind{}).Info().Name && asked.Selected && existing.SameRacks(asked.DC, asked.Racks) {
				return pub.InFlight{Resume: true, Say: fmt.Sprintf("Operation %s with the same target is in flight; resuming it.", existing.OperationID)}
			}
			return pub.InFlight{}
		},
		Next: func(ns, cluster string, plan *pub.Plan, req pub.Request) string {
			return operation.RackNext("restart", ns, cluster, plan, req) + " --yes"
		},
	}
}
