package replacenode

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// waitReplaced waits until the replacement is verified (verify.go), reporting its
// streaming progress while it is UJ, and stops the run with Cassandra's own words when
// the replacement cannot start (startup.go).
type waitReplaced struct {
	*run
	meter steps.StreamMeter
}

func (s *waitReplaced) id() string { return StepWaitReplaced + "/" + s.rep.Pod }

func (s *waitReplaced) Describe() string {
	return fmt.Sprintf("wait until %s's new node replaced %s (UJ, then UN with its %d tokens)", s.rep.Pod, s.rep.Address, s.rep.Tokens)
}

// PlanText implements steps.PlanTexter.
func (s *waitReplaced) PlanText() string {
	return fmt.Sprintf("wait until the new pod %s streams the dead node's data (UJ, progress with rate and ETA) and is UN with %d tokens, Host ID %s gone from the ring (kept when the address is the same) and its Load growing: verified in the ring, never taken from the operator",
		s.rep.Pod, s.rep.Tokens, s.rep.HostID)
}

// check reads the new pod and the ring now and judges the replacement.
func (s *waitReplaced) check(ctx context.Context) (phase, *corev1.Pod, error) {
	p, err := s.pod(ctx, s.rep.Pod)
	if err != nil {
		return phase{}, nil, err
	}
	if p == nil || (s.n.PodUID != "" && string(p.UID) == s.n.PodUID) || p.DeletionTimestamp != nil {
		return phase{what: "waiting for the new pod " + s.rep.Pod}, p, nil
	}
	ring, reader, failed, err := s.w.ForKind().RingExcept(ctx, s.rep.Pod)
	if err != nil {
		return phase{}, p, err
	}
	if reader == "" {
		return phase{what: "no other node reads the ring (" + orNone(failed) + "): the replacement's state is unknown"}, p, nil
	}
	ph, err := judge(s.rep, p.Status.PodIP, ring)
	if err != nil {
		if ph.newNode != "" {
			// Kept in the checkpoint (its next write): once the dead node is removed,
			// the ring alone no longer tells a new node from a replacement.
			s.amend(func() { s.rep.NewNode = ph.newNode })
			return ph, p, &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("%w (ring read from %s). %s", err, reader, s.removenodeWay())}
		}
		return ph, p, &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("%w (ring read from %s). %s", err, reader, s.wrongNode())}
	}
	return ph, p, nil
}

func (s *waitReplaced) Done(ctx context.Context) (bool, error) {
	ph, _, err := s.check(ctx)
	return ph.done, err
}

func (s *waitReplaced) Safe(context.Context) error { return nil }
func (s *waitReplaced) Do(context.Context) error   { return nil }
func (s *waitReplaced) Evident()                   {}
func (s *waitReplaced) Passive()                   {}

// Wait polls until verified; a startup failure of the new pod's Cassandra stops it.
// A replace asked of the operator watches its task too (watchTask).
func (s *waitReplaced) Wait(ctx context.Context) error {
	start := time.Now()
	for {
		if s.rep.Task != "" {
			if err := s.watchTask(ctx); err != nil {
				return err
			}
		}
		ph, p, err := s.check(ctx)
		if err != nil {
			var fatal *operation.Fatal
			if errorsAs(err, &fatal) {
				// A new pod whose Cassandra cannot start says why in its own words:
				// that comes before what its row in the ring looks like.
				if serr := s.startFailure(ctx, p); p != nil && serr != nil {
					return serr
				}
				return err
			}
			ph.what = "state unknown (" + err.Error() + ")"
		}
		if ph.done {
			if ph.asNew {
				s.w.Reporter.Warn(s.id(), fmt.Sprintf("%s, and the dead node (Host ID %s) is gone from the ring: it was removed, not replaced; verified that node UN", s.newNodeText(s.rep.NewNode), s.rep.HostID))
			}
			if ph.empty {
				s.w.Reporter.Warn(s.id(), fmt.Sprintf("the replacement on %s holds no data (Load 0): the ranges it took over had no other live replica (keyspaces with replication factor 1 lost the dead node's data); run a repair if other keyspaces should have streamed", s.rep.Pod))
			}
			return nil
		}
		if p != nil && (s.n.PodUID == "" || string(p.UID) != s.n.PodUID) {
			se, failed := s.startupError(ctx, p)
			if err := s.fatalStart(p, se, failed); err != nil {
				return err
			}
			if failed {
				ph.what += fmt.Sprintf("; its Cassandra refused to start (%q) and restarts until the ring is settled", se.Line)
			}
			if ph.joining {
				if ns, err := s.w.Nodetool.Netstats(ctx, p.Name); err == nil {
					s.w.ReportStream(s.id(), "replace", p.Name, ns, nodetool.PlanBootstrap, nodetool.DirReceiving, &s.meter)
				}
			}
		}
		if moving := s.ringMoving(ctx); moving != "" {
			ph.what += "; meanwhile " + moving + " (a replacement does not start while the ring changes: R7)"
		}
		s.w.Reporter.Waiting(s.id(), ph.what, time.Since(start))
		if err := s.w.SleepPoll(ctx); err != nil {
			return fmt.Errorf("%s: %w", ph.what, err)
		}
	}
}

