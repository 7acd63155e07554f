package status

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Read is everything one status read: the cluster resource and what its annotations
// carry, one list each of StatefulSets, pods and PVCs, the running operator
// controllers, and the ring. A failed read is kept as its error: status shows what it
// could read and warns about the rest.
type Read struct {
	Cluster topology.Cluster
	// Kind and OperatorTitle name the resource and the operator in words
	// ("CassandraCluster", "CassKop").
	Kind, OperatorTitle string

	// Checkpoint is the operation in flight (nil: none, or CheckpointErr).
	Checkpoint    *record.Checkpoint
	CheckpointErr error
	// Holder is what the reader made of the checkpoint's holder (checkpoint.Judge, the
	// lock's rule: a holder elsewhere is stopped only once its record stayed unchanged
	// for a lease of the reader's clock, so a single read never finds it stopped).
	Holder checkpoint.Liveness
	// Last is the last operation's record (nil: none, or LastErr).
	Last    *checkpoint.LastOperation
	LastErr error

	StatefulSets []appsv1.StatefulSet
	Pods         []corev1.Pod
	PVCs         []corev1.PersistentVolumeClaim
	Operators    []operator.Controller
	// The lists' errors, in the order the warnings say them.
	StatefulSetsErr, PodsErr, PVCsErr, OperatorsErr error
	// StalePauses say which operators are held paused for operations that are gone
	// (internal/steps.JudgeHolders), each in words.
	StalePauses []string

	// Nodetool is false when the ring was not to be read (--nodetool=false).
	Nodetool bool
	// Ring is the ring read from the first Ready pod that answered (nil: none did).
	Ring *pubnodetool.Ring
	// RingErrs are the pods asked before one answered, with their errors.
	RingErrs []PodError

	// Commands are the commands "next" may suggest.
	Commands Commands

	// Acts: the operator scales the datacenter itself (operator.Scaler): it must run, and
	// running is not busy. PodState, when set, is the operator's word for a pod's state
	// from its labels (operator.PodStates).
	Acts     bool
	PodState func(labels map[string]string) string
}

// PodError is a read from one pod that failed.
type PodError struct {
	Pod string
	Err error
}

// Commands are the command lines "next" suggests (internal/cli/session.go's hints).
type Commands struct {
	// Resume continues the operation in flight.
	Resume string
	// Wait follows the operation a live run holds (status --wait).
	Wait string
	// Start starts an operation on an idle cluster.
	Start string
	// Inspect shows the cluster resource (its checkpoint is unusable).
	Inspect string
}

// Build is the status of what was read. It reads nothing: every case is a table row of
// build_test.go.
func Build(r Read) Report {
	rep := Report{
		Cluster:       cluster(r),
		Operators:     actingOperators(r),
		Operation:     operationOf(r.Checkpoint, r.CheckpointErr, r.Holder),
		LastOperation: r.Last,
		OperatorBusy:  busy(r),
		StalePauses:   r.StalePauses,
		Warnings:      readWarnings(r),
	}
	var missing []string
	rep.Datacenters, missing = datacenters(r)
	rep.Warnings = append(rep.Warnings, missing...)
	rep.Next = next(rep.Operation, r.Commands)
	return rep
}

func cluster(r Read) Cluster {
	cl := r.Cluster
	return Cluster{Name: cl.Name, Namespace: cl.Namespace, UID: cl.UID, Operator: cl.Operator, APIVersion: cl.APIVersion, ServerVersion: cl.ServerVersion,
		Kind: r.Kind, OperatorTitle: r.OperatorTitle}
}

// busy says why the operator is not idle: what its resource says, then its running
// controllers.
func busy(r Read) []string {
	b := append([]string{}, r.Cluster.Busy...)
	if r.Acts {
		if len(r.Operators) == 0 && r.OperatorsErr == nil {
			b = append(b, fmt.Sprintf("no running %s manages namespace %s: it is the one that scales this datacenter, so nothing can be scaled until it runs", r.OperatorTitle, r.Cluster.Namespace))
		}
		return b
	}
	for _, op := range r.Operators {
		b = append(b, fmt.Sprintf("%s operator %s is running (replicas %d)", r.OperatorTitle, op, op.Replicas))
	}
	return b
}

