package cassoperator

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// Removing a datacenter from a cass-operator cluster is deleting its
// CassandraDatacenter (pkg/reconciliation/reconcile_datacenter.go ProcessDeletion,
// FACTS §9). Only with the decommission-on-delete annotation (and another datacenter
// in the ring) does the operator decommission the nodes first, one at a time as for a
// scale-down; without it, it scales every StatefulSet to 0 and the other datacenters
// keep the nodes as DN for good. So the plugin annotates, reads the annotation back on
// the object of the UID it planned with, and deletes exactly that version of it.

// DecommissionOnDeleteAnnotation makes cass-operator decommission a datacenter's nodes
// when its CassandraDatacenter is deleted (apis/cassandra/v1beta1/
// cassandradatacenter_types.go DecommissionOnDeleteAnnotation; the operator checks
// only that the key is present).
const DecommissionOnDeleteAnnotation = "cassandra.datastax.com/decommission-on-delete"

// RemoveDCMarkAnnotation names, on a CassandraDatacenter, the operation that armed its
// decommissioning deletion (its value is a RemoveDCMark), so that a later command can
// take the annotation back once that operation is gone and the delete never came.
const RemoveDCMarkAnnotation = "kubectl-cassandra.io/remove-dc"

// Finalizer is cass-operator's finalizer on a CassandraDatacenter: the resource stays,
// being deleted, until ProcessDeletion has removed what the datacenter had
// (apis/cassandra/v1beta1/cassandradatacenter_types.go Finalizer).
const Finalizer = "finalizer.cassandra.datastax.com"

// RemoveDCMark is the value of RemoveDCMarkAnnotation.
type RemoveDCMark struct {
	OperationID string `json:"operationID"`
	// Added: the operation added DecommissionOnDeleteAnnotation (the user had not), so
	// taking the mark back removes it too.
	Added bool `json:"added"`
}

var (
	_ operator.DatacenterRemover = (*Adapter)(nil)
	_ operator.DatacenterMarker  = (*Adapter)(nil)
)

// removeMarkOf is u's mark (ok false: none); a mark that does not parse is an error:
// whose it is is unknown.
func removeMarkOf(u *unstructured.Unstructured) (RemoveDCMark, bool, error) {
	v, ok := u.GetAnnotations()[RemoveDCMarkAnnotation]
	if !ok {
		return RemoveDCMark{}, false, nil
	}
	var m RemoveDCMark
	if err := json.Unmarshal([]byte(v), &m); err != nil || m.OperationID == "" {
		return m, false, fmt.Errorf("%s %s/%s: annotation %s is not a mark of an operation (%q)", Kind, u.GetNamespace(), u.GetName(), RemoveDCMarkAnnotation, v)
	}
	return m, true, nil
}

// removeStep is what RemoveDatacenter does next with the datacenter it read.
type removeStep int

const (
	removeDone    removeStep = iota // gone, or being deleted as asked
	removeMark                      // annotate it (and own the annotation)
	removeDelete                    // marked for op: delete it
	removeRefused                   // not to be touched: the error says why
)

