// Package repair is repair-operator-state: an operator whose own status is left stuck
// by an interrupted decommission (CassKop) is verified against the real world, the
// missing scale-down steps are finished, and the status is marked done so the operator
// continues. The operator's status is read through Status, which its adapter
// implements (plugins/casskop/repairstatus.go).
package repair

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair/stuck"
)

// Status is what the repair reads of the operator's record (its adapter implements it).
type Status = stuck.Status

// stuckRack is one verified stuck state and what repairs it.
type stuckRack struct {
	ro      stuck.RackOperation
	node    record.Node
	steps   []string
	finding string
}

// planner is the repair's planning against one cluster.
type planner struct {
	operation.Toolkit
	status   Status
	selector string
	// kind names the cluster resource in messages ("CassandraCluster").
	kind string
}

// Plan implements operation.Kind: it reads the operator's per-rack status, finds the
// stuck states of an interrupted decommission, verifies each against the real world
// (the pod, the ring, the StatefulSet, the claims) and plans what finishes it: the
// scale-down steps that are missing, then the status fields that let the operator
// continue. It refuses when the real world does not confirm the node left (or is
// leaving). It changes nothing.
func (Kind) Plan(ctx context.Context, env *operation.Env) (*operation.Plan, error) {
	status, sub, err := repairable(ctx, env)
	if err != nil {
		return nil, err
	}
	cl := env.Cluster
	_, u, err := env.Adapter.Get(ctx, cl.Namespace, cl.Name)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s %s/%s: %w", env.Adapter.Kind(), cl.Namespace, cl.Name, err)
	}
	p := &planner{Toolkit: env.Toolkit, status: status, selector: env.Adapter.ClusterSelector(cl.Name), kind: env.Adapter.Kind()}
	found, notes, err := p.find(ctx, cl, u)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		msg := "CassKop's status of " + cl.Name + " shows no stuck decommission"
		if len(notes) > 0 {
			msg += ": " + strings.Join(notes, "; ")
		}
		return nil, &operation.ErrNothingToDo{Msg: msg + "; nothing to repair"}
	}
	plan := p.plan(ctx, cl, found, notes, env.Request)
	how := "a merge patch of the CassandraCluster (its CRD has no status subresource)"
	if sub {
		how = "the /status subresource of the CassandraCluster"
	}
	plan.Findings = append(plan.Findings, "the status will be written through "+how)
	return plan, nil
}

// find lists the verified stuck states, and notes on the racks that are not stuck.
func (p *planner) find(ctx context.Context, cl topology.Cluster, u *unstructured.Unstructured) ([]stuckRack, []string, error) {
	var found []stuckRack
	var notes []string
	for _, d := range p.status.Decommissions(u, cl) {
		ro := d.RackOperation
		rack, ok := rackOf(cl, ro)
		if !ok {
			continue
		}
		var s *stuckRack
		var note string
		var err error
		switch d.Phase {
		case stuck.PhaseOngoing:
			s, note, err = p.stuckOngoing(ctx, cl, u, ro, rack, "")
		case stuck.PhaseFinalizing:
			s, note, err = p.stuckFinalizing(ctx, cl, u, ro, rack)
		case stuck.PhaseToDo:
			s, note, err = p.stuckToDo(ctx, cl, u, ro, rack)
		}
		if err != nil {
			return nil, nil, err
		}
		if note != "" {
			notes = append(notes, fmt.Sprintf("rack %s: %s", ro.Key(), note))
		}
		if s != nil {
			found = append(found, *s)
		}
	}
	return found, notes, nil
}

