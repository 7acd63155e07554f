package removedc

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/dcread"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// run is what remove-dc's own steps share: the step library's World, the datacenter
// removed, and the reads of the datacenters that stay.
type run struct {
	w  *steps.World
	dc string
	m  dcread.Readers
	// authLast: system_auth loses the datacenter only once its nodes left (5.0; the
	// plan has StepAlterAuth): until then it is expected to replicate to it.
	authLast bool
}

// judged is the keyspaces' judgement the steps before the nodes' removal act on:
// without system_auth when its change comes last.
func (r *run) judged(ks []cql.Keyspace) replicas {
	j := judgeKeyspaces(ks, r.dc)
	if r.authLast {
		return j.without(systemAuth)
	}
	return j
}

// forceNow reads, right before a decommission, whether it runs with --force: only
// when the replication check would refuse it for system_auth alone (forceNeeded).
func (r *run) forceNow(ctx context.Context) (bool, error) {
	ring, reader, err := r.m.Ring(ctx)
	if err != nil {
		return false, err
	}
	ks, err := r.m.Keyspaces(ctx, reader)
	if err != nil {
		return false, err
	}
	return forceNeeded(ks, ring, r.dc), nil
}

// keyspacesNow reads the replication of every keyspace from a pod that stays.
func (r *run) keyspacesNow(ctx context.Context) ([]cql.Keyspace, string, string, error) {
	ks, reader, err := r.m.KeyspacesNow(ctx)
	return ks, reader.Name, reader.Status.PodIP, err
}

// alterKeyspaces drops the datacenter from every keyspace that replicates to it, one
// statement each: each is made from the replication read right before it runs, so a
// keyspace someone changed meanwhile keeps its other datacenters as they are now, and
// one already changed (by an earlier attempt) is not asked again.
type alterKeyspaces struct{ *run }

func (s *alterKeyspaces) Describe() string {
	return fmt.Sprintf("drop datacenter %s from the replication of every keyspace that has it (ALTER KEYSPACE through cqlsh in a pod of another datacenter)", s.dc)
}

// Done: no keyspace replicates to the datacenter.
func (s *alterKeyspaces) Done(ctx context.Context) (bool, error) {
	ks, _, _, err := s.keyspacesNow(ctx)
	if err != nil {
		return false, err
	}
	return len(s.judged(ks).alter) == 0, nil
}

// Safe: every keyspace that has the datacenter keeps replicas elsewhere.
func (s *alterKeyspaces) Safe(ctx context.Context) error {
	ks, _, _, err := s.keyspacesNow(ctx)
	if err != nil {
		return err
	}
	if b := judgeKeyspaces(ks, s.dc).blocking; len(b) > 0 {
		return &pub.Fatal{Code: pub.ExitRefused, Err: fmt.Errorf("the keyspaces changed since the plan: %s; abort (kubectl cassandra abort) and plan again", strings.Join(b, "; "))}
	}
	return nil
}

func (s *alterKeyspaces) Do(ctx context.Context) error {
	ks, pod, host, err := s.keyspacesNow(ctx)
	if err != nil {
		return &pub.Retryable{Err: err}
	}
	for _, a := range s.judged(ks).alter {
		if _, _, err := s.m.CQL.Run(ctx, pod, host, a.Statement); err != nil {
			return &pub.Retryable{Err: fmt.Errorf("keyspace %s: %w", a.Keyspace, err)}
		}
	}
	return nil
}

// waitSchema waits until the nodes that stay agree on one schema version and verifies,
// from cqlsh again, that no keyspace replicates to the datacenter.
type waitSchema struct{ *run }

func (s *waitSchema) Describe() string {
	if s.authLast {
		return fmt.Sprintf("wait until every node agrees on the schema (nodetool describecluster) and verify no keyspace but system_auth replicates to %s", s.dc)
	}
	return fmt.Sprintf("wait until every node agrees on the schema (nodetool describecluster) and verify no keyspace replicates to %s", s.dc)
}

func (s *waitSchema) Passive()                   {}
func (s *waitSchema) Safe(context.Context) error { return nil }
func (s *waitSchema) Do(context.Context) error   { return nil }

