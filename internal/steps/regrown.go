package steps

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/observation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// A planned pod's name may come back with another pod while the plan runs. Re-created
// on its claims with the same node (evicted, its Kubernetes node drained), it is the
// same node (adopted, safenow.go). But once its claims were deleted, a StatefulSet grown
// again (a paused operator scaled back up by someone) re-creates it on new claims: a
// new node. Before the shrink removes such a pod, the ring says what it is: a node that
// joined must be decommissioned first; one that never joined is removed with its new
// claims, which the checkpoint records before anything acts.

// regrowth is what the pod at a planned node's name is, next to the plan.
type regrowth int

const (
	// regrowNone: the planned pod (or its adopted successor), or no pod: nothing to judge.
	regrowNone regrowth = iota
	// regrowJoined: a node of the ring runs on the pod: decommission it before the shrink.
	regrowJoined
	// regrowUnrecorded: no node of the ring runs on the pod, but it mounts claims the
	// checkpoint does not record (new ones): record them before removing it.
	regrowUnrecorded
	// regrowOut: no node of the ring runs on the pod and the checkpoint records its
	// claims: the shrink may remove it.
	regrowOut
)

// judgeRegrown is what pod p, another incarnation than the planned one that does not
// run the planned node, is. r is a successful ring read, podIPs the addresses of every
// pod of the cluster, claims the claims now under the names rec records (nil: none).
// A ring member at no pod's address could be the pod's node (a broadcast address of
// its own): then nobody can tell, and it is an error.
func judgeRegrown(rec record.Node, p *corev1.Pod, r pubnodetool.Ring, podIPs []string, claims map[string]*corev1.PersistentVolumeClaim) (regrowth, pubnodetool.Node, error) {
	if row, ok := r.ByAddress(p.Status.PodIP); ok {
		return regrowJoined, row, nil
	}
	for _, row := range r.Nodes {
		if !anyAddress(row.Address, podIPs) {
			return regrowNone, pubnodetool.Node{}, fmt.Errorf("node %s (Host ID %s) is in the ring at an address no pod of the cluster has: whether it runs on pod %s (re-created, UID %s) cannot be told",
				row.Address, row.HostID, p.Name, p.UID)
		}
	}
	for _, c := range rec.PVCs {
		if now := claims[c.Name]; now != nil && string(now.UID) != c.UID {
			return regrowUnrecorded, pubnodetool.Node{}, nil
		}
	}
	return regrowOut, pubnodetool.Node{}, nil
}

func anyAddress(a string, list []string) bool {
	for _, b := range list {
		if pubnodetool.SameAddress(a, b) {
			return true
		}
	}
	return false
}

// regrown is the judgement of the pod at n's name right before the shrink removes it,
// with what it rests on: the pod, the ring's row of its node (regrowJoined), its claims
// and the ring's reader (for messages).
type regrown struct {
	what   regrowth
	pod    *corev1.Pod
	row    pubnodetool.Node
	claims map[string]*corev1.PersistentVolumeClaim
	reader string
}

// judgeRegrownPod reads what judgeRegrown needs about n's pod. Unknown (an unreadable
// ring or pod list) is an error: the shrink must not remove what nobody can tell.
func (w *World) judgeRegrownPod(ctx context.Context, n record.Node) (regrown, error) {
	if ns, ok := observation.Kept(&w.obs, netstatsKind, n.Pod); ok && ns.Mode == pubnodetool.ModeDecommissioned {
		// The node on the pod said DECOMMISSIONED in this pause (verify-left's read, at no
		// cost): it left the ring, and nothing on the pod joins it again.
		return regrown{}, nil
	}
	p, gone, err := w.pod(ctx, n)
	if err != nil || p == nil || !gone {
		return regrown{}, err
	}
	g := regrown{pod: p, claims: map[string]*corev1.PersistentVolumeClaim{}}
	rec := w.current(n)
	for _, c := range rec.PVCs {
		pvc, err := w.getPVC(ctx, c.Name)
		if err != nil {
			return g, err
		}
		g.claims[c.Name] = pvc
	}
	r, reader, err := w.ring(ctx)
	if err != nil {
		return g, fmt.Errorf("cannot tell whether the node of pod %s (re-created, UID %s) is in the ring: %w", p.Name, p.UID, err)
	}
	g.reader = reader
	pods, err := w.Kube.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.ClusterSelector})
	if err != nil {
		return g, fmt.Errorf("cannot list the cluster's pods: %w", err)
	}
	var ips []string
	for _, q := range pods.Items {
		ips = append(ips, q.Status.PodIP)
	}
	g.what, g.row, err = judgeRegrown(rec, p, r, ips, g.claims)
	return g, err
}

