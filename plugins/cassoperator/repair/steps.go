package repair

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
)

// The repair's own step kinds.
const (
	stepLabelLeaving   = "label-decommissioning"
	stepSetScalingDown = "set-scaling-down"
	stepDeleteOrphan   = "delete-orphan-pvc"
	stepRemoveEntry    = "remove-node-status"
	stepLabelStarted   = "label-started"
)

var ownSteps = []string{stepLabelLeaving, stepSetScalingDown, stepDeleteOrphan, stepRemoveEntry, stepLabelStarted}

// ownStep is the implementation of s if it is one of the repair's own kinds (nil
// otherwise: a core step).
func ownStep(w operation.World, s record.Step) (operation.Step, error) {
	var mk func(r repairStep) operation.Step
	switch s.Kind {
	case stepLabelLeaving:
		mk = func(r repairStep) operation.Step { return &labelLeaving{r} }
	case stepSetScalingDown:
		mk = func(r repairStep) operation.Step { return &setScalingDown{r} }
	case stepDeleteOrphan:
		mk = func(r repairStep) operation.Step { return &deleteOrphan{r} }
	case stepRemoveEntry:
		mk = func(r repairStep) operation.Step { return &removeEntry{r} }
	case stepLabelStarted:
		mk = func(r repairStep) operation.Step { return &labelStarted{r} }
	default:
		return nil, nil
	}
	n, ok := w.Checkpoint().Node(s.Pod)
	if !ok {
		return nil, fmt.Errorf("step %s names pod %s, which is not in the plan", s.ID, s.Pod)
	}
	a, ok := w.Scaler().(*cassoperator.Adapter)
	if !ok {
		return nil, errors.New("a cass-operator repair runs only through the cass-operator adapter")
	}
	return mk(repairStep{w: w, cp: w.Checkpoint(), a: a, n: n, id: s.ID}), nil
}

// repairStep is what every step of the repair holds.
type repairStep struct {
	w  operation.World
	cp *record.Checkpoint
	a  *cassoperator.Adapter
	n  record.Node
	id string
}

// Evident implements operation.Evident: each step's effect is on an API object.
func (repairStep) Evident() {}

func (r repairStep) ns() string { return r.cp.Namespace }

func (r repairStep) pod(ctx context.Context) (*corev1.Pod, error) {
	p, err := r.w.Kube().CoreV1().Pods(r.ns()).Get(ctx, r.n.Pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return p, err
}

func (r repairStep) dc(ctx context.Context) (*unstructured.Unstructured, error) {
	return r.a.Dynamic.Resource(r.a.GVR()).Namespace(r.ns()).Get(ctx, r.cp.Cluster, metav1.GetOptions{})
}

// ring is a fresh ring read from a Ready member other than the pod repaired; unreadable
// is an error (unknown is never "left").
func (r repairStep) ring(ctx context.Context) (nodetool.Ring, error) {
	ring, reader, failed, err := r.w.RingExcept(ctx, r.n.Pod)
	if err != nil {
		return ring, err
	}
	if reader == "" {
		return ring, fmt.Errorf("the ring cannot be read (%s): whether node %s left is unknown", strings.Join(failed, "; "), r.n.Pod)
	}
	return ring, nil
}

// target is the count the datacenter's size asks of the node's rack now.
func (r repairStep) target(ctx context.Context) (int, bool, error) {
	p, err := r.a.Progress(ctx, r.ns(), r.cp.Cluster, r.cp.Target.DC, "")
	if err != nil {
		return 0, false, err
	}
	split := r.a.Split(topology.DC{Name: r.cp.Target.DC, Racks: r.w.Racks()}, p.Size)
	return split[r.n.Rack], p.ScalingDown || p.ScalingUp, nil
}

// plannedPod is the planned pod, read now; a pod of another UID (or none) is refused.
func (r repairStep) plannedPod(ctx context.Context) (*corev1.Pod, error) {
	p, err := r.pod(ctx)
	if err != nil {
		return nil, &operation.Retryable{Err: err}
	}
	if p == nil || string(p.UID) != r.n.PodUID {
		return nil, r.refuse("pod %s is not the planned one (UID %s)", r.n.Pod, r.n.PodUID)
	}
	return p, nil
}

func (r repairStep) refuse(format string, args ...any) error {
	return &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf(format+"; nothing done by this step. See: kubectl cassandra status -n %s %s",
		append(args, r.ns(), r.cp.Cluster)...)}
}

