package operation

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// RackNow is a rack's StatefulSet and pods as the planner found them.
type RackNow struct {
	Rack topology.Rack
	STS  *appsv1.StatefulSet
	// Pods maps ordinal → pod; Cur is the StatefulSet's replicas.
	Pods map[int]corev1.Pod
	Cur  int
}

// CheckPods refuses unless every pod up to the replica count exists, Running and Ready,
// and (unless extraOK) none exists beyond it. what names the operation ("scale-up").
func (st RackNow) CheckPods(ns, what string, extraOK bool) error {
	for i := 0; i < st.Cur; i++ {
		if err := st.PodProblem(ns, what, i); err != nil {
			return err
		}
	}
	for i, pod := range st.Pods {
		if i >= st.Cur && !extraOK {
			return exit.Refusedf("pod %s exists although StatefulSet %s has %d replicas (terminating?); wait until it is gone; nothing changed", pod.Name, st.STS.Name, st.Cur)
		}
	}
	return nil
}

// PodProblem is CheckPods' refusal for the pod of ordinal i (nil when it exists,
// Running and Ready, not being deleted).
func (st RackNow) PodProblem(ns, what string, i int) error {
	pod, ok := st.Pods[i]
	if !ok {
		return exit.Refusedf("pod %s-%d of StatefulSet %s does not exist; every pod must be Running and Ready before a %s; nothing changed", st.STS.Name, i, st.STS.Name, what)
	}
	if !kube.PodReady(&pod) || pod.DeletionTimestamp != nil {
		return exit.Refusedf("pod %s is not Ready; every pod of rack %s must be Ready before a %s (check: kubectl describe pod -n %s %s); nothing changed", pod.Name, st.Rack.Name, what, ns, pod.Name)
	}
	return nil
}

// ReadCheckedRack is ReadRack then CheckPods (no pod beyond the replicas).
func (p *Planner) ReadCheckedRack(ctx context.Context, ns string, r topology.Rack, what string) (RackNow, error) {
	st, err := p.ReadRack(ctx, ns, r)
	if err != nil {
		return st, err
	}
	return st, st.CheckPods(ns, what, false)
}

// ReadRing reads `nodetool status` from the first of the states' pods that answers, and
// refuses unless every node of dc is Up/Normal (CheckUN).
func (p *Planner) ReadRing(ctx context.Context, cl topology.Cluster, dc topology.DC, states []RackNow, what string) (pubnodetool.Ring, string, error) {
	var pods []string
	for _, st := range states {
		for i := 0; i < st.Cur; i++ {
			pods = append(pods, st.Pods[i].Name)
		}
	}
	r, i, errs := nodetool.FirstRing(ctx, p.Nodetool, pods)
	if i < 0 {
		return r, "", exit.Refusedf("cannot read the ring (%s); a %s needs a readable ring, nothing changed", strings.Join(errs, "; "), what)
	}
	reader := pods[i]
	if err := CheckUN(r, cl, dc); err != nil {
		return r, "", err
	}
	return r, reader, nil
}

// CheckUN refuses unless every node of dc in the ring is Up/Normal.
func CheckUN(r pubnodetool.Ring, cl topology.Cluster, dc topology.DC) error {
	var bad []string
	dead := false
	for _, n := range r.Nodes {
		if n.DC == dc.Name && n.Code() != "UN" {
			bad = append(bad, fmt.Sprintf("%s (%s) is %s", n.Address, n.HostID, n.Code()))
			dead = dead || n.Code() == "DN"
		}
	}
	if len(bad) > 0 {
		return exit.Refusedf("not every node of datacenter %s is Up/Normal: %s; wait until they are (kubectl cassandra status %s), nothing changed%s", dc.Name, strings.Join(bad, ", "), cl.Name, deadHint(dead, cl))
	}
	return nil
}

// deadHint is what a refusal adds when a node is DN: if it stays down, it is dead, and
// a dead node cannot be decommissioned (its data cannot stream from it).
func deadHint(dead bool, cl topology.Cluster) string {
	if !dead {
		return ""
	}
	return fmt.Sprintf(". A node that stays DN is dead and cannot be decommissioned: replace it (kubectl cassandra replace-node -n %s %s --pod POD), "+
		"or, to make the ring smaller instead, remove it from a live node (nodetool removenode HOST_ID: its ranges are streamed from the other replicas; docs/how-it-works/replace.md §5)",
		cl.Namespace, cl.Name)
}

// SelectRacks is the datacenter and racks a scale asks for. It refuses rack counts the
// operator's spec cannot hold once scaled (CassKop keeps one count per datacenter, so
// one rack of several cannot be scaled alone).
func SelectRacks(cl topology.Cluster, req pub.Request, counts operator.Counts) (topology.DC, []topology.Rack, error) {
	dc, racks, err := cl.Select(req.DC, req.Rack)
	if err != nil {
		return dc, nil, exit.Usagef("%v", err)
	}
	want := dc.RackNodes()
	for _, r := range racks {
		want[r.Name] = req.Nodes
	}
	if err := counts.CheckRackNodes(dc.Name, want); err != nil {
		return dc, nil, exit.Refusedf("datacenter %s has %d racks (%s) and %v: "+
			"scaling only rack %s would leave the racks unequal, which the cluster resource cannot represent. "+
			"Scale the whole datacenter instead, rack by rack: kubectl cassandra scale %s --dc %s --nodes %d; nothing changed",
			dc.Name, len(dc.Racks), strings.Join(cl.RackNames(dc.Name), ", "), err, req.Rack, cl.Name, dc.Name, req.Nodes)
	}
	return dc, racks, nil
}

// RackNames are the racks' names, in order.
func RackNames(racks []topology.Rack) []string {
	var names []string
	for _, r := range racks {
		names = append(names, r.Name)
	}
	return names
}

// DataTemplate is the claim template of the Cassandra data volume ("data" in the
// operators' StatefulSets).
func DataTemplate(sts *appsv1.StatefulSet) string {
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

// ClaimLabels are the labels the StatefulSet controller puts on the claims it creates
// for sts (its selector's), by which they are listed; nil when sts has no claim
// templates or no selector labels (its claims cannot be listed so).
func ClaimLabels(sts *appsv1.StatefulSet) map[string]string {
	sel := sts.Spec.Selector
	if sel == nil || len(sel.MatchLabels) == 0 || len(sts.Spec.VolumeClaimTemplates) == 0 {
		return nil
	}
	return sel.MatchLabels
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

// ErrScaleUp is what ScaleDown answers when the request grows a rack: plan it with
// ScaleUp instead.
type ErrScaleUp struct{ Msg string }

func (e *ErrScaleUp) Error() string { return e.Msg + ": that is a scale-up" }
