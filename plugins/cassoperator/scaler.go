package cassoperator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// fromCounts is from (rack -> StatefulSet replicas) in dc's rack order, checked against
// total: every rack named, none unknown, total at least one node per rack.
func fromCounts(dc topology.DC, from map[string]int, total int) ([]int, int, error) {
	order := rackOrder(dc)
	cur := make([]int, len(order))
	sum := 0
	for i, r := range order {
		n, ok := from[r]
		if !ok {
			return nil, 0, fmt.Errorf("no replicas given for rack %s of datacenter %s", r, dc.Name)
		}
		cur[i], sum = n, sum+n
	}
	for r := range from {
		if _, ok := dc.Rack(r); !ok {
			return nil, 0, fmt.Errorf("datacenter %s has no rack %s (racks: %s)", dc.Name, r, strings.Join(order, ","))
		}
	}
	// CalculateRackInformation and CalculateRackInfoForDecomm
	// (pkg/reconciliation/reconcile_racks.go, decommission_node.go) refuse it.
	if total < len(order) || total < 1 {
		return nil, 0, fmt.Errorf("cass-operator needs at least one node per rack: datacenter %s has %d racks, size %d is too small", dc.Name, len(order), total)
	}
	return cur, sum, nil
}

// grows is the racks cass-operator's CheckRackScale raises at size s from cur: every rack
// whose StatefulSet has fewer replicas than SplitRacks(s) gives it goes straight to that
// count, in spec order, in one pass (pkg/reconciliation/reconcile_racks.go CheckRackScale).
func grows(cur []int, s int) []int {
	var out []int
	for i, t := range SplitRacks(s, len(cur)) {
		if cur[i] < t {
			out = append(out, i)
		}
	}
	return out
}

// Split implements operator.Scaler: SplitRacks over dc's racks in spec order.
func (a *Adapter) Split(dc topology.DC, size int) map[string]int {
	counts := SplitRacks(size, len(dc.Racks))
	out := make(map[string]int, len(dc.Racks))
	for i, r := range dc.Racks {
		out[r.Name] = counts[i]
	}
	return out
}

// Removals lists the pods cass-operator removes, in its order, when dc goes from the
// StatefulSet replicas from down to total, the size lowered one node at a time. At each
// size s (the Move's Size) it decommissions one node: with the replicas summing to
// s+1, the first rack in spec order whose replicas exceed SplitRacks(s) loses its
// highest ordinal (pkg/reconciliation/decommission_node.go DecommissionNodes,
// CalculateRackInfoForDecomm, stsLastPodSuffix). Replicas in a shape the operator
// would grow back first (a rack below its split at s: CheckRackScale runs before
// DecommissionNodes in ReconcileAllRacks) are refused: it would add nodes, not only
// remove them.
func (a *Adapter) Removals(dc topology.DC, from map[string]int, total int) ([]operator.Move, error) {
	return Removals(dc, from, total)
}

// Removals is Adapter.Removals, a pure function of the datacenter's racks.
func Removals(dc topology.DC, from map[string]int, total int) ([]operator.Move, error) {
	cur, sum, err := fromCounts(dc, from, total)
	if err != nil {
		return nil, err
	}
	if total > sum {
		return nil, fmt.Errorf("datacenter %s has %d nodes: size %d is not a scale-down", dc.Name, sum, total)
	}
	var moves []operator.Move
	for s := sum - 1; s >= total; s-- {
		if g := grows(cur, s); len(g) > 0 {
			r := dc.Racks[g[0]]
			return nil, fmt.Errorf("rack %s has %d nodes, fewer than the %d cass-operator gives it at size %d: it would grow the rack before removing nodes (replicas %s)",
				r.Name, cur[g[0]], SplitRacks(s, len(cur))[g[0]], s, splitText(rackOrder(dc), sliceMap(dc, cur)))
		}
		split := SplitRacks(s, len(cur))
		for i := range cur {
			if cur[i] > split[i] {
				r := dc.Racks[i]
				cur[i]--
				moves = append(moves, operator.Move{Rack: r.Name, Pod: topology.PodName(r.StatefulSet, cur[i]), Size: s})
				break
			}
		}
	}
	return moves, nil
}

