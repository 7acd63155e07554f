package scaledown

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/future"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	puboperation "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// readRacks reads the selected racks; from is nil when every rack is at nodes already.
// A rack smaller than nodes is a scale-up (*operation.ErrScaleUp).
func readRacks(ctx context.Context, p *operation.Planner, ns string, racks []topology.Rack, nodes int) (map[string]int, []operation.RackNow, error) {
	from := map[string]int{}
	allAtTarget := true
	var states []operation.RackNow
	for _, r := range racks {
		st, err := p.ReadRack(ctx, ns, r)
		if err != nil {
			return nil, nil, err
		}
		from[r.Name] = st.Cur
		if st.Cur < nodes {
			return nil, nil, &operation.ErrScaleUp{Msg: fmt.Sprintf("rack %s has %d nodes and --nodes %d is larger", r.Name, st.Cur, nodes)}
		}
		if st.Cur != nodes {
			allAtTarget = false
		}
		states = append(states, st)
	}
	if allAtTarget {
		return nil, states, nil
	}
	return from, states, nil
}

// early is the ring and keyspace reads started ahead from pod.
type early struct {
	p        *operation.Planner
	pod      string
	read     func() (pubnodetool.Ring, error)
	describe func() (nodetool.ClusterDescription, error)
}

// newEarly takes up pod's reads, started now unless Prefetch started them.
func newEarly(ctx context.Context, p *operation.Planner, pod string) *early {
	a := p.ReadAhead(ctx, pod)
	return &early{p: p, pod: pod, read: a.Ring, describe: a.Describe}
}

// describeFrom is the keyspaces' replication read from reader: the read started ahead
// when reader is its pod (a failed one is asked once more), else a new one.
func (e *early) describeFrom(ctx context.Context, reader string) func() (nodetool.ClusterDescription, error) {
	if reader != e.pod {
		return future.Start(func() (nodetool.ClusterDescription, error) { return e.p.Nodetool.DescribeCluster(ctx, reader) })
	}
	return func() (nodetool.ClusterDescription, error) {
		desc, err := e.describe()
		if err != nil {
			desc, err = e.p.Nodetool.DescribeCluster(ctx, reader)
		}
		return desc, err
	}
}

// ring refuses when the DC's ring is unreadable from reader or not all Up/Normal.
func (e *early) ring(ctx context.Context, reader string, cl topology.Cluster, dc topology.DC) (pubnodetool.Ring, error) {
	r, err := e.readRing(ctx, reader)
	if err != nil {
		return r, err
	}
	return r, operation.CheckUN(r, cl, dc)
}

// readRing refuses when the ring is unreadable from reader.
func (e *early) readRing(ctx context.Context, reader string) (pubnodetool.Ring, error) {
	var r pubnodetool.Ring
	err := errors.New("not read yet")
	if reader == e.pod {
		r, err = e.read()
	}
	if err != nil {
		r, err = e.p.Nodetool.Status(ctx, reader)
	}
	if err != nil {
		return r, exit.Refusedf("cannot read the ring from %s: %v; a scale-down needs a readable ring, nothing changed", reader, err)
	}
	e.p.NoteRingReader(reader)
	return r, nil
}

// preflight plans the leaving nodes and checks the cluster can lose them.
type preflight struct {
	p      *operation.Planner
	ns     string
	states []operation.RackNow
	nodes  int
	// racks, when set, is the count each rack keeps (an operator that splits a
	// datacenter's size over racks may keep different counts); else each keeps nodes.
	racks  map[string]int
	claims map[string]*corev1.PersistentVolumeClaim
	// reader is the pod the ring was read from.
	reader string
	// unready are the refusals deferUnready kept for leaving pods that are not Ready.
	unready map[string]error
	// left are the leaving nodes that already left the ring (judgeMember).
	left map[string]bool
	// unstarted are the leaving pods that never started (steps.NeverStarted, the ring
	// with no node on them): taken away without a decommission.
	unstarted map[string]bool
	// selector selects every pod of the cluster (the ring's nodes are matched to them).
	selector string
	// dead are the leaving nodes that are dead (judgeDead), removed with removenode.
	dead map[string]bool
	// container is the pods' Cassandra container (operator.Pods).
	container string
}

// keep is the count rack keeps.
func (f *preflight) keep(rack string) int {
	if n, ok := f.racks[rack]; ok {
		return n
	}
	return f.nodes
}

// listClaims adds the claims of the racks' StatefulSets, with one LIST each by the
// labels the StatefulSet controller puts on the claims it creates (its selector). Best
// effort: a claim the LIST missed (other labels, no permission to list) is read by name.
func (f *preflight) listClaims(ctx context.Context) {
	for _, st := range f.states {
		match := operation.ClaimLabels(st.STS)
		if match == nil {
			continue
		}
		listed, err := f.p.ClaimsLabelled(ctx, f.ns, match)
		if err != nil {
			continue
		}
		for name, c := range listed {
			f.claims[name] = c
		}
	}
}

