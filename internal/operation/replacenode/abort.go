package replacenode

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// A replace may be aborted until the dead node's data is discarded: before its claims
// are deleted (CassKop; its pod, when it had no claims at planning: noreturn.go), or,
// on cass-operator, while its task has not reached the pod (abort withdraws it) or once
// the task left the pod in place (abort_task.go). After that only resume goes forward.
// Both are read from the world whatever the checkpoint says: the steps that delete the
// claims and create the task are evident (their start is not written before they act),
// so a run killed right after one leaves it pending.

// assess is abort's check (operation.Abort).
func assess(ctx context.Context, r operation.AbortReads, cp *record.Checkpoint) (pub.Progress, error) {
	p := pub.Progress{Total: 1}
	if cp.Replace == nil || len(cp.Nodes) != 1 {
		return p, nil
	}
	ru := &run{w: &steps.World{Kube: r.Kube(), CP: cp}, rep: cp.Replace, n: cp.Nodes[0]}
	if cp.Replace.Task != "" {
		ru.w.Tasks = r.Tasks
		return ru.assessTask(ctx, r, p)
	}
	planned, err := ru.plannedClaims(ctx)
	if err != nil {
		return p, exit.Refusedf("%v: abort needs to know the dead node's claims are intact; nothing changed", err)
	}
	if cp.Replace.NewNode != "" {
		return p, exit.Refusedf("%s; abort cannot give the dead node's data back: %s", ru.newNodeText(cp.Replace.NewNode), ru.removenodeWay())
	}
	if note := ru.removedByHand(ctx, r.Nodetool); note != "" {
		p.Notes = append(p.Notes, note)
		return p, nil
	}
	if len(planned) < len(cp.Nodes[0].PVCs) {
		return p, exit.Refusedf("the dead node's claims are deleted: its data is gone, so abort cannot give it back; resume finishes the replace: %s", r.ResumeHint)
	}
	if len(cp.Nodes[0].PVCs) == 0 {
		// No claims at planning: the pod's deletion is the point of no return (its
		// replacement starts with the option on a fresh volume).
		gone, err := ru.podDiscarded(ctx)
		if err != nil {
			return p, exit.Refusedf("%v: abort needs to know the dead node's pod was not deleted; nothing changed", err)
		}
		if gone != "" {
			return p, exit.Refusedf("%s and its replacement starts with the replace option, so abort cannot take it back; resume finishes the replace: %s", gone, r.ResumeHint)
		}
	}
	dying := dyingClaims(planned)
	if len(dying) == 0 {
		return p, nil
	}
	// The claims are being deleted. If the node came back on them (its pod was
	// re-created before they went, and Cassandra ignores replace_address_first_boot on
	// a bootstrapped node), resume must never replace it: abort is the way out, and it
	// must say loudly what Kubernetes will still do.
	alive, why := ru.aliveOn(ctx, r.Nodetool)
	if alive {
		p.Notes = append(p.Notes, fmt.Sprintf("WARNING: the node of pod %s came back and runs on claims being deleted (%s): Kubernetes deletes them, and the node's data with them, "+
			"the next time that pod goes (a restart, an eviction, a drain of its Kubernetes node); no API can take a deletion back. Until then the node serves as before. "+
			"To replace it on your terms: delete pod %s, and once its node shows DN run kubectl cassandra replace-node -n %s %s --pod %s",
			cp.Replace.Pod, strings.Join(dying, ", "), cp.Replace.Pod, cp.Namespace, cp.Cluster, cp.Replace.Pod))
		return p, nil
	}
	return p, exit.Refusedf("the dead node's claims are being deleted (%s) and %s: its data goes with its pod, so abort cannot give it back; resume finishes the replace: %s",
		strings.Join(dying, ", "), why, r.ResumeHint)
}

