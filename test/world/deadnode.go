package world

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// A dead node and who it was: what the replace-node tests set up and check against
// (issue 25; docs/how-it-works/replace.md §4.3, §4.4).

// DeadNode is the identity of a node KillNode killed, read while it was alive: what its
// replacement must take over.
type DeadNode struct {
	Pod, HostID, Address string
	// Tokens are its tokens (`nodetool info -T`), sorted as nodetool prints them.
	Tokens []string
}

// KillNode kills pod's Cassandra as a lost disk or host does: the JVM is down (peers see
// DN; nodetool on it fails to connect, sim Fault.Down), and its pod is not Ready. The
// pod stays, as a pod of a dead Kubernetes node does until deleted.
func (w *World) KillNode(pod string) DeadNode {
	w.t.Helper()
	nv, err := w.Cass.Node(pod)
	if err != nil {
		w.t.Fatal(err)
	}
	toks, err := w.Tokens(pod)
	if err != nil {
		w.t.Fatalf("KillNode %s: %v", pod, err)
	}
	if w.co != nil {
		w.killCassOperatorNode(pod)
	} else {
		w.SetDown(pod, true)
		w.setReady(pod, false)
	}
	return DeadNode{Pod: pod, HostID: nv.HostID, Address: nv.Address, Tokens: toks}
}

// setReady sets pod's Ready condition, as the kubelet's readiness probe would.
func (w *World) setReady(pod string, ready bool) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	obj, err := w.Kube.Tracker().Get(podsGVR, w.NS, pod)
	if err != nil {
		w.t.Fatal(err)
	}
	p := obj.(*corev1.Pod).DeepCopy()
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	w.rv++
	p.ResourceVersion = fmt.Sprintf("%d", 100+w.rv)
	if err := w.Kube.Tracker().Update(podsGVR, p, w.NS); err != nil {
		w.t.Fatal(err)
	}
}

// PodReady reports pod's Ready condition (false when there is no such pod).
func (w *World) PodReady(pod string) bool {
	obj, err := w.Kube.Tracker().Get(podsGVR, w.NS, pod)
	if err != nil {
		return false
	}
	for _, c := range obj.(*corev1.Pod).Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Tokens are the tokens pod's node owns, from `nodetool info -T` on it: its JVM must
// run and the node be joined (a joining node prints none).
func (w *World) Tokens(pod string) ([]string, error) {
	var out, errb bytes.Buffer
	if code := w.Cass.Run(context.Background(), pod, []string{"info", "-T"}, &out, &errb); code != 0 {
		return nil, fmt.Errorf("nodetool info -T on %s: exit %d: %s%s", pod, code, out.String(), errb.String())
	}
	var toks []string
	for _, l := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "Token" {
			if v = strings.TrimSpace(v); !strings.HasPrefix(v, "(") {
				toks = append(toks, v)
			}
		}
	}
	return toks, nil
}

// Endpoint is the node with that Host ID that peers know, detached ones (no pod) and
// dead ones included: ok false once it is gone from the ring and gossip, as a replaced
// node is when its replacement is NORMAL (§4.4 "done").
func (w *World) Endpoint(hostID string) (nv sim.NodeView, ok bool) {
	w.t.Helper()
	eps, err := w.Cass.Endpoints()
	if err != nil {
		w.t.Fatal(err)
	}
	for _, e := range eps {
		if e.HostID == hostID {
			return e, true
		}
	}
	return sim.NodeView{}, false
}

// ReviveNode brings pod's killed Cassandra back on its own data, as a pod re-created on
// its old claims does (replace_address_first_boot is ignored by a node that has
// bootstrapped: docs/how-it-works/replace.md, isReplacing): peers see it UN, the pod is Ready.
func (w *World) ReviveNode(pod string) {
	w.t.Helper()
	w.SetDown(pod, false)
	w.setReady(pod, true)
}