// claim is a claim from the LIST, or read by name when the LIST did not have it
// (nil when it does not exist).
func (f *preflight) claim(ctx context.Context, name string) (*corev1.PersistentVolumeClaim, error) {
	if c, ok := f.claims[name]; ok {
		return c, nil
	}
	return f.p.Claim(ctx, f.ns, name)
}

// leaving plans the nodes to remove, highest ordinal first, rack by rack; one ring
// read gives every node's Host ID by address (no exec per leaving node). A node the
// ring does not list is planned only when it already left it (judgeMember).
func (f *preflight) leaving(ctx context.Context, ring pubnodetool.Ring) ([]record.Node, []string, error) {
	var nodes []record.Node
	var warnings []string
	if err := f.findUnstarted(ctx, ring); err != nil {
		return nil, nil, err
	}
	for _, st := range f.states {
		above := "" // the lowest planned pod of this rack whose node is a member
		for i := st.Cur - 1; i >= f.keep(st.Rack.Name); i-- {
			pod := st.Pods[i]
			if f.unstarted[pod.Name] {
				n, err := f.unstartedNode(ctx, st, i)
				if err != nil {
					return nil, nil, err
				}
				nodes = append(nodes, n)
				continue
			}
			hostID, err := f.hostID(ctx, ring, pod)
			if err != nil {
				if uerr := f.unready[pod.Name]; uerr != nil {
					return nil, nil, uerr
				}
				return nil, nil, err
			}
			n := record.Node{
				Pod: pod.Name, PodUID: string(pod.UID), Ordinal: i, DC: st.Rack.DC, Rack: st.Rack.Name,
				StatefulSet: st.STS.Name, HostID: hostID, Address: pod.Status.PodIP,
			}
			var claims []*corev1.PersistentVolumeClaim
			for _, tpl := range st.STS.Spec.VolumeClaimTemplates {
				name := tpl.Name + "-" + pod.Name
				pvc, err := f.claim(ctx, name)
				if err != nil {
					return nil, nil, err
				}
				if pvc == nil {
					warnings = append(warnings, fmt.Sprintf("PVC %s does not exist", name))
					continue
				}
				claims = append(claims, pvc)
				n.PVCs = append(n.PVCs, record.PVC{Name: name, UID: string(pvc.UID)})
			}
			if row, member := ring.ByHostID(hostID); member {
				// A down node's pod is seldom Ready: judgeDead says what to do with it.
				if err := f.unready[pod.Name]; err != nil && row.Status != "D" {
					return nil, nil, err
				}
				above = pod.Name
			} else if err := f.judgeMember(ctx, n, pod, claims, above); err != nil {
				return nil, nil, err
			}
			nodes = append(nodes, n)
		}
	}
	return nodes, warnings, nil
}