// removedByHand is, past the point of no return, what abort says when the dead node was
// removed from the ring by hand before its pod went (nodetool removenode): nothing is
// left to replace, and resume cannot write the option for a node the ring no longer
// knows, so abort ends the operation. "" otherwise: the planned pod is deleted (a
// replacement may be on its way: the dead row also goes once it is announced), or the
// ring read from the planning's reader does not show the dead node gone.
func (r *run) removedByHand(ctx context.Context, nt operation.NodeInfo) string {
	if r.n.PodUID == "" || r.rep.Reader == "" {
		return ""
	}
	if gone, err := r.plannedPodGone(ctx); err != nil || gone {
		return ""
	}
	past, err := r.pastNoReturn(ctx)
	if err != nil || past == "" {
		return ""
	}
	ring, err := nt.Status(ctx, r.rep.Reader)
	if err != nil || len(ring.Nodes) == 0 {
		return ""
	}
	if _, listed := ring.ByHostID(r.rep.HostID); listed {
		return ""
	}
	return fmt.Sprintf("the dead node (Host ID %s) is no longer in the ring read from %s (removed by hand) while its pod %s was not deleted yet: nothing is left to replace, so abort ends the operation. "+
		"Pod %s runs no node and %s: delete it (kubectl delete pod -n %s %s) and its StatefulSet starts a new node on fresh claims, which bootstraps as one",
		r.rep.HostID, r.rep.Reader, r.rep.Pod, r.rep.Pod, past, r.w.CP.Namespace, r.rep.Pod)
}

// dyingClaims names the claims being deleted.
func dyingClaims(cs []corev1.PersistentVolumeClaim) []string {
	var out []string
	for _, c := range cs {
		if c.DeletionTimestamp != nil {
			out = append(out, c.Name)
		}
	}
	return out
}

// aliveOn is whether the pod's node runs again: the pod is there, not being deleted,
// and its own nodetool says its node (the planned Host ID) is UN. Otherwise it says
// what it found instead.
func (r *run) aliveOn(ctx context.Context, nt operation.NodeInfo) (bool, string) {
	pod, err := r.pod(ctx, r.rep.Pod)
	switch {
	case err != nil:
		return false, "pod " + r.rep.Pod + " cannot be read (" + err.Error() + ")"
	case pod == nil:
		return false, "pod " + r.rep.Pod + " is gone"
	case pod.DeletionTimestamp != nil:
		return false, "pod " + r.rep.Pod + " is being deleted"
	case !containerRunning(pod, r.w.Container):
		return false, "pod " + r.rep.Pod + " runs no Cassandra"
	}
	ring, err := nt.Status(ctx, pod.Name)
	if err != nil {
		return false, "the node of pod " + pod.Name + " does not answer nodetool (" + err.Error() + ")"
	}
	if row, ok := ring.ByHostID(r.rep.HostID); ok && row.Code() == "UN" {
		return true, ""
	}
	return false, "the node of pod " + pod.Name + " does not report itself UN"
}

// undo takes the replace option out of the start script, so that no later start of
// the pod replaces (operation.Abort.Undo); it says what it did.
func undo(ctx context.Context, r operation.AbortReads, cp *record.Checkpoint) (string, error) {
	if cp.Replace != nil && cp.Replace.Task != "" && len(cp.Nodes) == 1 {
		return undoTask(ctx, r, cp)
	}
	if cp.Replace == nil || cp.Replace.ConfigMap == "" || len(cp.Nodes) != 1 {
		return "", nil
	}
	ru := &run{w: &steps.World{Kube: r.Kube(), CP: cp}, rep: cp.Replace, n: cp.Nodes[0]}
	had, err := (&setOption{ru}).written(ctx)
	if err != nil {
		return "", err
	}
	if !had {
		return "", nil
	}
	if err := ru.removeBlock(ctx); err != nil {
		return "", fmt.Errorf("cannot take the replace option out of ConfigMap %s: %w", cp.Replace.ConfigMap, err)
	}
	return fmt.Sprintf("Took the replace option for %s out of ConfigMap %s.", cp.Replace.Pod, cp.Replace.ConfigMap), nil
}