// current is n as the checkpoint records it now: a regrown pod's new claims, Host ID
// and address are recorded in it during the run (the steps hold n as planned).
func (w *World) current(n record.Node) record.Node {
	if w.CP != nil {
		if c, ok := w.CP.Node(n.Pod); ok {
			return c
		}
	}
	return n
}

// claimsNow are the claims recorded under n's names as g read them (name and UID), the
// ones that no longer exist left out.
func (g regrown) claimsNow(n record.Node) []record.PVC {
	var out []record.PVC
	for _, c := range n.PVCs {
		if now := g.claims[c.Name]; now != nil {
			out = append(out, record.PVC{Name: c.Name, UID: string(now.UID)})
		}
	}
	return out
}

// claimText lists claims with their UIDs, for messages.
func claimText(claims []record.PVC) string {
	var s []string
	for _, c := range claims {
		s = append(s, c.Name+" (UID "+c.UID+")")
	}
	if len(s) == 0 {
		return "no PVC"
	}
	return strings.Join(s, ", ")
}

// amendNode changes the checkpoint's record of pod; the next write carries it.
func (w *World) amendNode(pod string, change func(n *record.Node)) {
	apply := func() {
		for i := range w.CP.Nodes {
			if w.CP.Nodes[i].Pod == pod {
				change(&w.CP.Nodes[i])
			}
		}
	}
	if w.Amend != nil {
		w.Amend(apply)
	} else {
		apply()
	}
}

// recordJoined makes the new node on n's pod the one the plan removes: its pod UID is
// adopted, its Host ID, address and claims recorded. The decommission gone back to
// writes them with its start, before it acts.
func (w *World) recordJoined(n record.Node, g regrown) string {
	claims := g.claimsNow(w.current(n))
	why := fmt.Sprintf("it runs a new node (Host ID %s, %s in the ring read from %s) on %s: it is decommissioned before the StatefulSet removes it",
		g.row.HostID, g.row.Code(), g.reader, claimText(claims))
	w.adopt(n, string(g.pod.UID), why)
	w.amendNode(n.Pod, func(r *record.Node) {
		r.HostID, r.Address, r.PVCs = g.row.HostID, g.pod.Status.PodIP, claims
	})
	return fmt.Sprintf("the new node on pod %s (Host ID %s) joined the ring: it is decommissioned before the StatefulSet removes it", n.Pod, g.row.HostID)
}

// recordUnjoined records the claims of the pod on n's name whose node never joined the
// ring, as the ones the plan deletes (the planned ones are gone); the pod's UID is not
// adopted (its node has no Host ID: the steps before the shrink judge it by the ring).
func (w *World) recordUnjoined(n record.Node, g regrown) string {
	was := w.current(n).PVCs
	claims := g.claimsNow(w.current(n))
	w.amendNode(n.Pod, func(r *record.Node) { r.PVCs = claims })
	return fmt.Sprintf("pod %s was re-created (UID %s) on new PVCs (%s; planned %s) and its node never joined the ring (read from %s): "+
		"a new, empty node; its PVCs are recorded in the checkpoint before the StatefulSet removes it", n.Pod, g.pod.UID, claimText(claims), claimText(was), g.reader)
}
