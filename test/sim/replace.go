package sim

import (
	"fmt"
	"sort"
	"strconv"
	"time"
)

// A node started with -Dcassandra.replace_address[_first_boot]=<ip> (docs/how-it-works/replace.md
// §4.3, §4.4). At the JVM start it checks R1, R3, R4 and R7 (start.go calls
// startReplacement); the rest follows the clock, as events settle applies:
//
//	start ──wait──▶ check (R8/R9; different address: BOOT_REPLACE gossiped, peers drop the
//	                dead node's row and list the replacement UJ) ──RING_DELAY──▶ stream
//	                (R11; 5.0 earlier data) ──plan end──▶ NORMAL, the dead node forgotten
//	                                     └──failure──▶ JOINING (5.0 JOINING_FAILED), JVM up
//
// The wait is BROADCAST_INTERVAL (2 × RING_DELAY by default; 5.0 max(that, 2 × RING_DELAY))
// for a different address, RING_DELAY for the same address (§4.3 step 6). A same-address
// replacement gossips hibernate, so peers keep its DN row throughout. A replacement
// whose JVM stops after announcing is dropped by peers a RING_DELAY later (the FatClient
// timeout), and the dead node's DN row comes back (§4.4 last row).

// replacement is the replace a node runs, from its JVM start until it is NORMAL.
type replacement struct {
	Address string `json:"address"` // the flag's value
	Target  string `json:"target"`  // host ID of the node replaced
	Same    bool   `json:"same,omitempty"`
	// Start is this attempt's JVM start; Checked when its liveness wait ended.
	Start   time.Time `json:"start"`
	Checked time.Time `json:"checked,omitzero"`
	// Announced is when BOOT_REPLACE was gossiped (different address); cleared when
	// peers drop the replacement. It outlives a restart: peers keep the bootstrap tokens.
	Announced time.Time `json:"announced,omitzero"`
	// Want is the replaced node's load; Have what earlier attempts received and kept.
	Want float64 `json:"want"`
	Have float64 `json:"have,omitempty"`
	Plan *plan   `json:"plan,omitempty"`
	// Failed: the stream failed; the JVM runs on, not joined (§4.3 step 9).
	Failed bool `json:"failed,omitempty"`
}

// ringDelay is the simulated RING_DELAY of replacements: a third of JoinTime when
// metered (so a different-address replacement waits JoinTime before it streams, like a
// bootstrap), a sixth otherwise (the waits take half of JoinTime, streaming the rest).
func (o Options) ringDelay() time.Duration {
	if o.metered() {
		return o.JoinTime / 3
	}
	return o.JoinTime / 6
}

// replStreamDur is how long an unmetered replacement streams.
func (o Options) replStreamDur() time.Duration { return o.JoinTime / 2 }

func (r *replacement) wait(u time.Duration) time.Duration {
	if r.Same {
		return u
	}
	return 2 * u
}

// seedRule: a seed does not bootstrap, so it cannot replace (R3), since CASSANDRA-14463
// (3.11.11, 4.0.1).
func (o Options) seedRule() bool {
	return !o.releaseAtMost(3, 11, 10) && !o.releaseAtMost(4, 0, 0)
}