// findUnstarted finds, at the top of each rack, the leaving pods that never started
// (steps.NeverStarted: Pending, no container ever ran), from the highest ordinal down
// to the first that did start (a StatefulSet loses its highest pods first), and
// confirms from the ring that no node runs on them (steps.NoNodeOn: none at their
// address, none at an address no other pod of the cluster has). Unconfirmed, none is
// taken for never started: such a pod is refused as not Ready, as before.
func (f *preflight) findUnstarted(ctx context.Context, ring pubnodetool.Ring) error {
	f.unstarted = map[string]bool{}
	var mine []string
	for _, st := range f.states {
		for i := st.Cur - 1; i >= f.keep(st.Rack.Name); i-- {
			pod, ok := st.Pods[i]
			if !ok || !steps.NeverStarted(&pod) {
				break
			}
			mine = append(mine, pod.Name)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	pods, err := f.p.Kube().CoreV1().Pods(f.ns).List(ctx, metav1.ListOptions{LabelSelector: f.selector})
	if err != nil {
		return f.unreadyOr(mine[0], exit.Refusedf("cannot list the cluster's pods: %v; nothing changed", err))
	}
	if err := steps.NoNodeOn(ring, f.reader, pods.Items, mine); err != nil {
		return f.unreadyOr(mine[0], exit.Refusedf("%v; nothing changed", err))
	}
	for _, m := range mine {
		f.unstarted[m] = true
	}
	return nil
}

// unreadyOr is the refusal deferUnready kept for pod, else err.
func (f *preflight) unreadyOr(pod string, err error) error {
	if uerr := f.unready[pod]; uerr != nil {
		return fmt.Errorf("%w (%v)", uerr, err)
	}
	return err
}

// unstartedNode plans the never-started pod of ordinal i: no Host ID, no address, its
// claims as they are now.
func (f *preflight) unstartedNode(ctx context.Context, st operation.RackNow, i int) (record.Node, error) {
	pod := st.Pods[i]
	n := record.Node{Pod: pod.Name, PodUID: string(pod.UID), Ordinal: i, DC: st.Rack.DC, Rack: st.Rack.Name,
		StatefulSet: st.STS.Name, Unstarted: true}
	for _, tpl := range st.STS.Spec.VolumeClaimTemplates {
		name := tpl.Name + "-" + pod.Name
		pvc, err := f.claim(ctx, name)
		if err != nil {
			return n, err
		}
		if pvc == nil {
			continue // an unscheduled pod's claim may never have been created
		}
		n.PVCs = append(n.PVCs, record.PVC{Name: name, UID: string(pvc.UID)})
	}
	return n, nil
}

// unstartedFinding is the plan's line for a pod that never started.
func unstartedFinding(pod string) string {
	return fmt.Sprintf("pod %s never started (Pending, no container ever ran; no node of the ring on it): taking it away without a decommission", pod)
}

// hostID is the Host ID of the node on pod: the ring's entry for the pod's address, or
// what the node itself says when the ring has no entry for that address (a broadcast
// address other than the pod IP).
func (f *preflight) hostID(ctx context.Context, ring pubnodetool.Ring, pod corev1.Pod) (string, error) {
	if row, ok := ring.ByAddress(pod.Status.PodIP); ok && pod.Status.PodIP != "" && row.HostID != "" {
		return row.HostID, nil
	}
	info, err := f.p.Nodetool.Info(ctx, pod.Name)
	if err != nil {
		return "", exit.Refusedf("cannot read the Host ID of %s: %v; nothing changed", pod.Name, err)
	}
	return info.ID, nil
}

// checks refuses unless the remaining nodes have room for the leaving ones' data and
// the keyspaces' replication allows the removal (or --force); what it could not check
// becomes a warning. Every leaving node is in the ring or left it already (leaving).
func (f *preflight) checks(ctx context.Context, plan *puboperation.Plan, ring pubnodetool.Ring, nodes []record.Node, reader string,
	describe func() (nodetool.ClusterDescription, error), force bool) error {
	if problems, ok := operation.SpaceCheck(f.space(ctx, ring, nodes)); !ok {
		plan.Warnings = append(plan.Warnings, "free space not checked: a data volume's capacity or a node's Load is unknown")
	} else if len(problems) > 0 {
		return exit.Refusedf("not enough free space for the data of the leaving nodes: %s; nothing changed", strings.Join(problems, "; "))
	}
	desc, err := describe()
	if err != nil {
		return exit.Refusedf("cannot read the keyspaces' replication from %s: %v; nothing changed", reader, err)
	}
	if err := f.deadDataCheck(plan, desc, force); err != nil {
		return err
	}
	// A node that left is in no ring read already: only the members still leave it.
	// A never-started pod has no node in the ring either.
	problems, ok := operation.ReplicationCheck(desc, ring, plan.DC.Name, len(nodes)-len(f.left)-len(f.unstarted))
	switch {
	case !ok:
		plan.Warnings = append(plan.Warnings, "replication factors not checked: this Cassandra version lists no keyspaces in describecluster (check system_schema.keyspaces with cqlsh)")
	case len(problems) > 0 && !force:
		return exit.Refusedf("%s. Cassandra would refuse the decommission; lower the replication factor first, or pass --force to decommission anyway (data in those keyspaces loses replicas); nothing changed", strings.Join(problems, "; "))
	case len(problems) > 0:
		plan.Warnings = append(plan.Warnings, "--force skips Cassandra's replication check: "+strings.Join(problems, "; "))
	}
	return nil
}

// space is the leaving nodes' Load and the remaining nodes' Load and data capacity, by
// rack, for SpaceCheck.
func (f *preflight) space(ctx context.Context, ring pubnodetool.Ring, nodes []record.Node) (leaving, remaining []operation.RackNode) {
	for _, n := range nodes {
		rn := operation.RackNode{Rack: n.Rack, Load: -1}
		if f.left[n.Pod] || n.Unstarted {
			rn.Load = 0 // its data moved to the others when it left, or it never had any
		} else if row, ok := ring.ByHostID(n.HostID); ok {
			if l, ok := operation.ParseLoad(row.Load); ok {
				rn.Load = l
			}
		}
		leaving = append(leaving, rn)
	}
	for _, st := range f.states {
		for i := 0; i < f.keep(st.Rack.Name); i++ {
			pod := st.Pods[i]
			rn := operation.RackNode{Rack: st.Rack.Name, Load: -1}
			if row, ok := ring.ByAddress(pod.Status.PodIP); ok {
				if l, ok := operation.ParseLoad(row.Load); ok {
					rn.Load = l
				}
			}
			if tpl := operation.DataTemplate(st.STS); tpl != "" {
				if pvc, err := f.claim(ctx, tpl+"-"+pod.Name); err == nil {
					rn.Capacity = operation.DataCapacity(pvc)
				}
			}
			remaining = append(remaining, rn)
		}
	}
	return leaving, remaining
}
