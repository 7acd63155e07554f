// Package operation plans a rack operation from the real world, and runs or resumes it
// through the engine with its checkpoint.
package operation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/future"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/version"
)

// Request is what the user asked for.
type Request struct {
	DC    string
	Rack  string
	Nodes int
	Force bool
	// Pause, when set, is the operator Deployment to pause for the operation.
	Pause *checkpoint.PausedOperator
	// Cleanup (scale-up): run nodetool cleanup on the pre-existing nodes afterwards.
	Cleanup bool
}

// Plan is a checkpoint ready to be written, plus what the user should know about it.
type Plan struct {
	CP       *checkpoint.Checkpoint
	Cluster  topology.Cluster
	DC       topology.DC
	Racks    []topology.Rack
	Warnings []string
	// Findings are what the planner found in the real world that the plan acts on
	// (repair-operator-state: the stuck states, verified).
	Findings []string
}

// NodeInfo is what the planner asks Cassandra: a node's Host ID, the ring, keyspaces.
type NodeInfo interface {
	Info(ctx context.Context, pod string) (nodetool.Info, error)
	Status(ctx context.Context, pod string) (nodetool.Ring, error)
	DescribeCluster(ctx context.Context, pod string) (nodetool.ClusterDescription, error)
}

// Planner reads the real world and turns a Request into a Plan. It changes nothing.
type Planner struct {
	Kube     kubernetes.Interface
	Nodetool NodeInfo
	Now      func() time.Time
	// Holder identifies this run in the checkpoint (Self() when empty).
	Holder checkpoint.Holder
}

// ErrNothingToDo means the racks already have the requested size.
type ErrNothingToDo struct{ Msg string }

func (e *ErrNothingToDo) Error() string { return e.Msg }

