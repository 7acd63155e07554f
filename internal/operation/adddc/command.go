package adddc

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

const example = `  # Show what adding datacenter dc2 (2 racks of 3 nodes) rebuilt from dc1 takes, change nothing
  kubectl cassandra add-dc cassandra-demo --dc dc2 --racks r1,r2 --nodes 3 --rebuild-from dc1 --dry-run

  # Add it; the plugin gives dc2 replicas in every keyspace dc1 has (cqlsh, superuser Secret)
  kubectl cassandra add-dc cassandra-demo --dc dc2 --nodes 3 --rebuild-from dc1 --alter-keyspaces --cql-secret demo-superuser   # needs a real cluster (and the Secret)

  # cass-operator: the new CassandraDatacenter from a file, rebuilt from dc1's
  kubectl cassandra add-dc dc1 -f dc2.yaml --alter-keyspaces --cql-secret demo-superuser   # needs a real cluster (and the file dc2.yaml)`

// Command implements operation.Commander: kubectl cassandra add-dc.
func (Kind) Command() pub.Command {
	return pub.Command{
		Use:   "add-dc [CLUSTER] (--dc DC --nodes N | -f FILE) [--rebuild-from SOURCE]",
		Short: "Add a datacenter and rebuild it from another, one node at a time, verified, resumably",
		Long: `Add datacenter DC to the cluster and rebuild it from datacenter SOURCE.
  CassKop: DC is appended to the CassandraCluster's topology (--racks, default SOURCE's rack names, with
  --nodes nodes each); CassKop creates its StatefulSets.
  cass-operator: CLUSTER is SOURCE's CassandraDatacenter (where the checkpoint lives); the new
  CassandraDatacenter is created from -f FILE (same clusterName), marked with the operation.
Its nodes join owning no replicas (no keyspace replicates to DC yet): the plugin waits until every one
is UN in the ring read from SOURCE. Then every keyspace that replicates to SOURCE (--keyspaces: those)
gets --rf replicas in DC (default: as many as in SOURCE): with --alter-keyspaces the plugin runs the
ALTER KEYSPACE statements itself (cqlsh in a pod of SOURCE, the credentials of --cql-secret on its
standard input); without it the run stops there (exit 3, the checkpoint kept) naming them, and resume
verifies they were applied. After the schema agreement, each new node is rebuilt from SOURCE, one at a
time (CassKop: nodetool rebuild -- SOURCE through exec; cass-operator: a rebuild task naming the pod),
with its progress, rate and ETA; --stream-throughput is set on SOURCE's nodes meanwhile and put back.
A rebuild that failed or was interrupted runs again on that node only (it fetches only what is
missing). A node is verified rebuilt from what Cassandra reports: no rebuild stream in its netstats,
its Load against SOURCE's per node.

Abort is always allowed: what joined stays, and the abort says which nodes are left to rebuild.`,
		Example:  example,
		During:   "the rebuilds",
		Flags:    flags,
		Validate: validate,
		Busy:     true,
		InFlight: inFlight,
		Next:     next,
	}
}

// flags registers add-dc's flags, its own options into req.Ext.
func flags(fs *pflag.FlagSet, req *pub.Request) {
	o := &Options{}
	req.Ext = o
	fs.StringVar(&req.DC, "dc", "", "Datacenter to add (CassKop)")
	fs.IntVar(&req.Nodes, "nodes", 0, "Nodes of each rack of the new datacenter (CassKop)")
	fs.StringSliceVar(&o.Racks, "racks", nil, "Racks of the new datacenter (CassKop; default: the source datacenter's rack names)")
	fs.StringVarP(&o.File, "filename", "f", "", "The new CassandraDatacenter, YAML or JSON (cass-operator)")
	fs.StringVar(&o.Source, "rebuild-from", "", "Datacenter the new one is rebuilt from (cass-operator: default CLUSTER's)")
	fs.StringSliceVar(&o.Keyspaces, "keyspaces", nil, "Keyspaces given replicas in the new datacenter (default: every keyspace that replicates to the source, system ones included)")
	fs.IntVar(&o.RF, "rf", 0, "Replicas of each keyspace in the new datacenter (default: as many as in the source)")
	fs.BoolVar(&o.AlterKeyspaces, "alter-keyspaces", false, "Run the ALTER KEYSPACE statements (cqlsh, as planned steps); without it the run stops before the rebuilds, naming them")
	fs.StringVar(&o.CQLSecret, "cql-secret", "", "Secret with keys username and password of the CQL superuser cqlsh logs in with (none: no authentication)")
	operation.ThroughputFlag(fs, req, "the source datacenter's nodes")
}

// validate refuses bad usage before anything is read; -f is read here.
func validate(req pub.Request, changed func(string) bool) error {
	o, _ := req.Ext.(*Options)
	if o == nil {
		return exit.Usagef("add-dc: no options")
	}
	if o.RF < 0 || req.Nodes < 0 {
		return exit.Usagef("--rf and --nodes cannot be negative")
	}
	if o.File != "" {
		if req.DC != "" || req.Nodes > 0 || len(o.Racks) > 0 {
			return exit.Usagef("-f names the datacenter, its racks and its size: give either -f or --dc/--nodes/--racks")
		}
		b, err := os.ReadFile(o.File)
		if err != nil {
			return exit.Usagef("-f: %v; nothing changed", err)
		}
		o.Manifest = b
	} else {
		if req.DC == "" {
			return exit.Usagef("name the datacenter to add with --dc (or give its resource with -f)")
		}
		if req.Nodes == 0 {
			return exit.Usagef("give the nodes of each rack of %s with --nodes", req.DC)
		}
	}
	return operation.ValidateThroughput(req, changed)
}

// inFlight resumes an add-dc of the same datacenter.
func inFlight(existing *record.Checkpoint, asked pub.Asked) pub.InFlight {
	if existing.Kind == Name && (asked.Request.DC == "" || existing.Target.DC == asked.Request.DC) {
		say := fmt.Sprintf("Operation %s adding datacenter %s is in flight; resuming it.", existing.OperationID, existing.Target.DC)
		return pub.InFlight{Resume: true, Say: say + operation.ThroughputSay(existing, asked.Request.StreamThroughput, "add-dc again")}
	}
	return pub.InFlight{}
}

// next is the command that starts the same plan again.
func next(ns, cluster string, plan *pub.Plan, req pub.Request) string {
	o := pub.KindRequestOf[Options](req).Options
	next := fmt.Sprintf("kubectl cassandra add-dc -n %s %s", ns, cluster)
	if o.File != "" {
		next += " -f " + o.File
	} else {
		next += fmt.Sprintf(" --dc %s --nodes %d", req.DC, req.Nodes)
		if len(o.Racks) > 0 {
			next += " --racks " + strings.Join(o.Racks, ",")
		}
	}
	if o.Source != "" {
		next += " --rebuild-from " + o.Source
	}
	if len(o.Keyspaces) > 0 {
		next += " --keyspaces " + strings.Join(o.Keyspaces, ",")
	}
	if o.RF > 0 {
		next += fmt.Sprintf(" --rf %d", o.RF)
	}
	if o.AlterKeyspaces {
		next += " --alter-keyspaces"
	}
	if o.CQLSecret != "" {
		next += " --cql-secret " + o.CQLSecret
	}
	if req.StreamThroughput != "" {
		next += " --stream-throughput " + req.StreamThroughput
	}
	return next + " --yes"
}