// judgeRemove decides RemoveDatacenter's next step from the datacenter read (nil: gone).
func judgeRemove(u *unstructured.Unstructured, dc, uid, op string) (removeStep, error) {
	if u == nil {
		return removeDone, nil
	}
	ref := fmt.Sprintf("%s %s/%s", Kind, u.GetNamespace(), u.GetName())
	if string(u.GetUID()) != uid {
		return removeRefused, fmt.Errorf("%s was re-created since the plan read it (UID %s, not %s); nothing was touched: plan the removal again", ref, u.GetUID(), uid)
	}
	d, err := read(u)
	if err != nil {
		return removeRefused, err
	}
	if d.DCName() != dc {
		return removeRefused, fmt.Errorf("%s is datacenter %s, not %s; nothing was touched", ref, d.DCName(), dc)
	}
	_, decomm := u.GetAnnotations()[DecommissionOnDeleteAnnotation]
	if u.GetDeletionTimestamp() != nil {
		if !decomm {
			return removeRefused, fmt.Errorf("%s is being deleted (since %s) without annotation %s: cass-operator scales its StatefulSets to 0 without decommissioning the nodes, and the other datacenters keep them as DN; once it is gone, remove each of them with nodetool removenode from another datacenter",
				ref, u.GetDeletionTimestamp().UTC().Format("2006-01-02T15:04:05Z"), DecommissionOnDeleteAnnotation)
		}
		return removeDone, nil
	}
	m, marked, err := removeMarkOf(u)
	if err != nil {
		return removeRefused, err
	}
	switch {
	case marked && m.OperationID != op:
		return removeRefused, fmt.Errorf("%s is marked for removal by operation %s (annotation %s), not by %s; nothing was touched", ref, m.OperationID, RemoveDCMarkAnnotation, op)
	case marked && decomm:
		return removeDelete, nil
	}
	return removeMark, nil
}

// RemoveDatacenter implements operator.DatacenterRemover: it annotates the
// CassandraDatacenter name (of UID uid) with decommission-on-delete and op's mark (a
// merge patch that tests the resourceVersion read), reads it back to verify the
// annotation is on that object, then deletes it with UID and resourceVersion
// preconditions: what is deleted is the version verified. Gone, or being deleted with
// the annotation: done.
func (a *Adapter) RemoveDatacenter(ctx context.Context, ns, name, dc, uid, op string) error {
	c, err := a.client(ns)
	if err != nil {
		return err
	}
	ref := fmt.Sprintf("%s %s/%s", Kind, ns, name)
	// Each round reads, judges and makes one write, so every delete follows a read that
	// verified the annotation. A write refused because the object changed since its
	// read (the operator writes it too) is judged again from a new read.
	wrote := false
	var lastErr error
	for round := 0; round < removeRounds; round++ {
		u, err := a.getOrGone(ctx, ns, name)
		if err != nil {
			return err
		}
		step, err := judgeRemove(u, dc, uid, op)
		switch step {
		case removeDone:
			return nil
		case removeRefused:
			return err
		case removeMark:
			if wrote {
				return fmt.Errorf("%s: annotation %s was written but is not on the object read back (someone took it away); nothing was deleted: run the command again", ref, DecommissionOnDeleteAnnotation)
			}
			err := a.mark(ctx, u, op)
			if apierrors.IsConflict(err) {
				lastErr = err
				continue
			}
			if err != nil {
				return err
			}
			wrote = true
		case removeDelete:
			rv, id := u.GetResourceVersion(), types.UID(uid)
			err := c.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &id, ResourceVersion: &rv}})
			switch {
			case err == nil, apierrors.IsNotFound(err):
				return nil
			case apierrors.IsConflict(err):
				lastErr = fmt.Errorf("%s changed since its annotation %s was verified (resourceVersion %s); nothing was deleted: run the command again (%w)", ref, DecommissionOnDeleteAnnotation, rv, err)
				continue
			}
			return fmt.Errorf("cannot delete %s (annotated %s, not deleted): %w", ref, DecommissionOnDeleteAnnotation, err)
		}
	}
	return fmt.Errorf("%s kept changing between its read and the write (%d tries); nothing was deleted: run the command again: %w", ref, removeRounds, lastErr)
}

// removeRounds bounds RemoveDatacenter's read-judge-write rounds: a mark and a delete,
// and a few writes of the operator's in between.
const removeRounds = 5

// getOrGone reads the datacenter; nil when it is gone.
func (a *Adapter) getOrGone(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	u, err := a.get(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s %s/%s: %w", Kind, ns, name, err)
	}
	return u, nil
}