// plan turns the stuck states of the first one's datacenter into a checkpoint.
func (p *planner) plan(ctx context.Context, cl topology.Cluster, found []stuckRack, notes []string, req operation.Request) *operation.Plan {
	dc, _ := cl.DC(found[0].ro.DC)
	plan := &operation.Plan{Cluster: cl, DC: dc}
	var nodes []record.Node
	var stepList []record.Step
	from := map[string]int{}
	var racks []string
	for _, s := range found {
		if s.ro.DC != dc.Name {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("rack %s of datacenter %s is stuck too; run this again once this repair is done", s.ro.Key(), s.ro.DC))
			continue
		}
		plan.Findings = append(plan.Findings, s.finding)
		nodes = append(nodes, s.node)
		racks = append(racks, s.ro.Rack)
		r, _ := rackOf(cl, s.ro)
		plan.Racks = append(plan.Racks, r)
		if n, err := p.Replicas(ctx, cl.Namespace, r.StatefulSet); err == nil {
			from[s.ro.Rack] = n
		}
		for _, k := range s.steps {
			stepList = append(stepList, record.PendingStep(k, s.node.Pod))
		}
	}
	plan.Warnings = append(plan.Warnings, notes...)
	plan.CP = p.NewCheckpoint(cl, Kind{}, "repair", req)
	plan.CP.Target = record.Target{DC: dc.Name, Racks: racks, Nodes: dc.MaxNodes(), RackNodes: dc.RackNodes(), From: from}
	plan.CP.Nodes = nodes
	plan.CP.Steps = p.Paused(req.Pause != nil, stepList)
	plan.Warnings = append(plan.Warnings, p.PauseWarnings(req.Pause, p.kind)...)
	return plan
}

func rackOf(cl topology.Cluster, ro stuck.RackOperation) (topology.Rack, bool) {
	for _, r := range cl.Racks() {
		if r.DC == ro.DC && r.Name == ro.Rack {
			return r, true
		}
	}
	return topology.Rack{}, false
}

// stuckOngoing: podLastOperation Ongoing. Stuck when its pod is gone; repaired only if
// the node is out of the ring, the StatefulSet no longer wants the pod and no pod uses
// its claims.
// lead, when set, says what the rack's status shows instead of the Ongoing wording.
func (p *planner) stuckOngoing(ctx context.Context, cl topology.Cluster, u *unstructured.Unstructured, ro stuck.RackOperation, rack topology.Rack, lead string) (*stuckRack, string, error) {
	if len(ro.Pods) == 0 {
		return nil, "podLastOperation decommission Ongoing names no pod", nil
	}
	pod := ro.Pods[0]
	if cur, err := p.Pod(ctx, cl.Namespace, pod); err != nil {
		return nil, "", err
	} else if cur != nil {
		return nil, fmt.Sprintf("CassKop is decommissioning %s (Ongoing, the pod exists): not stuck", pod), nil
	}
	ordinal, ok := topology.Ordinal(pod, rack.StatefulSet)
	if !ok {
		return nil, "", operation.Refusedf("rack %s: podLastOperation names pod %s, which is not a pod of StatefulSet %s; nothing changed", ro.Key(), pod, rack.StatefulSet)
	}
	hostID, ip, ok := p.status.NodeStatus(u, pod)
	if !ok {
		return nil, "", operation.Refusedf("rack %s: pod %s is gone and status.cassandraNodeStatus does not say which node it was: cannot verify the node left the ring; nothing changed", ro.Key(), pod)
	}
	n := record.Node{Pod: pod, Ordinal: ordinal, DC: ro.DC, Rack: ro.Rack, StatefulSet: rack.StatefulSet, HostID: hostID, Address: ip}
	ring, reader, err := p.anyRing(ctx, cl, pod)
	if err != nil {
		return nil, "", err
	}
	if row, member := inRingNode(ring, n); member {
		return nil, "", operation.Refusedf("rack %s: pod %s is gone but its node (Host ID %s, %s) is still in the ring read from %s, as %s: the pod was removed before its decommission finished. "+
			"Not repaired: deleting its data would lose the replicas it still holds. Remove the node from the ring first (nodetool removenode %s, from another node), then run this again; nothing changed",
			ro.Key(), pod, row.HostID, row.Address, reader, row.Code(), row.HostID)
	}
	replicas, err := p.Replicas(ctx, cl.Namespace, rack.StatefulSet)
	if err != nil {
		return nil, "", err
	}
	if replicas > ordinal {
		return nil, "", operation.Refusedf("rack %s: pod %s is gone but StatefulSet %s has %d replicas, so it will create the pod again; not repaired (scale the StatefulSet to %d if the node really left); nothing changed",
			ro.Key(), pod, rack.StatefulSet, replicas, ordinal)
	}
	if n.PVCs, err = p.unusedClaims(ctx, cl.Namespace, rack.StatefulSet, pod); err != nil {
		return nil, "", err
	}
	s := &stuckRack{ro: ro, node: n}
	if len(n.PVCs) > 0 {
		s.steps = append(s.steps, record.StepDeletePVCs)
	}
	s.steps = append(s.steps, StepOperatorStatus)
	if lead == "" {
		lead = fmt.Sprintf("podLastOperation decommission Ongoing on pod %s, which is gone (CassKop #370: every reconcile stops on it)", pod)
	}
	s.finding = fmt.Sprintf("rack %s: %s. Verified: its node (Host ID %s) is not in the ring read from %s; StatefulSet %s has %d replicas; %s",
		ro.Key(), lead, hostID, reader, rack.StatefulSet, replicas, claimsText(n.PVCs))
	return s, "", nil
}