// out checks, from a fresh ring, that the node is not a member (and, for a pod that
// still runs, that its node says DECOMMISSIONED).
func (r repairStep) out(ctx context.Context, running bool) error {
	ring, err := r.ring(ctx)
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	if member(ring, r.n.HostID, r.n.Address) {
		return r.refuse("node %s (Host ID %s) is in the ring again", r.n.Pod, orUnknown(r.n.HostID))
	}
	if r.n.HostID == "" {
		if left := ring.Unaccounted(r.cp.Target.DC, nil); len(left) > 0 {
			var live []string
			pods, err := r.w.Kube().CoreV1().Pods(r.ns()).List(ctx, metav1.ListOptions{LabelSelector: r.w.ClusterSelector()})
			if err != nil {
				return &operation.Retryable{Err: err}
			}
			for _, p := range pods.Items {
				live = append(live, p.Status.PodIP)
			}
			if un := ring.Unaccounted(r.cp.Target.DC, live); len(un) > 0 {
				return r.refuse("the ring lists %d node(s) of datacenter %s that no pod accounts for, and %s's Host ID is unknown: it may be one of them", len(un), r.cp.Target.DC, r.n.Pod)
			}
		}
	}
	if running {
		mode, err := r.w.Mode(ctx, r.n.Pod)
		if err != nil {
			return &operation.Retryable{Err: fmt.Errorf("cannot read the mode of node %s: %w", r.n.Pod, err)}
		}
		if mode != nodetool.ModeDecommissioned {
			return r.refuse("node %s is %s, not DECOMMISSIONED", r.n.Pod, mode)
		}
	}
	return nil
}

// removedFromRack checks no pod of the name runs and the StatefulSet no longer wants it.
func (r repairStep) removedFromRack(ctx context.Context) error {
	p, err := r.pod(ctx)
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	if p != nil {
		return r.refuse("pod %s exists (UID %s)", r.n.Pod, p.UID)
	}
	sts, err := r.w.Kube().AppsV1().StatefulSets(r.ns()).Get(ctx, r.n.StatefulSet, metav1.GetOptions{})
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	if sts.Spec.Replicas != nil && int(*sts.Spec.Replicas) > r.n.Ordinal {
		return r.refuse("StatefulSet %s has %d replicas: it wants pod %s back", r.n.StatefulSet, *sts.Spec.Replicas, r.n.Pod)
	}
	return nil
}

func jsonPatch(ops ...map[string]any) []byte {
	b, _ := json.Marshal(ops)
	return b
}

func op(o, path string, v any) map[string]any {
	m := map[string]any{"op": o, "path": path}
	if o != "remove" {
		m["value"] = v
	}
	return m
}

// labelPath is the JSON pointer of the node-state label.
var labelPath = "/metadata/labels/" + strings.ReplaceAll(cassoperator.LabelNodeState, "/", "~1")

// labelLeaving labels the pod of a node that left node-state=Decommissioning, the mark
// CheckDecommissioningNodes acts on (FACTS §8, state A).
type labelLeaving struct{ repairStep }

func (s *labelLeaving) Describe() string {
	return "label pod " + s.n.Pod + " " + cassoperator.StateDecommissioning
}

func (s *labelLeaving) PlanText() string {
	return fmt.Sprintf("label pod %s (UID %s) %s=%s, once its node is again confirmed out of the ring and DECOMMISSIONED", s.n.Pod, s.n.PodUID, cassoperator.LabelNodeState, cassoperator.StateDecommissioning)
}

// Done: the pod is gone, or labelled.
func (s *labelLeaving) Done(ctx context.Context) (bool, error) {
	p, err := s.pod(ctx)
	if err != nil || p == nil {
		return p == nil && err == nil, err
	}
	return string(p.UID) == s.n.PodUID && p.Labels[cassoperator.LabelNodeState] == cassoperator.StateDecommissioning, nil
}

// Safe: the planned pod, its node out of a fresh ring and DECOMMISSIONED, above what
// the size asks of its rack, the operator not resizing.
func (s *labelLeaving) Safe(ctx context.Context) error {
	if _, err := s.plannedPod(ctx); err != nil {
		return err
	}
	target, scaling, err := s.target(ctx)
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	if s.n.Ordinal < target || scaling {
		return s.refuse("the datacenter's size keeps pod %s now (rack %s: %d), or the operator is resizing", s.n.Pod, s.n.Rack, target)
	}
	return s.out(ctx, true)
}