// mark writes decommission-on-delete and op's mark on u, testing its resourceVersion.
func (a *Adapter) mark(ctx context.Context, u *unstructured.Unstructured, op string) error {
	_, had := u.GetAnnotations()[DecommissionOnDeleteAnnotation]
	m, _ := json.Marshal(RemoveDCMark{OperationID: op, Added: !had})
	ann := map[string]any{RemoveDCMarkAnnotation: string(m)}
	if !had {
		ann[DecommissionOnDeleteAnnotation] = "true"
	}
	return a.patchAnnotations(ctx, u, ann, "annotate "+DecommissionOnDeleteAnnotation+" on")
}

// patchAnnotations merges ann into u's annotations (nil values remove), under u's
// resourceVersion.
func (a *Adapter) patchAnnotations(ctx context.Context, u *unstructured.Unstructured, ann map[string]any, what string) error {
	c, err := a.client(u.GetNamespace())
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": u.GetResourceVersion(), "annotations": ann}})
	_, err = c.Patch(ctx, u.GetName(), types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err):
		return fmt.Errorf("cannot %s %s %s/%s: it changed since read; nothing written: run the command again (%w)", what, Kind, u.GetNamespace(), u.GetName(), err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("cannot %s %s %s/%s: it is gone (%w)", what, Kind, u.GetNamespace(), u.GetName(), err)
	}
	return fmt.Errorf("cannot %s %s %s/%s: %w", what, Kind, u.GetNamespace(), u.GetName(), err)
}

// DatacenterLeft implements operator.DatacenterRemover: the CassandraDatacenter while it
// exists (with its deletion state), then the StatefulSets, pods and claims carrying
// the datacenter's label (GetDatacenterLabels: ProcessDeletion's and deletePVCs'
// selector; the label is the cleaned resource name, unique in a namespace, so the
// objects are found once the resource is gone too).
func (a *Adapter) DatacenterLeft(ctx context.Context, ns, name, dc string) ([]string, error) {
	var left []string
	u, err := a.getOrGone(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	if u != nil {
		d, err := read(u)
		if err != nil {
			return nil, err
		}
		if d.DCName() != dc {
			return nil, fmt.Errorf("%s %s/%s is datacenter %s, not %s", Kind, ns, name, d.DCName(), dc)
		}
		left = append(left, Kind+" "+name+" ("+deletionState(u)+")")
	}
	sel := labels.SelectorFromSet(labels.Set{LabelDatacenter: CleanLabelValue(name)}).String()
	opts := metav1.ListOptions{LabelSelector: sel}
	sl, err := a.Kube.AppsV1().StatefulSets(ns).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("cannot list the StatefulSets of datacenter %s: %w", dc, err)
	}
	for _, s := range sl.Items {
		n := int32(0)
		if s.Spec.Replicas != nil {
			n = *s.Spec.Replicas
		}
		left = append(left, fmt.Sprintf("StatefulSet %s (%d replicas)", s.Name, n))
	}
	pl, err := a.Kube.CoreV1().Pods(ns).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("cannot list the pods of datacenter %s: %w", dc, err)
	}
	for _, p := range pl.Items {
		if p.Labels[LabelManagedBy] != ManagedByValue || p.Labels[LabelRack] == "" {
			continue // not one of its Cassandra pods
		}
		left = append(left, "pod "+p.Name+podState(p.Labels[LabelNodeState], p.DeletionTimestamp != nil))
	}
	cl, err := a.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("cannot list the claims of datacenter %s: %w", dc, err)
	}
	for _, c := range cl.Items {
		w := "PersistentVolumeClaim " + c.Name
		if c.DeletionTimestamp != nil {
			w += " (being deleted)"
		}
		left = append(left, w)
	}
	return left, nil
}