// readWarnings are the reads that were skipped or failed, in the order they are made.
func readWarnings(r Read) []string {
	w := []string{}
	if !r.Nodetool {
		w = append(w, "node states not read (--nodetool=false)")
	}
	if r.LastErr != nil {
		w = append(w, fmt.Sprintf("annotation %s is not valid JSON: %v", checkpoint.LastOperationAnnotation, r.LastErr))
	}
	for _, e := range []struct {
		what string
		err  error
	}{{"list StatefulSets", r.StatefulSetsErr}, {"list pods", r.PodsErr}, {"list PVCs", r.PVCsErr}, {"check for a running " + r.OperatorTitle + " operator", r.OperatorsErr}} {
		if e.err != nil {
			w = append(w, fmt.Sprintf("cannot %s: %v", e.what, e.err))
		}
	}
	for _, e := range r.RingErrs {
		w = append(w, fmt.Sprintf("cannot read the ring from %s: %v", e.Pod, e.Err))
	}
	return w
}

// next is the command to run next: follow the operation a live run holds, resume one
// whose holder stopped (resume would refuse a live one), look at an unusable
// checkpoint, or start one.
func next(op *Operation, c Commands) string {
	switch {
	case op == nil:
		return c.Start
	case op.Error != "":
		return c.Inspect
	case op.Running:
		return c.Wait
	}
	return c.Resume + " --yes"
}

// operationOf is the operation in flight from its checkpoint (nil: none).
func operationOf(cp *record.Checkpoint, err error, holder checkpoint.Liveness) *Operation {
	if cp == nil {
		if err != nil {
			return &Operation{Error: err.Error()}
		}
		return nil
	}
	op := &Operation{ID: cp.OperationID, Kind: cp.Kind, Target: cp.Target, StartedBy: cp.StartedBy, Holder: cp.Holder,
		StartedAt: cp.StartedAt.Format(timeFormat), UpdatedAt: cp.UpdatedAt.Format(timeFormat), StepsTotal: len(cp.Steps),
		Running: !holder.Stopped, Judged: holder.Why}
	for _, st := range cp.Steps {
		if st.State == record.StateDone {
			op.StepsDone++
		}
		if st.Progress != nil && st.State != record.StateDone && (op.Progress == nil || st.Progress.At.After(op.Progress.At)) {
			op.Progress = st.Progress
		}
	}
	if keepsOperatorPaused(cp) {
		op.PausedOperator = cp.PausedOperator
	}
	if i := cp.Current(); i >= 0 {
		cur := cp.Steps[i]
		op.CurrentStep = &cur
	}
	return op
}

// timeFormat is RFC 3339 as status has always printed it.
const timeFormat = "2006-01-02T15:04:05Z07:00"

// keepsOperatorPaused: the operation paused the operator and has not resumed it yet.
func keepsOperatorPaused(cp *record.Checkpoint) bool {
	if cp.PausedOperator == nil || !cp.Started(record.StepPauseOperator) {
		return false
	}
	for _, st := range cp.Steps {
		if st.Kind == record.StepResumeOperator && st.State != record.StateDone {
			return true
		}
	}
	return false
}

// datacenters are the racks of the spec with what was read of each, and a warning per
// rack whose StatefulSet does not exist.
func datacenters(r Read) ([]DC, []string) {
	sets := map[string]*appsv1.StatefulSet{}
	for i := range r.StatefulSets {
		sets[r.StatefulSets[i].Name] = &r.StatefulSets[i]
	}
	dcs := []DC{}
	var missing []string
	for _, dc := range r.Cluster.DCs {
		perDC, perRack := specNodes(dc)
		d := DC{Name: dc.Name, NodesPerRack: perDC, Spec: dc.Spec, Racks: []Rack{}}
		for i, rk := range dc.Racks {
			st := sets[rk.StatefulSet]
			if st == nil {
				missing = append(missing, fmt.Sprintf("StatefulSet %s of rack %s/%s does not exist", rk.StatefulSet, dc.Name, rk.Name))
			}
			d.Racks = append(d.Racks, rack(r, rk, st, perRack[i]))
		}
		dcs = append(dcs, d)
	}
	return dcs, missing
}

// specNodes is what the spec asks of dc: each rack's count (in dc.Racks order), and the
// largest of them for the report's one count per DC (racks differ by one at most; with
// CassKop they are equal, pkg/topology/topology.go).
func specNodes(dc topology.DC) (perDC int, perRack []int) {
	perRack = make([]int, len(dc.Racks))
	for i, r := range dc.Racks {
		perRack[i] = r.Nodes
		perDC = max(perDC, r.Nodes)
	}
	return perDC, perRack
}

