package operation

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/topology"
)

// ErrScaleUp is what ScaleDown answers when the request grows a rack: plan it with
// ScaleUp instead.
type ErrScaleUp struct{ Msg string }

func (e *ErrScaleUp) Error() string { return e.Msg + ": that is a scale-up" }

// rackNow is a rack's StatefulSet and pods as the planner found them.
type rackNow struct {
	rack topology.Rack
	sts  *appsv1.StatefulSet
	pods map[int]corev1.Pod
	cur  int
}

// readRack reads a rack's StatefulSet and pods, and refuses unless every pod up to the
// replica count exists, Running and Ready, and none exists beyond it.
func (p *Planner) readRack(ctx context.Context, ns string, r topology.Rack, what string) (rackNow, error) {
	sts, err := p.Kube.AppsV1().StatefulSets(ns).Get(ctx, r.StatefulSet, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return rackNow{}, exit.Refusedf("StatefulSet %s of rack %s/%s does not exist in namespace %s", r.StatefulSet, r.DC, r.Name, ns)
	}
	if err != nil {
		return rackNow{}, fmt.Errorf("cannot read StatefulSet %s: %w", r.StatefulSet, err)
	}
	cur := 1
	if sts.Spec.Replicas != nil {
		cur = int(*sts.Spec.Replicas)
	}
	pods, err := p.rackPods(ctx, ns, r)
	if err != nil {
		return rackNow{}, err
	}
	for i := 0; i < cur; i++ {
		pod, ok := pods[i]
		if !ok {
			return rackNow{}, exit.Refusedf("pod %s-%d of StatefulSet %s does not exist; every pod must be Running and Ready before a %s; nothing changed", sts.Name, i, sts.Name, what)
		}
		if !steps.PodReady(&pod) || pod.DeletionTimestamp != nil {
			return rackNow{}, exit.Refusedf("pod %s is not Ready; every pod of rack %s must be Ready before a %s (check: kubectl describe pod -n %s %s); nothing changed", pod.Name, r.Name, what, ns, pod.Name)
		}
	}
	for i, pod := range pods {
		if i >= cur {
			return rackNow{}, exit.Refusedf("pod %s exists although StatefulSet %s has %d replicas (terminating?); wait until it is gone; nothing changed", pod.Name, sts.Name, cur)
		}
	}
	return rackNow{rack: r, sts: sts, pods: pods, cur: cur}, nil
}

// readRing reads `nodetool status` from the first of the states' pods that answers, and
// refuses unless every node of dc is Up/Normal.
func (p *Planner) readRing(ctx context.Context, cl topology.Cluster, dc topology.DC, states []rackNow, what string) (nodetool.Ring, string, error) {
	var r nodetool.Ring
	var reader string
	var errs []string
	for _, st := range states {
		for i := 0; i < st.cur && reader == ""; i++ {
			ring, err := p.Nodetool.Status(ctx, st.pods[i].Name)
			if err == nil && len(ring.Nodes) == 0 {
				err = nodetool.ErrEmpty
			}
			if err != nil {
				errs = append(errs, fmt.Sprintf("from %s: %v", st.pods[i].Name, err))
				continue
			}
			r, reader = ring, st.pods[i].Name
		}
	}
	if reader == "" {
		return r, "", exit.Refusedf("cannot read the ring (%s); a %s needs a readable ring, nothing changed", strings.Join(errs, "; "), what)
	}
	var bad []string
	for _, n := range r.Nodes {
		if n.DC == dc.Name && n.Code() != "UN" {
			bad = append(bad, fmt.Sprintf("%s (%s) is %s", n.Address, n.HostID, n.Code()))
		}
	}
	if len(bad) > 0 {
		return r, "", exit.Refusedf("not every node of datacenter %s is Up/Normal: %s; wait until they are (kubectl cassandra status %s), nothing changed", dc.Name, strings.Join(bad, ", "), cl.Name)
	}
	return r, reader, nil
}

