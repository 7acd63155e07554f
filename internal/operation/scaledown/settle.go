package scaledown

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Racks at the target may still leave the world unsettled: a removal whose record was
// wiped mid-run (a GitOps sync removed the annotation) can leave the cluster resource
// asking the old count, the claims of removed pods, and the operator paused for an
// operation that is gone. "Nothing to do" would be a dead end. The checkpoint is a lock
// and a log of intent, the world is the truth: the plan settles what the world shows —
// it deletes the left-over claims no pod and no ring member can be using and sets the
// count, with the operator paused and restored as for any scale-down (a stale pause of
// this cluster is taken over). It removes no node.

// planSettle plans the settling of racks already at the target (states), or answers
// nothing to do when the world is settled. ahead is the ring read started ahead.
func (k Kind) planSettle(ctx context.Context, env *pub.Env, plan *pub.Plan, states []operation.RackNow, ahead *early) (*pub.Plan, error) {
	p, cl, req := operation.PlannerOf(env), env.Cluster, env.Request
	pods, err := p.NamespacePods(ctx, cl.Namespace)
	if err != nil {
		return nil, err
	}
	var leftovers []record.Leftover
	for _, st := range states {
		claims, err := rackClaims(ctx, p, cl.Namespace, st)
		if err != nil {
			return nil, err
		}
		leftovers = append(leftovers, findLeftovers(st, claims, pods)...)
	}
	off := countsOff(plan.DC, req.Nodes)
	if len(leftovers) == 0 && len(off) == 0 {
		return nil, &pub.ErrNothingToDo{Msg: fmt.Sprintf("every selected rack of datacenter %s already has %d nodes: nothing to do", plan.DC.Name, req.Nodes)}
	}
	if len(leftovers) > 0 {
		ring, reader, err := settleRing(ctx, ahead, p, states)
		if err != nil {
			return nil, err
		}
		if err := refuseUnaccounted(ring, reader, plan.DC.Name, pods, leftovers); err != nil {
			return nil, err
		}
	}
	from := map[string]int{}
	for _, st := range states {
		from[st.Rack.Name] = st.Cur
	}
	plan.CP = p.NewCheckpoint(cl, k, "scale", req)
	plan.CP.Target = record.Target{DC: plan.DC.Name, Racks: operation.RackNames(plan.Racks), Nodes: req.Nodes, From: from}
	plan.CP.Leftovers = leftovers
	plan.CP.Steps = settleSteps(leftovers, req.Pause != nil)
	plan.Findings = settleFindings(plan.DC.Name, req.Nodes, env.Adapter.CountWords(), leftovers, off, from)
	plan.Warnings = append(plan.Warnings, operation.PauseWarnings(req.Pause, env.Adapter.Kind())...)
	return plan, nil
}

// rackClaims lists the claims of the rack's StatefulSet by the labels the StatefulSet
// controller puts on the claims it creates (its selector), as the removal's planning
// does (preflight.listClaims); none when it has no claim templates.
func rackClaims(ctx context.Context, p *operation.Planner, ns string, st operation.RackNow) (map[string]*corev1.PersistentVolumeClaim, error) {
	match := operation.ClaimLabels(st.STS)
	if match == nil {
		return nil, nil
	}
	claims, err := p.ClaimsLabelled(ctx, ns, match)
	if err != nil {
		return nil, fmt.Errorf("%w: the claims left above StatefulSet %s's replicas cannot be looked for; nothing changed", err, st.STS.Name)
	}
	return claims, nil
}

// findLeftovers lists, highest ordinal first, the claims of st's StatefulSet (named
// <template>-<sts>-<ordinal>) at an ordinal at or above its replicas whose pod is gone,
// that no pod uses and that are not being deleted already: a removed pod's claims.
func findLeftovers(st operation.RackNow, claims map[string]*corev1.PersistentVolumeClaim, pods []corev1.Pod) []record.Leftover {
	byOrdinal := map[int]*record.Leftover{}
	names := make([]string, 0, len(claims))
	for name := range claims {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := claims[name]
		i, ok := claimOrdinal(name, st)
		if !ok || i < st.Cur || c.DeletionTimestamp != nil || len(steps.ClaimUsers(pods, name)) > 0 {
			continue
		}
		if _, exists := st.Pods[i]; exists {
			continue // its pod is still there (terminating): not left over yet
		}
		l := byOrdinal[i]
		if l == nil {
			l = &record.Leftover{Pod: topology.PodName(st.STS.Name, i), StatefulSet: st.STS.Name, Rack: st.Rack.Name, Ordinal: i}
			byOrdinal[i] = l
		}
		l.PVCs = append(l.PVCs, record.PVC{Name: name, UID: string(c.UID)})
	}
	out := make([]record.Leftover, 0, len(byOrdinal))
	for _, l := range byOrdinal {
		out = append(out, *l)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Ordinal > out[b].Ordinal })
	return out
}