// startReplacement is prepareForReplacement and the start of prepareForBootstrap
// (§4.3 steps 1–5): R1, R3, R4, the host ID and tokens taken over, then R7.
func (st *state) startReplacement(n *node, now time.Time) {
	o, f := st.Options, n.Flags
	if n.Boot == bootCompleted {
		st.crash(n, now, ruleR1, msgR1())
		return
	}
	if f.NoAutoBootstrap || (o.seedRule() && contains(f.Seeds, n.Spec.Address)) {
		st.crash(n, now, ruleR3, msgR3())
		return
	}
	n.logAt(now, "INFO", srcGather, o, "Gathering node replacement information for "+endpointString(o, f.ReplaceAddress))
	d := st.inGossip(f.ReplaceAddress, n, now)
	if d == nil {
		st.crash(n, now, ruleR4, msgR4(o, f.ReplaceAddress))
		return
	}
	r := &replacement{Address: f.ReplaceAddress, Target: d.Spec.HostID, Same: f.ReplaceAddress == n.Spec.Address, Start: now, Want: d.LoadBytes}
	if old := n.Repl; old != nil && old.Target == r.Target {
		r.Have, r.Announced = old.Have, old.Announced // the data dir and peers' view outlive the JVM
	}
	n.Repl = r
	n.LoadBytes = r.Have
	// The tokens are the dead node's (num_tokens is not used), §4.3 step 3.
	n.TokenSeed, n.Spec.Tokens, n.Spec.Token = d.tokenSeed(), d.Spec.Tokens, d.Spec.Token
	if r.Same {
		// "use the replacee's host Id as our own so we receive hints" (§4.3 step 2).
		n.Spec.HostID = d.Spec.HostID
		n.logAt(now, "WARN", srcSameAddress, o, msgSameAddress(o, r.Address))
	}
	if n.Boot == bootInProgress {
		n.logAt(now, "WARN", srcRetrying, o, "Detected previous bootstrap failure; retrying")
	}
	n.Boot = bootInProgress
	n.Mode = ModeJoining
	for _, m := range []string{"waiting for ring information", "schema complete, ready to bootstrap",
		"waiting for pending range calculation", "calculation complete, ready to bootstrap"} {
		n.setModeLog(now, o, m)
	}
	if joining, leaving := st.rangeMovements(n, now); len(joining)+len(leaving) > 0 {
		st.crash(n, now, ruleR7, msgR7(o, joining, leaving))
		return
	}
	if o.is50() && !r.Same {
		n.logAt(now, "INFO", srcSleeping50, o, fmt.Sprintf("Sleeping for %dms waiting to make sure no new gossip updates happen for %s",
			r.wait(o.ringDelay()).Milliseconds(), endpointString(o, r.Address)))
	}
}

// inGossip is the endpoint other than self that gossip knows at addr: a ring member
// first, else one that left or was removed less than 3 days ago (Gossiper keeps them).
func (st *state) inGossip(addr string, self *node, now time.Time) *node {
	var known *node
	for _, p := range st.Nodes {
		if p == self || p.Spec.Address != addr || p.Repl != nil {
			continue
		}
		if p.member() {
			return p
		}
		if known == nil && p.leftAt().Add(gossipLeftTTL).After(now) {
			known = p
		}
	}
	return known
}

// rangeMovements lists, as self's ring shows them, the nodes bootstrapping and leaving
// (R7; moving is never simulated).
func (st *state) rangeMovements(self *node, now time.Time) (joining, leaving []string) {
	o := st.Options
	for _, p := range st.Nodes {
		if p == self {
			continue
		}
		code, ok := st.rowCode(self, p, now)
		switch {
		case !ok:
		case code[1] == 'J':
			joining = append(joining, endpointString(o, p.Spec.Address))
		case code[1] == 'L':
			leaving = append(leaving, endpointString(o, p.Spec.Address))
		}
	}
	return joining, leaving
}

// replDue is the next event of n's replacement, if it progresses (its JVM runs).
func (st *state) replDue(n *node) (event, bool) {
	r := n.Repl
	if r == nil || r.Failed || !n.jvmUp() {
		return event{}, false
	}
	u := st.Options.ringDelay()
	switch {
	case r.Checked.IsZero():
		return event{at: r.Start.Add(r.wait(u)), kind: evReplCheck, n: n}, true
	case r.Plan == nil:
		at := r.Checked
		if !r.Same {
			at = at.Add(u) // "sleeping RING_DELAY ms for pending range setup"
		}
		return event{at: at, kind: evReplStream, n: n}, true
	}
	at, fail, ok := st.planDue(r.Plan)
	kind := evReplDone
	if fail {
		kind = evReplFail
	}
	return event{at: at, kind: kind, n: n}, ok
}

// dropDue: peers drop an announced replacement whose JVM stopped, RING_DELAY later
// (Gossiper's FatClient timeout, §4.4 last row).
func (st *state) dropDue(n *node) (event, bool) {
	if n.Repl == nil || n.Repl.Announced.IsZero() || n.jvmUp() {
		return event{}, false
	}
	return event{at: laterOf(n.DownAt, n.Repl.Announced).Add(st.Options.ringDelay()), kind: evDrop, n: n}, true
}

