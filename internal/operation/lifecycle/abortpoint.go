package lifecycle

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// abortPoint is what abort found in the real world: how far the operation got (the
// kind's assessment) and the count the cluster resource must ask for so that it and
// the StatefulSets agree.
type abortPoint struct {
	pub.Progress
	// counts are the StatefulSet replicas of each rack of the datacenter (what abort
	// sets), spec what the cluster resource asks for now (rack -> nodes); rv is its
	// resourceVersion then, and countWords names the count (operator.Counts).
	counts, spec   map[string]int
	rv, countWords string
	// rule is the kind's abort rule.
	rule pub.Abort
	// deleting: the cluster resource is being deleted (deletingPoint).
	deleting bool
	// unstarted are new pods that never started, which abort takes away first (their
	// racks' counts are below them).
	unstarted []steps.Unstarted
}

// changesCount reports whether abort must set the cluster resource's counts.
func (p *abortPoint) changesCount() bool { return !maps.Equal(p.counts, p.spec) }

func (p *abortPoint) summary() string {
	if p.deleting {
		return "aborted while the cluster resource was being deleted; the operator was released"
	}
	if p.rule.Unit == "" {
		return "aborted before anything in the cluster changed"
	}
	return fmt.Sprintf("aborted after %s %d of %d %s", p.rule.Verb, p.Done, p.Total, p.rule.Unit)
}

// assessAbort reads the world and refuses (exit 3, nothing changed, what to run
// instead) unless the operation stands at the safe point of its kind: the kind's
// assessment (pub.Abort.Assess, in each kind's package), or, for a kind without
// one, before any step past pausing the operator started. Then, unless the kind keeps
// the count, the operator must be able to keep each rack's StatefulSet replicas as its
// count (assessRacks).
func (l *Lifecycle) assessAbort(ctx context.Context, cp *record.Checkpoint) (*abortPoint, error) {
	kind, err := l.Kinds.Of(cp)
	if err != nil {
		return nil, err
	}
	p := &abortPoint{rule: kind.Info().Abort}
	if p.rule.Assess == nil {
		err = operation.RefuseStarted(cp, l.ResumeHint())
	} else {
		p.Progress, err = p.rule.Assess(ctx, l.abortReads(), cp)
	}
	if err != nil {
		return nil, err
	}
	p.Notes = append(p.Notes, steps.ThroughputNotes(cp)...)
	if p.rule.KeepsCount {
		return p, nil
	}
	if err := l.assessRacks(ctx, cp, p); err != nil {
		return nil, err
	}
	return p, nil
}

// abortReads is what a kind's abort assessment reads the world with.
func (l *Lifecycle) abortReads() pub.AbortReads {
	r := pub.AbortReads{Toolkit: l.Planner(), ResumeHint: l.ResumeHint()}
	if sc, ok := l.Adapter.(operator.Scaler); ok {
		dc := ""
		if len(l.Cluster.DCs) > 0 {
			dc = l.Cluster.DCs[0].Name
		}
		r.Progress = func(ctx context.Context, pod string) (operator.Progress, error) {
			return sc.Progress(ctx, l.Cluster.Namespace, l.Cluster.Name, dc, pod)
		}
	}
	if ts, ok := l.Adapter.(operator.Tasks); ok {
		r.Tasks = ts
	}
	return r
}

// assessRacks reads every rack's StatefulSet of the datacenter and the cluster
// resource's counts: abort sets each rack's count to its replicas, which the operator
// must be able to keep (operator.Counts.CheckRackNodes; CassKop: equal racks).
func (l *Lifecycle) assessRacks(ctx context.Context, cp *record.Checkpoint, p *abortPoint) error {
	cl, u, err := l.Adapter.Get(ctx, cp.Namespace, cp.Cluster)
	if err != nil {
		return fmt.Errorf("cannot read %s %s/%s: %w; nothing changed", l.Adapter.Kind(), cp.Namespace, cp.Cluster, err)
	}
	dc, ok := cl.DC(cp.Target.DC)
	if !ok {
		return exit.Refusedf("%s %s has no datacenter %s any more; nothing changed", l.Adapter.Kind(), cp.Cluster, cp.Target.DC)
	}
	p.spec, p.rv, p.countWords = dc.RackNodes(), u.GetResourceVersion(), l.Adapter.CountWords()
	p.counts = map[string]int{}
	planner := l.Planner()
	for _, r := range dc.Racks {
		if p.counts[r.Name], err = planner.Replicas(ctx, cp.Namespace, r.StatefulSet); err != nil {
			return fmt.Errorf("%w; nothing changed", err)
		}
	}
	l.unstartedPods(ctx, cp, p)
	kept := l.Adapter.CheckRackNodes(dc.Name, p.counts)
	if kept == nil {
		return nil
	}
	finish := rackToFinish(cp.Target, dc.Racks, p.counts)
	largest := 0
	for _, n := range p.counts {
		largest = max(largest, n)
	}
	// A pod grow-back would create that the operator lists as a seed makes grow-back
	// refuse: the offer says so, and how to clear it, rather than send the SRE there.
	seed := ""
	if why := l.growBackSeed(ctx, cp, dc.Racks, p.counts, largest); why != "" {
		seed = " (first: " + why + ")"
	}
	return &unequalRacks{dc: dc.Name, largest: largest, err: exit.Refusedf("the racks of datacenter %s have different sizes (%s), which the operator cannot keep (%v): abort would leave it a rack to change. "+
		"Finish rack %s first: run %s and stop it with Ctrl-C once rack %s is done (or let it finish), then run abort again. "+
		"Or grow the smaller racks back to %d nodes: kubectl cassandra abort -n %s %s --grow-back%s; nothing changed",
		cp.Target.DC, sizesText(dc.Racks, p.counts), kept, finish, l.ResumeHint(), finish, largest, cp.Namespace, cp.Cluster, seed)}
}

// unequalRacks is abort's refusal of racks left at sizes the operator cannot keep, with
// what abort --grow-back needs: the datacenter and its largest rack's size.
type unequalRacks struct {
	dc      string
	largest int
	err     error
}

func (u *unequalRacks) Error() string { return u.err.Error() }
func (u *unequalRacks) Unwrap() error { return u.err }

// rackToFinish is the rack an operation must finish before abort can set counts the
// operator keeps: the first of the plan (in its order) not at the target yet, or else
// the first of the smallest racks.
func rackToFinish(t record.Target, racks []topology.Rack, counts map[string]int) string {
	for _, r := range t.Racks {
		if counts[r] != t.Nodes {
			return r
		}
	}
	finish := racks[0].Name
	for _, r := range racks {
		if counts[r.Name] < counts[finish] {
			finish = r.Name
		}
	}
	return finish
}

// sizesText is each rack's size in words, racks sorted: "rack1 2, rack2 3".
func sizesText(racks []topology.Rack, counts map[string]int) string {
	var all []string
	for _, r := range racks {
		all = append(all, fmt.Sprintf("%s %d", r.Name, counts[r.Name]))
	}
	sort.Strings(all)
	return strings.Join(all, ", ")
}

// countText is counts in words (topology.CountText).
func countText(counts map[string]int) string { return topology.CountText(counts) }
