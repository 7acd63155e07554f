package replacenode

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

const example = `  # Replace the dead node of pod cassandra-demo-dc1-rack1-2 (show the plan, then ask)
  kubectl cassandra replace-node -n cassandra cassandra-demo --pod cassandra-demo-dc1-rack1-2

  # Show the exact plan and change nothing
  kubectl cassandra replace-node cassandra-demo --pod cassandra-demo-dc1-rack1-2 --dry-run

  # Several down nodes without a pod in the rack: name the one the pod ran
  kubectl cassandra replace-node cassandra-demo --pod cassandra-demo-dc1-rack1-2 --address 10.244.3.9   # needs a real cluster (a DN node at that address)

  # Let each node that streams to the replacement send at up to 200 MiB/s meanwhile
  kubectl cassandra replace-node cassandra-demo --pod cassandra-demo-dc1-rack1-2 --stream-throughput 200MiB/s`

// Command implements operation.Commander: kubectl cassandra replace-node.
func (Kind) Command() pub.Command {
	return pub.Command{
		Use:   "replace-node [CLUSTER] --pod POD",
		Short: "Replace a dead node by a fresh one that takes over its tokens, resumably and verified",
		Long: `Replace the dead Cassandra node of a pod (its Kubernetes node gone, its volume lost, its disk
corrupt) by a fresh node that takes over exactly its tokens, streaming its data from the other
replicas.

Before anything changes, the plugin checks from the real world that the node is DN as seen by a
UN node, that its nodetool does not answer, that every other node of the datacenter is UN and
that no node joins, leaves or moves (Cassandra refuses a replace then), and that it is no seed;
it records the dead node's Host ID, address, token count and Load in the checkpoint.

Who acts is the operator's choice. Where it replaces nodes itself (cass-operator), it is asked
through a replacenode CassandraTask named after the operation, never paused. Elsewhere (CassKop,
paused meanwhile) the plugin writes -Dcassandra.replace_address_first_boot=<address> into the
start script of the cluster's ConfigMap (CassKop: pre_run.sh of spec.configMapName; a block that
acts on that pod only and exits 0 on every other) for the jvm options file the cluster's
Cassandra version reads, deletes the pod's claims and the pod with UID preconditions, and takes
the option out once done.

Done means verified in the ring: the replacement UN, with the dead node's token count, the dead
Host ID gone (kept when the address is the same), its Load growing. A replacement that cannot
start is reported with Cassandra's own startup error. abort is possible until the claims are
deleted; after that, resume finishes it.

With --stream-throughput, the stream throughput of the nodes that stream to the replacement
(each other node of its datacenter: only a sender's limit throttles a stream) is read and
recorded in the checkpoint, then set, before the replace option is written or the operator
asked; the recorded values go back once the replacement is verified, or on abort.`,
		Example: example,
		During:  "the operation",
		Flags: func(fs *pflag.FlagSet, req *pub.Request) {
			o := &Options{}
			req.Ext = o
			fs.StringVar(&o.Pod, "pod", "", "Pod whose dead node is replaced")
			fs.StringVar(&o.Address, "address", "", "The dead node's address (when the rack has several down nodes without a pod)")
			fs.BoolVar(&o.AllowSeed, "allow-seed", false, "Replace a seed's node (its replacement must not be in its own seed list)")
			operation.ThroughputFlag(fs, req, "the nodes that stream to the replacement (every other node of its datacenter)")
		},
		Validate: func(req pub.Request, changed func(string) bool) error {
			if pub.KindRequestOf[Options](req).Options.Pod == "" {
				return exit.Usagef("name the pod whose dead node is replaced with --pod; nothing changed")
			}
			return operation.ValidateThroughput(req, changed)
		},
		InFlight: func(existing *record.Checkpoint, asked pub.Asked) pub.InFlight {
			pod := pub.KindRequestOf[Options](asked.Request).Options.Pod
			if existing.Kind == Name && existing.Replace != nil && existing.Replace.Pod == pod {
				return pub.InFlight{Resume: true, Say: fmt.Sprintf("Operation %s replaces the node of %s already; resuming it.", existing.OperationID, pod) +
					operation.ThroughputSay(existing, asked.Request.StreamThroughput, "run replace-node again")}
			}
			return pub.InFlight{}
		},
		Next: func(ns, cluster string, _ *pub.Plan, asked pub.Request) string {
			req := pub.KindRequestOf[Options](asked)
			next := fmt.Sprintf("kubectl cassandra replace-node -n %s %s --pod %s", ns, cluster, req.Options.Pod)
			if req.Options.Address != "" {
				next += " --address " + req.Options.Address
			}
			if req.Options.AllowSeed {
				next += " --allow-seed"
			}
			if req.StreamThroughput != "" {
				next += " --stream-throughput " + req.StreamThroughput
			}
			return next + " --yes"
		},
	}
}
