package sim

import (
	"time"
)

// Stream plans of the operations that stream from several peers: a replacement's
// "Bootstrap" (one session per source replica, docs/how-it-works/streaming.md §1.7, §2.1)
// and removenode's "Restore replica count" (one plan per node gaining ranges,
// docs/how-it-works/replace.md §5). Like every other state, only facts are stored (start,
// sizes, rate steps, outcome); the bytes sent are derived from the clock. Decommissions
// and plain bootstraps keep their own single-session model (transfer.go).

// plan is one stream plan with the same id on every end.
type plan struct {
	ID    string        `json:"id"`
	Desc  string        `json:"desc"`
	Start time.Time     `json:"start"`
	Dur   time.Duration `json:"dur,omitempty"` // unmetered: how long it streams
	// Fail is an armed failure (Fault.StreamFailures): the plan fails half-way.
	Fail     bool      `json:"fail,omitempty"`
	Sessions []session `json:"sessions,omitempty"`
	Done     bool      `json:"done,omitempty"`
	Failed   bool      `json:"failed,omitempty"`
	Ended    time.Time `json:"ended,omitzero"`
}

// session streams Bytes from the node of pod From to the node of pod To.
type session struct {
	From  string     `json:"from"`
	To    string     `json:"to"`
	Bytes float64    `json:"bytes"`
	Rates []rateStep `json:"rates,omitempty"` // metered only
	// A rebuild's sessions end one by one (rebuild.go): Ranges is the fraction of the
	// receiver's ranges of each keyspace it brings, Done/Failed/Ended its own outcome.
	Ranges map[string]float64 `json:"ranges,omitempty"`
	Done   bool               `json:"done,omitempty"`
	Failed bool               `json:"failed,omitempty"`
	Ended  time.Time          `json:"ended,omitzero"`
}

// newPlan starts a plan at now: metered sessions move at their sender's rate, unmetered
// ones all take dur.
func (st *state) newPlan(desc, seed string, now time.Time, dur time.Duration, ss []session) *plan {
	p := &plan{ID: timeUUID(now, seed), Desc: desc, Start: now, Sessions: ss}
	if !st.Options.metered() {
		p.Dur = dur
		return p
	}
	for i := range p.Sessions {
		s := &p.Sessions[i]
		s.Rates = []rateStep{{At: now, BPS: st.sendRate(st.attached(s.From), st.attached(s.To))}}
	}
	return p
}

// attached is the node a pod runs now (nil if none).
func (st *state) attached(pod string) *node {
	n, _ := st.node(pod)
	return n
}

func (p *plan) active(now time.Time) bool { return !p.Done && !p.Failed && !p.Start.After(now) }

// sent is what session s of p has moved at now (frozen when the plan ended).
func (st *state) sent(p *plan, s session, now time.Time) float64 {
	if p.Done || s.Done {
		return s.Bytes
	}
	if p.Failed && p.Ended.Before(now) {
		now = p.Ended
	}
	if s.Failed && s.Ended.Before(now) {
		now = s.Ended
	}
	if st.Options.metered() {
		return min(sentBy(s.Rates, p.Start, now), s.Bytes)
	}
	if p.Dur <= 0 {
		return s.Bytes
	}
	return clamp01(float64(now.Sub(p.Start))/float64(p.Dur)) * s.Bytes
}

// planSent sums what the sessions into pod (all sessions when pod is "") have moved; a
// failed session's data is discarded.
func (st *state) planSent(p *plan, pod string, now time.Time) float64 {
	total := 0.0
	for _, s := range p.Sessions {
		if (pod == "" || s.To == pod) && !s.Failed {
			total += st.sent(p, s, now)
		}
	}
	return total
}

// planEnd is when every session has sent its bytes; false if one never will.
func (st *state) planEnd(p *plan) (time.Time, bool) {
	if !st.Options.metered() {
		return p.Start.Add(p.Dur), true
	}
	end := p.Start
	for _, s := range p.Sessions {
		at, ok := reachAt(s.Rates, p.Start, s.Bytes)
		if !ok {
			return time.Time{}, false
		}
		end = laterOf(end, at)
	}
	return end, true
}

// planFailAt is when an armed failure fires: half-way through (the first session's
// half when metered), like a decommission's (Fault.StreamFailures).
func (st *state) planFailAt(p *plan) (time.Time, bool) {
	if !st.Options.metered() || len(p.Sessions) == 0 {
		return p.Start.Add(p.Dur / 2), true
	}
	s := p.Sessions[0]
	return reachAt(s.Rates, p.Start, s.Bytes/2)
}

// planDue is the plan's next outcome: its armed failure or its end.
func (st *state) planDue(p *plan) (at time.Time, fail, ok bool) {
	if p.Fail {
		at, ok = st.planFailAt(p)
		return at, true, ok
	}
	at, ok = st.planEnd(p)
	return at, false, ok
}

// ops lists the plans of replacements and removals, each with the node that owns it.
func (st *state) ops() []ownedPlan {
	var out []ownedPlan
	for _, n := range st.Nodes {
		if n.Repl != nil && n.Repl.Plan != nil {
			out = append(out, ownedPlan{n, nil, n.Repl.Plan, nil})
		}
		for _, r := range n.Removals {
			for _, p := range r.Plans {
				out = append(out, ownedPlan{n, r, p, nil})
			}
		}
		for _, r := range n.Rebuilds {
			if r.Plan != nil {
				out = append(out, ownedPlan{n, nil, r.Plan, r})
			}
		}
	}
	return out
}

// ownedPlan is a plan with its owner: a replacing node, a removal's coordinator, or a
// rebuilding node.
type ownedPlan struct {
	owner *node
	rm    *removal
	p     *plan
	rb    *rebuildOp
}

// rerateOps gives every session n sends the rate its limiters allow now.
func (st *state) rerateOps(n *node, now time.Time) {
	if !st.Options.metered() {
		return
	}
	for _, op := range st.ops() {
		if !op.p.active(now) {
			continue
		}
		for i := range op.p.Sessions {
			s := &op.p.Sessions[i]
			if s.From == n.Spec.Pod {
				s.Rates = st.restep(s.Rates, op.p.Start, s.Bytes, st.sendRate(n, st.attached(s.To)), now)
			}
		}
	}
}

// endPlansOf fails, at now, the running plans n sends or receives: its JVM stopped, so
// the stream sessions broke (StreamSession.onError on both ends).
func (st *state) endPlansOf(n *node, now time.Time) {
	for _, op := range st.ops() {
		if !op.p.active(now) {
			continue
		}
		if op.rb != nil {
			// Only the sessions n sends break; the rebuild's other sessions go on.
			st.failRebuildSessions(op.owner, op.rb, n, now)
			continue
		}
		for _, s := range op.p.Sessions {
			if s.From == n.Spec.Pod || s.To == n.Spec.Pod {
				st.failPlan(op, now)
				break
			}
		}
	}
}

// failPlan ends a plan in failure and tells its owner.
func (st *state) failPlan(op ownedPlan, at time.Time) {
	op.p.Failed, op.p.Ended = true, at
	if op.rm == nil {
		st.replStreamFailed(op.owner, at)
	}
	// A removal's gainer whose plan failed never confirms: the removal waits (§5).
}
