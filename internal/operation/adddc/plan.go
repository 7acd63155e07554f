package adddc

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/dcread"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Plan implements operation.Kind. It reads the source datacenter (its ring and, through
// cqlsh, every keyspace's replication), asks the operator's adapter what the new
// datacenter will be, refuses what cannot be done safely, and plans from where the
// world stands: an addition asked already is not asked again, keyspaces that replicate
// to the datacenter already get no ALTER, and every node's rebuild reads the world.
func (k Kind) Plan(ctx context.Context, env *pub.Env) (*pub.Plan, error) {
	req := pub.KindRequestOf[Options](env.Request)
	o, p, cl := req.Options, operation.PlannerOf(env), env.Cluster
	_, driven := env.Adapter.(operator.Scaler)
	source := o.Source
	if source == "" {
		if !driven {
			return nil, exit.Usagef("name the datacenter to rebuild from with --rebuild-from (CassKop never rebuilds: without a source, a rebuild streams from the new datacenter's own empty nodes)")
		}
		source = cl.DCs[0].Name
	}
	src, ok := cl.DC(source)
	if !ok {
		return nil, exit.Usagef("--rebuild-from %s: %s %s has no such datacenter (it has %s); nothing changed", source, env.Adapter.Kind(), cl.Name, strings.Join(cl.DCNames(), ", "))
	}
	adder, ok := env.Adapter.(operator.DatacenterAdder)
	if !ok {
		return nil, exit.Refusedf("%s cannot add a datacenter through this plugin; nothing changed", env.Adapter.Title())
	}
	want := operator.NewDatacenter{Name: req.DC, Racks: o.Racks, NodesPerRack: req.Nodes, Manifest: o.Manifest}
	if len(want.Racks) == 0 && len(want.Manifest) == 0 {
		want.Racks = operation.RackNames(src.Racks)
	}
	name, racks, err := adder.PlanDatacenter(ctx, cl.Namespace, cl.Name, want)
	if err != nil {
		return nil, exit.Refusedf("%v; nothing changed", err)
	}
	want.Name = name
	if name == source {
		return nil, exit.Usagef("the new datacenter cannot be its own source (%s); nothing changed", name)
	}
	selector := env.Adapter.ClusterSelector(cl.Name)
	if driven {
		// The new datacenter is another resource: every pod of the operator in the
		// namespace is a candidate, the source's racks tell its own.
		selector = env.Adapter.ClusterSelector("")
	}
	inSource := dcread.Member(src.Racks, nil)
	m := dcread.Readers{Kube: p.Client, Nodetool: p.Nodetool, NS: cl.Namespace, Selector: selector,
		Exclude: func(pod *corev1.Pod) bool { return !inSource(pod) },
		CQL:     cql.Client{Exec: p.Exec, Auth: cql.SecretAuth(p.Client, cl.Namespace, o.CQLSecret)}}
	ring, reader, err := m.Ring(ctx)
	if err != nil {
		return nil, exit.Refusedf("cannot read the ring from datacenter %s (%v): add-dc needs it healthy; nothing changed", source, err)
	}
	if err := checkRing(ring); err != nil {
		return nil, err
	}
	ks, err := m.Keyspaces(ctx, reader)
	if err != nil {
		return nil, exit.Refusedf("cannot read the keyspaces' replication through cqlsh in %s (%v): give the CQL superuser's Secret with --cql-secret; nothing changed", reader.Name, err)
	}
	g := judgeKeyspaces(ks, source, name, o.Keyspaces, o.RF)
	if len(g.blocking) > 0 {
		return nil, exit.Refusedf("datacenter %s cannot be added safely: %s; nothing changed", name, strings.Join(g.blocking, "; "))
	}
	readers, err := m.Pods(ctx)
	if err != nil {
		return nil, err
	}
	nodes := newNodes(racks)
	plan := &pub.Plan{Cluster: cl, DC: topology.DC{Name: name, Racks: racks}, Racks: racks}
	plan.CP = p.NewCheckpoint(cl, k, "add-dc", req.Request)
	plan.CP.Target = record.Target{DC: name, Racks: operation.RackNames(racks), Nodes: len(nodes), From: map[string]int{}, RackNodes: rackNodes(racks)}
	plan.CP.Nodes = nodes
	plan.CP.Ext = ext{Source: source, CQLSecret: o.CQLSecret, Readers: dcread.SameCluster(readers, ring, name), Wanted: g.wanted, Alter: o.AlterKeyspaces, Want: want, Racks: racks}.encode()
	plan.CP.Steps = additionSteps(o.AlterKeyspaces, nodes)
	plan.Findings = append(plan.Findings, fmt.Sprintf("ring read from %s (datacenter %s)", reader.Name, source))
	if len(g.alter) > 0 && !o.AlterKeyspaces {
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("without --alter-keyspaces the run stops once %s joined, until these run (cqlsh in a pod of %s), then resume:\n%s", name, source, statements(g.alter)))
	}
	if err := k.throttle(ctx, env, plan, src, reader.Name, ring, nodes); err != nil {
		return nil, err
	}
	return plan, nil
}

