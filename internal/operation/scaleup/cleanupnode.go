package scaleup

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// cleanup runs `nodetool cleanup` on a node that was in the datacenter before the
// scale-up, dropping the ranges the new nodes took over. Whether it ran cannot be read
// from nodetool, so it is done only once the checkpoint records it done, which happens
// only after the exec returned success. A run that dies during the cleanup runs it
// again on that node on resume: harmless (it only drops data the node does not own).
// It holds the node and the World's capabilities it asks for (steps/capabilities.go).
type cleanup struct {
	n        record.Node
	records  steps.Records
	pods     steps.PodReader
	modes    steps.NodeModes
	ring     steps.RingGuard
	nodetool steps.Maintenance
	progress steps.Progress
}

// Describe implements engine.Describer.
func (s *cleanup) Describe() string { return "nodetool cleanup on " + s.n.Pod }

// PlanText implements operation.PlanTexter.
func (s *cleanup) PlanText() string {
	return "nodetool cleanup on " + s.n.Pod + " (a run interrupted during it cleans that node again on resume: harmless)"
}

// Done: recorded done in the checkpoint (nothing in the real world tells).
func (s *cleanup) Done(context.Context) (bool, error) {
	return s.records.RecordDone(record.StepID(StepCleanup, s.n.Pod)), nil
}

// Safe: right now the pod is Running and Ready, its node NORMAL, every node of the
// datacenter UN and none of the cluster leaving, joining or moving (a cleanup beside a
// joining node would drop ranges it is about to stream; steps.RingGuard). Another
// incarnation of the pod (restarted meanwhile) is the same node on the same data:
// cleaning it is right. While the world is not there yet the step waits.
func (s *cleanup) Safe(ctx context.Context) error {
	id := record.StepID(StepCleanup, s.n.Pod)
	return s.ring.WaitSafe(ctx, id, func() (string, error) {
		if what, err := s.pods.PodRunning(ctx, s.n, false); what != "" || err != nil {
			return what, err
		}
		if what, err := s.ring.RingSafeAt(ctx, id, s.n.DC, "", s.n.Pod); what != "" || err != nil {
			return what, err
		}
		mode, err := s.modes.Mode(ctx, s.n.Pod)
		if err != nil {
			return "cannot read the mode of node " + s.n.Pod + ": " + err.Error(), nil
		}
		if mode != pubnodetool.ModeNormal {
			return fmt.Sprintf("node %s is in mode %s; cleanup needs NORMAL", s.n.Pod, mode), nil
		}
		return "", nil
	})
}

// Recheck implements engine.Rechecker: the ring, read right before the cleanup.
func (s *cleanup) Recheck(ctx context.Context) error {
	return s.ring.RecheckRing(ctx, record.StepID(StepCleanup, s.n.Pod), s.n.DC, "", s.n.Pod)
}

// Do runs the cleanup and blocks until it returns, reporting its progress meanwhile.
func (s *cleanup) Do(ctx context.Context) error {
	return s.nodetool.RunMaintenance(ctx, StepCleanup, s.n, "cleanup", func(m steps.Maintainer) error {
		done := make(chan struct{})
		go s.progress.ReportWhile(ctx, done, record.StepID(StepCleanup, s.n.Pod), "nodetool cleanup running on "+s.n.Pod)
		defer close(done)
		return m.Cleanup(ctx, s.n.Pod)
	})
}

// Wait: the exec returned success, the cleanup is done.
func (s *cleanup) Wait(context.Context) error { return nil }