// Additions lists the pods cass-operator creates, in its order, when dc goes from the
// StatefulSet replicas from up to total, the size raised one node at a time. At each size
// s every rack below SplitRacks(s) is raised to it, in spec order, its new pods taking the
// next ordinals (pkg/reconciliation/reconcile_racks.go CheckRackScale); from a split
// shape that is one node, in the first rack that had fewer. Replicas the operator would
// then decommission from (a rack above its split) are refused.
func (a *Adapter) Additions(dc topology.DC, from map[string]int, total int) ([]operator.Move, error) {
	return Additions(dc, from, total)
}

// Additions is Adapter.Additions, a pure function of the datacenter's racks.
func Additions(dc topology.DC, from map[string]int, total int) ([]operator.Move, error) {
	cur, sum, err := fromCounts(dc, from, total)
	if err != nil {
		return nil, err
	}
	if total < sum {
		return nil, fmt.Errorf("datacenter %s has %d nodes: size %d is not a scale-up", dc.Name, sum, total)
	}
	var moves []operator.Move
	for s := sum + 1; s <= total; s++ {
		split := SplitRacks(s, len(cur))
		for _, i := range grows(cur, s) {
			r := dc.Racks[i]
			for ; cur[i] < split[i]; cur[i]++ {
				moves = append(moves, operator.Move{Rack: r.Name, Pod: topology.PodName(r.StatefulSet, cur[i]), Size: s})
			}
		}
		for i := range cur {
			if cur[i] > split[i] {
				return nil, fmt.Errorf("rack %s has %d nodes, more than the %d cass-operator gives it at size %d: it would decommission nodes while scaling up (replicas %s)",
					dc.Racks[i].Name, cur[i], split[i], s, splitText(rackOrder(dc), sliceMap(dc, cur)))
			}
		}
	}
	return moves, nil
}

// sliceMap is counts in dc's rack order as a map by rack name.
func sliceMap(dc topology.DC, counts []int) map[string]int {
	return splitMap(rackOrder(dc), counts)
}

// RequestSize asks cass-operator to take the datacenter from size from to size to, with
// a JSON patch that tests spec.size first: someone else's change since fails the test
// and nothing is written (errors.Is operator.ErrSizeMoved). The validating webhook's
// refusal of a size change while the datacenter is still scaling is "not yet"
// (errors.Is operator.ErrNotYet).
func (a *Adapter) RequestSize(ctx context.Context, ns, name, dc string, from, to int) error {
	u, err := a.get(ctx, ns, name)
	if err != nil {
		return err
	}
	d, err := read(u)
	if err != nil {
		return err
	}
	if d.DCName() != dc {
		return fmt.Errorf("%s %s is datacenter %s, not %s", Kind, name, d.DCName(), dc)
	}
	if d.Spec.Size != from {
		return fmt.Errorf("%w: %s %s/%s asks for size %d, not %d; nothing written", operator.ErrSizeMoved, Kind, ns, name, d.Spec.Size, from)
	}
	if racks := len(d.RackNames()); to < racks || to < 1 {
		return fmt.Errorf("cass-operator needs at least one node per rack: datacenter %s has %d racks, size %d is too small", dc, racks, to)
	}
	c, err := a.client(ns)
	if err != nil {
		return err
	}
	body, _ := json.Marshal([]map[string]any{
		{"op": "test", "path": "/spec/size", "value": from},
		{"op": "replace", "path": "/spec/size", "value": to},
	})
	what := fmt.Sprintf("cannot change %s of %s/%s from %d to %d", CountField, ns, name, from, to)
	if _, err := c.Patch(ctx, name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		// The API server answers a failed test with a bare 422 (testFailed): the size
		// read back tells it from another refusal of the same code.
		if !testFailed(err) && apierrors.IsInvalid(err) {
			if u, rerr := a.get(ctx, ns, name); rerr == nil {
				if d, rerr := read(u); rerr == nil && d.Spec.Size != from {
					return fmt.Errorf("%s: %w: it is %d now (%w)", what, operator.ErrSizeMoved, d.Spec.Size, err)
				}
			}
		}
		return classify(err, what)
	}
	return nil
}