// checkRing refuses unless every node of the ring is UN (the rebuilds stream from the
// source, the keyspace changes need every node).
func checkRing(ring pubnodetool.Ring) error {
	var notUN []string
	for _, n := range ring.Nodes {
		if n.Code() != "UN" {
			notUN = append(notUN, fmt.Sprintf("%s (%s, datacenter %s)", n.Address, n.Code(), n.DC))
		}
	}
	if len(notUN) > 0 {
		return exit.Refusedf("nodes are not Up/Normal (%s): add-dc needs every node UN (the rebuilds stream from the source, the keyspaces' change needs them all); bring them back and run add-dc again; nothing changed", strings.Join(notUN, ", "))
	}
	return nil
}

// newNodes plans every node of the new racks, one rebuilt at a time: ordinal by
// ordinal across the racks, so that each rack gets its data as early as the others.
func newNodes(racks []topology.Rack) []record.Node {
	var nodes []record.Node
	for _, r := range racks {
		for i := 0; i < r.Nodes; i++ {
			nodes = append(nodes, record.Node{Pod: fmt.Sprintf("%s-%d", r.StatefulSet, i), Ordinal: i, DC: r.DC, Rack: r.Name, StatefulSet: r.StatefulSet, New: true})
		}
	}
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Ordinal < nodes[j].Ordinal })
	return nodes
}

func rackNodes(racks []topology.Rack) map[string]int {
	out := map[string]int{}
	for _, r := range racks {
		out[r.Name] = r.Nodes
	}
	return out
}

// additionSteps lists the steps: the datacenter asked and its nodes joined, the
// keyspaces given replicas in it (by the plugin, or verified), the schema agreed, then
// each node rebuilt.
func additionSteps(alter bool, nodes []record.Node) []record.Step {
	list := []record.Step{checkpoint.PendingStep(StepAddDC, ""), checkpoint.PendingStep(StepWaitDatacenterJoined, "")}
	if alter {
		list = append(list, checkpoint.PendingStep(StepAddToKeyspaces, ""))
	} else {
		list = append(list, checkpoint.PendingStep(StepVerifyKeyspaces, ""))
	}
	list = append(list, checkpoint.PendingStep(StepWaitSchema, ""))
	return append(list, checkpoint.NodeSteps(nodes, StepRebuild)...)
}

// throttle adds --stream-throughput: the source's nodes send every rebuild's streams.
func (Kind) throttle(ctx context.Context, env *pub.Env, plan *pub.Plan, src topology.DC, reader string, ring pubnodetool.Ring, nodes []record.Node) error {
	if env.Request.StreamThroughput == "" {
		return nil
	}
	var sources []string
	inSource := dcread.Member(src.Racks, nil)
	l, err := operation.PlannerOf(env).NamespacePods(ctx, env.Cluster.Namespace)
	if err != nil {
		return err
	}
	for i := range l {
		if inSource(&l[i]) {
			sources = append(sources, l[i].Name)
		}
	}
	total, n := operation.TotalLoad(ring, src.Name)
	loads := map[string]int64{}
	if n > 0 {
		for _, nd := range nodes {
			loads[nd.Pod] = total / int64(n)
		}
	}
	// The rebuilds stream between datacenters: both limiters apply.
	wide := *env
	wide.Cluster.DCs = append(append([]topology.DC{}, env.Cluster.DCs...), plan.DC)
	tp, warnings, err := operation.PlanThroughput(ctx, &wide, src, reader, loads, sources)
	if err != nil {
		return err
	}
	plan.CP.Throughput = tp
	plan.Warnings = append(plan.Warnings, warnings...)
	plan.CP.Steps = operation.Throttled(plan.CP.Steps, []string{StepRebuild}, []string{StepRebuild})
	return nil
}
