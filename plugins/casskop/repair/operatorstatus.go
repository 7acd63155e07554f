package repair

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// StepOperatorStatus marks the operator's stuck pod operation done in the cluster
// resource's status: the repair's own step kind, as its checkpoints record it.
const StepOperatorStatus = "operator-status"

// operatorStatus records in the operator's status that its stuck pod operation on the
// node (a decommission) finished, once the real world shows it did: the pod is gone,
// the node is out of the ring and the pod's claims are deleted. The operator then
// continues (docs/how-it-works/casskop.md §4.3). Once recorded done it stays done: after
// the operator is restored its status is its own again, and a resume must not write it
// a second time.
type operatorStatus struct {
	w operation.World
	n record.Node
}

// newOperatorStatus is the step of record s, about a planned node.
func newOperatorStatus(w operation.World, s record.Step) (*operatorStatus, error) {
	n, ok := w.Checkpoint().Node(s.Pod)
	if !ok {
		return nil, fmt.Errorf("step %s names pod %s, which is not in the plan", s.ID, s.Pod)
	}
	return &operatorStatus{w: w, n: n}, nil
}

// Describe implements operation.Describer.
func (s *operatorStatus) Describe() string {
	return fmt.Sprintf("mark the decommission of %s done in the status of %s %s (rack %s-%s)", s.n.Pod, s.w.ResourceKind(), s.w.Checkpoint().Cluster, s.n.DC, s.n.Rack)
}

// PlanText implements operation.PlanTexter.
func (s *operatorStatus) PlanText() string {
	if st := s.w.OperatorStatus(); st != nil {
		return st.MarkText(s.n.DC, s.n.Rack, s.n.Pod)
	}
	return fmt.Sprintf("mark the decommission of %s done in the operator's status of rack %s-%s", s.n.Pod, s.n.DC, s.n.Rack)
}

// Done: recorded done, or the status already shows the operation finished.
func (s *operatorStatus) Done(ctx context.Context) (bool, error) {
	if rec, ok := s.w.Checkpoint().Step(record.StepID(StepOperatorStatus, s.n.Pod)); ok && rec.State == record.StateDone {
		return true, nil
	}
	st := s.w.OperatorStatus()
	if st == nil {
		return false, fmt.Errorf("no access to the operator's status")
	}
	return st.OperationDone(ctx, s.n.DC, s.n.Rack, s.n.Pod)
}

// Safe: the real world shows the operation finished (pod gone, node out of the ring,
// claims deleted), and the status still shows it unfinished on this pod (the operator
// did not move on meanwhile).
func (s *operatorStatus) Safe(ctx context.Context) error {
	st := s.w.OperatorStatus()
	if st == nil {
		return fmt.Errorf("no access to the operator's status")
	}
	p, err := s.w.Pod(ctx, s.n.Pod)
	if err != nil {
		return err
	}
	if p != nil {
		return fmt.Errorf("pod %s exists (UID %s): its decommission is not finished", s.n.Pod, p.UID)
	}
	if s.n.HostID == "" && s.n.Address == "" {
		return fmt.Errorf("the node of pod %s is unknown (no Host ID, no address): cannot confirm it left the ring", s.n.Pod)
	}
	r, reader, err := s.w.Ring(ctx)
	if err != nil {
		return fmt.Errorf("cannot confirm %s left the ring: %w", s.n.Pod, err)
	}
	if node, member := plannedRow(r, s.n); member {
		return fmt.Errorf("the node of pod %s (Host ID %s) is still in the ring read from %s, as %s", s.n.Pod, node.HostID, reader, node.Code())
	}
	left, err := s.w.ClaimsLeft(ctx, s.n)
	if err != nil {
		return err
	}
	for _, c := range left {
		if c.DeletionTimestamp == nil { // one being deleted is as good as gone
			return fmt.Errorf("PVC %s of pod %s still exists", c.Name, s.n.Pod)
		}
	}
	return st.StuckOn(ctx, s.n.DC, s.n.Rack, s.n.Pod)
}

// Do writes the status (with a resourceVersion precondition), detached from
// interruption as the plugin's own writes are (a write is never cut in half; the engine
// stops right after it) while bounded in time.
func (s *operatorStatus) Do(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := s.w.OperatorStatus().MarkOperationDone(ctx, s.n.DC, s.n.Rack, s.n.Pod)
	if apierrors.IsConflict(err) {
		return &operation.Retryable{Err: fmt.Errorf("the %s changed while writing its status: %w", s.w.ResourceKind(), err)}
	}
	if err != nil {
		return fmt.Errorf("cannot write the operator's status: %w", err)
	}
	return nil
}

// plannedRow is the planned node's row in the ring, if it is a member: by Host ID when
// the plan knows it, else by address.
func plannedRow(r nodetool.Ring, n record.Node) (nodetool.Node, bool) {
	if n.HostID != "" {
		return r.ByHostID(n.HostID)
	}
	return r.ByAddress(n.Address)
}
