package operation

import (
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
)

// NeededAccessFor lists the permissions an operation of kind uses (NeededAccess is the
// scale-down's). statusSubresource says whether a repair writes the cluster resource's
// status through its /status subresource.
func NeededAccessFor(kind, ns, crGroup, crResource string, statusSubresource bool, pause *checkpoint.PausedOperator) []Access {
	if kind == checkpoint.KindScaleDown {
		return NeededAccess(ns, crGroup, crResource, pause)
	}
	acc := []Access{
		{crGroup, crResource, "", "get", ns, "read the cluster and its checkpoint"},
		{crGroup, crResource, "", "patch", ns, "write the checkpoint annotation"},
		{"", "pods", "", "list", ns, "find the rack's pods"},
		{"", "pods", "exec", "create", ns, "run nodetool"},
		{"apps", "statefulsets", "", "get", ns, "read the rack's StatefulSet"},
	}
	switch kind {
	case checkpoint.KindScaleUp:
		acc[1].Why = "write the checkpoint annotation and nodesPerRacks"
		acc = append(acc,
			Access{"apps", "statefulsets", "", "patch", ns, "grow the StatefulSet"},
			Access{"", "persistentvolumeclaims", "", "get", ns, "check no claim of a new pod is left over"})
	case checkpoint.KindRestart:
		acc = append(acc, Access{"", "pods", "", "delete", ns, "delete each drained pod"})
	case checkpoint.KindRepairOperator:
		acc = append(acc,
			Access{"", "pods", "", "watch", ns, "wait until a pod is gone"},
			Access{"apps", "statefulsets", "", "patch", ns, "shrink the StatefulSet"},
			Access{"", "persistentvolumeclaims", "", "get", ns, "read the leftover PVCs"},
			Access{"", "persistentvolumeclaims", "", "delete", ns, "delete the leftover PVCs"})
		if statusSubresource {
			acc = append(acc, Access{crGroup, crResource, "status", "patch", ns, "write the operator's status"})
		} else {
			acc[1].Why = "write the checkpoint annotation and the operator's status"
		}
	}
	if pause != nil {
		acc = append(acc, Access{"apps", "deployments", "", "patch", pause.Namespace, "pause and restore the operator"})
	}
	return acc
}

// Summary says in one line what a finished operation did.
func Summary(cp *checkpoint.Checkpoint) string {
	count := func(kind string) int {
		n := 0
		for _, s := range cp.Steps {
			if s.Kind == kind {
				n++
			}
		}
		return n
	}
	switch cp.Kind {
	case checkpoint.KindScaleUp:
		s := fmt.Sprintf("datacenter %s racks %s scaled to %d nodes (%d added)", cp.Target.DC, strings.Join(cp.Target.Racks, ","), cp.Target.Nodes, count(checkpoint.StepGrowSTS))
		if c := count(checkpoint.StepCleanup); c > 0 {
			s += fmt.Sprintf(", nodetool cleanup on %d nodes", c)
		}
		return s
	case checkpoint.KindRestart:
		return fmt.Sprintf("datacenter %s racks %s restarted (%d pods, one at a time)", cp.Target.DC, strings.Join(cp.Target.Racks, ","), count(checkpoint.StepDeletePod))
	case checkpoint.KindRepairOperator:
		var pods []string
		for _, n := range cp.Nodes {
			pods = append(pods, n.Pod)
		}
		return fmt.Sprintf("CassKop's stuck decommission of %s finished and marked done (datacenter %s racks %s)", strings.Join(pods, ", "), cp.Target.DC, strings.Join(cp.Target.Racks, ","))
	}
	return fmt.Sprintf("datacenter %s racks %s scaled to %d nodes (%d removed)", cp.Target.DC, strings.Join(cp.Target.Racks, ","), cp.Target.Nodes, len(cp.Nodes))
}