// ScaleDown plans removing nodes from the selected racks down to req.Nodes each,
// highest ordinal first, one node at a time, rack by rack.
func (p *Planner) ScaleDown(ctx context.Context, cl topology.Cluster, req Request) (*Plan, error) {
	if req.Nodes < 0 {
		return nil, exit.Usagef("--nodes must be at least 1, got %d", req.Nodes)
	}
	if req.Nodes == 0 {
		return nil, exit.Usagef("--nodes 0 would remove the rack: rack removal is not what scale does (it keeps at least one node per rack)")
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
	// The ring is read from the first rack's first pod while the StatefulSets and pods
	// are (nodetool is the slowest read); the answer serves only if that pod is the
	// reader, and a failed one is asked again then.
	early := earlyRing{pod: racks[0].StatefulSet + "-0"}
	early.read = future.Start(func() (nodetool.Ring, error) { return p.Nodetool.Status(ctx, early.pod) })
	// The keyspaces' replication too, from the same pod (the reader below, unless that
	// pod is missing, which refuses the plan anyway).
	earlyDescribe := future.Start(func() (nodetool.ClusterDescription, error) { return p.Nodetool.DescribeCluster(ctx, early.pod) })
	from := map[string]int{}
	var nodes []checkpoint.Node
	allAtTarget := true
	type rackState struct {
		rack topology.Rack
		sts  *appsv1.StatefulSet
		pods map[int]corev1.Pod
		cur  int
	}
	var states []rackState
	for _, r := range racks {
		sts, err := p.Kube.AppsV1().StatefulSets(cl.Namespace).Get(ctx, r.StatefulSet, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, exit.Refusedf("StatefulSet %s of rack %s/%s does not exist in namespace %s", r.StatefulSet, r.DC, r.Name, cl.Namespace)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read StatefulSet %s: %w", r.StatefulSet, err)
		}
		cur := 1
		if sts.Spec.Replicas != nil {
			cur = int(*sts.Spec.Replicas)
		}
		from[r.Name] = cur
		if cur < req.Nodes {
			return nil, &ErrScaleUp{Msg: fmt.Sprintf("rack %s has %d nodes and --nodes %d is larger", r.Name, cur, req.Nodes)}
		}
		if cur != req.Nodes {
			allAtTarget = false
		}
		pods, err := p.rackPods(ctx, cl.Namespace, r)
		if err != nil {
			return nil, err
		}
		states = append(states, rackState{rack: r, sts: sts, pods: pods, cur: cur})
	}
	if allAtTarget {
		return nil, &ErrNothingToDo{Msg: fmt.Sprintf("every selected rack of datacenter %s already has %d nodes: nothing to do", dc.Name, req.Nodes)}
	}
	for _, st := range states {
		for i := 0; i < st.cur; i++ {
			pod, ok := st.pods[i]
			if !ok {
				return nil, exit.Refusedf("pod %s-%d of StatefulSet %s does not exist; every pod must be Running and Ready before a scale-down", st.sts.Name, i, st.sts.Name)
			}
			if !steps.PodReady(&pod) || pod.DeletionTimestamp != nil {
				return nil, exit.Refusedf("pod %s is not Ready; every pod of rack %s must be Ready before a scale-down (check: kubectl describe pod -n %s %s)", pod.Name, st.rack.Name, cl.Namespace, pod.Name)
			}
		}
	}
	// The keyspaces' replication and the claims do not depend on the ring: they are read
	// while it is (the planner waits on nodetool calls more than on anything else).
	reader := states[0].pods[0].Name
	describe := earlyDescribe
	if reader != early.pod {
		describe = future.Start(func() (nodetool.ClusterDescription, error) { return p.Nodetool.DescribeCluster(ctx, reader) })
	}
	claims := map[string]*corev1.PersistentVolumeClaim{}
	claimsRead := future.Start(func() (struct{}, error) {
		for _, st := range states {
			p.listClaims(ctx, cl.Namespace, st.sts, claims)
		}
		return struct{}{}, nil
	})
	// One ring read gives every node's Host ID by address (no exec per leaving node);
	// `nodetool info` on the node itself is asked only when its address is not in it.
	ring, err := p.preflightRing(ctx, cl, dc, reader, early)
	_, _ = claimsRead() // listClaims keeps what it could read; a claim it missed is asked by name
	if err != nil {
		return nil, err
	}
	for _, st := range states {
		for i := st.cur - 1; i >= req.Nodes; i-- {
			pod := st.pods[i]
			hostID, err := p.hostID(ctx, ring, pod)
			if err != nil {
				return nil, err
			}
			n := checkpoint.Node{
				Pod: pod.Name, PodUID: string(pod.UID), Ordinal: i, DC: st.rack.DC, Rack: st.rack.Name,
				StatefulSet: st.sts.Name, HostID: hostID, Address: pod.Status.PodIP,
			}
			for _, tpl := range st.sts.Spec.VolumeClaimTemplates {
				name := tpl.Name + "-" + pod.Name
				pvc, err := p.claim(ctx, cl.Namespace, name, claims)
				if apierrors.IsNotFound(err) {
					plan.Warnings = append(plan.Warnings, fmt.Sprintf("PVC %s does not exist", name))
					continue
				}
				if err != nil {
					return nil, fmt.Errorf("cannot read PVC %s: %w", name, err)
				}
				n.PVCs = append(n.PVCs, checkpoint.PVC{Name: name, UID: string(pvc.UID)})
			}
			nodes = append(nodes, n)
		}
	}
	var leavingNodes, remaining []rackNode
	for _, n := range nodes {
		if _, ok := ring.ByHostID(n.HostID); !ok {
			return nil, exit.Refusedf("node %s (Host ID %s) is not in the ring read from %s; nothing changed", n.Pod, n.HostID, states[0].pods[0].Name)
		}
	}
	for _, n := range nodes {
		rn := rackNode{rack: n.Rack, load: -1}
		if row, ok := ring.ByHostID(n.HostID); ok {
			if l, ok := ParseLoad(row.Load); ok {
				rn.load = l
			}
		}
		leavingNodes = append(leavingNodes, rn)
	}
	for _, st := range states {
		for i := 0; i < req.Nodes; i++ {
			pod := st.pods[i]
			rn := rackNode{rack: st.rack.Name, load: -1}
			if row, ok := ring.ByAddress(pod.Status.PodIP); ok {
				if l, ok := ParseLoad(row.Load); ok {
					rn.load = l
				}
			}
			if tpl := dataTemplate(st.sts); tpl != "" {
				if pvc, err := p.claim(ctx, cl.Namespace, tpl+"-"+pod.Name, claims); err == nil {
					rn.capacity = dataCapacity(pvc)
				}
			}
			remaining = append(remaining, rn)
		}
	}
	if problems, ok := spaceCheck(leavingNodes, remaining); !ok {
		plan.Warnings = append(plan.Warnings, "free space not checked: a data volume's capacity or a node's Load is unknown")
	} else if len(problems) > 0 {
		return nil, exit.Refusedf("not enough free space for the data of the leaving nodes: %s; nothing changed", strings.Join(problems, "; "))
	}
	desc, err := describe()
	if err != nil && reader == early.pod {
		// Like the ring: a read started ahead that failed is asked once more.
		desc, err = p.Nodetool.DescribeCluster(ctx, reader)
	}
	if err != nil {
		return nil, exit.Refusedf("cannot read the keyspaces' replication from %s: %v; nothing changed", reader, err)
	}
	if problems, ok := replicationCheck(desc, ring, dc.Name, len(nodes)); !ok {
		plan.Warnings = append(plan.Warnings, "replication factors not checked: this Cassandra version lists no keyspaces in describecluster (check system_schema.keyspaces with cqlsh)")
	} else if len(problems) > 0 && !req.Force {
		return nil, exit.Refusedf("%s. Cassandra would refuse the decommission; lower the replication factor first, or pass --force to decommission anyway (data in those keyspaces loses replicas); nothing changed", strings.Join(problems, "; "))
	} else if len(problems) > 0 {
		plan.Warnings = append(plan.Warnings, "--force skips Cassandra's replication check: "+strings.Join(problems, "; "))
	}
	now := p.now()
	holder := p.Holder
	if holder.Host == "" {
		holder = Self()
	}
	var rackNames []string
	for _, r := range racks {
		rackNames = append(rackNames, r.Name)
	}
	plan.CP = &checkpoint.Checkpoint{
		SchemaVersion:  checkpoint.SchemaFor(checkpoint.KindScaleDown),
		OperationID:    fmt.Sprintf("scale-%s-%s", now.Format("20060102-150405"), rand.String(5)),
		Kind:           checkpoint.KindScaleDown,
		Operator:       cl.Operator,
		Namespace:      cl.Namespace,
		Cluster:        cl.Name,
		ClusterUID:     cl.UID,
		StartedBy:      holder,
		Holder:         holder,
		StartedAt:      now,
		UpdatedAt:      now,
		Force:          req.Force,
		Target:         checkpoint.Target{DC: dc.Name, Racks: rackNames, Nodes: req.Nodes, From: from},
		PausedOperator: req.Pause,
		Nodes:          nodes,
		Steps:          checkpoint.ScaleDownSteps(nodes, req.Pause != nil),
	}
	plan.Warnings = append(plan.Warnings, unmanagedWarnings(req.Pause)...)
	return plan, nil
}

// dataTemplate is the claim template of the Cassandra data volume ("data" in CassKop).
func dataTemplate(sts *appsv1.StatefulSet) string {
	for _, t := range sts.Spec.VolumeClaimTemplates {
		if t.Name == "data" {
			return t.Name
		}
	}
	if len(sts.Spec.VolumeClaimTemplates) > 0 {
		return sts.Spec.VolumeClaimTemplates[0].Name
	}
	return ""
}

// preflightRing refuses when the DC's ring is unreadable or not all Up/Normal, or a
// node to remove is not a ring member.
func (p *Planner) preflightRing(ctx context.Context, cl topology.Cluster, dc topology.DC, reader string, early earlyRing) (nodetool.Ring, error) {
	var r nodetool.Ring
	err := errors.New("not read yet")
	if reader == early.pod {
		r, err = early.read()
	}
	if err != nil {
		r, err = p.Nodetool.Status(ctx, reader)
	}
	if err != nil {
		return r, exit.Refusedf("cannot read the ring from %s: %v; a scale-down needs a readable ring, nothing changed", reader, err)
	}
	var bad []string
	for _, n := range r.Nodes {
		if n.DC == dc.Name && n.Code() != "UN" {
			bad = append(bad, fmt.Sprintf("%s (%s) is %s", n.Address, n.HostID, n.Code()))
		}
	}
	if len(bad) > 0 {
		return r, exit.Refusedf("not every node of datacenter %s is Up/Normal: %s; wait until they are (kubectl cassandra status %s), nothing changed", dc.Name, strings.Join(bad, ", "), cl.Name)
	}
	return r, nil
}

// earlyRing is a ring read started ahead from pod.
type earlyRing struct {
	pod  string
	read func() (nodetool.Ring, error)
}

// hostID is the Host ID of the node on pod: the ring's entry for the pod's address, or
// what the node itself says when the ring has no entry for that address (a broadcast
// address other than the pod IP).
func (p *Planner) hostID(ctx context.Context, ring nodetool.Ring, pod corev1.Pod) (string, error) {
	if row, ok := ring.ByAddress(pod.Status.PodIP); ok && pod.Status.PodIP != "" && row.HostID != "" {
		return row.HostID, nil
	}
	info, err := p.Nodetool.Info(ctx, pod.Name)
	if err != nil {
		return "", exit.Refusedf("cannot read the Host ID of %s: %v; nothing changed", pod.Name, err)
	}
	return info.ID, nil
}

// listClaims adds the claims of a StatefulSet to into, with one LIST by the labels the
// StatefulSet controller puts on the claims it creates (its selector). Best effort: a
// claim the LIST missed (other labels, no permission to list) is read by name.
func (p *Planner) listClaims(ctx context.Context, ns string, sts *appsv1.StatefulSet, into map[string]*corev1.PersistentVolumeClaim) {
	if sts.Spec.Selector == nil || len(sts.Spec.Selector.MatchLabels) == 0 || len(sts.Spec.VolumeClaimTemplates) == 0 {
		return
	}
	l, err := p.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sts.Spec.Selector.MatchLabels).String()})
	if err != nil {
		return
	}
	for i := range l.Items {
		into[l.Items[i].Name] = &l.Items[i]
	}
}