func (s *labelLeaving) Do(ctx context.Context) error {
	_, err := s.w.Kube().CoreV1().Pods(s.ns()).Patch(ctx, s.n.Pod, types.JSONPatchType,
		jsonPatch(op("test", "/metadata/uid", s.n.PodUID), op("add", labelPath, cassoperator.StateDecommissioning)), metav1.PatchOptions{})
	return err
}

// setScalingDown sets the datacenter's ScalingDown condition True, with a JSON patch on
// /status that tests the condition's type at its index (FACTS §8 state A, step 2).
type setScalingDown struct{ repairStep }

func (s *setScalingDown) Describe() string { return "set condition ScalingDown True" }

func (s *setScalingDown) PlanText() string {
	return "set the CassandraDatacenter's condition ScalingDown to True (a JSON patch on /status testing the condition at its index): the operator then finishes removing " + s.n.Pod + " itself"
}

// Done: the condition is True, or the pod is gone (the operator finished and cleared it).
func (s *setScalingDown) Done(ctx context.Context) (bool, error) {
	p, err := s.pod(ctx)
	if err != nil {
		return false, err
	}
	if p == nil {
		return true, nil
	}
	pr, err := s.a.Progress(ctx, s.ns(), s.cp.Cluster, s.cp.Target.DC, "")
	return err == nil && pr.ScalingDown, err
}

// Safe: the pod is labelled, its node still out of the ring.
func (s *setScalingDown) Safe(ctx context.Context) error {
	p, err := s.pod(ctx)
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	if p != nil && p.Labels[cassoperator.LabelNodeState] != cassoperator.StateDecommissioning {
		return s.refuse("pod %s is not labelled %s any more", s.n.Pod, cassoperator.StateDecommissioning)
	}
	return s.out(ctx, false)
}

func (s *setScalingDown) Do(ctx context.Context) error {
	u, err := s.dc(ctx)
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	now := time.Now().UTC().Format(time.RFC3339)
	var patch []byte
	for i, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "ScalingDown" {
			base := fmt.Sprintf("/status/conditions/%d", i)
			patch = jsonPatch(op("test", base+"/type", "ScalingDown"), op("replace", base+"/status", "True"), op("replace", base+"/lastTransitionTime", now))
			break
		}
	}
	if patch == nil {
		cond := map[string]any{"type": "ScalingDown", "status": "True", "lastTransitionTime": now, "reason": "", "message": ""}
		if conds == nil {
			patch = jsonPatch(op("test", "/metadata/resourceVersion", u.GetResourceVersion()), op("add", "/status/conditions", []any{cond}))
		} else {
			patch = jsonPatch(op("test", "/metadata/resourceVersion", u.GetResourceVersion()), op("add", "/status/conditions/-", cond))
		}
	}
	_, err = s.a.Dynamic.Resource(s.a.GVR()).Namespace(s.ns()).Patch(ctx, s.cp.Cluster, types.JSONPatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsInvalid(err) || apierrors.IsConflict(err) {
		return &operation.Retryable{Err: err} // the status moved between the read and the patch
	}
	return err
}

// deleteOrphan deletes the left-over claim of a removed pod, with a UID precondition
// (FACTS §8 state C/D).
type deleteOrphan struct{ repairStep }

func (s *deleteOrphan) Describe() string { return "delete the left-over PVCs of " + s.n.Pod }

func (s *deleteOrphan) PlanText() string {
	var names []string
	for _, c := range s.n.PVCs {
		names = append(names, c.Name+" (UID "+c.UID+")")
	}
	return fmt.Sprintf("delete PVC %s, once no pod %s exists, its StatefulSet does not want it, and its node (Host ID %s) is again absent from the ring: only that removed node's data is discarded",
		strings.Join(names, ", "), s.n.Pod, orUnknown(s.n.HostID))
}

// Done: every planned claim is gone, replaced or being deleted.
func (s *deleteOrphan) Done(ctx context.Context) (bool, error) {
	for _, c := range s.n.PVCs {
		pvc, err := s.w.Kube().CoreV1().PersistentVolumeClaims(s.ns()).Get(ctx, c.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, err
		}
		if string(pvc.UID) == c.UID && pvc.DeletionTimestamp == nil {
			return false, nil
		}
	}
	return true, nil
}

func (s *deleteOrphan) Safe(ctx context.Context) error {
	if err := s.removedFromRack(ctx); err != nil {
		return err
	}
	return s.out(ctx, false)
}