// claimOrdinal is the ordinal of the pod a claim of st's StatefulSet was made for, by
// its name (<template>-<sts>-<ordinal>); ok is false for any other claim.
func claimOrdinal(name string, st operation.RackNow) (int, bool) {
	for _, tpl := range st.STS.Spec.VolumeClaimTemplates {
		pod, found := strings.CutPrefix(name, tpl.Name+"-")
		if !found {
			continue
		}
		if i, ok := topology.Ordinal(pod, st.STS.Name); ok && topology.PodName(st.STS.Name, i) == pod {
			return i, true
		}
	}
	return 0, false
}

// countsOff is the count the cluster resource asks for each rack of dc that differs
// from nodes (empty: the count is settled).
func countsOff(dc topology.DC, nodes int) map[string]int {
	off := map[string]int{}
	for _, r := range dc.Racks {
		if r.Nodes != nodes {
			off[r.Name] = r.Nodes
		}
	}
	return off
}

// settleRing is the ring as a live pod of the racks sees it: the read started ahead
// when it answered, else the first of the racks' pods that does. Unreadable is a
// refusal: whether a ring member uses a left-over claim is then unknown.
func settleRing(ctx context.Context, e *early, p *operation.Planner, states []operation.RackNow) (pubnodetool.Ring, string, error) {
	if r, err := e.read(); err == nil && len(r.Nodes) > 0 {
		return r, e.pod, nil
	}
	var readers []string
	for _, st := range states {
		for i := 0; i < st.Cur; i++ {
			if pod, ok := st.Pods[i]; ok {
				readers = append(readers, pod.Name)
			}
		}
	}
	r, i, errs := nodetool.FirstRing(ctx, p.Nodetool, readers)
	if i < 0 {
		return r, "", exit.Refusedf("cannot read the ring (%s): deleting a left-over PVC needs to know no ring member can be using it; nothing changed", strings.Join(errs, "; "))
	}
	return r, readers[i], nil
}

// refuseUnaccounted refuses when a ring member of dc runs at no pod's address: it may be
// the node whose data is on a left-over claim (a pod removed without its decommission).
func refuseUnaccounted(r pubnodetool.Ring, reader, dc string, pods []corev1.Pod, leftovers []record.Leftover) error {
	bad := steps.Unaccounted(r, dc, pods)
	if len(bad) == 0 {
		return nil
	}
	var claims []string
	for _, l := range leftovers {
		for _, c := range l.PVCs {
			claims = append(claims, c.Name)
		}
	}
	return exit.Refusedf("ring members of datacenter %s run where no pod is: %s (ring read from %s); one may be the node whose data is on PVC %s, so none is deleted. "+
		"Find out which node it is (nodetool status): if its data is on such a claim, bring its pod back rather than lose it; if it is gone for good, remove it from the ring (nodetool removenode HOST_ID). Then run this command again; nothing changed",
		dc, strings.Join(bad, ", "), reader, strings.Join(claims, ", "))
}

// settleFindings say what the settling plan found in the world and does about it;
// replicas are the racks' StatefulSet replicas.
func settleFindings(dc string, nodes int, countWords string, leftovers []record.Leftover, off, replicas map[string]int) []string {
	out := []string{fmt.Sprintf("every selected rack of datacenter %s already has %d nodes, but the world is not settled (a removal whose record is gone?): settling it, no node is removed", dc, nodes)}
	for _, l := range leftovers {
		var names []string
		for _, c := range l.PVCs {
			names = append(names, c.Name)
		}
		out = append(out, fmt.Sprintf("PVC %s of removed pod %s (StatefulSet %s has %d replicas) is %s: deleting it",
			strings.Join(names, ", "), l.Pod, l.StatefulSet, replicas[l.Rack], steps.LeftoverWhy))
	}
	if len(off) > 0 {
		out = append(out, fmt.Sprintf("%s of datacenter %s asks %s while the StatefulSets have %d: setting it to %d", countWords, dc, asked(off), nodes, nodes))
	}
	return out
}

// asked is what the cluster resource asks in words (topology.CountText).
func asked(off map[string]int) string { return topology.CountText(off) }
