package repair

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
)

// claimTemplate is the data claim template of cass-operator's StatefulSets
// (pkg/reconciliation/construct_statefulset.go: PvcName "server-data").
const claimTemplate = "server-data"

// Plan implements operation.Kind: read the datacenter, its pods, claims and a ring from a
// Ready member, judge (find), and plan the repairs of the stuck states found.
func (Kind) Plan(ctx context.Context, env *operation.Env) (*operation.Plan, error) {
	a, ok := env.Adapter.(*cassoperator.Adapter)
	sc, ok2 := env.Adapter.(operator.Scaler)
	if !ok || !ok2 {
		return nil, operation.Refusedf("repair-operator-state for cass-operator needs its adapter; nothing changed")
	}
	cl := env.Cluster
	if len(cl.DCs) != 1 {
		return nil, operation.Refusedf("%s %s has no datacenter; nothing changed", cl.Operator, cl.Name)
	}
	dc := cl.DCs[0]
	s, reader, err := look(ctx, env, a, sc, dc)
	if err != nil {
		return nil, err
	}
	found, notes := find(s)
	if len(found) == 0 {
		return nil, nothingStuck(env, dc.Name, notes)
	}
	plan := &operation.Plan{Cluster: cl, DC: dc, Racks: dc.Racks, Warnings: notes}
	plan.CP = env.NewCheckpoint(env.Cluster, Kind{}, "repair", env.Request)
	planRepairs(plan, s, found, reader)
	if env.InFlight != nil {
		carryOn(plan, env.InFlight)
	}
	return plan, nil
}

// look reads what find judges: the datacenter's status entries, size and progress, its
// racks' replicas, its pods and claims, a ring from a Ready member (reader), and the
// modes of the pods above their rack's count.
func look(ctx context.Context, env *operation.Env, a *cassoperator.Adapter, sc operator.Scaler, dc topology.DC) (seen, string, error) {
	cl := env.Cluster
	_, u, err := a.Get(ctx, cl.Namespace, cl.Name)
	if err != nil {
		return seen{}, "", fmt.Errorf("cannot read %s %s/%s: %w; nothing changed", a.Kind(), cl.Namespace, cl.Name, err)
	}
	prog, err := sc.Progress(ctx, cl.Namespace, cl.Name, dc.Name, "")
	if err != nil {
		return seen{}, "", fmt.Errorf("cannot read the operator's progress: %w; nothing changed", err)
	}
	s := seen{dc: dc.Name, size: prog.Size, split: sc.Split(dc, prog.Size), replicas: map[string]int{}, sts: map[string]string{},
		scaling: prog.ScalingDown || prog.ScalingUp, entries: map[string]entry{}, pods: map[string]podSeen{}, claims: map[string]claimSeen{},
		modes: map[string]nodetool.Mode{}}
	for pod, e := range cassoperator.NodeStatuses(u) {
		s.entries[pod] = entry{hostID: e.HostID, ip: e.IP, rack: e.Rack}
	}
	rackOfSTS, err := lookRacks(ctx, env, &s, dc)
	if err != nil {
		return seen{}, "", err
	}
	if err := lookPods(ctx, env, a.ClusterSelector(cl.Name), &s); err != nil {
		return seen{}, "", err
	}
	if err := lookClaims(ctx, env, &s, rackOfSTS); err != nil {
		return seen{}, "", err
	}
	// The ring, from a Ready member that is not above its rack's count.
	ring, reader, failed, err := env.RingExcept(ctx, cl.Namespace, a.ClusterSelector(cl.Name), "")
	if err != nil || reader == "" {
		return seen{}, "", operation.Refusedf("cannot read the ring (%v %s): every repair is verified against it first; nothing changed", err, strings.Join(failed, "; "))
	}
	s.ring = ring
	lookModes(ctx, env, &s)
	return s, reader, nil
}

// lookRacks reads each rack's StatefulSet replicas; it answers the rack of each
// StatefulSet.
func lookRacks(ctx context.Context, env *operation.Env, s *seen, dc topology.DC) (map[string]string, error) {
	rackOfSTS := map[string]string{}
	for _, r := range dc.Racks {
		n, err := env.Replicas(ctx, env.Cluster.Namespace, r.StatefulSet)
		if err != nil {
			return nil, fmt.Errorf("%w; nothing changed", err)
		}
		s.replicas[r.Name], s.sts[r.Name], rackOfSTS[r.StatefulSet] = n, r.StatefulSet, r.Name
	}
	return rackOfSTS, nil
}

// lookPods reads the datacenter's pods (those of its racks' StatefulSets) and their
// addresses.
func lookPods(ctx context.Context, env *operation.Env, selector string, s *seen) error {
	pods, err := env.Kube().CoreV1().Pods(env.Cluster.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("cannot list the pods: %w; nothing changed", err)
	}
	for _, p := range pods.Items {
		rack := p.Labels[cassoperator.LabelRack]
		o, ok := ordinalOf(p.Name, s.sts[rack])
		if !ok {
			continue
		}
		s.pods[p.Name] = podSeen{name: p.Name, uid: string(p.UID), rack: rack, ip: p.Status.PodIP, state: p.Labels[cassoperator.LabelNodeState], ordinal: o, deleting: p.DeletionTimestamp != nil}
		if p.Status.PodIP != "" {
			s.podsAddrs = append(s.podsAddrs, p.Status.PodIP)
		}
	}
	return nil
}

