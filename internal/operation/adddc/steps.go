package adddc

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/dcread"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// add-dc's own step kinds; the stream throughput's are the step library's.
const (
	// StepAddDC asks the operator for the datacenter (operator.DatacenterAdder).
	StepAddDC = "add-datacenter"
	// StepWaitDatacenterJoined waits until every planned node of the datacenter is
	// Ready and UN in the ring read from the source.
	StepWaitDatacenterJoined = "wait-datacenter-joined"
	// StepAddToKeyspaces gives the datacenter its replicas in the planned keyspaces
	// (ALTER KEYSPACE through cqlsh in a pod of the source).
	StepAddToKeyspaces = "add-to-keyspaces"
	// StepVerifyKeyspaces verifies the user gave the keyspaces their replicas in the
	// datacenter; until they did, the run stops there naming the statements.
	StepVerifyKeyspaces = "verify-keyspaces"
	// StepWaitSchema waits until every node agrees on the schema (as remove-dc's).
	StepWaitSchema = "wait-schema-agreement"
	// StepRebuild rebuilds one new node from the source and verifies it.
	StepRebuild = "rebuild"
)

// run is what add-dc's own steps share: the step library's World, the record, and the
// reads of the source datacenter.
type run struct {
	w     *steps.World
	e     ext
	dc    string
	m     dcread.Readers
	adder operator.DatacenterAdder
}

// BuildSteps implements operation.Kind.
func (Kind) BuildSteps(kw pub.World) (map[string]pub.Step, error) {
	w, e, err := dcread.Open(kw, extOf)
	if err != nil {
		return nil, err
	}
	r := &run{w: w, e: e, dc: w.CP.Target.DC, adder: w.Adder,
		m: dcread.Named(w, e.Readers, e.CQLSecret, func(*corev1.Pod) bool { return false })}
	return steps.BuildKind(w, steps.Variant{}, func(s record.Step) (pub.Step, error) {
		switch s.Kind {
		case StepAddDC, StepWaitDatacenterJoined:
			if r.adder == nil {
				return nil, fmt.Errorf("operation %s adds a datacenter, which this operator's adapter cannot do", w.CP.OperationID)
			}
			if s.Kind == StepAddDC {
				return &addDC{r}, nil
			}
			return &waitJoined{r}, nil
		case StepAddToKeyspaces:
			return &alterKeyspaces{r}, nil
		case StepVerifyKeyspaces:
			return &verifyKeyspaces{r}, nil
		case StepWaitSchema:
			return &waitSchema{r}, nil
		case StepRebuild:
			n, ok := w.CP.Node(s.Pod)
			if !ok {
				return nil, fmt.Errorf("step %s names pod %s, which is not in the plan", s.ID, s.Pod)
			}
			return newRebuild(r, s.ID, n), nil
		}
		return nil, nil
	})
}

// addDC asks the operator for the datacenter.
type addDC struct{ *run }

func (s *addDC) Describe() string {
	if len(s.e.Want.Manifest) > 0 {
		return fmt.Sprintf("create the %s of datacenter %s (marked with the operation); the operator creates its StatefulSets", s.w.ForKind().ResourceKind(), s.dc)
	}
	return fmt.Sprintf("add datacenter %s (%d racks) to the %s's topology; the operator creates its StatefulSets", s.dc, len(s.e.Racks), s.w.ForKind().ResourceKind())
}

func (s *addDC) Done(ctx context.Context) (bool, error) {
	return s.adder.AdditionRequested(ctx, s.w.CP.Namespace, s.w.CP.Cluster, s.e.Want)
}

// Safe: the source's nodes are all UN (a new datacenter's nodes join through them).
func (s *addDC) Safe(ctx context.Context) error {
	ring, reader, err := s.m.Ring(ctx)
	if err != nil {
		return err
	}
	return sourceUN(ring, s.e.Source, reader.Name)
}

func (s *addDC) Do(ctx context.Context) error {
	cp := s.w.CP
	return s.adder.AddDatacenter(ctx, cp.Namespace, cp.Cluster, cp.ClusterUID, cp.OperationID, s.e.Want)
}

// sourceUN is an error unless every node of the source datacenter is UN.
func sourceUN(ring pubnodetool.Ring, source, reader string) error {
	var notUN []string
	for _, n := range ring.Nodes {
		if n.DC == source && n.Code() != "UN" {
			notUN = append(notUN, n.Address+" ("+n.Code()+")")
		}
	}
	if len(notUN) > 0 {
		return fmt.Errorf("nodes of datacenter %s are not Up/Normal in the ring read from %s (%s): wait until they are, then resume", source, reader, strings.Join(notUN, ", "))
	}
	return nil
}

// waitJoined waits until every planned node of the datacenter is Ready and UN in the
// ring read from the source (they join owning no replicas: nothing streams).
type waitJoined struct{ *run }

func (s *waitJoined) Describe() string {
	return fmt.Sprintf("wait until the %d nodes of datacenter %s are Ready and Up/Normal in the ring read from %s", len(s.w.CP.Nodes), s.dc, s.e.Source)
}

