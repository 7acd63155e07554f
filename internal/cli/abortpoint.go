package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
)

// abortPoint is what abort found in the real world: whether the operation stands at a
// safe point, how far it got, and the count the cluster resource must ask for so that
// it and the StatefulSets agree (CassKop keeps one nodesPerRacks per datacenter).
type abortPoint struct {
	done, total int
	// replicas is every rack's StatefulSet replicas (they are equal, or abort refuses);
	// nodesPerRack what the cluster resource asks for now; rv its resourceVersion then.
	replicas, nodesPerRack int
	rv                     string
	// racks are the datacenter's racks as the read guarded by rv had them; countWords
	// names the count in the spec (operator.Counts).
	racks      []string
	countWords string
	notes      []string
	// rule is the kind's abort rule.
	rule operation.Abort
}

func (p *abortPoint) summary() string {
	if p.rule.Unit == "" {
		return "aborted before anything in the cluster changed"
	}
	return fmt.Sprintf("aborted after %s %d of %d %s", p.rule.Verb, p.done, p.total, p.rule.Unit)
}

// assessAbort reads the world and refuses (exit 3, nothing changed, what to run
// instead) unless the operation stands at the safe point its kind's abort rule names
// (operation.Abort, in each kind's Info):
//   - AbortBetweenNodes (scale-down): every planned node is either removed in full (all
//     its steps done, its pod gone) or untouched (decommission pending, the node NORMAL
//     — or, on 5.0, DECOMMISSION_FAILED after a refusal while its peers see it UN).
//     Never while a node is LEAVING, nor a node left with its pod or claims still
//     there: resume finishes it.
//   - AbortAnywhere (scale-up): any point; a node still joining goes on bootstrapping.
//   - AbortBetweenPods (restart): every planned pod Ready with its node NORMAL (none
//     DRAINED, none on its way back).
//   - AbortBeforeChange (repair-operator-state): only before it changed anything.
//
// Then, unless the rule keeps the count, every rack of the datacenter must have the
// same StatefulSet replicas.
func (o *Options) assessAbort(ctx context.Context, s *session, cp *checkpoint.Checkpoint) (*abortPoint, error) {
	kind, err := o.Kinds.Of(cp)
	if err != nil {
		return nil, err
	}
	rule := kind.Info().Abort
	p := &abortPoint{rule: rule}
	switch rule.Point {
	case operation.AbortBetweenNodes:
		p.total = len(cp.Nodes)
		err = o.assessScaleDown(ctx, s, cp, p)
	case operation.AbortAnywhere:
		for _, n := range cp.Nodes {
			if n.New {
				p.total++
			}
		}
		for _, st := range cp.Steps {
			if st.Kind == checkpoint.StepCleanup && st.State == checkpoint.StateStarted {
				p.notes = append(p.notes, fmt.Sprintf("nodetool cleanup on %s may still run inside Cassandra (harmless: it only drops data the node no longer owns)", st.Pod))
			}
		}
	case operation.AbortBetweenPods:
		p.total = len(cp.Nodes)
		err = o.assessRestart(ctx, s, cp, p)
	default:
		err = refuseStarted(s, cp)
	}
	if err != nil {
		return nil, err
	}
	if rule.KeepsCount {
		return p, nil
	}
	if err := o.assessRacks(ctx, s, cp, p); err != nil {
		return nil, err
	}
	if rule.Point == operation.AbortAnywhere {
		for _, r := range cp.Target.Racks {
			if d := p.replicas - cp.Target.From[r]; d > 0 {
				p.done += d
			}
		}
		if p.done > p.total {
			p.done = p.total
		}
	}
	return p, nil
}

func (o *Options) assessScaleDown(ctx context.Context, s *session, cp *checkpoint.Checkpoint, p *abortPoint) error {
	for _, n := range cp.Nodes {
		var dec checkpoint.Step
		var unfinished *checkpoint.Step
		for i, st := range cp.Steps {
			if st.Pod != n.Pod {
				continue
			}
			if st.Kind == checkpoint.StepDecommission {
				dec = st
			}
			if st.State != checkpoint.StateDone && unfinished == nil {
				unfinished = &cp.Steps[i]
			}
		}
		if dec.State == checkpoint.StatePending {
			if err := o.untouched(ctx, s, cp, n, p); err != nil {
				return err
			}
			continue
		}
		// Removed in full is what the world says (the steps after the decommission are
		// evident ones: their done mark may not have been written yet).
		err := o.confirmRemoved(ctx, s, cp, n)
		if err == nil {
			p.done++
			continue
		}
		if dec.State == checkpoint.StateStarted {
			return exit.Refusedf("node %s may have started leaving (decommission %s at attempt %d): a decommission cannot be cancelled once it runs. "+
				"resume will finish removing it (wait until it left, shrink the StatefulSet, delete its PVCs) and continue the plan: %s",
				n.Pod, dec.State, dec.Attempts, s.resumeHint())
		}
		if unfinished == nil {
			return exit.Refusedf("the checkpoint records node %s as removed but the cluster does not agree (%v): resume checks and finishes it: %s", n.Pod, err, s.resumeHint())
		}
		return err
	}
	return nil
}