func (s *waitSchema) Done(ctx context.Context) (bool, error) {
	ks, pod, _, err := s.keyspacesNow(ctx)
	if err != nil {
		return false, err
	}
	if judged := s.judged(ks); len(judged.alter)+len(judged.blocking) > 0 {
		return false, &pub.Fatal{Code: pub.ExitRefused, Err: fmt.Errorf("keyspaces replicate to datacenter %s again (%s), after their change: someone changed them meanwhile; run remove-dc again to plan their change (kubectl cassandra abort first)", s.dc, strings.Join(append(judged.keyspaceNames(), judged.blocking...), "; "))}
	}
	return s.m.Agreed(ctx, pod)
}

// alterAuth drops the datacenter from system_auth once no node of it is left in the
// ring (Cassandra 5.0 refuses it before), from the replication read right before.
type alterAuth struct{ *run }

func (s *alterAuth) Describe() string {
	return fmt.Sprintf("drop datacenter %s from the replication of system_auth, now that no node of it is left in the ring (Cassandra 5.0 refuses it before; ALTER KEYSPACE through cqlsh in a pod of another datacenter)", s.dc)
}

// Done: system_auth does not replicate to the datacenter.
func (s *alterAuth) Done(ctx context.Context) (bool, error) {
	ks, _, _, err := s.keyspacesNow(ctx)
	if err != nil {
		return false, err
	}
	k, ok := keyspaceOf(ks, systemAuth)
	return !ok || k.RF(s.dc) == 0, nil
}

// Safe: no node of the datacenter is left in the ring, and system_auth keeps
// replicas elsewhere.
func (s *alterAuth) Safe(ctx context.Context) error {
	ring, reader, err := s.m.Ring(ctx)
	if err != nil {
		return err
	}
	if mine, _ := dcread.DCNodes(ring, s.dc); len(mine) > 0 {
		return fmt.Errorf("the ring read from %s still lists %d node(s) of datacenter %s (first %s, %s): system_auth keeps it until none is left", reader.Name, len(mine), s.dc, mine[0].Address, mine[0].Code())
	}
	ks, err := s.m.Keyspaces(ctx, reader)
	if err != nil {
		return err
	}
	if k, ok := keyspaceOf(ks, systemAuth); ok && k.RF(s.dc) > 0 && (!k.NTS() || len(k.Without(s.dc)) == 0) {
		return &pub.Fatal{Code: pub.ExitRefused, Err: fmt.Errorf("keyspace system_auth changed since the plan: it no longer keeps replicas outside datacenter %s (%s %s); give it replicas in another datacenter (ALTER KEYSPACE, then nodetool repair there), then resume", s.dc, shortClass(k.Class), rfText(k.DCs))}
	}
	return nil
}

func (s *alterAuth) Do(ctx context.Context) error {
	ks, pod, host, err := s.keyspacesNow(ctx)
	if err != nil {
		return &pub.Retryable{Err: err}
	}
	for _, a := range judgeKeyspaces(ks, s.dc).alter {
		if a.Keyspace != systemAuth {
			continue
		}
		if _, _, err := s.m.CQL.Run(ctx, pod, host, a.Statement); err != nil {
			return &pub.Retryable{Err: fmt.Errorf("keyspace %s: %w", a.Keyspace, err)}
		}
	}
	return nil
}

// removeDC takes the datacenter out of the cluster resource, once no node of it is
// left in the ring and no keyspace replicates to it.
type removeDC struct{ *run }

func (s *removeDC) Describe() string {
	if s.driven() {
		return fmt.Sprintf("annotate %s %s to decommission on delete, verify the annotation, and delete it (the operator decommissions its nodes one at a time)", s.w.ForKind().ResourceKind(), s.w.CP.Cluster)
	}
	return fmt.Sprintf("take datacenter %s out of the %s (the operator, running, deletes what it kept of it)", s.dc, s.w.ForKind().ResourceKind())
}

