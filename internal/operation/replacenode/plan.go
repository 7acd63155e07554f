package replacenode

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Plan implements operation.Kind. Every precondition is read from the real world, and
// any failure refuses with exit 3 before anything changed (docs/how-it-works/replace.md
// §4.2): the node is DN as seen by a UN node in a successful ring read, and its
// nodetool does not answer; every other node of the datacenter is UN and none of the
// cluster joins, leaves or moves; it is no seed (unless --allow-seed). The dead node's
// Host ID, address, token count and Load go into the checkpoint before any step runs.
func (k Kind) Plan(ctx context.Context, env *pub.Env) (*pub.Plan, error) {
	p, cl, req := operation.PlannerOf(env), env.Cluster, pub.KindRequestOf[Options](env.Request)
	dc, rack, err := rackOf(cl, req.Options.Pod)
	if err != nil {
		return nil, err
	}
	ns := cl.Namespace
	pod, err := p.Pod(ctx, ns, req.Options.Pod)
	if err != nil {
		return nil, exit.Refusedf("%v: replace-node needs to know the pod; nothing changed", err)
	}
	replicas, err := p.Replicas(ctx, ns, rack.StatefulSet)
	if err != nil {
		return nil, exit.Refusedf("%v; nothing changed", err)
	}
	ordinal, _ := topology.Ordinal(req.Options.Pod, rack.StatefulSet)
	if err := notInPlace(req.Options.Pod, ns, rack.StatefulSet, pod, ordinal, replicas); err != nil {
		return nil, err
	}
	ring, reader, readerPod, err := readRingElsewhere(ctx, env, req.Options.Pod)
	if err != nil {
		return nil, err
	}
	live, err := liveAddresses(ctx, p, ns, env.Adapter.ClusterSelector(cl.Name), req.Options.Pod)
	if err != nil {
		return nil, err
	}
	row, err := deadRow(ring, dc.Name, rack.Name, req.Options.Pod, podIP(pod), req.Options.Address, live)
	if err != nil {
		return nil, exit.Refusedf("%v (ring read from %s); nothing changed", err, reader)
	}
	if err := notReplaceableNow(ring, dc.Name, row, readerPod, reader, req.Options.Pod, cl); err != nil {
		return nil, err
	}
	if err := notAnswering(ctx, p, pod, env.Adapter.Container()); err != nil {
		return nil, err
	}
	if cl.IsSeed(req.Options.Pod) && !req.Options.AllowSeed {
		return nil, seedRefusal(req.Options.Pod, env.Adapter.Kind())
	}
	v, err := operation.ClusterVersion(ctx, env, reader, "cannot tell the Cassandra version (%v), on which the replace mechanism depends; nothing changed")
	if err != nil {
		return nil, err
	}
	claims, err := readClaims(ctx, p, ns, rack.StatefulSet, req.Options.Pod)
	if err != nil {
		return nil, err
	}
	rep := &record.Replacement{Pod: req.Options.Pod, HostID: row.HostID, Address: row.Address, Tokens: tokenCount(row), Load: row.Load,
		Reader: reader, Version: v.String(), Seed: cl.IsSeed(req.Options.Pod)}
	byTask, err := mechanism(ctx, env, rep)
	if err != nil {
		return nil, err
	}
	cp := p.NewCheckpoint(cl, k, "replace", req.Request)
	if byTask {
		rep.Task = operator.TaskName(cp.OperationID, operator.TaskReplaceNode)
	}
	cp.Target = record.Target{DC: dc.Name, Racks: []string{rack.Name}, Nodes: max(rack.Nodes, 1), From: map[string]int{rack.Name: replicas}}
	cp.Nodes = []record.Node{replacedNode(pod, req.Options.Pod, ordinal, dc, rack, row, claims)}
	cp.Replace = rep
	cp.Steps = Steps(rep, req.Pause != nil)
	plan := &pub.Plan{CP: cp, Cluster: cl, DC: dc, Racks: []topology.Rack{rack}}
	plan.Warnings = append(plan.Warnings, replaceWarnings(req, rep, env.Adapter.Kind())...)
	if err := throttle(ctx, env, plan, dc, ring, reader); err != nil {
		return nil, err
	}
	return plan, nil
}

// notInPlace refuses a pod that is not where a replace can act: beyond its
// StatefulSet's replicas (being removed), or being deleted.
func notInPlace(name, ns, sts string, pod *corev1.Pod, ordinal, replicas int) error {
	if ordinal >= replicas {
		return exit.Refusedf("pod %s is beyond StatefulSet %s's %d replicas: it is being removed, not replaced; nothing changed", name, sts, replicas)
	}
	if pod != nil && pod.DeletionTimestamp != nil {
		return exit.Refusedf("pod %s is being deleted: wait until its StatefulSet created it again (kubectl get pod -n %s %s), then run replace-node again; nothing changed", name, ns, name)
	}
	return nil
}