// ScaleUp plans growing the selected racks to req.Nodes each, one node at a time,
// lowest new ordinal first, rack by rack: grow the StatefulSet by one, wait until the
// new node joined (pod Ready, node UN); then set the cluster resource's count; with
// req.Cleanup, `nodetool cleanup` on every pre-existing node of the datacenter, one at
// a time.
func (p *Planner) ScaleUp(ctx context.Context, cl topology.Cluster, req Request) (*Plan, error) {
	if req.Nodes < 1 {
		return nil, exit.Usagef("--nodes must be at least 1, got %d", req.Nodes)
	}
	dc, racks, err := cl.Select(req.DC, req.Rack)
	if err != nil {
		return nil, exit.Usagef("%v", err)
	}
	if req.Rack != "" && len(dc.Racks) > 1 {
		return nil, exit.Refusedf("datacenter %s has %d racks (%s) and CassKop keeps one node count for all racks of a datacenter (nodesPerRacks): "+
			"scaling only rack %s would leave the racks unequal, which the cluster resource cannot represent. "+
			"Scale the whole datacenter instead, rack by rack: kubectl cassandra scale %s --dc %s --nodes %d",
			dc.Name, len(dc.Racks), strings.Join(cl.RackNames(dc.Name), ", "), req.Rack, cl.Name, dc.Name, req.Nodes)
	}
	plan := &Plan{Cluster: cl, DC: dc, Racks: racks}
	from := map[string]int{}
	var states []rackNow
	grow := false
	for _, r := range racks {
		st, err := p.readRack(ctx, cl.Namespace, r, "scale-up")
		if err != nil {
			return nil, err
		}
		if st.cur > req.Nodes {
			return nil, exit.Refusedf("rack %s has %d nodes, more than --nodes %d, while another rack has fewer: scale one way at a time (first kubectl cassandra scale %s --rack %s --nodes %d); nothing changed",
				r.Name, st.cur, req.Nodes, cl.Name, r.Name, req.Nodes)
		}
		if st.cur < req.Nodes {
			grow = true
		}
		from[r.Name] = st.cur
		states = append(states, st)
	}
	if !grow {
		return nil, &ErrNothingToDo{Msg: fmt.Sprintf("every selected rack of datacenter %s already has %d nodes: nothing to do", dc.Name, req.Nodes)}
	}
	ring, _, err := p.readRing(ctx, cl, dc, states, "scale-up")
	if err != nil {
		return nil, err
	}
	var newNodes []checkpoint.Node
	for _, st := range states {
		for i := st.cur; i < req.Nodes; i++ {
			pod := fmt.Sprintf("%s-%d", st.sts.Name, i)
			if cl.IsSeed(pod) {
				return nil, exit.Refusedf("%s; nothing changed", steps.SeedRefusal(cl.Namespace, cl.Name, pod, ""))
			}
			for _, tpl := range st.sts.Spec.VolumeClaimTemplates {
				name := tpl.Name + "-" + pod
				_, err := p.Kube.CoreV1().PersistentVolumeClaims(cl.Namespace).Get(ctx, name, metav1.GetOptions{})
				if err == nil {
					return nil, exit.Refusedf("PVC %s already exists (left over from an earlier scale-down?): the new pod %s would start on its data, and a decommissioned node refuses to start. "+
						"Delete it first if nothing needs it (kubectl delete pvc -n %s %s; kubectl cassandra repair-operator-state %s finds the ones CassKop left); nothing changed",
						name, pod, cl.Namespace, name, cl.Name)
				}
				if !apierrors.IsNotFound(err) {
					return nil, fmt.Errorf("cannot read PVC %s: %w", name, err)
				}
			}
			newNodes = append(newNodes, checkpoint.Node{Pod: pod, Ordinal: i, DC: st.rack.DC, Rack: st.rack.Name, StatefulSet: st.sts.Name, New: true})
		}
	}
	var cleanup []checkpoint.Node
	if req.Cleanup {
		// Every node that was in the datacenter before: the new ones take ranges from
		// all of them, whatever their rack.
		for _, r := range dc.Racks {
			st, err := p.readRack(ctx, cl.Namespace, r, "scale-up with --cleanup")
			if err != nil {
				return nil, err
			}
			for i := 0; i < st.cur; i++ {
				pod := st.pods[i]
				n := checkpoint.Node{Pod: pod.Name, PodUID: string(pod.UID), Ordinal: i, DC: r.DC, Rack: r.Name, StatefulSet: st.sts.Name, Address: pod.Status.PodIP}
				if row, ok := ring.ByAddress(pod.Status.PodIP); ok {
					n.HostID = row.HostID
				}
				cleanup = append(cleanup, n)
			}
		}
	} else {
		plan.Warnings = append(plan.Warnings, "without --cleanup the existing nodes keep the data of the ranges the new nodes take over, until `nodetool cleanup` runs on each of them")
	}
	plan.CP = p.newCheckpoint(cl, checkpoint.KindScaleUp, "scale", req)
	plan.CP.Target = checkpoint.Target{DC: dc.Name, Racks: rackNames(racks), Nodes: req.Nodes, From: from}
	plan.CP.Nodes = append(append([]checkpoint.Node{}, cleanup...), newNodes...)
	plan.CP.Steps = checkpoint.ScaleUpSteps(newNodes, cleanup, req.Pause != nil)
	plan.Warnings = append(plan.Warnings, unmanagedWarnings(req.Pause)...)
	return plan, nil
}

// newCheckpoint fills what every checkpoint of kind has; the caller adds target, nodes
// and steps.
func (p *Planner) newCheckpoint(cl topology.Cluster, kind, idPrefix string, req Request) *checkpoint.Checkpoint {
	now := p.now()
	holder := p.Holder
	if holder.Host == "" {
		holder = Self()
	}
	return &checkpoint.Checkpoint{
		SchemaVersion:  checkpoint.SchemaFor(kind),
		OperationID:    fmt.Sprintf("%s-%s-%s", idPrefix, now.Format("20060102-150405"), rand.String(5)),
		Kind:           kind,
		Operator:       cl.Operator,
		Namespace:      cl.Namespace,
		Cluster:        cl.Name,
		ClusterUID:     cl.UID,
		StartedBy:      holder,
		Holder:         holder,
		StartedAt:      now,
		UpdatedAt:      now,
		Force:          req.Force,
		PausedOperator: req.Pause,
	}
}

func rackNames(racks []topology.Rack) []string {
	var names []string
	for _, r := range racks {
		names = append(names, r.Name)
	}
	return names
}

func unmanagedWarnings(pause *checkpoint.PausedOperator) []string {
	if pause == nil {
		return nil
	}
	var w []string
	for _, h := range pause.Joined {
		w = append(w, fmt.Sprintf("operator Deployment %s/%s is already paused by operation %s: this operation joins the pause, and the operator is restored (to %d replicas) only when the last of them ends", pause.Namespace, pause.Name, h, pause.Replicas))
	}
	for _, other := range pause.Unmanaged {
		w = append(w, fmt.Sprintf("CassandraCluster %s is also managed by %s/%s and stays unmanaged while it is paused", other, pause.Namespace, pause.Name))
	}
	if pause.UnmanagedUnknown != "" {
		w = append(w, fmt.Sprintf("the other CassandraClusters %s/%s manages stay unmanaged while it is paused too, but cannot be named: %s", pause.Namespace, pause.Name, pause.UnmanagedUnknown))
	}
	return w
}
