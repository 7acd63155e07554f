package removedc

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

const example = `  # Show what removing datacenter dc2 takes (the keyspaces to change, the nodes), change nothing
  kubectl cassandra remove-dc cassandra-demo --dc dc2 --dry-run

  # Remove it; the plugin drops dc2 from the keyspaces' replication itself (cqlsh, superuser Secret)
  kubectl cassandra remove-dc cassandra-demo --dc dc2 --alter-keyspaces --cql-secret demo-superuser`

// rackRefusal says why a rack cannot be removed, and the way that exists.
const rackRefusal = "a rack cannot be removed: neither CassKop (it restores the topology) nor cass-operator (its webhook refuses) can express a datacenter losing a rack; " +
	"migrate through a new datacenter instead: add one with the racks wanted, rebuild it from this one (nodetool rebuild), move the clients, then remove this one with kubectl cassandra remove-dc; nothing changed"

// Command implements operation.Commander: kubectl cassandra remove-dc.
func (Kind) Command() pub.Command {
	return pub.Command{
		Use:   "remove-dc [CLUSTER] --dc DC",
		Short: "Remove a whole datacenter: keyspaces first, then every node leaves the ring, verified, resumably",
		Long: `Remove datacenter DC from the cluster. Before anything changes: another datacenter exists and every
node is UN; no keyspace replicates to DC (NetworkTopologyStrategy options, the system keyspaces
included), else the command is refused naming each keyspace with the exact ALTER KEYSPACE that drops DC
from it; with --alter-keyspaces the plugin runs those statements itself as planned steps (cqlsh in a pod
of another datacenter, the credentials of --cql-secret on its standard input, never on a command line),
then waits for schema agreement (nodetool describecluster) and verifies the keyspaces.

Then every node of DC leaves the ring, one at a time, highest ordinal first across the racks, each
verified absent from a ring read in a datacenter that stays (its decommission streams nothing: no
keyspace replicates to DC any more).
  CassKop: paused while the plugin decommissions the nodes (as for a scale-down); DC's nodesPerRacks is
  then set to 0, CassKop is restored, DC is taken out of its topology and CassKop is seen deleting DC's
  StatefulSets and Services.
  cass-operator (CLUSTER is DC's CassandraDatacenter; never paused): the CassandraDatacenter is annotated
  cassandra.datastax.com/decommission-on-delete (with the operation's mark), the annotation verified on
  the object of the planned UID, then it is deleted; the operator decommissions each node and the plugin
  verifies each one leave, then the resource, its StatefulSets and claims gone (the checkpoint goes with
  the resource: the end is verified before it does).
A later command takes back the mark of a removal whose operation is gone before its deletion. The end is verified in the world: no node of DC in the ring, no
claim, no StatefulSet.

Abort is allowed until the first node starts leaving (a keyspace change already made is kept, and said).`,
		Example: example,
		During:  "the nodes' removal",
		Flags: func(fs *pflag.FlagSet, req *pub.Request) {
			o := &Options{}
			req.Ext = o
			fs.StringVar(&req.DC, "dc", "", "Datacenter to remove")
			fs.BoolVar(&o.AlterKeyspaces, "alter-keyspaces", false, "Drop the datacenter from the keyspaces that replicate to it (ALTER KEYSPACE through cqlsh, as planned steps)")
			fs.StringVar(&o.CQLSecret, "cql-secret", "", "Secret with keys username and password of the CQL superuser cqlsh logs in with (none: no authentication)")
			// Refused with its reason rather than unknown.
			fs.StringVar(&req.Rack, "rack", "", "")
			_ = fs.MarkHidden("rack")
		},
		Validate: func(req pub.Request, changed func(string) bool) error {
			if changed("rack") {
				return exit.Usagef("%s", rackRefusal)
			}
			if req.DC == "" {
				return exit.Usagef("name the datacenter to remove with --dc")
			}
			return nil
		},
		Busy: true,
		InFlight: func(existing *record.Checkpoint, asked pub.Asked) pub.InFlight {
			if existing.Kind == Name && existing.Target.DC == asked.Request.DC {
				return pub.InFlight{Resume: true, Say: fmt.Sprintf("Operation %s removing datacenter %s is in flight; resuming it.", existing.OperationID, existing.Target.DC)}
			}
			return pub.InFlight{}
		},
		Next: func(ns, cluster string, plan *pub.Plan, req pub.Request) string {
			next := fmt.Sprintf("kubectl cassandra remove-dc -n %s %s --dc %s", ns, cluster, req.DC)
			o := pub.KindRequestOf[Options](req).Options
			if o.AlterKeyspaces {
				next += " --alter-keyspaces"
			}
			if o.CQLSecret != "" {
				next += " --cql-secret " + o.CQLSecret
			}
			return next + " --yes"
		},
	}
}
