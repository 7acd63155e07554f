package scaledown

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	puboperation "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// A node to remove may be dead: DN in a successful ring read on a live node, its
// nodetool silent. It cannot be decommissioned (its data cannot stream from it). With
// --remove-dead the plan removes it with `nodetool removenode <Host ID>` on a live node
// instead (the removenode step: its ranges are re-streamed from the other replicas),
// then verifies it left and takes its pod and claims away as for any removed node.

// onlyDown reports whether the only nodes of dc that are not UN are DN: then the plan
// may go on to judge them (judgeDead); anything else is CheckUN's refusal.
func onlyDown(r pubnodetool.Ring, dc string) bool {
	for _, n := range r.Nodes {
		if n.DC == dc && n.Code() != "UN" && n.Code() != "DN" {
			return false
		}
	}
	return true
}

// downLeaving sorts the DN nodes of dc: those the plan removes (leaving: Host ID to
// pod), by pod, and whether any other is down (a node the plan keeps: only a replace
// or a removal of its own helps it).
func downLeaving(r pubnodetool.Ring, dc string, leaving map[string]string) (dead []string, others bool) {
	for _, n := range r.Nodes {
		if n.DC != dc || n.Code() != "DN" {
			continue
		}
		if pod, ok := leaving[n.HostID]; ok {
			dead = append(dead, pod)
		} else {
			others = true
		}
	}
	sort.Strings(dead)
	return dead, others
}

// deadRefusal is the refusal for dead nodes the plan would remove when --remove-dead
// was not given.
func deadRefusal(pods []string, reader, dc string, cl topology.Cluster) error {
	return exit.Refusedf("not every node of datacenter %s is Up/Normal: node %s is DN on %s, and a dead node cannot be decommissioned (its data cannot stream from it). "+
		"Pass --remove-dead to remove it with nodetool removenode from a live node instead (its ranges are re-streamed from the other replicas; "+
		"keyspaces with replication factor 1 lose its data), or replace it to keep the rack's size (kubectl cassandra replace-node -n %s %s --pod %s); nothing changed",
		dc, strings.Join(pods, ", "), reader, cl.Namespace, cl.Name, pods[0])
}

// judgeDead refuses unless every node of the datacenter is UN but dead nodes the plan
// removes, and those only with --remove-dead and a silent nodetool (steps.NodetoolSilent:
// a node DN in the ring whose JVM still answers is starting or cut off, not dead).
// It records them in f.dead.
func (f *preflight) judgeDead(ctx context.Context, ring pubnodetool.Ring, nodes []record.Node, cl topology.Cluster, dc topology.DC, removeDead bool) error {
	f.dead = map[string]bool{}
	leaving := map[string]string{}
	for _, n := range nodes {
		if n.HostID != "" && !f.left[n.Pod] {
			leaving[n.HostID] = n.Pod
		}
	}
	dead, others := downLeaving(ring, dc.Name, leaving)
	switch {
	case others || !onlyDown(ring, dc.Name):
		return operation.CheckUN(ring, cl, dc)
	case len(dead) == 0:
		return nil
	case !removeDead:
		return deadRefusal(dead, f.reader, dc.Name, cl)
	}
	for _, pod := range dead {
		p, err := f.p.Kube().CoreV1().Pods(f.ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return exit.Refusedf("cannot read pod %s (%v): whether its node is dead is unknown; nothing changed", pod, err)
		}
		var ntErr error
		var mode pubnodetool.Mode
		if steps.ContainerRunning(p, f.container) {
			var ns nodetool.Netstats
			ns, ntErr = f.p.Nodetool.Netstats(ctx, pod)
			mode = ns.Mode
		}
		silent, unknown := steps.NodetoolSilent(p, f.container, ntErr)
		switch {
		case unknown != "":
			return exit.Refusedf("node %s is DN on %s but whether its JVM runs is unknown (%s): --remove-dead removes only a node whose nodetool is silent; nothing changed", pod, f.reader, unknown)
		case !silent:
			return exit.Refusedf("node %s is DN on %s but its nodetool answers (mode %s): its JVM runs, it is not dead (starting, or cut off from the others). "+
				"Wait until it is UN and scale without --remove-dead (a live node is decommissioned); nothing changed", pod, f.reader, mode)
		}
		f.dead[pod] = true
	}
	return deadFirst(nodes, f.dead, f.left, cl)
}

// deadFirst refuses a plan in which a dead node would wait for another removal: every
// removal, and a decommission above all, needs every other node of the datacenter UN,
// so the dead node must be the one alone that is down and the first of its rack to go
// (a StatefulSet loses its highest pod first). Nodes that left or never started stream
// nothing and do not count.
func deadFirst(nodes []record.Node, dead, left map[string]bool, cl topology.Cluster) error {
	var pods []string
	for _, n := range nodes {
		if dead[n.Pod] {
			pods = append(pods, n.Pod)
		}
	}
	sort.Strings(pods)
	if len(pods) > 1 {
		return exit.Refusedf("nodes %s are dead: removing one needs every other node of the datacenter UN. Replace all but one first (kubectl cassandra replace-node -n %s %s --pod POD), then scale; nothing changed",
			strings.Join(pods, ", "), cl.Namespace, cl.Name)
	}
	for _, d := range nodes {
		if !dead[d.Pod] {
			continue
		}
		for _, n := range nodes {
			if n.StatefulSet == d.StatefulSet && n.Ordinal > d.Ordinal && !dead[n.Pod] && !left[n.Pod] && !n.Unstarted {
				return exit.Refusedf("node %s is dead and node %s above it in StatefulSet %s is alive: %s leaves first, and its decommission needs every other node UN. "+
					"Replace %s first (kubectl cassandra replace-node -n %s %s --pod %s), or scale the rack to %d nodes first; nothing changed",
					d.Pod, n.Pod, d.StatefulSet, n.Pod, d.Pod, cl.Namespace, cl.Name, d.Pod, d.Ordinal+1)
			}
		}
	}
	return nil
}

