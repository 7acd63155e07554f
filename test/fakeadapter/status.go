package fakeadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// The phases of a rack's operation in status.operations.
const (
	PhaseRunning  = "Running"
	PhaseFinished = "Finished"
)

// Operation is one rack's entry in status.operations: the pod operation the operator
// runs there ("" pod: none in particular) and its phase.
type Operation struct {
	Datacenter string `json:"datacenter"`
	Rack       string `json:"rack"`
	Pod        string `json:"pod,omitempty"`
	Phase      string `json:"phase"`
	EndTime    string `json:"endTime,omitempty"`
}

// StatusSubresource: the FakeCassandra keeps its status in the main resource.
func (a *Adapter) StatusSubresource(context.Context) (bool, error) { return false, nil }

// OperatorStatus reads and repairs the per-rack operations of one cluster.
func (a *Adapter) OperatorStatus(ns, name string, now func() time.Time) operator.OperatorState {
	return Status{A: a, NS: ns, Name: name, Now: now}
}

// Status reads and repairs status.operations of one FakeCassandra (operator.OperatorState).
type Status struct {
	A        *Adapter
	NS, Name string
	Now      func() time.Time
}

// operation reads the rack's entry and its index (-1 when the rack has none), with the
// object read.
func (s Status) operation(ctx context.Context, dc, rack string) (Operation, int, *unstructured.Unstructured, error) {
	_, u, err := s.A.Get(ctx, s.NS, s.Name)
	if err != nil {
		return Operation{}, -1, nil, err
	}
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "operations")
	b, _ := json.Marshal(raw)
	var ops []Operation
	if err := json.Unmarshal(b, &ops); err != nil {
		return Operation{}, -1, nil, fmt.Errorf("cannot read the status of %s/%s: %w", s.NS, s.Name, err)
	}
	for i, op := range ops {
		if op.Datacenter == dc && op.Rack == rack {
			return op, i, u, nil
		}
	}
	return Operation{Datacenter: dc, Rack: rack}, -1, u, nil
}

// OperationDone reports whether the rack's operation on pod is Finished.
func (s Status) OperationDone(ctx context.Context, dc, rack, pod string) (bool, error) {
	op, _, _, err := s.operation(ctx, dc, rack)
	if err != nil {
		return false, err
	}
	return op.Phase == PhaseFinished && op.Pod == pod, nil
}

// StuckOn returns nil while the rack's operation is unfinished on pod (or on no pod in
// particular), an error saying what the status shows otherwise.
func (s Status) StuckOn(ctx context.Context, dc, rack, pod string) error {
	op, i, _, err := s.operation(ctx, dc, rack)
	if err != nil {
		return err
	}
	if i < 0 || op.Phase == PhaseFinished || (op.Pod != "" && op.Pod != pod) {
		return fmt.Errorf("the %s's status of rack %s/%s changed since the plan (operation on %q %s): it is not stuck on %s any more; nothing written",
			Title, dc, rack, op.Pod, op.Phase, pod)
	}
	return nil
}

// MarkOperationDone sets the rack's operation Finished on pod, with one JSON patch that
// tests the resourceVersion read and the entry's rack first.
func (s Status) MarkOperationDone(ctx context.Context, dc, rack, pod string) error {
	_, i, u, err := s.operation(ctx, dc, rack)
	if err != nil {
		return err
	}
	if i < 0 {
		return fmt.Errorf("the %s's status has no operation on rack %s/%s", Title, dc, rack)
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	p := fmt.Sprintf("/status/operations/%d", i)
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": u.GetResourceVersion()},
		{"op": "test", "path": p + "/datacenter", "value": dc},
		{"op": "test", "path": p + "/rack", "value": rack},
		{"op": "add", "path": p + "/pod", "value": pod},
		{"op": "add", "path": p + "/phase", "value": PhaseFinished},
		{"op": "add", "path": p + "/endTime", "value": now.UTC().Format(time.RFC3339)},
	}
	c, err := s.A.client(s.NS)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(ops)
	_, err = c.Patch(ctx, s.Name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
	return err
}

// MarkText says in a plan what MarkOperationDone writes.
func (s Status) MarkText(dc, rack, pod string) string {
	return fmt.Sprintf("set the %s's status of rack %s/%s: operation on %s %s", Title, dc, rack, pod, PhaseFinished)
}
