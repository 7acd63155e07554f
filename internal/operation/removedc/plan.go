package removedc

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/dcread"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	corev1 "k8s.io/api/core/v1"
)

// Plan implements operation.Kind. It reads the datacenters that stay (their ring and,
// through cqlsh, every keyspace's replication), refuses what cannot be done safely,
// and plans from where the world stands: keyspaces that no longer replicate to the
// datacenter get no ALTER, nodes that already left keep no decommission of their own,
// a datacenter the resource no longer lists only waits for the operator.
func (k Kind) Plan(ctx context.Context, env *pub.Env) (*pub.Plan, error) {
	req := pub.KindRequestOf[Options](env.Request)
	p, cl := operation.PlannerOf(env), env.Cluster
	remover, ok := env.Adapter.(operator.DatacenterRemover)
	if !ok {
		return nil, exit.Refusedf("%s cannot remove a datacenter through this plugin; nothing changed", env.Adapter.Title())
	}
	if _, driven := env.Adapter.(operator.Scaler); driven {
		return k.planDriven(ctx, env)
	}
	dc, inResource := cl.DC(req.DC)
	if !inResource {
		return k.planLeftovers(ctx, env, remover)
	}
	if len(cl.DCs) < 2 {
		return nil, exit.Refusedf("datacenter %s is the only datacenter of %s %s: removing it would remove the cluster; nothing changed", dc.Name, env.Adapter.Kind(), cl.Name)
	}
	states, err := readRacks(ctx, p, cl.Namespace, dc.Racks)
	if err != nil {
		return nil, err
	}
	m := dcread.Readers{Kube: p.Client, Nodetool: p.Nodetool, NS: cl.Namespace, Selector: env.Adapter.ClusterSelector(cl.Name),
		Exclude: dcread.Member(dc.Racks, nil), CQL: cql.Client{Exec: p.Exec, Auth: cql.SecretAuth(p.Client, cl.Namespace, req.Options.CQLSecret)}}
	sv, err := survey(ctx, env, m, nil, states, dc.Name, req.Options.AlterKeyspaces, surveyWords{
		ring: "remove-dc needs another datacenter, healthy, to read it",
		cql:  "give the CQL superuser's Secret with --cql-secret"})
	if err != nil {
		return nil, err
	}
	plan := sv.plan(p, k, env, dc, states, removalSteps(len(sv.now().alter) > 0, sv.authLast, sv.nodes, req.Pause != nil, dc.MaxNodes() > 0 || len(sv.nodes) > 0))
	plan.Warnings = append(operation.PauseWarnings(req.Pause, env.Adapter.Kind()), plan.Warnings...)
	return plan, nil
}

// surveyed is what both planners read of the datacenters that stay: the ring and its
// reader, the keyspaces judged, the nodes to remove, the readers the steps will ask.
type surveyed struct {
	ring    pubnodetool.Ring
	reader  corev1.Pod
	judged  replicas
	nodes   []record.Node
	readers []string
	// authLast: system_auth's change waits until no node of the datacenter is left
	// in the ring (Cassandra 5.0 refuses it before: authDeferred).
	authLast bool
}

// now is the keyspaces' change made before the nodes leave.
func (sv surveyed) now() replicas {
	if sv.authLast {
		return sv.judged.without(systemAuth)
	}
	return sv.judged
}

// surveyWords say, in a refusal, what an unreadable ring or keyspace list needs.
type surveyWords struct{ ring, cql string }

// survey is the preflight both planners share: the ring read from a datacenter that
// stays (accept, when set, tells this cluster's ring), every node UN, the keyspaces
// judged (refused unless alter; system_auth's change deferred on 5.0), the nodes
// planned, the readers named.
func survey(ctx context.Context, env *pub.Env, m dcread.Readers, accept func(pubnodetool.Ring) bool, states []operation.RackNow, dc string, alter bool, why surveyWords) (surveyed, error) {
	var sv surveyed
	var err error
	sv.ring, sv.reader, err = m.RingWith(ctx, accept)
	if err != nil {
		return sv, exit.Refusedf("cannot read the ring from %s (%v): %s; nothing changed", why.ringSource(accept), err, why.ring)
	}
	if err := checkRing(sv.ring, dc, sv.reader.Name); err != nil {
		return sv, err
	}
	ks, err := m.Keyspaces(ctx, sv.reader)
	if err != nil {
		return sv, exit.Refusedf("cannot read the keyspaces' replication through cqlsh in %s (%v): %s; nothing changed", sv.reader.Name, err, why.cql)
	}
	sv.judged = judgeKeyspaces(ks, dc)
	if sv.judged.has(systemAuth) {
		v, err := operation.ClusterVersion(ctx, env, sv.reader.Name, "cannot tell the Cassandra version (%v), on which the change of system_auth depends (5.0 keeps it until the datacenter's nodes left); nothing changed")
		if err != nil {
			return sv, err
		}
		sv.authLast = authDeferred(sv.judged, v.AtLeast(5, 0))
	}
	if err := refuseKeyspaces(sv.judged, dc, alter, sv.authLast); err != nil {
		return sv, err
	}
	p := operation.PlannerOf(env)
	if sv.nodes, err = planNodes(ctx, p, states, sv.ring); err != nil {
		return sv, err
	}
	candidates, err := m.Pods(ctx)
	if err != nil {
		return sv, err
	}
	sv.readers = dcread.SameCluster(candidates, sv.ring, dc)
	return sv, nil
}