// applyReplCheck ends the liveness wait (§4.3 step 6): R9 and R8 for a different
// address, then the tokens and, for a different address, BOOT_REPLACE (step 7).
func (st *state) applyReplCheck(n *node, at time.Time) {
	o, r := st.Options, n.Repl
	u := o.ringDelay()
	if !r.Same {
		d := st.byHostID(r.Target, n)
		if d == nil || !d.member() {
			st.crash(n, at, ruleR9, msgR9(n.tokensOf()[0]))
			return
		}
		alive := d.jvmUp() && !d.down()
		if alive || (!d.DownAt.IsZero() && at.Sub(d.DownAt) < u) {
			if o.is50() {
				not := "not "
				if alive {
					not = ""
				}
				n.logAt(at, "ERROR", srcUnable50, o, fmt.Sprintf("Unable to replace node for token=%s. The node is reporting as %salive with updateTimestamp=%d, allowedDelay=%d",
					n.tokensOf()[0], not, d.DownAt.UnixNano(), at.Add(-u).UnixNano()))
			}
			st.crash(n, at, ruleR8, msgR8())
			return
		}
	}
	r.Checked = at
	n.setModeLog(at, o, "Replacing a node with token(s): "+tokenList(n.tokensOf()))
	if !r.Same {
		r.Announced = at
		n.StatusVersion++
		n.setModeLog(at, o, fmt.Sprintf("sleeping %d ms for pending range setup", u.Milliseconds()))
	}
}

// applyReplStream starts the Bootstrap plan (§4.3 step 8): R11 and, on 5.0, the
// earlier-data check come first, from RangeStreamer.
func (st *state) applyReplStream(n *node, at time.Time) {
	o, r := st.Options, n.Repl
	reset := n.Flags.ResetBootstrapProgress
	if reset != nil && *reset && r.Have > 0 {
		n.logAt(at, "INFO", srcReset, o, "Resetting bootstrap progress to start fresh")
		r.Have, n.LoadBytes = 0, 0
	}
	n.setModeLog(at, o, "Starting to bootstrap...")
	sources := st.replSources(n)
	rng := st.rangeOf(n)
	var ss []session
	switch rf := st.Schema.maxRFIn(st.replDC(n)); {
	case rf == 0:
		// No keyspace replicates to the DC: no range to fetch.
	case rf == 1:
		// The only replica is dead: nothing to fetch, the data is lost (non-strict source
		// choice only warns, RangeStreamer).
		n.logAt(at, "WARN", srcRF1, o, msgRF1(o, n.Spec.Address, rng, "system_auth"))
	case !st.enoughSources(n):
		st.crash(n, at, ruleR11, msgR11(o, n.Spec.Address, rng, "system_auth"))
		return
	default:
		if o.is50() && r.Have > 0 && reset == nil {
			msg := msgResume(o, n.Spec.Address, sources[0].Spec.Address, rng)
			n.logAt(at, "ERROR", srcResumeErr, o, msg)
			st.crash(n, at, ruleResume, msg)
			return
		}
		left := max(0, r.Want-r.Have)
		for _, s := range sources {
			ss = append(ss, session{From: s.Spec.Pod, To: n.Spec.Pod, Bytes: left / float64(len(sources))})
		}
	}
	dur := o.replStreamDur()
	if len(ss) == 0 {
		dur = 0
	}
	st.Seq++
	r.Plan = st.newPlan("Bootstrap", fmt.Sprintf("replace/%s/%d", n.Spec.Pod, st.Seq), at, dur, ss)
	if n.Fault.StreamFailures > 0 && len(ss) > 0 {
		r.Plan.Fail = true
		n.Fault.StreamFailures--
	}
}

// applyReplDone: "Bootstrap completed", NORMAL; peers forget the dead node (§4.3 step 9).
func (st *state) applyReplDone(n *node, at time.Time) {
	o, r := st.Options, n.Repl
	r.Plan.Done, r.Plan.Ended = true, at
	n.LoadBytes = r.Have + st.planSent(r.Plan, n.Spec.Pod, at)
	n.logAt(at, "INFO", srcBootstrapDone, o, "Bootstrap completed for tokens "+tokenList(n.tokensOf()))
	n.Mode, n.Boot, n.Repl = ModeNormal, bootCompleted, nil
	n.StatusVersion++
	d := st.byHostID(r.Target, n)
	switch {
	case d == nil:
	case d.Detached || r.Same:
		st.forget(d) // removed from the ring, system.peers and gossip
	default:
		d.Gone = true // its tokens are the replacement's; it never rejoins
	}
}