// lookClaims reads the data claims of the racks' StatefulSets' pods.
func lookClaims(ctx context.Context, env *operation.Env, s *seen, rackOfSTS map[string]string) error {
	claims, err := env.Kube().CoreV1().PersistentVolumeClaims(env.Cluster.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("cannot list the claims: %w; nothing changed", err)
	}
	for _, c := range claims.Items {
		pod, ok := strings.CutPrefix(c.Name, claimTemplate+"-")
		if !ok {
			continue
		}
		for sts, rack := range rackOfSTS {
			if o, ok := ordinalOf(pod, sts); ok {
				s.claims[pod] = claimSeen{name: c.Name, uid: string(c.UID), pod: pod, rack: rack, ordinal: o, deleting: c.DeletionTimestamp != nil}
			}
		}
	}
	return nil
}

// lookModes reads the netstats mode of each pod above its rack's count (one that does
// not answer is left out).
func lookModes(ctx context.Context, env *operation.Env, s *seen) {
	for _, p := range s.pods {
		if p.ordinal >= s.split[p.rack] {
			if mode, err := env.Mode(ctx, p.name); err == nil {
				s.modes[p.name] = mode
			}
		}
	}
}

// nothingStuck is the answer when find found nothing: resume the operation in flight
// if there is one, else nothing to do (with what was seen).
func nothingStuck(env *operation.Env, dc string, notes []string) error {
	cl := env.Cluster
	if env.InFlight != nil {
		return operation.Refusedf("cass-operator is not stuck on datacenter %s (%s); operation %s is in flight: resume it (kubectl cassandra resume -n %s %s); nothing changed",
			dc, strings.Join(append(notes, "nothing found"), "; "), env.InFlight.OperationID, cl.Namespace, cl.Name)
	}
	msg := fmt.Sprintf("cass-operator is not stuck on datacenter %s: nothing to repair", dc)
	if len(notes) > 0 {
		msg += " (" + strings.Join(notes, "; ") + ")"
	}
	return &operation.ErrNothingToDo{Msg: msg}
}

// planRepairs writes the repairs of what was found into the plan: a finding, a node and
// its steps each, and the target (the racks repaired, the replicas now).
func planRepairs(plan *operation.Plan, s seen, found []finding, reader string) {
	racks := map[string]bool{}
	for _, f := range found {
		plan.Findings = append(plan.Findings, f.text+" (ring read from "+reader+")")
		n := record.Node{Pod: f.pod, PodUID: f.podUID, Ordinal: f.ordinal, DC: plan.DC.Name, Rack: f.rack, StatefulSet: s.sts[f.rack], HostID: f.hostID, Address: f.address}
		for _, c := range f.claims {
			n.PVCs = append(n.PVCs, record.PVC{Name: c.name, UID: c.uid})
		}
		plan.CP.Nodes = append(plan.CP.Nodes, n)
		for _, kind := range stepsFor(f.kind) {
			plan.CP.Steps = append(plan.CP.Steps, record.PendingStep(kind, f.pod))
		}
		racks[f.rack] = true
	}
	from := map[string]int{}
	for _, r := range plan.DC.Racks {
		from[r.Name] = s.replicas[r.Name]
		if racks[r.Name] {
			plan.CP.Target.Racks = append(plan.CP.Target.Racks, r.Name)
		}
	}
	plan.CP.Target.DC, plan.CP.Target.From = plan.DC.Name, from
}

// carryOn appends what is left of the operation in flight (a scale that met the stuck
// state) to the repair's plan: its steps not done, in their order, but those the repair
// plans itself, with its nodes and target. Each step asks the world again when it runs.
// Its stream throughput goes with it: the rate and sources, and a set already done whose
// restore is not (the restore must know the set may have acted). The records of what the
// nodes had are handed over with the plan (steps.CarryThroughput, by the plan's
// replacement), which also marks those sets started.
func carryOn(plan *operation.Plan, old *record.Checkpoint) {
	have := map[string]bool{}
	for _, st := range plan.CP.Steps {
		have[st.ID] = true
	}
	for _, st := range old.Steps {
		if (st.State != record.StateDone || setToRestore(old, st)) && !have[st.ID] {
			plan.CP.Steps = append(plan.CP.Steps, record.PendingStep(st.Kind, st.Pod))
		}
	}
	if old.Throughput != nil {
		t := *old.Throughput
		t.Recorded = nil
		plan.CP.Throughput = &t
	}
	// The scale's record of a node (its claims' UIDs, the size that asks for it) wins.
	nodes := map[string]int{}
	for i, n := range plan.CP.Nodes {
		nodes[n.Pod] = i
	}
	for _, n := range old.Nodes {
		if i, ok := nodes[n.Pod]; ok {
			plan.CP.Nodes[i] = n
		} else {
			plan.CP.Nodes = append(plan.CP.Nodes, n)
		}
	}
	plan.CP.Target = old.Target
	plan.CP.Force = old.Force
	plan.Findings = append(plan.Findings, fmt.Sprintf("operation %s (%s) was in flight: the plan carries on with what is left of it", old.OperationID, old.Kind))
}

// setToRestore: st is a stream throughput set whose restore in old is not done.
func setToRestore(old *record.Checkpoint, st record.Step) bool {
	if st.Kind != record.StepSetThroughput {
		return false
	}
	restore, ok := old.Step(record.StepID(record.StepRestoreThroughput, st.Pod))
	return ok && restore.State != record.StateDone
}

// stepsFor is the repair of one stuck state.
func stepsFor(kind string) []string {
	switch kind {
	case leftUnmarked:
		return []string{stepLabelLeaving, stepSetScalingDown, record.StepWaitPodGone, record.StepWaitClaimsGone, record.StepWaitReleased}
	case orphanClaim:
		return []string{stepDeleteOrphan, stepRemoveEntry}
	case staleEntry:
		return []string{stepRemoveEntry}
	case leftoverMark:
		return []string{stepLabelStarted}
	}
	return nil
}