// deletionState says in words where the datacenter's deletion stands.
func deletionState(u *unstructured.Unstructured) string {
	fin := u.GetFinalizers()
	hasFin := false
	for _, f := range fin {
		if f == Finalizer {
			hasFin = true
		}
	}
	_, decomm := u.GetAnnotations()[DecommissionOnDeleteAnnotation]
	var parts []string
	if ts := u.GetDeletionTimestamp(); ts != nil {
		parts = append(parts, "being deleted since "+ts.UTC().Format("2006-01-02T15:04:05Z"))
		if hasFin {
			parts = append(parts, "cass-operator's finalizer pending")
		}
		if d, err := read(u); err == nil && d.isTrue("Decommission") {
			parts = append(parts, "condition Decommission True")
		}
		if d, err := read(u); err == nil && d.isTrue("ScalingDown") {
			parts = append(parts, "condition ScalingDown True")
		}
		if others := len(fin) - btoi(hasFin); others > 0 {
			parts = append(parts, fmt.Sprintf("%d other finalizer(s): %s", others, strings.Join(fin, ",")))
		}
	} else {
		parts = append(parts, "not being deleted")
	}
	if decomm {
		parts = append(parts, "annotated "+DecommissionOnDeleteAnnotation)
	} else {
		parts = append(parts, "without "+DecommissionOnDeleteAnnotation)
	}
	return strings.Join(parts, ", ")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// podState is ", node-state X" and ", being deleted" as they apply.
func podState(state string, deleting bool) string {
	var parts []string
	if state != "" {
		parts = append(parts, "node-state "+state)
	}
	if deleting {
		parts = append(parts, "being deleted")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// DatacenterMarks implements operator.DatacenterMarker: every CassandraDatacenter of ns
// carrying RemoveDCMarkAnnotation. A mark that does not parse is an error (whose it is,
// and so whether it may be taken back, is unknown).
func (a *Adapter) DatacenterMarks(ctx context.Context, ns string) ([]operator.DatacenterMark, error) {
	l, err := operator.ListResources(ctx, a.client, ns)
	if err != nil {
		return nil, a.rediscover(ctx, err)
	}
	a.API.Served()
	var out []operator.DatacenterMark
	for i := range l.Items {
		u := &l.Items[i]
		m, ok, err := removeMarkOf(u)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, operator.DatacenterMark{Name: u.GetName(), UID: string(u.GetUID()), Op: m.OperationID, Deleting: u.GetDeletionTimestamp() != nil})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Unmark implements operator.DatacenterMarker: op's mark, and decommission-on-delete
// when op added it, are removed from the CassandraDatacenter name of UID uid, under the
// resourceVersion read. Gone, re-created, or marked by no or another operation:
// nothing of op's to take back. Being deleted: the deletion is under way and the
// annotation is what makes it decommission; it stays (an error says so).
func (a *Adapter) Unmark(ctx context.Context, ns, name, op, uid string) error {
	u, err := a.getOrGone(ctx, ns, name)
	if err != nil || u == nil || string(u.GetUID()) != uid {
		return err
	}
	m, ok, err := removeMarkOf(u)
	if err != nil {
		return err
	}
	if !ok || m.OperationID != op {
		return nil
	}
	if u.GetDeletionTimestamp() != nil {
		return fmt.Errorf("%s %s/%s is being deleted already: its annotation %s is what makes cass-operator decommission its nodes, so operation %s's mark stays; let the deletion finish", Kind, ns, name, DecommissionOnDeleteAnnotation, op)
	}
	ann := map[string]any{RemoveDCMarkAnnotation: nil}
	if m.Added {
		ann[DecommissionOnDeleteAnnotation] = nil
	}
	return a.patchAnnotations(ctx, u, ann, "take back operation "+op+"'s mark from")
}

// RemovalRequested implements operator.DatacenterRemover: the CassandraDatacenter is
// being deleted (it carried decommission-on-delete: RemoveDatacenter deletes no other),
// or gone.
func (a *Adapter) RemovalRequested(ctx context.Context, ns, name, _ string) (bool, error) {
	u, err := a.getOrGone(ctx, ns, name)
	if err != nil {
		return false, err
	}
	return u == nil || u.GetDeletionTimestamp() != nil, nil
}