// replStreamFailed ends n's replacement stream in failure: "Error while waiting on
// bootstrap to complete", the WARN with IN_PROGRESS, mode JOINING (5.0 JOINING_FAILED).
// What was received stays on disk (Have) for a retry without wiping (§4.6).
func (st *state) replStreamFailed(n *node, at time.Time) {
	r := n.Repl
	if r == nil || r.Failed {
		return
	}
	o := st.Options
	r.Failed = true
	r.Have += st.planSent(r.Plan, n.Spec.Pod, at)
	n.LoadBytes = r.Have
	if !n.jvmUp() {
		return // the JVM itself stopped: nothing more is logged
	}
	n.logAt(at, "ERROR", srcBootstrapErr, o, "Error while waiting on bootstrap to complete. Bootstrap will have to be restarted.")
	n.logRaw(at, "org.apache.cassandra.streaming.StreamException: Stream failed")
	n.logAt(at, "WARN", srcStreamFailed, o, msgStreamFailed())
	if o.is50() {
		n.Mode = ModeJoiningFailed
	}
}

// applyDrop: peers remove the silent replacement ("FatClient … has been silent",
// "Node … failed during replace."), so the dead node's row is back.
func (st *state) applyDrop(n *node) {
	n.Repl.Announced = time.Time{}
	n.StatusVersion++
	if n.Detached {
		st.forget(n)
	}
}

// replSources are the live replicas a replacement fetches from (non-strict choice,
// any live replica, §4.3 step 8): the normal, up nodes of the dead node's DC, in the
// other racks when the DC has at least RF racks (NetworkTopologyStrategy then puts one
// replica per rack). Spec order.
func (st *state) replSources(n *node) []*node {
	d := st.byHostID(n.Repl.Target, n)
	dc, rack := n.Spec.DC, n.Spec.Rack
	if d != nil {
		dc, rack = d.Spec.DC, d.Spec.Rack
	}
	otherRacks := st.racks(dc) >= st.Schema.maxRFIn(dc)
	var out []*node
	for _, p := range st.Nodes {
		if p == n || p == d || p.Spec.DC != dc || !p.owner() || p.down() || !p.jvmUp() || (otherRacks && p.Spec.Rack == rack) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// replDC is the DC of the node a replacement replaces (its own when unknown).
func (st *state) replDC(n *node) string {
	if d := st.byHostID(n.Repl.Target, n); d != nil {
		return d.Spec.DC
	}
	return n.Spec.DC
}

// enoughSources is R11 as the simulator approximates it: every range of the dead node
// keeps a live replica unless RF−1 of its other replicas are down, i.e. RF−1 other racks
// each with a down node (DC with ≥ RF racks), else RF−1 other down nodes [DERIVED].
func (st *state) enoughSources(n *node) bool {
	d := st.byHostID(n.Repl.Target, n)
	if d == nil {
		return false
	}
	rf := st.Schema.maxRFIn(d.Spec.DC)
	byRack := st.racks(d.Spec.DC) >= rf
	downRacks, downNodes, others := map[string]bool{}, 0, 0
	for _, p := range st.Nodes {
		if p == n || p == d || p.Spec.DC != d.Spec.DC || !p.member() || (byRack && p.Spec.Rack == d.Spec.Rack) {
			continue
		}
		others++
		if p.down() || !p.jvmUp() {
			downRacks[p.Spec.Rack] = true
			downNodes++
		}
	}
	if others == 0 {
		return false
	}
	if byRack {
		return len(downRacks) < rf-1
	}
	return downNodes < rf-1
}

// racks counts the racks of a DC's ring members.
func (st *state) racks(dc string) int {
	seen := map[string]bool{}
	for _, p := range st.Nodes {
		if p.Spec.DC == dc && p.member() {
			seen[p.Spec.Rack] = true
		}
	}
	return len(seen)
}

// rangeOf is the first range of n's tokens, "(<previous token of the ring>,<token>]".
func (st *state) rangeOf(n *node) string {
	mine := n.tokensOf()[0]
	t, _ := strconv.ParseInt(mine, 10, 64)
	var all []int64
	for _, p := range st.Nodes {
		if p.member() {
			for _, s := range p.tokensOf() {
				v, _ := strconv.ParseInt(s, 10, 64)
				all = append(all, v)
			}
		}
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	prev := t
	if len(all) > 0 {
		prev = all[len(all)-1] // wraps around
	}
	for _, v := range all {
		if v < t {
			prev = v
		}
	}
	return fmt.Sprintf("(%d,%s]", prev, mine)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