// stuckFinalizing: Finalizing with the pod still there and the StatefulSet never
// shrunk; repaired only if the node is DECOMMISSIONED and out of the ring.
func (p *planner) stuckFinalizing(ctx context.Context, cl topology.Cluster, u *unstructured.Unstructured, ro stuck.RackOperation, rack topology.Rack) (*stuckRack, string, error) {
	if len(ro.Pods) == 0 {
		return nil, "podLastOperation decommission Finalizing names no pod", nil
	}
	pod := ro.Pods[0]
	cur, err := p.Pod(ctx, cl.Namespace, pod)
	if err != nil {
		return nil, "", err
	}
	if cur == nil {
		return nil, fmt.Sprintf("Finalizing and pod %s is gone: CassKop deletes its PVC and finishes when it runs", pod), nil
	}
	ordinal, ok := topology.Ordinal(pod, rack.StatefulSet)
	if !ok {
		return nil, "", operation.Refusedf("rack %s: podLastOperation names pod %s, which is not a pod of StatefulSet %s; nothing changed", ro.Key(), pod, rack.StatefulSet)
	}
	replicas, err := p.Replicas(ctx, cl.Namespace, rack.StatefulSet)
	if err != nil {
		return nil, "", err
	}
	if replicas <= ordinal {
		return nil, fmt.Sprintf("Finalizing and StatefulSet %s is shrunk: pod %s is going away", rack.StatefulSet, pod), nil
	}
	if replicas != ordinal+1 {
		return nil, "", operation.Refusedf("rack %s: podLastOperation Finalizing on pod %s, but StatefulSet %s has %d replicas: the pod is not its highest ordinal; not repaired, nothing changed", ro.Key(), pod, rack.StatefulSet, replicas)
	}
	n, reader, err := p.leftNode(ctx, cl, u, ro, rack, cur, ordinal, nodetool.ModeDecommissioned)
	if err != nil {
		return nil, "", err
	}
	s := &stuckRack{ro: ro, node: n, steps: []string{record.StepShrinkSTS, record.StepWaitPodGone, record.StepDeletePVCs, StepOperatorStatus}}
	s.finding = fmt.Sprintf("rack %s: podLastOperation decommission Finalizing on pod %s but StatefulSet %s still has %d replicas (CassKop waits for the pod to go and never shrinks it). Verified: node %s is DECOMMISSIONED and not in the ring read from %s; %s",
		ro.Key(), pod, rack.StatefulSet, replicas, pod, reader, claimsText(n.PVCs))
	return s, "", nil
}