// confirmRemoved checks the world shows node n removed in full: its pod (the planned
// UID) gone, the StatefulSet below its ordinal, every planned claim gone or being
// deleted, its node out of a ring read on a remaining node. Unreadable is "not shown".
func (o *Options) confirmRemoved(ctx context.Context, s *session, cp *checkpoint.Checkpoint, n checkpoint.Node) error {
	half := func(what string) error {
		return exit.Refusedf("node %s was decommissioned but its removal is not finished (%s): the cluster is consistent again only once its pod and claims are gone; "+
			"resume finishes removing it (then stop it with Ctrl-C and abort, or let it finish): %s", n.Pod, what, s.resumeHint())
	}
	pod, err := s.c.Kube.CoreV1().Pods(cp.Namespace).Get(ctx, n.Pod, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return exit.Refusedf("cannot read pod %s (%v): abort needs to know whether it is gone; nothing changed", n.Pod, err)
	}
	if err == nil && string(pod.UID) == n.PodUID {
		if ns, nerr := s.nt.Netstats(ctx, n.Pod); nerr == nil && ns.Mode == nodetool.ModeLeaving {
			return exit.Refusedf("node %s is LEAVING: it cannot be brought back by abort; resume finishes removing it: %s", n.Pod, s.resumeHint())
		}
		return half("its pod is still there")
	}
	sts, err := s.c.Kube.AppsV1().StatefulSets(cp.Namespace).Get(ctx, n.StatefulSet, metav1.GetOptions{})
	if err != nil {
		return exit.Refusedf("cannot read StatefulSet %s (%v); nothing changed", n.StatefulSet, err)
	}
	if sts.Spec.Replicas != nil && int(*sts.Spec.Replicas) > n.Ordinal {
		return half(fmt.Sprintf("StatefulSet %s still has %d replicas", n.StatefulSet, *sts.Spec.Replicas))
	}
	for _, c := range n.PVCs {
		pvc, err := s.c.Kube.CoreV1().PersistentVolumeClaims(cp.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && (string(pvc.UID) != c.UID || pvc.DeletionTimestamp != nil)) {
			continue
		}
		if err != nil {
			return exit.Refusedf("cannot read PVC %s (%v); nothing changed", c.Name, err)
		}
		return half("its claim " + c.Name + " is still there")
	}
	reader := fmt.Sprintf("%s-0", n.StatefulSet)
	ring, err := s.nt.Status(ctx, reader)
	if err != nil || len(ring.Nodes) == 0 {
		return exit.Refusedf("cannot read the ring from %s (%v): abort needs to know node %s left; nothing changed", reader, err, n.Pod)
	}
	if _, member := ring.ByHostID(n.HostID); member {
		return half("its node is still in the ring")
	}
	return nil
}

// untouched confirms a planned node whose decommission never started is a plain member:
// NORMAL, or DECOMMISSION_FAILED (5.0 sets it when its replication check refuses) with
// its peers seeing it UN.
func (o *Options) untouched(ctx context.Context, s *session, cp *checkpoint.Checkpoint, n checkpoint.Node, p *abortPoint) error {
	ns, err := s.nt.Netstats(ctx, n.Pod)
	if err != nil {
		return exit.Refusedf("cannot read the state of %s (%v): abort needs to know no node is leaving; nothing changed", n.Pod, err)
	}
	switch ns.Mode {
	case nodetool.ModeNormal:
		return nil
	case nodetool.ModeDecommissionFailed:
		reader := fmt.Sprintf("%s-0", n.StatefulSet)
		if n.Ordinal == 0 {
			reader = n.Pod
		}
		ring, err := s.nt.Status(ctx, reader)
		if err != nil {
			return exit.Refusedf("node %s is DECOMMISSION_FAILED and the ring cannot be read from %s (%v): abort needs to know it is not leaving; nothing changed", n.Pod, reader, err)
		}
		if rn, ok := ring.ByHostID(n.HostID); !ok || rn.Code() != "UN" {
			code := "absent"
			if ok {
				code = rn.Code()
			}
			return exit.Refusedf("node %s is DECOMMISSION_FAILED and %s sees it %s: it cannot be brought back by abort; resume finishes removing it: %s", n.Pod, reader, code, s.resumeHint())
		}
		p.notes = append(p.notes, fmt.Sprintf("node %s reports DECOMMISSION_FAILED after Cassandra's refusal; it is still a member of the ring (UN) and keeps serving", n.Pod))
		return nil
	}
	return exit.Refusedf("node %s is %s: it cannot be brought back by abort; resume finishes removing it: %s", n.Pod, ns.Mode, s.resumeHint())
}