func (s *deleteOrphan) Do(ctx context.Context) error {
	for _, c := range s.n.PVCs {
		uid := types.UID(c.UID)
		err := s.w.Kube().CoreV1().PersistentVolumeClaims(s.ns()).Delete(ctx, c.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// removeEntry removes a removed pod's status.nodeStatuses entry, with a JSON patch on
// /status that tests the entry (FACTS §8 state C/D).
type removeEntry struct{ repairStep }

func (s *removeEntry) Describe() string { return "remove the nodeStatuses entry of " + s.n.Pod }

func (s *removeEntry) PlanText() string {
	return fmt.Sprintf("remove status.nodeStatuses[%s] (a JSON patch on /status testing its Host ID %s), once the pod and its claims are gone and the node absent from the ring", s.n.Pod, orUnknown(s.n.HostID))
}

func (s *removeEntry) Done(ctx context.Context) (bool, error) {
	u, err := s.dc(ctx)
	if err != nil {
		return false, err
	}
	_, tracked := cassoperator.NodeStatuses(u)[s.n.Pod]
	return !tracked, nil
}

func (s *removeEntry) Safe(ctx context.Context) error {
	if err := s.removedFromRack(ctx); err != nil {
		return err
	}
	if done, err := (&deleteOrphan{s.repairStep}).Done(ctx); err != nil || !done {
		if err != nil {
			return &operation.Retryable{Err: err}
		}
		return s.refuse("a claim of %s is still there", s.n.Pod)
	}
	return s.out(ctx, false)
}

func (s *removeEntry) Do(ctx context.Context) error {
	u, err := s.dc(ctx)
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	e, tracked := cassoperator.NodeStatuses(u)[s.n.Pod]
	if !tracked {
		return nil
	}
	path := "/status/nodeStatuses/" + strings.ReplaceAll(strings.ReplaceAll(s.n.Pod, "~", "~0"), "/", "~1")
	test := op("test", path+"/hostID", e.HostID)
	if s.n.HostID != "" && e.HostID != s.n.HostID {
		return s.refuse("status.nodeStatuses[%s] names Host ID %s, planned %s: the operator re-used the name", s.n.Pod, e.HostID, s.n.HostID)
	}
	_, err = s.a.Dynamic.Resource(s.a.GVR()).Namespace(s.ns()).Patch(ctx, s.cp.Cluster, types.JSONPatchType, jsonPatch(test, op("remove", path, nil)), metav1.PatchOptions{}, "status")
	if apierrors.IsInvalid(err) || apierrors.IsConflict(err) {
		return &operation.Retryable{Err: err}
	}
	return err
}

// labelStarted puts a pod labelled Decommissioning whose node is UN back to Started.
type labelStarted struct{ repairStep }

func (s *labelStarted) Describe() string {
	return "label pod " + s.n.Pod + " " + cassoperator.StateStarted
}

func (s *labelStarted) PlanText() string {
	return fmt.Sprintf("label pod %s (UID %s) %s=%s, once its node is again UN in the ring and the size keeps it", s.n.Pod, s.n.PodUID, cassoperator.LabelNodeState, cassoperator.StateStarted)
}

func (s *labelStarted) Done(ctx context.Context) (bool, error) {
	p, err := s.pod(ctx)
	if err != nil || p == nil {
		return false, err
	}
	return p.Labels[cassoperator.LabelNodeState] != cassoperator.StateDecommissioning, nil
}

func (s *labelStarted) Safe(ctx context.Context) error {
	p, err := s.plannedPod(ctx)
	if err != nil {
		return err
	}
	target, scaling, err := s.target(ctx)
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	if s.n.Ordinal >= target || scaling {
		return s.refuse("the datacenter's size no longer keeps pod %s, or the operator is resizing", s.n.Pod)
	}
	ring, err := s.ring(ctx)
	if err != nil {
		return &operation.Retryable{Err: err}
	}
	if row, ok := ring.ByAddress(p.Status.PodIP); !ok || row.Code() != "UN" {
		return s.refuse("node %s is not UN in the ring", s.n.Pod)
	}
	return nil
}

func (s *labelStarted) Do(ctx context.Context) error {
	_, err := s.w.Kube().CoreV1().Pods(s.ns()).Patch(ctx, s.n.Pod, types.JSONPatchType,
		jsonPatch(op("test", "/metadata/uid", s.n.PodUID), op("test", labelPath, cassoperator.StateDecommissioning), op("replace", labelPath, cassoperator.StateStarted)), metav1.PatchOptions{})
	return err
}
