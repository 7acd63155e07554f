package scaledown

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// A node may have left the ring while its pod, its StatefulSet slot and its claims are
// still there: a run decommissioned it, then its checkpoint was removed (a GitOps sync,
// `kubectl annotate …-`) before the run shrank the StatefulSet. The checkpoint is a lock
// and a log of intent, the world is the truth: the plan finishes that node's removal
// instead of refusing, and records its decommission and its verification done (the
// planner saw both in the world; the engine asks the world again anyway).

// leftWhy says why the node of pod, which a successful ring read does not list, is not
// taken for a node that left it ("" when it is one). Its own mode must be
// DECOMMISSIONED: Cassandra keeps that state with the node's data (a decommissioned
// node refuses to start again), so a node on new, empty claims is never in it. And
// each of its claims must be older than the pod: a claim created since cannot be the
// one its node ran on.
func leftWhy(mode pubnodetool.Mode, pod corev1.Pod, claims []*corev1.PersistentVolumeClaim) string {
	if mode != pubnodetool.ModeDecommissioned {
		return fmt.Sprintf("its node is %s, not DECOMMISSIONED", mode)
	}
	for _, c := range claims {
		if c != nil && c.CreationTimestamp.After(pod.CreationTimestamp.Time) {
			return fmt.Sprintf("its PVC %s was created after the pod (%s): it is not the one its node ran on",
				c.Name, c.CreationTimestamp.UTC().Format(time.RFC3339))
		}
	}
	return ""
}

// leftFinding is the plan's line for a node that already left the ring.
func leftFinding(pod string) string {
	return fmt.Sprintf("node %s already left the ring (a previous run's work): finishing its removal", pod)
}

// judgeMember sorts out a leaving node whose Host ID the ring read from reader does not
// list: one that already left it (true), or a refusal. Unknown (its mode unreadable)
// is a refusal too. Nodes leave highest ordinal first, so a node that left cannot sit
// below one that is still a member (above: another planned node of its rack is).
func (f *preflight) judgeMember(ctx context.Context, n record.Node, pod corev1.Pod, claims []*corev1.PersistentVolumeClaim, above string) error {
	notIn := fmt.Sprintf("node %s (Host ID %s) is not in the ring read from %s", n.Pod, n.HostID, f.reader)
	ns, err := f.p.Nodetool.Netstats(ctx, n.Pod)
	if err != nil {
		return exit.Refusedf("%s and its own state cannot be read (%v): whether it left the ring is unknown; nothing changed", notIn, err)
	}
	if why := leftWhy(ns.Mode, pod, claims); why != "" {
		if err := f.unready[n.Pod]; err != nil {
			return err
		}
		return exit.Refusedf("%s (%s); nothing changed", notIn, why)
	}
	if above != "" {
		return exit.Refusedf("node %s left the ring but node %s above it in StatefulSet %s is still a member: a StatefulSet removes its highest pod first, so the plan cannot finish %s's removal; nothing changed",
			n.Pod, above, n.StatefulSet, n.Pod)
	}
	f.left[n.Pod] = true
	return nil
}

// markLeft records the decommission and the verification of each node that left the
// ring as done, at now: the planner saw both in the world.
func markLeft(list []record.Step, left map[string]bool, now time.Time) {
	for i := range list {
		s := &list[i]
		if left[s.Pod] && (s.Kind == record.StepDecommission || s.Kind == record.StepVerifyLeft) {
			s.State, s.FinishedAt = record.StateDone, &now
		}
	}
}

// deferUnready runs CheckPods' check on every pod of the racks but keeps, instead of
// refusing at once, the refusal of a leaving pod that exists and is only not Ready: the
// node of such a pod may have left the ring already (judgeMember), which it says only
// once the ring is read.
func deferUnready(ns string, states []operation.RackNow, keep func(rack string) int) (map[string]error, error) {
	unready := map[string]error{}
	for _, st := range states {
		keep := keep(st.Rack.Name)
		for i := 0; i < st.Cur; i++ {
			err := st.PodProblem(ns, "scale-down", i)
			pod, exists := st.Pods[i]
			switch {
			case err == nil:
			case i >= keep && exists && pod.DeletionTimestamp == nil:
				unready[pod.Name] = err
			default:
				return nil, err
			}
		}
	}
	return unready, nil
}
