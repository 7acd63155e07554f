package operation

import (
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// DrivenScale is what a scale asks of an operator that keeps one size per datacenter
// (operator.Scaler), both ways: the datacenter, the size and its split over the racks
// (DrivenTarget), and the racks the request selected.
type DrivenScale struct {
	DC       topology.DC
	Size     int
	Wanted   map[string]int
	Selected []topology.Rack
}

// NewDrivenScale reads the request against the cluster and the operator's split.
func NewDrivenScale(cl topology.Cluster, req operation.Request, sc operator.Scaler) (DrivenScale, error) {
	dc, size, wanted, err := DrivenTarget(cl, req, sc)
	if err != nil {
		return DrivenScale{}, err
	}
	_, selected, err := cl.Select(req.DC, req.Rack)
	if err != nil {
		return DrivenScale{}, exit.Usagef("%v", err)
	}
	return DrivenScale{DC: dc, Size: size, Wanted: wanted, Selected: selected}, nil
}

// NotSplit refuses a rack whose n nodes are not what the size gives it on the way to
// it: the operator has not split the racks as it does (it may still be resizing).
func (d DrivenScale) NotSplit(rack string, n int, cluster string) error {
	return exit.Refusedf("rack %s has %d nodes and size %d gives it %d (%s): the racks are not as the operator splits them (is it still resizing? kubectl cassandra status %s); nothing changed",
		rack, n, d.Size, d.Wanted[rack], topology.CountsText(d.Wanted), cluster)
}

// Target is the checkpoint's target of the scale from the racks' counts now (from).
func (d DrivenScale) Target(req operation.Request, from map[string]int) record.Target {
	return record.Target{DC: d.DC.Name, Racks: RackNames(d.Selected), Nodes: req.Nodes, From: from, RackNodes: d.Wanted, Size: d.Size}
}

// DrivenTarget is what a scale asks of an operator that keeps one size per datacenter
// and splits it over the racks itself (operator.Scaler): the size and its split.
// Without --rack, --nodes is the datacenter's size. With --rack R --nodes N it is the
// size whose split gives R N nodes and leaves every other rack as the resource asks
// now; when no size does, the request is refused naming the sizes that give R N nodes.
func DrivenTarget(cl topology.Cluster, req operation.Request, sc operator.Scaler) (topology.DC, int, map[string]int, error) {
	dc, _, err := cl.Select(req.DC, req.Rack)
	if err != nil {
		return dc, 0, nil, exit.Usagef("%v", err)
	}
	if req.Rack == "" {
		return dc, req.Nodes, sc.Split(dc, req.Nodes), nil
	}
	now := dc.RackNodes()
	var fits []int
	limit := (req.Nodes + 1) * len(dc.Racks)
	for size := 1; size <= limit; size++ {
		split := sc.Split(dc, size)
		if split[req.Rack] != req.Nodes {
			continue
		}
		fits = append(fits, size)
		others := maps.Clone(split)
		delete(others, req.Rack)
		same := true
		for r, n := range others {
			same = same && now[r] == n
		}
		if same {
			return dc, size, split, nil
		}
	}
	sizes := "none"
	if len(fits) > 0 {
		var s []string
		for _, f := range fits {
			s = append(s, fmt.Sprintf("%d (%s)", f, topology.CountsText(sc.Split(dc, f))))
		}
		sizes = strings.Join(s, ", ")
	}
	return dc, 0, nil, exit.Refusedf("the operator splits datacenter %s's size over its racks itself (%s today): no size gives rack %s %d nodes and leaves the other racks as they are. "+
		"Sizes that give rack %s %d nodes: %s. Scale the datacenter instead: kubectl cassandra scale %s --nodes SIZE; nothing changed",
		dc.Name, topology.CountsText(now), req.Rack, req.Nodes, req.Rack, req.Nodes, sizes, cl.Name)
}

// DrivenAccess lists what a scale on an operator that acts uses: the resource (its
// checkpoint and size), the pods (list, watch, nodetool), the StatefulSets and claims
// read only. No Deployment is patched, no StatefulSet resized, no claim deleted.
func DrivenAccess(ns string, cr schema.GroupResource, count string) []operation.Access {
	return []operation.Access{
		{Group: cr.Group, Resource: cr.Resource, Verb: "get", Namespace: ns, Why: "read the datacenter, its progress and the checkpoint"},
		{Group: cr.Group, Resource: cr.Resource, Verb: "patch", Namespace: ns, Why: "write the checkpoint annotation and " + count},
		{Resource: "pods", Verb: "list", Namespace: ns, Why: "find the racks' pods"},
		{Resource: "pods", Verb: "watch", Namespace: ns, Why: "wait until a pod is gone"},
		{Resource: "pods", Subresource: "exec", Verb: "create", Namespace: ns, Why: "run nodetool"},
		{Group: "apps", Resource: "statefulsets", Verb: "get", Namespace: ns, Why: "read the racks' StatefulSets"},
		{Resource: "persistentvolumeclaims", Verb: "get", Namespace: ns, Why: "read the removed or new pods' PVCs"},
		{Group: "apps", Resource: "deployments", Verb: "list", Why: "check the operator runs (it is the one that acts)"},
	}
}