// readRingElsewhere reads the ring on another node than the one replaced, and that
// node's pod (its address tells the reader's own row).
func readRingElsewhere(ctx context.Context, env *pub.Env, replaced string) (pubnodetool.Ring, string, *corev1.Pod, error) {
	p, ns := operation.PlannerOf(env), env.Cluster.Namespace
	ring, reader, failed, err := steps.RingExcept(ctx, p.Kube(), p.Nodetool, ns, env.Adapter.ClusterSelector(env.Cluster.Name), replaced)
	if err != nil {
		return ring, "", nil, exit.Refusedf("%v; nothing changed", err)
	}
	if reader == "" {
		return ring, "", nil, exit.Refusedf("no other node could read the ring (%s): whether %s's node is down is unknown, and a replace needs a node that sees it down; nothing changed",
			orNone(failed), replaced)
	}
	readerPod, err := p.Pod(ctx, ns, reader)
	if err != nil || readerPod == nil {
		return ring, "", nil, exit.Refusedf("cannot read pod %s, which read the ring (%v); nothing changed", reader, err)
	}
	return ring, reader, readerPod, nil
}

// podIP is the pod's address ("" without a pod).
func podIP(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	return pod.Status.PodIP
}

// notReplaceableNow refuses while the rest of the ring is not as a replace needs it
// (ringProblems), or when the dead node's row lacks the Host ID or tokens it takes over.
func notReplaceableNow(ring pubnodetool.Ring, dc string, row pubnodetool.Node, readerPod *corev1.Pod, reader, pod string, cl topology.Cluster) error {
	if bad := ringProblems(ring, dc, row.HostID, readerPod.Status.PodIP); len(bad) > 0 {
		return exit.Refusedf("cannot replace %s's node now: %s (ring read from %s); wait until it is so (kubectl cassandra status -n %s %s); nothing changed",
			pod, strings.Join(bad, "; "), reader, cl.Namespace, cl.Name)
	}
	if row.HostID == "" || (row.Tokens < 1 && row.Token == "") {
		return exit.Refusedf("the ring read from %s shows no Host ID or tokens for %s's node (%s): a replace takes over a node's tokens, and needs both; nothing changed", reader, pod, row.Address)
	}
	return nil
}

// seedRefusal refuses a seed without --allow-seed: its replacement would not bootstrap.
func seedRefusal(pod, resource string) error {
	return exit.Refusedf("pod %s is a seed (the %s lists it): a node in its own seed list does not bootstrap, and since Cassandra 3.11.11 and 4.0.1 a replace that would not bootstrap refuses to start "+
		"(\"Replacing a node without bootstrapping risks invalidating consistency guarantees…\", CASSANDRA-14463; docs/how-it-works/replace.md §4.2 R3). Take the pod off the seed list first, "+
		"or, if you know its seed list will not name it, run again with --allow-seed; nothing changed", pod, resource)
}

// replacedNode is the checkpoint's record of the node replaced: where it is, the dead
// node's identity, its claims, and the pod's UID when there is a pod.
func replacedNode(pod *corev1.Pod, name string, ordinal int, dc topology.DC, rack topology.Rack, row pubnodetool.Node, claims []record.PVC) record.Node {
	n := record.Node{Pod: name, Ordinal: ordinal, DC: dc.Name, Rack: rack.Name, StatefulSet: rack.StatefulSet, HostID: row.HostID, Address: row.Address, PVCs: claims}
	if pod != nil {
		n.PodUID = string(pod.UID)
	}
	return n
}

// replaceWarnings is what the plan warns of: the operator's pause, and a seed replaced
// under --allow-seed.
func replaceWarnings(req pub.KindRequest[Options], rep *record.Replacement, resource string) []string {
	out := operation.PauseWarnings(req.Pause, resource)
	if rep.Seed {
		out = append(out, fmt.Sprintf("pod %s is a seed (--allow-seed): if its seed list names it, its replacement refuses to start (R3); the run then stops with Cassandra's error", req.Options.Pod))
	}
	return out
}

// rackOf is the datacenter and rack whose StatefulSet pod belongs to.
func rackOf(cl topology.Cluster, pod string) (topology.DC, topology.Rack, error) {
	for _, dc := range cl.DCs {
		for _, r := range dc.Racks {
			if _, ok := topology.Ordinal(pod, r.StatefulSet); ok {
				return dc, r, nil
			}
		}
	}
	var sts []string
	for _, dc := range cl.DCs {
		for _, r := range dc.Racks {
			sts = append(sts, r.StatefulSet)
		}
	}
	return topology.DC{}, topology.Rack{}, exit.Usagef("pod %q is no pod of cluster %s (its StatefulSets: %s); nothing changed", pod, cl.Name, strings.Join(sts, ", "))
}

