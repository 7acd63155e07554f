package casskop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair/stuck"
)

// CassKop's status values and names (docs/how-it-works/casskop.md §1.3).
const (
	StatusToDo       = "ToDo"
	StatusOngoing    = "Ongoing"
	StatusFinalizing = "Finalizing"
	StatusDone       = "Done"

	OperationDecommission = "decommission"
	ActionScaleDown       = "ScaleDown"
)

// RackOperations reads, for every rack of the cluster's topology, CassKop's
// status.cassandraRackStatus["<dc>-<rack>"]: the last pod operation and the last action.
// Racks without a status entry are left out.
func RackOperations(u *unstructured.Unstructured, cl topology.Cluster) []stuck.RackOperation {
	racks, _, _ := unstructured.NestedMap(u.Object, "status", "cassandraRackStatus")
	var out []stuck.RackOperation
	for _, r := range cl.Racks() {
		rs, ok := racks[r.DC+"-"+r.Name].(map[string]any)
		if !ok {
			continue
		}
		ro := stuck.RackOperation{DC: r.DC, Rack: r.Name}
		if po, ok := rs["podLastOperation"].(map[string]any); ok {
			ro.Operation, _ = po["name"].(string)
			ro.Status, _ = po["status"].(string)
			ro.Pods = stringList(po["pods"])
			ro.PodsOK = stringList(po["podsOK"])
		}
		if la, ok := rs["cassandraLastAction"].(map[string]any); ok {
			ro.Action, _ = la["name"].(string)
			ro.ActionStatus, _ = la["status"].(string)
		}
		out = append(out, ro)
	}
	return out
}

func stringList(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// NodeStatus is what CassKop recorded about a pod's node in status.cassandraNodeStatus
// (it is not pruned when the pod goes, so it still names a removed pod's node).
func NodeStatus(u *unstructured.Unstructured, pod string) (hostID, ip string, ok bool) {
	m, found, _ := unstructured.NestedMap(u.Object, "status", "cassandraNodeStatus", pod)
	if !found {
		return "", "", false
	}
	hostID, _ = m["hostId"].(string)
	ip, _ = m["nodeIp"].(string)
	return hostID, ip, hostID != "" || ip != ""
}

// StatusSubresource asks discovery whether the served CassandraCluster version has a
// /status subresource: the 2026 CRD (CSC 2.3+) lists cassandraclusters/status, the 2022
// one (ORANGE 2.1) has none and keeps status in the main resource (docs/how-it-works/casskop.md §1.1).
func (a *Adapter) StatusSubresource(ctx context.Context) (bool, error) {
	if a.Discovery == nil {
		return false, fmt.Errorf("casskop adapter: no discovery client")
	}
	if _, err := a.Resolve(ctx); err != nil {
		return false, err
	}
	rl, err := a.Discovery.ServerResourcesForGroupVersion(Group + "/" + a.API.Get())
	if err != nil {
		return false, fmt.Errorf("cannot discover %s/%s: %w", Group, a.API.Get(), err)
	}
	for _, r := range rl.APIResources {
		if r.Name == Resource+"/status" {
			return true, nil
		}
	}
	return false, nil
}

// PatchStatus merges status into the CassandraCluster's status, only if the object is
// still at resourceVersion rv (a 409 Conflict otherwise). It writes through the /status
// subresource when the CRD has one (a main-resource write would be silently ignored
// there), else with a merge patch of the main resource that carries only status.
func (a *Adapter) PatchStatus(ctx context.Context, ns, name, rv string, status map[string]any) error {
	c, err := a.client(ns)
	if err != nil {
		return err
	}
	sub, err := a.StatusSubresource(ctx)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": rv}, "status": status})
	var subresources []string
	if sub {
		subresources = []string{"status"}
	}
	_, err = c.Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "kubectl-cassandra"}, subresources...)
	return err
}

// OperatorStatus reads and repairs CassKop's per-rack operation status of one cluster
// (steps.OperatorState).
type OperatorStatus struct {
	A        *Adapter
	NS, Name string
	Now      func() time.Time
}