// stuckToDo: ToDo although the rack's last pod is already LEAVING or DECOMMISSIONED
// (the decommission was fired, its Ongoing status never written).
func (p *planner) stuckToDo(ctx context.Context, cl topology.Cluster, u *unstructured.Unstructured, ro stuck.RackOperation, rack topology.Rack) (*stuckRack, string, error) {
	if s, err := p.shrunkUnderToDo(ctx, cl, u, ro, rack); s != nil || err != nil {
		return s, "", err
	}
	pods, err := p.RackPods(ctx, cl.Namespace, rack)
	if err != nil {
		return nil, "", err
	}
	last := -1
	for i := range pods {
		last = max(last, i)
	}
	if last < 0 {
		return nil, "ScaleDown ToDo and the rack has no pod", nil
	}
	cur := pods[last]
	replicas, err := p.Replicas(ctx, cl.Namespace, rack.StatefulSet)
	if err != nil {
		return nil, "", err
	}
	if replicas != last+1 {
		return nil, fmt.Sprintf("ScaleDown ToDo; StatefulSet %s has %d replicas and its last pod is %s: not a stuck decommission", rack.StatefulSet, replicas, cur.Name), nil
	}
	mode, err := p.Mode(ctx, cur.Name)
	if err != nil {
		return nil, "", operation.Refusedf("rack %s: cannot read the mode of %s (%v): cannot tell whether its decommission was fired; nothing changed", ro.Key(), cur.Name, err)
	}
	if mode != nodetool.ModeLeaving && mode != nodetool.ModeDecommissioned {
		return nil, fmt.Sprintf("ScaleDown ToDo and node %s is %s: CassKop starts its decommission itself", cur.Name, mode), nil
	}
	n, reader, err := p.leftNode(ctx, cl, u, ro, rack, &cur, last, mode)
	if err != nil {
		return nil, "", err
	}
	s := &stuckRack{ro: ro, node: n, steps: []string{record.StepDecommission, record.StepVerifyLeft, record.StepShrinkSTS,
		record.StepWaitPodGone, record.StepDeletePVCs, StepOperatorStatus}}
	s.finding = fmt.Sprintf("rack %s: podLastOperation decommission and cassandraLastAction ScaleDown are ToDo, but node %s is already %s (the decommission was fired and its Ongoing status never written: CassKop waits forever). "+
		"Verified from %s; the plan waits until it left the ring, shrinks StatefulSet %s to %d, deletes its PVCs (%s)",
		ro.Key(), cur.Name, mode, reader, rack.StatefulSet, last, claimNames(n.PVCs))
	return s, "", nil
}

// shrunkUnderToDo: ToDo although the decommission already ran and the StatefulSet was
// shrunk (a scale-down or repair whose record is gone stopped there, or CassKop before
// its status write): the pod right above the StatefulSet is gone and its claims are
// left. It is repaired as an Ongoing one (stuckOngoing verifies the node left the ring
// and no pod uses the claims); nil when the rack is not in that state.
func (p *planner) shrunkUnderToDo(ctx context.Context, cl topology.Cluster, u *unstructured.Unstructured, ro stuck.RackOperation, rack topology.Rack) (*stuckRack, error) {
	replicas, err := p.Replicas(ctx, cl.Namespace, rack.StatefulSet)
	if err != nil {
		return nil, err
	}
	above := topology.PodName(rack.StatefulSet, replicas)
	if _, _, known := p.status.NodeStatus(u, above); !known {
		return nil, nil
	}
	if cur, err := p.Pod(ctx, cl.Namespace, above); err != nil || cur != nil {
		return nil, err
	}
	if claims, err := p.claims(ctx, cl.Namespace, rack.StatefulSet, above); err != nil || len(claims) == 0 {
		return nil, err
	}
	gone := ro
	gone.Pods = []string{above}
	s, _, err := p.stuckOngoing(ctx, cl, u, gone, rack, "podLastOperation decommission and cassandraLastAction ScaleDown are ToDo, but pod "+above+
		" above the StatefulSet is gone and its claims are left (the decommission ran and the StatefulSet was shrunk; its status never written)")
	if s != nil {
		s.ro = ro
	}
	return s, err
}

