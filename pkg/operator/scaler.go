package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// ErrNotYet is matched (errors.Is) by Scaler.RequestSize's error when the operator
// refuses the change for now and will take it later (cass-operator's webhook refuses a
// size change while the datacenter is still scaling): "not yet", never "failed".
var ErrNotYet = errors.New("the operator takes no size change yet")

// ErrSizeMoved is matched (errors.Is) by Scaler.RequestSize's error when the resource
// no longer asks for the size the request was computed from (someone else changed it).
var ErrSizeMoved = errors.New("the datacenter's size is no longer the one read")

// Scaler is offered by an operator that scales its datacenters itself (cass-operator).
// Who acts is then the operator: the plugin never pauses it (a pod restarted while it
// is down stays down), never shrinks a StatefulSet nor deletes a claim as a step of its
// own (the operator regrows a StatefulSet shrunk by hand: cass-operator #744); it asks
// for one node at a time, the size a write that tests the current value, and verifies
// each step in the world. An adapter without Scaler is one the plugin acts for while
// the operator is paused (CassKop).
type Scaler interface {
	// Split is the count the operator gives each rack of dc at size (rack -> nodes).
	Split(dc topology.DC, size int) map[string]int
	// Removals lists the pods the operator removes, in the order it removes them, when
	// dc goes from the StatefulSet replicas from (rack -> replicas) down to total nodes,
	// one node at a time. Each Move's Size is the datacenter's size that asks for it.
	Removals(dc topology.DC, from map[string]int, total int) ([]Move, error)
	// Additions is Removals for a scale-up: the pods the operator creates, in its order.
	Additions(dc topology.DC, from map[string]int, total int) ([]Move, error)
	// RequestSize asks the operator to take dc from size from to size to: a write that
	// tests the current value (errors.Is ErrSizeMoved when it is not from; nothing is
	// written then), errors.Is ErrNotYet when the operator refuses it for now.
	RequestSize(ctx context.Context, ns, name, dc string, from, to int) error
	// Progress reads the operator's own evidence about dc and one of its pods ("" for
	// none): the resource's status and the pod's labels.
	Progress(ctx context.Context, ns, name, dc, pod string) (Progress, error)
}

// Move is one node the operator removes or adds: its rack and pod, and the datacenter's
// size that asks for it (the size after the move).
type Move struct {
	Rack string `json:"rack"`
	Pod  string `json:"pod"`
	Size int    `json:"size"`
}

// Progress is what the operator itself says about a datacenter and one of its pods.
type Progress struct {
	// Size is the datacenter's size the resource asks for now.
	Size int
	// Leaving: the pod carries the operator's "decommissioning" mark (cass-operator:
	// label node-state=Decommissioning). Tracked: the operator's status still lists the
	// pod (cass-operator: status.nodeStatuses[pod]).
	Leaving, Tracked bool
	// PodState is the operator's word for the pod's state ("Started", "Started-not-Ready",
	// …; "" when it has none or the pod is gone).
	PodState string
	// ScalingDown, ScalingUp: the operator's conditions say it is resizing.
	ScalingDown, ScalingUp bool
	// Ready: the operator reports the datacenter settled (cass-operator: progress Ready).
	Ready bool
	// Stopped: the datacenter is shut down on purpose (cass-operator: spec.stopped).
	Stopped bool
	// Blocked is why the operator says it cannot go on ("" when it does not), e.g.
	// "Valid=False notEnoughSpaceToScaleDown: …".
	Blocked string
}

// PodStates is offered by an operator that keeps its own state of each pod in a label
// (cass-operator: node-state); status shows it beside the node's.
type PodStates interface {
	PodState(labels map[string]string) string
}

// Related is offered by an operator that keeps objects of its own about a cluster
// (cass-operator: CassandraTasks): report includes them.
type Related interface {
	Related(ctx context.Context, ns, name string) (map[string][]unstructured.Unstructured, error)
}

// DCCounts is the DCSpec an adapter builds from its own read of the cluster resource and
// its own write of one datacenter's counts.
type DCCounts struct {
	// Resource names the cluster resource in errors, e.g. "CassandraCluster demo".
	Resource, DC string
	Read         func(ctx context.Context) (topology.Cluster, error)
	Write        func(ctx context.Context, racks map[string]int) error
}

// RackNodes reads the count the resource asks of each rack of the datacenter.
func (d DCCounts) RackNodes(ctx context.Context) (map[string]int, error) {
	cl, err := d.Read(ctx)
	if err != nil {
		return nil, err
	}
	dc, ok := cl.DC(d.DC)
	if !ok {
		return nil, fmt.Errorf("%s has no datacenter %s (it has %s)", d.Resource, d.DC, strings.Join(cl.DCNames(), ", "))
	}
	return dc.RackNodes(), nil
}

// SetRackNodes writes the counts of racks (the adapter refuses what its spec cannot hold).
func (d DCCounts) SetRackNodes(ctx context.Context, racks map[string]int) error {
	return d.Write(ctx, racks)
}

// Watches is offered by an operator whose evidence can be followed as it changes
// instead of read again after a poll interval: its resource (status, conditions) and
// its tasks. Each event is a change to read; what it means is read as before. A
// watch may start from the API server's watch cache (resourceVersion "0"): it misses no
// change after the state it starts from, and opens without waiting for that cache to
// catch up with etcd, which a watch from the latest state does (tens of ms after a write).
type Watches interface {
	// WatchResource watches the resource name of namespace ns.
	WatchResource(ctx context.Context, ns, name string) (watch.Interface, error)
	// WatchTasks watches the operator's tasks of namespace ns.
	WatchTasks(ctx context.Context, ns string) (watch.Interface, error)
}

// Settler is offered by an operator that says when it is done with a datacenter: an
// operation it carried out ends only once the operator itself agrees, so the next
// command does not meet it busy (cass-operator: progress Ready, no scaling condition,
// every pod labelled node-state Started).
type Settler interface {
	// Unsettled says what the operator still does with dc of the resource name ("" when
	// it is settled), reading the resource and, when the judgement needs them, the
	// datacenter's pods: kept, when not nil, is that list as a former call returned it
	// and as the caller knows it still is (their watch saw no change since), judged
	// instead of listing again. It returns the pod list it judged (nil: none read).
	Unsettled(ctx context.Context, ns, name, dc string, kept *corev1.PodList) (string, *corev1.PodList, error)
}