func (o *Options) assessRestart(ctx context.Context, s *session, cp *checkpoint.Checkpoint, p *abortPoint) error {
	for _, n := range cp.Nodes {
		pod, err := s.c.Kube.CoreV1().Pods(cp.Namespace).Get(ctx, n.Pod, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return exit.Refusedf("cannot read pod %s (%v): abort needs to know every pod is back; nothing changed", n.Pod, err)
		}
		if err != nil || pod.DeletionTimestamp != nil || !steps.PodReady(pod) {
			return exit.Refusedf("pod %s is being restarted (not back and Ready yet): wait until it is Ready and its node UN, then run abort again (or resume, which waits for it): %s", n.Pod, s.resumeHint())
		}
		ns, err := s.nt.Netstats(ctx, n.Pod)
		if err != nil {
			return exit.Refusedf("cannot read the state of %s (%v): abort needs to know no node is drained; nothing changed", n.Pod, err)
		}
		switch ns.Mode {
		case nodetool.ModeNormal:
		case nodetool.ModeDrained, nodetool.ModeDraining:
			return exit.Refusedf("node %s is %s: resume restarts it: %s", n.Pod, ns.Mode, s.resumeHint())
		default:
			return exit.Refusedf("node %s is %s, not NORMAL: wait until it is, then run abort again (or resume): %s", n.Pod, ns.Mode, s.resumeHint())
		}
		if string(pod.UID) != n.PodUID {
			p.done++
		}
	}
	return nil
}

// assessRacks reads every rack's StatefulSet of the datacenter and the cluster
// resource's count: abort sets the count to the racks' replicas, which must be equal.
func (o *Options) assessRacks(ctx context.Context, s *session, cp *checkpoint.Checkpoint, p *abortPoint) error {
	cl, u, err := s.adapter.Get(ctx, cp.Namespace, cp.Cluster)
	if err != nil {
		return fmt.Errorf("cannot read %s %s/%s: %w; nothing changed", s.adapter.Kind(), cp.Namespace, cp.Cluster, err)
	}
	dc, ok := cl.DC(cp.Target.DC)
	if !ok {
		return exit.Refusedf("%s %s has no datacenter %s any more; nothing changed", s.adapter.Kind(), cp.Cluster, cp.Target.DC)
	}
	// Abort sets one count for every rack (racks of different sizes are refused below),
	// so it compares the spec's largest rack count (they are equal with CassKop).
	p.nodesPerRack, p.rv, p.racks, p.countWords = dc.MaxNodes(), u.GetResourceVersion(), operation.RackNames(dc.Racks), s.adapter.CountWords()
	sizes := map[int][]string{}
	byRack := map[string]int{}
	var all []string
	for _, r := range dc.Racks {
		sts, err := s.c.Kube.AppsV1().StatefulSets(cp.Namespace).Get(ctx, r.StatefulSet, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("cannot read StatefulSet %s: %w; nothing changed", r.StatefulSet, err)
		}
		n := 1
		if sts.Spec.Replicas != nil {
			n = int(*sts.Spec.Replicas)
		}
		sizes[n] = append(sizes[n], r.Name)
		byRack[r.Name] = n
		all = append(all, fmt.Sprintf("%s %d", r.Name, n))
		p.replicas = n
	}
	if len(sizes) <= 1 {
		return nil
	}
	// The rack to finish is the first of the plan (in its order) not at the target yet.
	finish := ""
	for _, r := range cp.Target.Racks {
		if byRack[r] != cp.Target.Nodes {
			finish = r
			break
		}
	}
	if finish == "" {
		counts := make([]int, 0, len(sizes))
		for c := range sizes {
			counts = append(counts, c)
		}
		sort.Ints(counts)
		finish = sizes[counts[0]][0]
	}
	sort.Strings(all)
	return exit.Refusedf("the racks of datacenter %s have different sizes (%s): CassKop keeps one nodesPerRacks per datacenter, so no count agrees with every rack and abort would leave the operator a rack to change. "+
		"Finish rack %s first: run %s and stop it with Ctrl-C once rack %s is done (or let it finish), then run abort again; nothing changed",
		cp.Target.DC, strings.Join(all, ", "), finish, s.resumeHint(), finish)
}