// RackOperation reads the rack's podLastOperation and cassandraLastAction.
func (s OperatorStatus) RackOperation(ctx context.Context, dc, rack string) (stuck.RackOperation, error) {
	cl, u, err := s.A.Get(ctx, s.NS, s.Name)
	if err != nil {
		return stuck.RackOperation{}, err
	}
	for _, ro := range RackOperations(u, cl) {
		if ro.DC == dc && ro.Rack == rack {
			return ro, nil
		}
	}
	return stuck.RackOperation{DC: dc, Rack: rack}, nil
}

// MarkOperationDone records that the rack's pod operation on pod finished, as CassKop
// itself does when it completes a decommission (docs/how-it-works/casskop.md §3.3 deletePodPVC, §4.3):
// podLastOperation status Done, pods [], podsOK [pod], endTime; cassandraLastAction
// status Done, endTime; and the cluster's lastClusterActionStatus Done when it reports
// this rack's action and no other rack is busy. Everything else in status is left as is.
func (s OperatorStatus) MarkOperationDone(ctx context.Context, dc, rack, pod string) error {
	cl, u, err := s.A.Get(ctx, s.NS, s.Name)
	if err != nil {
		return err
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	end := now.UTC().Format(time.RFC3339)
	key := dc + "-" + rack
	status := map[string]any{
		"cassandraRackStatus": map[string]any{key: map[string]any{
			"podLastOperation":    map[string]any{"status": StatusDone, "pods": []string{}, "podsOK": []string{pod}, "endTime": end},
			"cassandraLastAction": map[string]any{"status": StatusDone, "endTime": end},
		}},
	}
	var action string
	others := false
	for _, ro := range RackOperations(u, cl) {
		if ro.Key() == key {
			action = ro.Action
			continue
		}
		if (ro.ActionStatus != "" && ro.ActionStatus != StatusDone) || (ro.Status != "" && ro.Status != StatusDone) {
			others = true
		}
	}
	if la, _, _ := unstructured.NestedString(u.Object, "status", "lastClusterAction"); la == action && !others {
		status["lastClusterActionStatus"] = StatusDone
	}
	return s.A.PatchStatus(ctx, s.NS, s.Name, u.GetResourceVersion(), status)
}

// MarkText says what MarkOperationDone writes, for a plan.
func (s OperatorStatus) MarkText(dc, rack, pod string) string {
	return fmt.Sprintf("set CassKop's status of rack %s-%s: podLastOperation Done (podsOK [%s]), cassandraLastAction Done", dc, rack, pod)
}

// OperationDone reports whether the rack's status shows the pod operation on pod
// finished (status Done, pod in podsOK) and the rack's last action done.
func (s OperatorStatus) OperationDone(ctx context.Context, dc, rack, pod string) (bool, error) {
	ro, err := s.RackOperation(ctx, dc, rack)
	if err != nil {
		return false, err
	}
	return operationDone(ro, pod), nil
}

func operationDone(ro stuck.RackOperation, pod string) bool {
	if ro.Status != StatusDone || (ro.ActionStatus != "" && ro.ActionStatus != StatusDone) {
		return false
	}
	for _, p := range ro.PodsOK {
		if p == pod {
			return true
		}
	}
	return false
}

// StuckOn returns nil while the rack's podLastOperation still names an unfinished
// operation on pod (or on no pod in particular), an error saying what it shows otherwise.
func (s OperatorStatus) StuckOn(ctx context.Context, dc, rack, pod string) error {
	ro, err := s.RackOperation(ctx, dc, rack)
	if err != nil {
		return err
	}
	if ro.Operation == "" || (len(ro.Pods) > 0 && !slices.Contains(ro.Pods, pod)) {
		return fmt.Errorf("the operator's status of rack %s changed since the plan (pod operation %q %s on %v): it is not stuck on %s any more; nothing written",
			ro.Key(), ro.Operation, ro.Status, ro.Pods, pod)
	}
	return nil
}