func (s *removeDC) Done(ctx context.Context) (bool, error) {
	return s.w.Datacenters.RemovalRequested(ctx, s.w.CP.Namespace, s.w.CP.Cluster, s.dc)
}

// Safe: no keyspace replicates to the datacenter, and (the plugin decommissioned
// them) no node of it is left in the ring, or (the operator will) every node of the
// cluster is UN, so that each decommission it starts can finish.
func (s *removeDC) Safe(ctx context.Context) error {
	ring, reader, err := s.m.Ring(ctx)
	if err != nil {
		return err
	}
	if s.driven() {
		if err := checkRing(ring, s.dc, reader.Name); err != nil {
			return err
		}
	} else if mine, _ := dcread.DCNodes(ring, s.dc); len(mine) > 0 {
		return fmt.Errorf("the ring read from %s still lists %d node(s) of datacenter %s (first %s, %s)", reader.Name, len(mine), s.dc, mine[0].Address, mine[0].Code())
	}
	ks, err := s.m.Keyspaces(ctx, reader)
	if err != nil {
		return err
	}
	if judged := judgeKeyspaces(ks, s.dc); len(judged.alter)+len(judged.blocking) > 0 {
		return &pub.Fatal{Code: pub.ExitRefused, Err: fmt.Errorf("keyspaces replicate to datacenter %s again (%s): drop it from them, then resume", s.dc, strings.Join(append(judged.keyspaceNames(), judged.blocking...), "; "))}
	}
	return nil
}

func (s *removeDC) Do(ctx context.Context) error {
	cp := s.w.CP
	return s.w.Datacenters.RemoveDatacenter(ctx, cp.Namespace, cp.Cluster, s.dc, cp.ClusterUID, cp.OperationID)
}

// waitRemoved waits until the operator removed what it kept of the datacenter, and
// verifies the end in the world: no node of it in the ring of the datacenters that
// stay (UN, DN or leaving), no claim of a removed node.
type waitRemoved struct{ *run }

func (s *waitRemoved) Describe() string {
	if s.driven() {
		return fmt.Sprintf("wait until the operator removed %s %s, its StatefulSets and claims, and verify no node of datacenter %s is left in the ring", s.w.ForKind().ResourceKind(), s.w.CP.Cluster, s.dc)
	}
	return fmt.Sprintf("wait until the operator removed datacenter %s's StatefulSets and Services, and verify no node of it is left in the ring", s.dc)
}

func (s *waitRemoved) Passive() {}

// waitRemovedDriven is waitRemoved where the operator deletes the datacenter's resource,
// the checkpoint's carrier, on the deletion the plugin asked (engine.CarrierDeleter).
// Its start is not written ahead (Evident): the operator may have deleted the
// resource already, and Done reads the world in full.
type waitRemovedDriven struct{ waitRemoved }

func (waitRemovedDriven) DeletesCarrier() {}
func (waitRemovedDriven) Evident()        {}

func (s *waitRemoved) Safe(context.Context) error { return nil }
func (s *waitRemoved) Do(context.Context) error   { return nil }

func (s *waitRemoved) Done(ctx context.Context) (bool, error) {
	left, err := s.w.Datacenters.DatacenterLeft(ctx, s.w.CP.Namespace, s.w.CP.Cluster, s.dc)
	if err != nil || len(left) > 0 {
		return false, err
	}
	ring, reader, err := s.m.Ring(ctx)
	if err != nil {
		return false, err
	}
	if mine, _ := dcread.DCNodes(ring, s.dc); len(mine) > 0 {
		return false, &pub.Fatal{Code: pub.ExitRefused, Err: fmt.Errorf("the operator removed datacenter %s, but the ring read from %s still lists %s (%s): remove it with kubectl cassandra nodetool -n %s %s removenode %s, then resume",
			s.dc, reader.Name, mine[0].Address, mine[0].Code(), s.w.CP.Namespace, reader.Name, mine[0].HostID)}
	}
	for _, n := range s.w.CP.Nodes {
		claims, err := s.w.ForKind().ClaimsLeft(ctx, n)
		if err != nil || len(claims) > 0 {
			return false, err
		}
	}
	return true, nil
}