// claim is a claim from the LIST, or read by name when the LIST did not have it.
func (p *Planner) claim(ctx context.Context, ns, name string, listed map[string]*corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	if c, ok := listed[name]; ok {
		return c, nil
	}
	return p.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
}

// rackPods maps ordinal → pod for the pods of a rack.
func (p *Planner) rackPods(ctx context.Context, ns string, r topology.Rack) (map[int]corev1.Pod, error) {
	l, err := p.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: r.LabelSelector()})
	if err != nil {
		return nil, fmt.Errorf("cannot list the pods of rack %s: %w", r.Name, err)
	}
	out := map[int]corev1.Pod{}
	for _, pod := range l.Items {
		if i, ok := Ordinal(pod.Name, r.StatefulSet); ok {
			out[i] = pod
		}
	}
	return out, nil
}

// Ordinal parses <sts>-<n>.
func Ordinal(pod, sts string) (int, bool) {
	if !strings.HasPrefix(pod, sts+"-") {
		return 0, false
	}
	n, err := strconv.Atoi(pod[len(sts)+1:])
	return n, err == nil && n >= 0
}

// Self identifies this run as a checkpoint holder.
func Self() checkpoint.Holder {
	h := checkpoint.Holder{PID: os.Getpid(), Version: version.Version, Session: rand.String(8), LeaseSeconds: int(checkpoint.DefaultLease / time.Second)}
	h.Host, _ = os.Hostname()
	h.Machine, h.ProcessStart = Machine(), ProcessStart(h.PID)
	if u, err := user.Current(); err == nil {
		h.User = u.Username
	}
	return h
}

func (p *Planner) now() time.Time {
	if p.Now != nil {
		return p.Now().UTC()
	}
	return time.Now().UTC()
}

// SortedKeys returns the keys of m in order.
func SortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