// WebhookScaling is what cass-operator's validating webhook says when it refuses a size
// change while condition ScalingUp or ScalingDown is True ("CassandraDatacenter write
// rejected, attempted to change size while datacenter is still scaling down";
// internal/webhooks/cassandra/v1beta1/cassandradatacenter_webhook.go
// ValidateDatacenterFieldChanges, attemptedTo).
const WebhookScaling = "change size while datacenter is still scaling"

// classify wraps a failed spec.size patch: a failed test operation is
// operator.ErrSizeMoved, the webhook's refusal while scaling is operator.ErrNotYet.
func classify(err error, what string) error {
	switch {
	case testFailed(err):
		return fmt.Errorf("%s: %w (%w)", what, operator.ErrSizeMoved, err)
	case strings.Contains(err.Error(), WebhookScaling):
		return fmt.Errorf("%s: %w: %w", what, operator.ErrNotYet, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// testFailed reports whether err says a JSON patch's test operation failed: client-go's
// fake tracker returns the json-patch error itself. The API server's answer says less:
// 422 Invalid with the generic "the server rejected our request due to an error in our
// request" and no cause (k8s.io/apiserver pkg/endpoints/handlers/patch.go applyJSPatch
// drops the json-patch error into NewGenericServerResponse, which keeps no cause), so
// a 422 is confirmed by reading the value back (RequestSize); a server that does say
// "test failed" is believed.
func testFailed(err error) bool {
	if errors.Is(err, jsonpatch.ErrTestFailed) {
		return true
	}
	if !apierrors.IsInvalid(err) {
		return false
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	s := st.Status()
	if strings.Contains(s.Message, "test failed") {
		return true
	}
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if strings.Contains(c.Message, "test failed") {
				return true
			}
		}
	}
	return false
}

// Progress reads cass-operator's own evidence about the datacenter and one of its pods
// ("" for none): spec.size and spec.stopped, status.cassandraOperatorProgress, the
// ScalingDown/ScalingUp/Valid conditions, status.nodeStatuses, and the pod's node-state
// label (a pod that is gone has none).
func (a *Adapter) Progress(ctx context.Context, ns, name, dc, pod string) (operator.Progress, error) {
	u, err := a.get(ctx, ns, name)
	if err != nil {
		return operator.Progress{}, err
	}
	d, err := read(u)
	if err != nil {
		return operator.Progress{}, err
	}
	if d.DCName() != dc {
		return operator.Progress{}, fmt.Errorf("%s %s is datacenter %s, not %s", Kind, name, d.DCName(), dc)
	}
	p := progressOf(d, pod)
	if pod == "" {
		return p, nil
	}
	po, err := a.Kube.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return operator.Progress{}, fmt.Errorf("cannot read pod %s/%s: %w", ns, pod, err)
	default:
		p.PodState = po.Labels[LabelNodeState]
		p.Leaving = p.PodState == StateDecommissioning
	}
	return p, nil
}

// progressOf is what the datacenter's spec and status say, pod aside from its
// nodeStatuses entry.
func progressOf(d datacenter, pod string) operator.Progress {
	p := operator.Progress{
		Size:        d.Spec.Size,
		ScalingDown: d.isTrue("ScalingDown"),
		ScalingUp:   d.isTrue("ScalingUp"),
		Ready:       d.Status.CassandraOperatorProgress == "Ready",
		Stopped:     d.Spec.Stopped,
	}
	if pod != "" {
		_, p.Tracked = d.Status.NodeStatuses[pod]
	}
	if c, ok := d.condition("Valid"); ok && c.Status == "False" {
		p.Blocked = "Valid=False " + conditionText(c)
	}
	return p
}