// ringSource names where the ring was asked, as each planner's refusal words it.
func (surveyWords) ringSource(accept func(pubnodetool.Ring) bool) string {
	if accept != nil {
		return "another datacenter of this cluster"
	}
	return "the datacenters that stay"
}

// plan is the checkpoint of a removal surveyed: every rack of dc to 0, the steps given.
func (sv surveyed) plan(p *operation.Planner, k Kind, env *pub.Env, dc topology.DC, states []operation.RackNow, list []record.Step) *pub.Plan {
	req := pub.KindRequestOf[Options](env.Request)
	plan := &pub.Plan{Cluster: env.Cluster, DC: dc, Racks: dc.Racks}
	plan.CP = p.NewCheckpoint(env.Cluster, k, "remove-dc", req.Request)
	plan.CP.Target = record.Target{DC: dc.Name, Racks: operation.RackNames(dc.Racks), Nodes: 0, From: fromOf(states), RackNodes: zeroes(dc.Racks)}
	plan.CP.Nodes = sv.nodes
	plan.CP.Ext = ext{CQLSecret: req.Options.CQLSecret, Readers: sv.readers, Keyspaces: sv.now().keyspaceNames()}.encode()
	plan.CP.Steps = list
	plan.Findings = append(plan.Findings, fmt.Sprintf("ring read from %s (datacenter %s)", sv.reader.Name, readerDC(sv.ring, sv.reader.Status.PodIP)))
	if sv.authLast {
		plan.Findings = append(plan.Findings, fmt.Sprintf("Cassandra 5.0: system_auth must replicate to every datacenter that has nodes, so it keeps %s while its nodes leave and loses it once none is left in the ring; a decommission runs with --force only when the replication check would refuse it for system_auth alone (no other keyspace replicates to %s then, and the other datacenters hold system_auth in full)", dc.Name, dc.Name))
	}
	if len(sv.judged.alter) > 0 {
		plan.Warnings = append(plan.Warnings, "the keyspaces' changes are not undone by abort: dropping a datacenter from a keyspace is kept once Cassandra agreed on it")
	}
	return plan
}