func (s *waitJoined) Passive()                   {}
func (s *waitJoined) Safe(context.Context) error { return nil }
func (s *waitJoined) Do(context.Context) error   { return nil }

func (s *waitJoined) Done(ctx context.Context) (bool, error) {
	ring, _, err := s.m.Ring(ctx)
	if err != nil {
		return false, err
	}
	for _, n := range s.w.CP.Nodes {
		pod, err := s.w.Kube.CoreV1().Pods(s.w.CP.Namespace).Get(ctx, n.Pod, getOpts)
		if err != nil {
			return false, ignoreNotFound(err)
		}
		if !kube.PodReady(pod) || pod.Status.PodIP == "" {
			return false, nil
		}
		row, ok := ring.ByAddress(pod.Status.PodIP)
		if !ok || row.DC != s.dc || row.Code() != "UN" {
			return false, nil
		}
	}
	return true, nil
}

// alterKeyspaces gives the datacenter its replicas in every planned keyspace that has
// none there yet: each statement is made from the replication read right before it
// runs (a keyspace changed meanwhile keeps its other datacenters as they are now).
type alterKeyspaces struct{ *run }

func (s *alterKeyspaces) Describe() string {
	return fmt.Sprintf("give datacenter %s its replicas in %d keyspaces (ALTER KEYSPACE through cqlsh in a pod of %s)", s.dc, len(s.e.Wanted), s.e.Source)
}

func (s *alterKeyspaces) Done(ctx context.Context) (bool, error) {
	ks, _, err := s.m.KeyspacesNow(ctx)
	if err != nil {
		return false, err
	}
	return len(pending(ks, s.dc, s.e.Wanted)) == 0, nil
}

func (s *alterKeyspaces) Safe(context.Context) error { return nil }

func (s *alterKeyspaces) Do(ctx context.Context) error {
	ks, reader, err := s.m.KeyspacesNow(ctx)
	if err != nil {
		return &pub.Retryable{Err: err}
	}
	for _, a := range pending(ks, s.dc, s.e.Wanted) {
		if _, _, err := s.m.CQL.Run(ctx, reader.Name, reader.Status.PodIP, a.Statement); err != nil {
			return &pub.Retryable{Err: fmt.Errorf("keyspace %s: %w", a.Keyspace, err)}
		}
	}
	return nil
}

// verifyKeyspaces stops the run until the user gave the keyspaces their replicas in
// the datacenter (the replicas count is theirs to choose: any is taken).
type verifyKeyspaces struct{ *run }

func (s *verifyKeyspaces) Describe() string {
	return fmt.Sprintf("verify the %d keyspaces replicate to datacenter %s (the statements are yours to run: the run stops here until they did)", len(s.e.Wanted), s.dc)
}

func (s *verifyKeyspaces) Done(ctx context.Context) (bool, error) {
	ks, _, err := s.m.KeyspacesNow(ctx)
	if err != nil {
		return false, err
	}
	return len(pending(ks, s.dc, s.e.Wanted)) == 0, nil
}

func (s *verifyKeyspaces) Safe(context.Context) error { return nil }

// Do refuses, nothing done: the statements are named, the checkpoint kept for resume.
func (s *verifyKeyspaces) Do(ctx context.Context) error {
	ks, _, err := s.m.KeyspacesNow(ctx)
	if err != nil {
		return &pub.Retryable{Err: err}
	}
	p := pending(ks, s.dc, s.e.Wanted)
	if len(p) == 0 {
		return nil
	}
	cp := s.w.CP
	return &engine.NotStarted{Code: pub.ExitRefused, Err: fmt.Errorf("datacenter %s joined; these keyspaces do not replicate to it yet. Run (cqlsh in a pod of %s):\n%s\nthen continue: kubectl cassandra resume -n %s %s (or let the plugin run them: abort, then add-dc again with --alter-keyspaces)",
		s.dc, s.e.Source, statements(p), cp.Namespace, cp.Cluster)}
}

// waitSchema waits until every node agrees on the schema and verifies the keyspaces.
type waitSchema struct{ *run }

func (s *waitSchema) Describe() string {
	return fmt.Sprintf("wait until every node agrees on the schema (nodetool describecluster) and verify the keyspaces replicate to %s", s.dc)
}

func (s *waitSchema) Passive()                   {}
func (s *waitSchema) Safe(context.Context) error { return nil }
func (s *waitSchema) Do(context.Context) error   { return nil }

func (s *waitSchema) Done(ctx context.Context) (bool, error) {
	ks, reader, err := s.m.KeyspacesNow(ctx)
	if err != nil {
		return false, err
	}
	if p := pending(ks, s.dc, s.e.Wanted); len(p) > 0 {
		return false, &pub.Fatal{Code: pub.ExitRefused, Err: fmt.Errorf("keyspaces no longer replicate to datacenter %s (%s), after their change: someone changed them meanwhile; give them replicas there again, then resume", s.dc, p[0].Keyspace)}
	}
	return s.m.Agreed(ctx, reader.Name)
}
