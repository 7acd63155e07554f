package removedc

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/dcread"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// StepWaitLeft waits until the operator decommissioned one node of the datacenter and
// verifies it gone from a ring read in a datacenter that stays.
const StepWaitLeft = "wait-node-left"

// planDriven plans remove-dc where the operator removes a datacenter itself
// (operator.Scaler: cass-operator, on the deletion of its CassandraDatacenter annotated
// decommission-on-delete): the keyspaces as on CassKop, then the removal asked, then
// each node watched leaving in the ring of a datacenter that stays, then the resource,
// its StatefulSets and claims verified gone. The operator is never paused.
func (k Kind) planDriven(ctx context.Context, env *pub.Env) (*pub.Plan, error) {
	req := pub.KindRequestOf[Options](env.Request)
	p, cl := operation.PlannerOf(env), env.Cluster
	dc, _, err := cl.Select(req.DC, "")
	if err != nil {
		return nil, exit.Usagef("%v", err)
	}
	states, err := readRacks(ctx, p, cl.Namespace, dc.Racks)
	if err != nil {
		return nil, err
	}
	// The other datacenters are other resources: every pod of the operator in the
	// namespace is a candidate reader, and only a ring that lists this datacenter's
	// pods is this cluster's.
	m := dcread.Readers{Kube: p.Client, Nodetool: p.Nodetool, NS: cl.Namespace, Selector: env.Adapter.ClusterSelector(""),
		Exclude: dcread.Member(dc.Racks, nil), CQL: cql.Client{Exec: p.Exec, Auth: cql.SecretAuth(p.Client, cl.Namespace, req.Options.CQLSecret)}}
	sv, err := survey(ctx, env, m, listsAny(podIPs(states)), states, dc.Name, req.Options.AlterKeyspaces, surveyWords{
		ring: fmt.Sprintf("remove-dc needs one, healthy (%s decommissions a datacenter only while another one is in the ring)", env.Adapter.Title()),
		cql:  "give the CQL superuser's Secret with --cql-secret (cass-operator's is <clusterName>-superuser)"})
	if err != nil {
		return nil, err
	}
	if sv.authLast {
		return nil, refuseDrivenAuth(env, dc.Name, sv.judged)
	}
	plan := sv.plan(p, k, env, dc, states, drivenSteps(len(sv.judged.alter) > 0, sv.nodes))
	return plan, nil
}

// refuseDrivenAuth refuses a driven removal on 5.0 while system_auth replicates to dc:
// system_auth can lose dc only once its nodes left, and the operator removes them
// only after the deletion of the datacenter's resource, which carries the operation's
// record. The removal by hand is named: cass-operator decommissions with force
// (pkg/reconciliation/decommission_node.go: CallDecommissionNode(pod, true)), so
// Cassandra's replication check does not stop it.
func refuseDrivenAuth(env *pub.Env, dc string, r replicas) error {
	others := r.without(systemAuth)
	first := ""
	if len(others.alter) > 0 {
		first = "drop it from the other keyspaces (cqlsh in a pod of another datacenter):\n" + others.statements() + "\nthen "
	}
	var auth string
	for _, a := range r.alter {
		if a.Keyspace == systemAuth {
			auth = a.Statement
		}
	}
	return exit.Refusedf("keyspace system_auth replicates to datacenter %s, and Cassandra 5.0 refuses to drop a datacenter from system_auth while it has nodes in the ring; %s removes them only after the deletion of its %s, which carries this plugin's record of the operation, so remove-dc cannot drop it afterwards. Remove it by hand: %sannotate %s %s with cassandra.datastax.com/decommission-on-delete=\"true\" and delete it (the operator decommissions its nodes with force, system_auth's data is held in full by the other datacenters); once no node of %s is in the ring (kubectl cassandra nodetool … status), run:\n  %s;\nnothing changed",
		dc, env.Adapter.Title(), env.Adapter.Kind(), first, env.Adapter.Kind(), env.Cluster.Name, dc, auth)
}

// drivenSteps lists the steps of a removal the operator drives.
func drivenSteps(alter bool, nodes []record.Node) []record.Step {
	var list []record.Step
	if alter {
		list = append(list, checkpoint.PendingStep(StepAlterKeyspaces, ""))
	}
	list = append(list, checkpoint.PendingStep(StepWaitSchema, ""), checkpoint.PendingStep(StepRemoveDC, ""))
	list = append(list, checkpoint.NodeSteps(nodes, StepWaitLeft)...)
	return append(list, checkpoint.PendingStep(StepWaitRemoved, ""))
}

// podIPs lists the addresses of the racks' pods.
func podIPs(states []operation.RackNow) []string {
	var out []string
	for _, st := range states {
		for _, p := range st.Pods {
			if p.Status.PodIP != "" {
				out = append(out, p.Status.PodIP)
			}
		}
	}
	return out
}

// listsAny accepts a ring listing one of addrs (any ring when there are none: a
// datacenter without pods has nothing to tell its cluster by).
func listsAny(addrs []string) func(pubnodetool.Ring) bool {
	return func(r pubnodetool.Ring) bool {
		for _, a := range addrs {
			if _, ok := r.ByAddress(a); ok {
				return true
			}
		}
		return len(addrs) == 0
	}
}

// waitLeft waits until the operator decommissioned a node: gone from the ring read in
// a datacenter that stays, by Host ID and by address (an unreadable ring is unknown).
type waitLeft struct {
	*run
	n record.Node
}

func (s *waitLeft) Describe() string {
	return fmt.Sprintf("wait until the operator decommissions %s (Host ID %s) and verify it is gone from the ring of a datacenter that stays", s.n.Pod, s.n.HostID)
}

func (s *waitLeft) Passive() {}

// The deletion is asked before these waits: the operator may remove the resource, the
// checkpoint's carrier, at any time from then on (engine.CarrierDeleter), and the start
// of a wait is not written ahead (Evident: Done reads the world in full).
func (s *waitLeft) DeletesCarrier()            {}
func (s *waitLeft) Evident()                   {}
func (s *waitLeft) Safe(context.Context) error { return nil }
func (s *waitLeft) Do(context.Context) error   { return nil }

func (s *waitLeft) Done(ctx context.Context) (bool, error) {
	ring, _, err := s.m.Ring(ctx)
	if err != nil {
		return false, err
	}
	if _, in := ring.ByHostID(s.n.HostID); in {
		return false, nil
	}
	if _, in := ring.ByAddress(s.n.Address); in && s.n.Address != "" {
		return false, nil
	}
	return true, nil
}

// driven reports whether the operator removes the datacenter itself.
func (r *run) driven() bool { return r.w.Scaler != nil }