// planLeftovers plans for a datacenter the resource no longer lists: nothing to do
// when the operator removed everything of it, else the wait until it has.
func (k Kind) planLeftovers(ctx context.Context, env *pub.Env, remover operator.DatacenterRemover) (*pub.Plan, error) {
	cl, req := env.Cluster, env.Request
	left, err := remover.DatacenterLeft(ctx, cl.Namespace, cl.Name, req.DC)
	if err != nil {
		return nil, fmt.Errorf("cannot read what is left of datacenter %s: %w", req.DC, err)
	}
	if len(left) == 0 {
		return nil, &pub.ErrNothingToDo{Msg: fmt.Sprintf("datacenter %s is not in %s %s and nothing of it is left: it is removed", req.DC, env.Adapter.Kind(), cl.Name)}
	}
	p := operation.PlannerOf(env)
	plan := &pub.Plan{Cluster: cl}
	plan.CP = p.NewCheckpoint(cl, k, "remove-dc", req)
	plan.CP.Target = record.Target{DC: req.DC, Nodes: 0}
	// The resource lists the datacenters that stay: its selector is this cluster's.
	m := dcread.Readers{Kube: p.Client, NS: cl.Namespace, Selector: env.Adapter.ClusterSelector(cl.Name), Exclude: func(*corev1.Pod) bool { return false }}
	readers, err := m.Pods(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range readers {
		names = append(names, r.Name)
	}
	plan.CP.Ext = ext{CQLSecret: pub.KindRequestOf[Options](req).Options.CQLSecret, Readers: names}.encode()
	plan.CP.Steps = []record.Step{record.PendingStep(StepWaitRemoved, "")}
	plan.Findings = append(plan.Findings, fmt.Sprintf("datacenter %s is out of %s %s; the operator still has %s", req.DC, env.Adapter.Kind(), cl.Name, strings.Join(left, ", ")))
	return plan, nil
}

// checkRing refuses unless another datacenter has nodes and every node of the others
// is UN; the removed datacenter's nodes must be UN too (each decommissions), or gone.
func checkRing(ring pubnodetool.Ring, dc, reader string) error {
	mine, otherNotUN := dcread.DCNodes(ring, dc)
	if len(mine) == len(ring.Nodes) {
		return exit.Refusedf("the ring read from %s has no node outside datacenter %s: removing it would remove the cluster; nothing changed", reader, dc)
	}
	if len(otherNotUN) > 0 {
		return exit.Refusedf("nodes of the datacenters that stay are not Up/Normal (%s): remove-dc needs them all UN (its decommissions stream nothing, but the keyspace changes and the ring reads need them); nothing changed", strings.Join(otherNotUN, ", "))
	}
	var notUN []string
	for _, n := range mine {
		if n.Code() != "UN" {
			notUN = append(notUN, n.Address+" ("+n.Code()+")")
		}
	}
	if len(notUN) > 0 {
		return exit.Refusedf("nodes of datacenter %s are not Up/Normal (%s): each must decommission; bring them back (or remove a dead one with kubectl cassandra nodetool … removenode HOSTID) and run remove-dc again; nothing changed", dc, strings.Join(notUN, ", "))
	}
	return nil
}

// refuseKeyspaces refuses a removal that would lose data, and one that needs
// keyspace changes the user did not ask the plugin to make (naming them). With
// authLast (5.0) system_auth cannot be changed by hand before the nodes left: only
// --alter-keyspaces removes the datacenter then.
func refuseKeyspaces(r replicas, dc string, alter, authLast bool) error {
	if len(r.blocking) > 0 {
		return exit.Refusedf("datacenter %s cannot be removed: %s; nothing changed", dc, strings.Join(r.blocking, "; "))
	}
	if authLast && !alter {
		rest := ""
		if others := r.without(systemAuth); len(others.alter) > 0 {
			rest = fmt.Sprintf(" Other keyspaces replicate to it too (%s); the plugin drops it from them first.", strings.Join(others.keyspaceNames(), ", "))
		}
		return exit.Refusedf("keyspace system_auth replicates to datacenter %s, and Cassandra 5.0 refuses to drop a datacenter from system_auth while it has nodes in the ring.%s Run remove-dc with --alter-keyspaces: system_auth keeps %s while its nodes leave (a decommission the replication check refuses for system_auth alone runs with --force: the other datacenters hold system_auth in full) and loses it once none is left in the ring; nothing changed", dc, rest, dc)
	}
	if len(r.alter) > 0 && !alter {
		return exit.Refusedf("keyspaces still replicate to datacenter %s (%s); drop it from each (cqlsh in a pod of another datacenter):\n%s\nthen run remove-dc again, or run it with --alter-keyspaces to have the plugin run them as planned steps; nothing changed",
			dc, strings.Join(r.keyspaceNames(), ", "), r.statements())
	}
	return nil
}

func readerDC(ring pubnodetool.Ring, ip string) string {
	if n, ok := ring.ByAddress(ip); ok {
		return n.DC
	}
	return "?"
}

func fromOf(states []operation.RackNow) map[string]int {
	out := map[string]int{}
	for _, st := range states {
		out[st.Rack.Name] = st.Cur
	}
	return out
}

func zeroes(racks []topology.Rack) map[string]int {
	out := map[string]int{}
	for _, r := range racks {
		out[r.Name] = 0
	}
	return out
}

// sortRemovals orders the nodes highest ordinal first across the racks, so that the
// racks stay within one node of each other as they empty.
func sortRemovals(nodes []record.Node) {
	sort.SliceStable(nodes, func(i, j int) bool {
		if nodes[i].Ordinal != nodes[j].Ordinal {
			return nodes[i].Ordinal > nodes[j].Ordinal
		}
		return nodes[i].Rack < nodes[j].Rack
	})
}