// rack is one rack of the spec; st is its StatefulSet (nil: it does not exist).
func rack(r Read, rk topology.Rack, st *appsv1.StatefulSet, nodes int) Rack {
	v := Rack{Name: rk.Name, StatefulSet: rk.StatefulSet, Nodes: nodes, Pods: pods(r.Pods, rk.StatefulSet, r.Ring, r.PodState), PVCs: []PVC{}}
	if st == nil {
		return v
	}
	v.Exists = true
	v.Replicas = 1
	if st.Spec.Replicas != nil {
		v.Replicas = int(*st.Spec.Replicas)
	}
	v.ReadyReplicas = int(st.Status.ReadyReplicas)
	v.PVCs = claims(r, st)
	v.RemoveOne = removeOne(v, operation.DataTemplate(st), r.Ring != nil)
	return v
}

// pods are the pods of StatefulSet sts, by ordinal, with their nodes in ring (nil: not
// read).
func pods(all []corev1.Pod, sts string, ring *pubnodetool.Ring, podState func(map[string]string) string) []Pod {
	ps := []Pod{}
	for i := range all {
		p := &all[i]
		n, ok := topology.Ordinal(p.Name, sts)
		if !ok {
			continue
		}
		sp := Pod{Name: p.Name, Ordinal: n, Phase: string(p.Status.Phase), Ready: kube.PodReady(p), Terminating: p.DeletionTimestamp != nil, IP: p.Status.PodIP, NodeState: "?"}
		if podState != nil {
			sp.OperatorState = podState(p.Labels)
		}
		if ring != nil {
			sp.NodeState = ""
			if node, ok := ring.ByAddress(p.Status.PodIP); ok {
				sp.NodeState, sp.HostID, sp.Load, sp.Owns = node.Code(), node.HostID, node.Load, node.Owns
			}
		}
		ps = append(ps, sp)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Ordinal < ps[j].Ordinal })
	return ps
}

// claims are the claims of st's volume claim templates, by name.
func claims(r Read, st *appsv1.StatefulSet) []PVC {
	exists := map[string]bool{}
	for _, p := range r.Pods {
		exists[p.Name] = true
	}
	cs := []PVC{}
	for i := range r.PVCs {
		c := &r.PVCs[i]
		for _, t := range st.Spec.VolumeClaimTemplates {
			pod := strings.TrimPrefix(c.Name, t.Name+"-")
			if pod == c.Name {
				continue
			}
			if _, ok := topology.Ordinal(pod, st.Name); !ok {
				continue
			}
			sc := PVC{Name: c.Name, Pod: pod, Phase: string(c.Status.Phase), Terminating: c.DeletionTimestamp != nil, PodExists: exists[pod]}
			if b := operation.DataCapacity(c); b > 0 {
				sc.CapacityBytes = int64(b)
				sc.Capacity = claimCapacity(c)
			}
			cs = append(cs, sc)
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return cs
}

// claimCapacity prints the claim's capacity as Kubernetes does ("100Gi").
func claimCapacity(c *corev1.PersistentVolumeClaim) string {
	if q, ok := c.Status.Capacity[corev1.ResourceStorage]; ok {
		return q.String()
	}
	if q, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		return q.String()
	}
	return ""
}

// removeOne is the preflight's space check for removing the rack's highest ordinal
// (operation.RemovalSpace, the computation scale runs): its Load against the free space
// of the rack's other data volumes.
func removeOne(r Rack, dataTpl string, ringOK bool) *Space {
	if len(r.Pods) < 2 || dataTpl == "" {
		return nil
	}
	capacity := map[string]float64{}
	for _, c := range r.PVCs {
		if c.Name == dataTpl+"-"+c.Pod {
			capacity[c.Pod] = float64(c.CapacityBytes)
		}
	}
	space := func(p Pod) operation.NodeSpace {
		n := operation.NodeSpace{Load: -1, Capacity: capacity[p.Name]}
		if l, ok := operation.ParseLoad(p.Load); ok && ringOK {
			n.Load = l
		}
		return n
	}
	last := r.Pods[len(r.Pods)-1]
	var others []operation.NodeSpace
	for _, p := range r.Pods[:len(r.Pods)-1] {
		others = append(others, space(p))
	}
	need, free, ok := operation.RemovalSpace(space(last), others)
	return &Space{Pod: last.Name, Known: ok, NeedBytes: int64(need), FreeBytes: int64(free), Fits: ok && need <= free}
}

// actingOperators names the running operators of an operator that acts (they are
// expected, not busy), for the text's operator line.
func actingOperators(r Read) []string {
	if !r.Acts {
		return nil
	}
	var out []string
	for _, op := range r.Operators {
		out = append(out, op.String())
	}
	return out
}