// leftNode describes the pod's node for the plan and verifies it: mode want (LEAVING
// is accepted only when want is LEAVING) and, once DECOMMISSIONED, absent from the ring.
func (p *planner) leftNode(ctx context.Context, cl topology.Cluster, u *unstructured.Unstructured, ro stuck.RackOperation, rack topology.Rack, pod *corev1.Pod, ordinal int, want nodetool.Mode) (record.Node, string, error) {
	n := record.Node{Pod: pod.Name, PodUID: string(pod.UID), Ordinal: ordinal, DC: ro.DC, Rack: ro.Rack, StatefulSet: rack.StatefulSet, Address: pod.Status.PodIP}
	if id, _, ok := p.status.NodeStatus(u, pod.Name); ok && id != "" {
		n.HostID = id
	} else if id, err := p.HostID(ctx, pod.Name); err == nil {
		n.HostID = id
	}
	mode, err := p.Mode(ctx, pod.Name)
	var unreachable *nodetool.UnreachableError
	switch {
	case errors.As(err, &unreachable) && want == nodetool.ModeDecommissioned:
		// A decommissioned node whose process restarted refuses to start: the ring decides.
	case err != nil:
		return n, "", operation.Refusedf("rack %s: cannot read the mode of %s (%v); nothing changed", ro.Key(), pod.Name, err)
	case mode != want:
		return n, "", operation.Refusedf("rack %s: node %s is %s, not %s: CassKop's status does not match the node; not repaired, nothing changed", ro.Key(), pod.Name, mode, want)
	}
	ring, reader, err := p.anyRing(ctx, cl, pod.Name)
	if err != nil {
		return n, "", err
	}
	if row, member := inRingNode(ring, n); member && want == nodetool.ModeDecommissioned {
		return n, "", operation.Refusedf("rack %s: node %s says DECOMMISSIONED but the ring read from %s still lists it as %s; wait and run this again; nothing changed", ro.Key(), pod.Name, reader, row.Code())
	}
	if n.PVCs, err = p.claims(ctx, cl.Namespace, rack.StatefulSet, pod.Name); err != nil {
		return n, "", err
	}
	return n, reader, nil
}

func inRingNode(r nodetool.Ring, n record.Node) (nodetool.Node, bool) {
	if n.HostID != "" {
		if row, ok := r.ByHostID(n.HostID); ok {
			return row, true
		}
	}
	return r.ByAddress(n.Address)
}

// anyRing reads `nodetool status` from a Ready pod of the cluster other than except.
func (p *planner) anyRing(ctx context.Context, cl topology.Cluster, except string) (nodetool.Ring, string, error) {
	r, reader, failed, err := p.RingExcept(ctx, cl.Namespace, p.selector, except)
	switch {
	case err != nil:
		return r, "", fmt.Errorf("cannot list the pods of %s: %w", cl.Name, err)
	case reader != "":
		return r, reader, nil
	case len(failed) == 0:
		failed = append(failed, "no Ready pod to read it from")
	}
	return r, "", operation.Refusedf("cannot read the ring (%s): a repair needs it to verify the node left; nothing changed", strings.Join(failed, "; "))
}

// claims lists the existing claims of every volumeClaimTemplate of pod, with their UIDs.
func (p *planner) claims(ctx context.Context, ns, stsName, pod string) ([]record.PVC, error) {
	sts, err := p.Kube().AppsV1().StatefulSets(ns).Get(ctx, stsName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot read StatefulSet %s: %w", stsName, err)
	}
	var out []record.PVC
	for _, tpl := range sts.Spec.VolumeClaimTemplates {
		name := tpl.Name + "-" + pod
		pvc, err := p.Claim(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		if pvc == nil {
			continue
		}
		out = append(out, record.PVC{Name: name, UID: string(pvc.UID)})
	}
	return out, nil
}

// unusedClaims is claims, refusing when a pod mounts one of them.
func (p *planner) unusedClaims(ctx context.Context, ns, stsName, pod string) ([]record.PVC, error) {
	claims, err := p.claims(ctx, ns, stsName, pod)
	if err != nil || len(claims) == 0 {
		return claims, err
	}
	pods, err := p.Kube().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot list pods to check the claims are unused: %w", err)
	}
	names := map[string]bool{}
	for _, c := range claims {
		names[c.Name] = true
	}
	for _, other := range pods.Items {
		for _, v := range other.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && names[v.PersistentVolumeClaim.ClaimName] {
				return nil, operation.Refusedf("PVC %s is used by pod %s: not deleted; nothing changed", v.PersistentVolumeClaim.ClaimName, other.Name)
			}
		}
	}
	return claims, nil
}

func claimNames(c []record.PVC) string {
	var names []string
	for _, p := range c {
		names = append(names, p.Name)
	}
	if len(names) == 0 {
		return "none left"
	}
	return strings.Join(names, ", ")
}

func claimsText(c []record.PVC) string {
	if len(c) == 0 {
		return "no PVC of it is left"
	}
	var parts []string
	for _, p := range c {
		parts = append(parts, fmt.Sprintf("PVC %s (UID %s)", p.Name, p.UID))
	}
	return strings.Join(parts, ", ") + " left over, used by no pod"
}