// liveAddresses are the addresses of the cluster's pods other than except: a DN row at
// one of them belongs to that pod, not to the dead node.
func liveAddresses(ctx context.Context, p *operation.Planner, ns, selector, except string) (map[string]bool, error) {
	l, err := p.Kube().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, exit.Refusedf("cannot list the cluster's pods: %v; nothing changed", err)
	}
	out := map[string]bool{}
	for _, pod := range l.Items {
		if pod.Name != except && pod.Status.PodIP != "" {
			out[pod.Status.PodIP] = true
		}
	}
	return out, nil
}

// notAnswering refuses unless the node's nodetool cannot answer: no pod, no running
// Cassandra container, or nodetool failing to connect to its JMX port. An answer, or a
// failure that says nothing about the node (the API, the exec), refuses: a replace of a
// node that may be alive is never started.
func notAnswering(ctx context.Context, p *operation.Planner, pod *corev1.Pod, container string) error {
	if pod == nil || !containerRunning(pod, container) {
		return nil
	}
	info, err := p.Nodetool.Info(ctx, pod.Name)
	var unreachable *pubnodetool.UnreachableError
	switch {
	case err == nil:
		return exit.Refusedf("the node of pod %s answers nodetool (Host ID %s): it is alive, and a live node is never replaced. If it is broken, restart or decommission it instead; nothing changed", pod.Name, info.ID)
	case errors.As(err, &unreachable):
		return nil
	default:
		return exit.Refusedf("cannot tell whether the node of pod %s is alive: %v; nothing changed", pod.Name, err)
	}
}

// containerRunning reports whether pod's Cassandra container runs now.
func containerRunning(pod *corev1.Pod, container string) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == container {
			return c.State.Running != nil
		}
	}
	// No status for it (a stand-in that writes none): ask nodetool.
	return true
}

// readClaims are the claims of pod from its StatefulSet's templates, with their UIDs;
// a claim already gone is not planned.
func readClaims(ctx context.Context, p *operation.Planner, ns, stsName, pod string) ([]record.PVC, error) {
	sts, err := p.Kube().AppsV1().StatefulSets(ns).Get(ctx, stsName, metav1.GetOptions{})
	if err != nil {
		return nil, exit.Refusedf("cannot read StatefulSet %s: %v; nothing changed", stsName, err)
	}
	var out []record.PVC
	for _, t := range sts.Spec.VolumeClaimTemplates {
		c, err := p.Claim(ctx, ns, t.Name+"-"+pod)
		if err != nil {
			return nil, exit.Refusedf("%v; nothing changed", err)
		}
		if c != nil {
			out = append(out, record.PVC{Name: c.Name, UID: string(c.UID)})
		}
	}
	return out, nil
}

// mechanism says how the operator starts the replacement: through its replacenode
// task (byTask: operator.Tasks; the task is named once the operation has its ID), or
// through the start script the option is written into (operator.StartScript: rep gets
// the ConfigMap, key and file); an operator with neither is refused.
func mechanism(ctx context.Context, env *pub.Env, rep *record.Replacement) (byTask bool, err error) {
	cl := env.Cluster
	if _, ok := env.Adapter.(operator.Tasks); ok {
		return true, nil
	}
	ss, ok := env.Adapter.(operator.StartScript)
	if !ok {
		return false, exit.Refusedf("the %s's operator offers no way to start one pod with a replace option; nothing changed", env.Adapter.Kind())
	}
	_, u, err := env.Adapter.Get(ctx, cl.Namespace, cl.Name)
	if err != nil {
		return false, exit.Refusedf("%v; nothing changed", err)
	}
	name, key, err := ss.StartScript(u)
	if err != nil {
		return false, exit.Refusedf("%v; nothing changed", err)
	}
	cm, err := operation.PlannerOf(env).Kube().CoreV1().ConfigMaps(cl.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, exit.Refusedf("cannot read ConfigMap %s/%s, named by the %s (%v): the replace option is written there; nothing changed", cl.Namespace, name, env.Adapter.Kind(), err)
	}
	rep.ConfigMap, rep.ConfigMapUID, rep.Key = name, string(cm.UID), key
	rep.File = optionFile(ss.ConfDir(), rep.Version)
	if _, err := block("x", rep.Pod, rep.Address, rep.File); err != nil {
		return false, exit.Refusedf("%v; nothing changed", err)
	}
	return false, nil
}

// tokenCount is the row's token count (1 in the single-token layout).
func tokenCount(n pubnodetool.Node) int {
	if n.Tokens > 0 {
		return n.Tokens
	}
	return 1
}

func orNone(failed []string) string {
	if len(failed) == 0 {
		return "no other pod is Ready"
	}
	return strings.Join(failed, "; ")
}
