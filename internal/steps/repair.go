package steps

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
)

// StepOperatorStatus marks the operator's stuck pod operation done in the cluster
// resource's status (repair-operator-state).
const StepOperatorStatus = "operator-status"

// operatorStatusStep records in the operator's status that its stuck pod operation on
// the node (a decommission) finished, once the real world shows it did: the pod is
// gone, the node is out of the ring and the pod's claims are deleted. The operator then
// continues (docs/reference/casskop.md §4.3). Once recorded done it stays done: after the operator is
// restored its status is its own again, and a resume must not write it a second time.
type operatorStatusStep struct{ node }

func (*operatorStatusStep) kind() string { return StepOperatorStatus }

// Describe implements engine.Describer.
func (s *operatorStatusStep) Describe() string {
	return fmt.Sprintf("mark the decommission of %s done in the status of %s %s (rack %s-%s)", s.n.Pod, s.w.resourceKind(), s.w.CP.Cluster, s.n.DC, s.n.Rack)
}

// PlanText implements PlanTexter.
func (s *operatorStatusStep) PlanText() string {
	if s.w.Operator != nil {
		return s.w.Operator.MarkText(s.n.DC, s.n.Rack, s.n.Pod)
	}
	return fmt.Sprintf("mark the decommission of %s done in the operator's status of rack %s-%s", s.n.Pod, s.n.DC, s.n.Rack)
}

// Done: recorded done, or the status already shows the operation finished.
func (s *operatorStatusStep) Done(ctx context.Context) (bool, error) {
	if s.w.recordDone(checkpoint.StepID(StepOperatorStatus, s.n.Pod)) {
		return true, nil
	}
	if s.w.Operator == nil {
		return false, fmt.Errorf("no access to the operator's status")
	}
	return s.w.Operator.OperationDone(ctx, s.n.DC, s.n.Rack, s.n.Pod)
}

// Safe: the real world shows the operation finished (pod gone, node out of the ring,
// claims deleted), and the status still shows it unfinished on this pod (the operator
// did not move on meanwhile).
func (s *operatorStatusStep) Safe(ctx context.Context) error {
	if s.w.Operator == nil {
		return fmt.Errorf("no access to the operator's status")
	}
	p, err := s.w.getPod(ctx, s.n.Pod)
	if err != nil {
		return err
	}
	if p != nil {
		return fmt.Errorf("pod %s exists (UID %s): its decommission is not finished", s.n.Pod, p.UID)
	}
	if s.n.HostID == "" && s.n.Address == "" {
		return fmt.Errorf("the node of pod %s is unknown (no Host ID, no address): cannot confirm it left the ring", s.n.Pod)
	}
	r, reader, err := s.w.ring(ctx)
	if err != nil {
		return fmt.Errorf("cannot confirm %s left the ring: %w", s.n.Pod, err)
	}
	if node, member := inRing(r, s.n); member {
		return fmt.Errorf("the node of pod %s (Host ID %s) is still in the ring read from %s, as %s", s.n.Pod, node.HostID, reader, node.Code())
	}
	left, err := (&deletePVCs{node: s.node}).remaining(ctx)
	if err != nil {
		return err
	}
	for _, c := range left {
		if c.DeletionTimestamp == nil { // one being deleted is as good as gone
			return fmt.Errorf("PVC %s of pod %s still exists", c.Name, s.n.Pod)
		}
	}
	return s.w.Operator.StuckOn(ctx, s.n.DC, s.n.Rack, s.n.Pod)
}

// Do writes the status (with a resourceVersion precondition).
func (s *operatorStatusStep) Do(ctx context.Context) error {
	ctx, cancel := writeContext(ctx)
	defer cancel()
	err := s.w.Operator.MarkOperationDone(ctx, s.n.DC, s.n.Rack, s.n.Pod)
	if apierrors.IsConflict(err) {
		return &engine.Retryable{Err: fmt.Errorf("the %s changed while writing its status: %w", s.w.resourceKind(), err)}
	}
	if err != nil {
		return fmt.Errorf("cannot write the operator's status: %w", err)
	}
	return nil
}

// repairDeletePVCs is deletePVCs for a repair: on top of its checks, no pod may mount
// the claims (a leftover claim found in the operator's status could have been picked
// up by something else).
type repairDeletePVCs struct{ *deletePVCs }

// Safe: deletePVCs' checks, and no pod uses the claims.
func (s *repairDeletePVCs) Safe(ctx context.Context) error {
	if err := s.deletePVCs.Safe(ctx); err != nil {
		return err
	}
	pods, err := s.w.Kube.CoreV1().Pods(s.w.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("cannot list pods to check the claims are unused: %w", err)
	}
	planned := map[string]bool{}
	for _, c := range s.n.PVCs {
		planned[c.Name] = true
	}
	var used []string
	for _, p := range pods.Items {
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && planned[v.PersistentVolumeClaim.ClaimName] {
				used = append(used, fmt.Sprintf("PVC %s is used by pod %s", v.PersistentVolumeClaim.ClaimName, p.Name))
			}
		}
	}
	if len(used) > 0 {
		return fmt.Errorf("%s", strings.Join(used, "; "))
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