// deadFinding is the plan's line for a dead node removed with removenode.
func deadFinding(n record.Node, reader string) string {
	return fmt.Sprintf("node %s (Host ID %s) is dead (DN on %s, its nodetool silent): removed with nodetool removenode on %s instead of a decommission; "+
		"its data is re-streamed to the remaining nodes from the other replicas", n.Pod, n.HostID, reader, steps.CoordinatorOf(n))
}

// rfOne lists the keyspaces that keep a single replica in dc (NetworkTopologyStrategy
// with dc at 1, SimpleStrategy at 1): removenode re-streams nothing of theirs from a dead
// node, whose data in them has no other copy.
func rfOne(desc nodetool.ClusterDescription, dc string) []string {
	var out []string
	for _, ks := range desc.Keyspaces {
		class := ks.Class
		if i := strings.LastIndexByte(class, '.'); i >= 0 {
			class = class[i+1:]
		}
		rf := -1
		switch class {
		case "NetworkTopologyStrategy":
			rf, _ = strconv.Atoi(ks.Options[dc])
		case "SimpleStrategy":
			rf, _ = strconv.Atoi(ks.Options["replication_factor"])
		}
		if rf == 1 {
			out = append(out, ks.Name)
		}
	}
	sort.Strings(out)
	return out
}

// deadDataCheck refuses removing dead nodes when keyspaces keep one replica in the
// datacenter (their data on the dead node is lost), unless force; what it could not
// read becomes a warning.
func (f *preflight) deadDataCheck(plan *puboperation.Plan, desc nodetool.ClusterDescription, force bool) error {
	if len(f.dead) == 0 {
		return nil
	}
	if len(desc.Keyspaces) == 0 {
		plan.Warnings = append(plan.Warnings, "replication factors not read (this Cassandra version lists no keyspaces in describecluster): a keyspace with replication factor 1 loses the dead node's data")
		return nil
	}
	one := rfOne(desc, plan.DC.Name)
	switch {
	case len(one) == 0:
		return nil
	case !force:
		return exit.Refusedf("keyspace %s has replication factor 1 in %s: the dead node's data in it has no other replica, and removenode loses it. "+
			"Bring the node back, or pass --force to remove it anyway; nothing changed", strings.Join(one, ", "), plan.DC.Name)
	}
	plan.Warnings = append(plan.Warnings, fmt.Sprintf("--force: keyspace %s has replication factor 1 in %s: the dead node's data in it is lost", strings.Join(one, ", "), plan.DC.Name))
	return nil
}

// deadAssess is abort's judgment of a dead node removed with removenode (rm, its
// removenode step): never issued, it stays a dead member of the ring (note says what
// then); once issued, a removal cannot be cancelled: removed in full it counts as done,
// else abort refuses and resume finishes it.
func deadAssess(ctx context.Context, r operation.AbortReads, cp *record.Checkpoint, n record.Node, rm record.Step) (note string, err error) {
	ns := cp.Namespace
	if rm.State == record.StatePending {
		return fmt.Sprintf("node %s was not removed: it stays in the ring, dead; replace it (kubectl cassandra replace-node -n %s %s --pod %s) or remove it (scale --remove-dead)",
			n.Pod, ns, cp.Cluster, n.Pod), nil
	}
	reader := steps.CoordinatorOf(n)
	ring, err := r.Nodetool.Status(ctx, reader)
	if err != nil || len(ring.Nodes) == 0 {
		return "", exit.Refusedf("cannot read the ring from %s (%v): abort needs to know whether node %s is being removed; nothing changed", reader, err, n.Pod)
	}
	if row, member := ring.ByHostID(n.HostID); member {
		return "", exit.Refusedf("node %s may be being removed (removenode %s at attempt %d; it is %s on %s): a removal cannot be cancelled once issued. "+
			"resume finishes removing it (waits until it left, shrinks the StatefulSet, deletes its PVCs) and continues the plan: %s",
			n.Pod, rm.State, rm.Attempts, row.Code(), reader, r.ResumeHint)
	}
	return "", removed(ctx, r, ns, n)
}

// deadUntouched is abort's note for a node whose decommission was never sent and that
// died meanwhile: its nodetool cannot connect (ntErr) and a peer sees it DN (not DL:
// nothing removes it). It stays in the ring, untouched; "" when that is not shown.
func deadUntouched(ctx context.Context, r operation.AbortReads, n record.Node, sent bool, ntErr error) string {
	var unreachable *pubnodetool.UnreachableError
	if sent || !errors.As(ntErr, &unreachable) {
		return ""
	}
	reader := peerOf(n)
	ring, err := r.Nodetool.Status(ctx, reader)
	if err != nil {
		return ""
	}
	if row, ok := ring.ByHostID(n.HostID); !ok || row.Code() != "DN" {
		return ""
	}
	return fmt.Sprintf("node %s is dead (DN on %s, its nodetool silent) and was not touched: it stays in the ring; remove it (scale --remove-dead) or replace it (replace-node)", n.Pod, reader)
}