// wrongNode says what state things are in when the new pod's node is not a
// replacement, and how to go on.
func (s *waitReplaced) wrongNode() string {
	cp := s.w.CP
	return fmt.Sprintf("The dead node's claims and pod were deleted; the new pod %s runs its own node. Decommission that node (kubectl cassandra nodetool -n %s %s decommission), "+
		"then remove the dead node (nodetool removenode %s) or replace it again; the checkpoint is kept: kubectl cassandra status -n %s %s",
		s.rep.Pod, cp.Namespace, s.rep.Pod, s.rep.HostID, cp.Namespace, cp.Cluster)
}

// newNodeText says that the new pod's node joined as a new node.
func (r *run) newNodeText(hostID string) string {
	return fmt.Sprintf("the new pod %s's node (Host ID %s) joined as a new node with tokens of its own, the replace option did not reach it", r.rep.Pod, hostID)
}

// removenodeWay is the way on once the new pod's node joined as a new node: the dead
// node removed by hand (the new node keeps its tokens and data), then resume, which
// verifies it gone and that node UN, takes the option out and restores the operator.
func (r *run) removenodeWay() string {
	cp := r.w.CP
	return fmt.Sprintf("The dead node's claims and pod were deleted, its data is gone. Remove the dead node from the ring from another node: "+
		"kubectl cassandra nodetool -n %s %s removenode %s (other replicas stream its ranges); then resume (kubectl cassandra resume -n %s %s): "+
		"it verifies the dead node gone and the new node UN, takes the replace option out and ends the operation; the checkpoint is kept until then",
		cp.Namespace, r.otherPod(), r.rep.HostID, cp.Namespace, cp.Cluster)
}

// otherPod names a pod other than the replaced one to run nodetool in: the one that
// read the ring at planning.
func (r *run) otherPod() string {
	if r.rep.Reader != "" && r.rep.Reader != r.rep.Pod {
		return r.rep.Reader
	}
	return "POD"
}

// amend changes the checkpoint in memory, serialized with the engine's writes.
func (r *run) amend(change func()) {
	if r.w.Amend != nil {
		r.w.Amend(change)
		return
	}
	change()
}

// ringMoving names the nodes other than the replacement that join, leave or move ("":
// none, or the ring cannot be read), for the wait's words.
func (s *waitReplaced) ringMoving(ctx context.Context) string {
	ring, reader, _, err := s.w.ForKind().RingExcept(ctx, s.rep.Pod)
	if err != nil || reader == "" {
		return ""
	}
	p, _ := s.pod(ctx, s.rep.Pod)
	var out []string
	for _, n := range ring.Nodes {
		if n.State == "N" || n.HostID == s.rep.HostID || (p != nil && pubnodetool.SameAddress(n.Address, p.Status.PodIP)) {
			continue
		}
		out = append(out, fmt.Sprintf("node %s (Host ID %s) is %s", n.Address, n.HostID, n.Code()))
	}
	return strings.Join(out, ", ")
}
