package sim

import (
	"fmt"
	"time"
)

// stateFormat versions the JSON file so a harness built from an older tree fails loudly.
const stateFormat = 2

// maxHistory bounds the finished attempts kept per node: a blocked `decommission` only
// needs its own attempt's outcome, and the file stays small.
const maxHistory = 16

// Attempt outcomes.
const (
	resultRunning = ""
	resultOK      = "ok"      // reached DECOMMISSIONED
	resultFailed  = "failed"  // stream failure (E11)
	resultAborted = "aborted" // the JVM died or restarted under it (E15)
)

// state is everything the simulator knows; the file store keeps it as JSON.
type state struct {
	Format  int       `json:"format"`
	Options Options   `json:"options"`
	Seq     int       `json:"seq"` // makes attempt ids unique
	Nodes   []*node   `json:"nodes"`
	Created time.Time `json:"created"`
	// Schema is the keyspaces' replication and schema version (keyspaces.go).
	Schema schema `json:"schema"`
}

// node is the simulated state of one Cassandra node. Only discrete events are stored
// (attempt starts, LEFT, DECOMMISSIONED, failures); sub-phases are derived from the clock.
type node struct {
	Spec  NodeSpec `json:"spec"`
	Fault Fault    `json:"fault"`
	// Mode is the in-memory operation mode as of the last settled event.
	Mode string `json:"mode"`
	// Leaving: gossip STATUS is LEAVING (the node is in peers' leaving set, row UL/DL).
	Leaving bool `json:"leaving,omitempty"`
	// Left: gossip STATUS is LEFT; no ring lists the node any more.
	Left   bool      `json:"left,omitempty"`
	LeftAt time.Time `json:"leftAt,omitzero"`
	// Gone: restarted after DECOMMISSIONED, refuses to start (E4).
	Gone bool `json:"gone,omitempty"`
	// LoadBytes is the current load; it grows when peers of the DC leave.
	LoadBytes float64 `json:"loadBytes"`
	// StartedAt is the JVM start (Generation No, Uptime).
	StartedAt time.Time `json:"startedAt"`
	// StatusVersion bumps on every gossip STATUS change (gossipinfo versions).
	StatusVersion int        `json:"statusVersion"`
	Attempts      []*attempt `json:"attempts,omitempty"`
	Started       int        `json:"decommissionsStarted"`
	Calls         int        `json:"decommissionCalls"`
	// Joining: bootstrapping since JoinStart (gossip BOOT, peers UJ).
	Joining   bool      `json:"joining,omitempty"`
	JoinStart time.Time `json:"joinStart,omitzero"`
	Drains    int       `json:"drains,omitempty"`
	Cleanups  int       `json:"cleanups,omitempty"`
	Restarts  int       `json:"restarts,omitempty"`
	// JoinRates are a metered bootstrap's rate steps (transfer.go).
	JoinRates []rateStep `json:"joinRates,omitempty"`
	// Throttle holds the limiters set since the JVM started (throughput.go).
	Throttle map[limiter]rateSetting `json:"throttle,omitempty"`
	// Execs counts nodetool invocations while exec costs are charged (Options.ExecCost).
	Execs int `json:"execs,omitempty"`

	// Flags are the JVM options every start of the node's container uses (start.go).
	Flags StartOptions `json:"flags,omitzero"`
	// Boot is system.local's bootstrap state; "" is COMPLETED (nodes that joined).
	Boot string `json:"boot,omitempty"`
	// TokenSeed names whose tokens the node owns (tokensOf): a replacement owns the
	// replaced node's. "" = its own host ID.
	TokenSeed string `json:"tokenSeed,omitempty"`
	// Exit is the status the JVM exited with on a startup error (3); 0 while it runs.
	Exit int `json:"exit,omitempty"`
	// DownAt is when the JVM last stopped: peers drop a down fat client a RING_DELAY later.
	DownAt time.Time `json:"downAt,omitzero"`
	// Detached: no pod runs the node any more (its pod started on a fresh data dir);
	// peers still know it from gossip.
	Detached bool `json:"detached,omitempty"`
	// Repl is the replacement the node runs until it completes (replace.go).
	Repl *replacement `json:"repl,omitempty"`
	// Removals are the removenodes this node coordinated (removenode.go).
	Removals []*removal `json:"removals,omitempty"`
	// Removing is the host ID of the coordinator that gossiped "removing" for this
	// node; RemovedAt is when removenode excised it.
	Removing  string    `json:"removing,omitempty"`
	RemovedAt time.Time `json:"removedAt,omitzero"`
	// Log is the container log of the JVM's latest start (log.go).
	Log []logLine `json:"log,omitempty"`
	// Rebuilds are the rebuilds the node ran (rebuild.go), RebuildsStarted how many
	// passed their checks; Available is system.available_ranges: per keyspace, the
	// fraction of the node's ranges already streamed to it.
	Rebuilds        []*rebuildOp       `json:"rebuilds,omitempty"`
	RebuildsStarted int                `json:"rebuildsStarted,omitempty"`
	Available       map[string]float64 `json:"available,omitempty"`
}

// attempt is one decommission that started leaving.
type attempt struct {
	ID     string    `json:"id"`
	Start  time.Time `json:"start"`
	Fail   bool      `json:"fail,omitempty"` // armed stream failure: ends at Start+failAt
	Result string    `json:"result,omitempty"`
	Ended  time.Time `json:"ended,omitzero"`
	// Rates are the streaming's rate steps when metered (transfer.go).
	Rates []rateStep `json:"rates,omitempty"`
}

func newState(opts Options, specs []NodeSpec, now time.Time) (*state, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	sc, err := newSchema(o, specs)
	if err != nil {
		return nil, err
	}
	st := &state{Format: stateFormat, Options: o, Created: now, Schema: sc}
	for _, sp := range specs {
		if err := st.addNode(sp, now); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// uptimeAtCreation makes a fresh cluster look like it has been up for a day (the
// fixtures' Uptime 86400), so Generation No = creation time - 1 day.
const uptimeAtCreation = 24 * time.Hour

func (st *state) addNode(sp NodeSpec, now time.Time) error {
	sp, err := sp.withDefaults(st.Options)
	if err != nil {
		return err
	}
	if _, err := st.node(sp.Pod); err == nil {
		return fmt.Errorf("sim: pod %q already exists", sp.Pod)
	}
	load, _ := parseSize(sp.Load)
	st.Nodes = append(st.Nodes, &node{
		Spec:          sp,
		Mode:          ModeNormal,
		LoadBytes:     load,
		StartedAt:     now.Add(-uptimeAtCreation),
		StatusVersion: 1,
	})
	return nil
}

// node is the node pod runs (a detached one is no pod's any more).
func (st *state) node(pod string) (*node, error) {
	for _, n := range st.Nodes {
		if n.Spec.Pod == pod && !n.Detached {
			return n, nil
		}
	}
	return nil, fmt.Errorf("sim: no node %q in the simulated cluster", pod)
}

func (n *node) running() []*attempt {
	var r []*attempt
	for _, a := range n.Attempts {
		if a.Result == resultRunning {
			r = append(r, a)
		}
	}
	return r
}

func (n *node) attempt(id string) *attempt {
	for _, a := range n.Attempts {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// jvmUp: nodetool can connect (not down, not refusing to start, not exited on a
// startup error).
func (n *node) jvmUp() bool { return !n.Fault.Down && !n.Gone && n.Exit == 0 }

// listed: the node is a token owner (or a joining node) that status/describecluster show,
// before replacements are taken into account (view.go).
func (n *node) listed() bool {
	return !n.Left && !n.Gone && n.Mode != ModeDecommissioned && n.RemovedAt.IsZero() && !n.neverJoined()
}

// neverJoined: a node on a fresh data dir that stopped before it started to join (a
// startup error such as R1, R3, R4 or an address collision): it gossiped no STATUS and
// holds no token, so no peer lists it (docs/how-it-works/replace.md §4.2).
func (n *node) neverJoined() bool { return n.Boot == bootNeeds && n.Repl == nil && !n.Joining }

// member: the node is in the token ring (decommission's isMember check); a joining node
// or a replacement is not yet.
func (n *node) member() bool { return n.listed() && !n.Joining && n.Repl == nil }

// owner: a listed node that owns tokens and is not leaving (RF and ownership counts).
func (n *node) owner() bool { return n.member() && !n.Leaving }

// down: peers see the node down: its JVM is not running, or it was drained (gossip and
// messaging stopped).
func (n *node) down() bool { return n.Fault.Down || n.Mode == ModeDrained || n.Exit != 0 }

// tokenSeed names the tokens n owns (tokensOf).
func (n *node) tokenSeed() string {
	if n.TokenSeed != "" {
		return n.TokenSeed
	}
	return n.Spec.HostID
}

// leftAt is when n left the ring (LEFT or removed), for gossip's 3-day memory.
func (n *node) leftAt() time.Time {
	if !n.RemovedAt.IsZero() {
		return n.RemovedAt
	}
	return n.LeftAt
}

// event is one discrete transition derived from a running operation.
type event struct {
	at   time.Time
	kind int
	n    *node
	a    *attempt
	rm   *removal
	p    *plan
	rb   *rebuildOp // evRbSession: the rebuild, its session si, and whether it fails
	si   int
	fail bool
}

const (
	evLeft        = iota // LEFT announced: peers drop the row, load moves to them
	evDone               // DECOMMISSIONED
	evFail               // stream failure
	evReplCheck          // a replacement's liveness wait ends (replace.go)
	evReplStream         // its streaming starts
	evReplDone           // it is NORMAL
	evReplFail           // its armed stream failure
	evDrop               // peers drop a silent replacement
	evRmAdvertise        // removenode's RING_DELAY sleep ends (removenode.go)
	evRmConfirm          // a gainer confirms
	evRbSession          // a rebuild's session ends (rebuild.go)
)

// settle applies, in time order, every transition that is due at now. It only depends on
// the stored events and the clock, so any process may compute it; writers persist the
// result, readers use it and throw it away.
func (st *state) settle(now time.Time) {
	st.settleJoins(now)
	tl := st.Options.timeline()
	for {
		var next *event
		for _, n := range st.Nodes {
			for _, a := range n.running() {
				if n.Fault.HoldStreaming && !n.Left && !a.Fail {
					// Held in streaming: its clock starts again from there.
					a.Start = laterOf(a.Start, now.Add(-tl.streamStart))
					continue
				}
				e, ok := st.due(n, a, tl)
				if !ok || e.at.After(now) {
					continue
				}
				if next == nil || e.at.Before(next.at) {
					next = &e
				}
			}
		}
		for _, e := range st.opEvents() {
			if !e.at.After(now) && (next == nil || e.at.Before(next.at)) {
				next = &e
			}
		}
		if next == nil {
			return
		}
		st.apply(next)
	}
}

// opEvents are the next events of replacements and removals.
func (st *state) opEvents() []event {
	var out []event
	for _, n := range st.Nodes {
		if e, ok := st.replDue(n); ok {
			out = append(out, e)
		}
		if e, ok := st.dropDue(n); ok {
			out = append(out, e)
		}
		for _, r := range n.Removals {
			out = append(out, st.rmDue(n, r)...)
		}
		out = append(out, st.rbDue(n)...)
	}
	return out
}

// due is the next event of a running attempt: by the fixed timeline, or when metered,
// when its bytes are half sent (a failure), all sent (LEFT), then the announce window.
func (st *state) due(n *node, a *attempt, tl timeline) (event, bool) {
	if !st.Options.metered() {
		switch {
		case a.Fail:
			return event{at: a.Start.Add(tl.failAt), kind: evFail, n: n, a: a}, true
		case !n.Left:
			return event{at: a.Start.Add(tl.left), kind: evLeft, n: n, a: a}, true
		}
		return event{at: a.Start.Add(tl.done), kind: evDone, n: n, a: a}, true
	}
	switch {
	case a.Fail:
		at, ok := reachAt(a.Rates, st.streamStart(a), st.leaveBytes(n)/2)
		return event{at: at, kind: evFail, n: n, a: a}, ok
	case !n.Left:
		at, ok := reachAt(a.Rates, st.streamStart(a), st.leaveBytes(n))
		return event{at: at, kind: evLeft, n: n, a: a}, ok
	}
	return event{at: n.LeftAt.Add(tl.done - tl.left), kind: evDone, n: n, a: a}, true
}

// endOf is when a running attempt is expected to end (its caller's wait).
func (st *state) endOf(n *node, a *attempt) time.Time {
	tl := st.Options.timeline()
	e, ok := st.due(n, a, tl)
	if !ok {
		return time.Time{}
	}
	if e.kind == evLeft {
		return e.at.Add(tl.done - tl.left)
	}
	return e.at
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (st *state) apply(e *event) {
	n := e.n
	switch e.kind {
	case evReplCheck:
		st.applyReplCheck(n, e.at)
		return
	case evReplStream:
		st.applyReplStream(n, e.at)
		return
	case evReplDone:
		st.applyReplDone(n, e.at)
		return
	case evReplFail:
		n.Repl.Plan.Failed, n.Repl.Plan.Ended = true, e.at
		st.replStreamFailed(n, e.at)
		return
	case evDrop:
		st.applyDrop(n)
		return
	case evRmAdvertise:
		st.applyRmAdvertise(n, e.rm, e.at)
		return
	case evRmConfirm:
		st.applyRmConfirm(e.rm, e.p, e.at)
		return
	case evRbSession:
		st.applyRbSession(e)
		return
	case evLeft:
		n.Left = true
		n.LeftAt = e.at
		n.StatusVersion++
		// The leaving node's data ends up on the remaining nodes of its DC; share it
		// equally (matches docs/how-it-works/nodetool.md's "after the decommission" fixture).
		var peers []*node
		for _, p := range st.Nodes {
			if st.leaveBytes(n) > 0 && p != n && p.Spec.DC == n.Spec.DC && p.listed() && p.Repl == nil {
				peers = append(peers, p)
			}
		}
		for _, p := range peers {
			p.LoadBytes += n.LoadBytes / float64(len(peers))
		}
	case evDone:
		n.Mode = ModeDecommissioned
		n.Leaving = false
		for _, a := range n.running() {
			a.Result, a.Ended = resultOK, e.at
		}
	case evFail:
		e.a.Result, e.a.Ended = resultFailed, e.at
		if len(n.running()) == 0 {
			// 3.11/4.x: mode and gossip stay LEAVING; 5.0 flags the failure.
			n.Mode = ModeLeaving
			if st.Options.is50() {
				n.Mode = ModeDecommissionFailed
			}
		}
	}
	n.trimHistory()
}

func (n *node) trimHistory() {
	if len(n.Attempts) <= maxHistory {
		return
	}
	var keep []*attempt
	extra := len(n.Attempts) - maxHistory
	for _, a := range n.Attempts {
		if extra > 0 && a.Result != resultRunning {
			extra--
			continue
		}
		keep = append(keep, a)
	}
	n.Attempts = keep
}

// settleJoins ends the bootstrap of joining nodes whose JoinTime is up (when metered:
// whose bytes are all received): NORMAL, or with Fault.JoinFails JOINING_FAILED (5.0) /
// still JOINING (3.11, 4.x).
func (st *state) settleJoins(now time.Time) {
	for _, n := range st.Nodes {
		if !n.Joining || n.Fault.Down {
			continue
		}
		if end, ok := st.joinEnd(n); !ok || now.Before(end) {
			continue
		}
		if n.Fault.JoinFails {
			if st.Options.is50() && n.Mode != ModeJoiningFailed {
				n.Mode = ModeJoiningFailed
			}
			continue
		}
		n.Joining = false
		n.Mode, n.Boot = ModeNormal, bootCompleted
		n.StatusVersion++
	}
}

// joinEnd is when a joining node has received its data.
func (st *state) joinEnd(n *node) (time.Time, bool) {
	if !st.Options.metered() {
		return n.JoinStart.Add(st.Options.JoinTime), true
	}
	return reachAt(n.JoinRates, st.joinStreamStart(n), n.LoadBytes)
}

// joinStreaming says whether a joining node's Bootstrap plan is listed at now, and how
// far it has got, in [0,1].
func (st *state) joinStreaming(n *node, now time.Time) (float64, bool) {
	o := st.Options
	if !n.Joining || n.Mode != ModeJoining {
		return 0, false
	}
	if !o.metered() {
		if o.JoinTime <= 0 {
			return 0, false
		}
		return clamp01(float64(now.Sub(n.JoinStart)) / float64(o.JoinTime)), true
	}
	start := st.joinStreamStart(n)
	if n.JoinRates == nil || now.Before(start) {
		return 0, false
	}
	if n.LoadBytes <= 0 {
		return 1, true
	}
	return clamp01(sentBy(n.JoinRates, start, now) / n.LoadBytes), true
}

func clamp01(f float64) float64 { return max(0, min(1, f)) }

// startJVM brings n's JVM up again (start) with its limiters back at the cassandra.yaml
// values (§1.5), which changes the rate of the bootstraps it feeds.
func (st *state) startJVM(n *node, now time.Time) {
	if n.jvmUp() {
		st.jvmStopped(n, now)
	}
	n.Exit = 0
	n.start(now)
	n.Throttle = nil
	if !n.Gone {
		st.boot(n, now)
	}
	if n.Joining {
		st.startJoinRates(n, now)
	}
	st.rerate(n, now)
}

// abort ends running attempts because the JVM went away under them.
func (n *node) abort(now time.Time) {
	for _, a := range n.running() {
		a.Result, a.Ended = resultAborted, now
	}
}

// start brings the JVM up again (restart, or Down cleared). The operation mode is
// in-memory, so a node that was leaving or failed is NORMAL again (§6.5, §7 S7); a
// DECOMMISSIONED node refuses to start (E4) and stays gone.
func (n *node) start(now time.Time) {
	n.abort(now)
	n.Restarts++
	if n.Gone || n.Mode == ModeDecommissioned {
		n.Gone = true
		return
	}
	if n.Joining {
		// A bootstrap interrupted by a restart starts over.
		n.Mode = ModeJoining
		n.JoinStart = now
		n.StartedAt = now
		return
	}
	if n.Mode != ModeNormal || n.Leaving || n.Left {
		n.StatusVersion++
	}
	// A restart inside the announce window (LEFT gossiped, NEEDS_BOOTSTRAP) would
	// bootstrap again and rejoin: modelled as back to NORMAL. Load moved to peers stays.
	n.Mode = ModeNormal
	n.Leaving = false
	n.Left = false
	n.LeftAt = time.Time{}
	n.StartedAt = now
}

// shownMode is the operation mode nodetool prints for n: its mode, except
// DECOMMISSION_FAILED while a decommission still runs under Fault.FailedWhileLeaving
// (5.0).
func (st *state) shownMode(n *node) string {
	if n.Fault.FailedWhileLeaving && st.Options.is50() && n.Mode == ModeLeaving && len(n.running()) > 0 {
		return ModeDecommissionFailed
	}
	return n.Mode
}

// phase is what a reader needs to render the node at now.
type phase struct {
	running   []*attempt
	streaming []*attempt // running attempts in their streaming window
}

// phaseOf: an attempt streams from the end of its RING_DELAY-like wait until LEFT
// (metered: LEFT comes when its bytes are sent, so settle has ended the window).
func (st *state) phaseOf(n *node, now time.Time) phase {
	p := phase{running: n.running()}
	if n.Left {
		return p
	}
	if st.leaveBytes(n) <= 0 {
		return p // nothing to send: no Unbootstrap plan
	}
	tl := st.Options.timeline()
	for _, a := range p.running {
		el := now.Sub(a.Start)
		if el >= tl.streamStart && (st.Options.metered() || el < tl.left) {
			p.streaming = append(p.streaming, a)
		}
	}
	return p
}

// leaveBytes is what n's decommission streams: its load, or nothing when no keyspace
// replicates to its DC (StorageService.unbootstrap's getChangesForKeyspace finds no
// range to move, so the stream plan carries no session).
func (st *state) leaveBytes(n *node) float64 {
	if st.Schema.maxRFIn(n.Spec.DC) == 0 {
		return 0
	}
	return n.LoadBytes
}

// progress is how far the streaming of n's attempt a has got, in [0,1].
func (st *state) progress(n *node, a *attempt, now time.Time) float64 {
	tl := st.Options.timeline()
	if st.Options.metered() {
		if st.leaveBytes(n) <= 0 {
			return 1
		}
		return clamp01(sentBy(a.Rates, st.streamStart(a), now) / st.leaveBytes(n))
	}
	span := tl.left - tl.streamStart
	if span <= 0 {
		return 1
	}
	return clamp01(float64(now.Sub(a.Start)-tl.streamStart) / float64(span))
}

func (st *state) view(n *node, now time.Time) NodeView {
	p := st.phaseOf(n, now)
	code, _ := st.rowCode(nil, n, now)
	if r := n.Repl; r != nil && r.Same {
		// Peers list the endpoint by the replaced node's row (hibernate: DN).
		if d := st.byHostID(r.Target, n); d != nil {
			code, _ = st.rowCode(nil, d, now)
		}
	}
	v := NodeView{
		Pod:                  n.Spec.Pod,
		HostID:               n.Spec.HostID,
		Address:              n.Spec.Address,
		DC:                   n.Spec.DC,
		Rack:                 n.Spec.Rack,
		Load:                 stringifyFileSize(st.loadOf(n, now)),
		Mode:                 st.shownMode(n),
		PeerCode:             code,
		Decommissioning:      len(p.running) > 0,
		Streaming:            len(p.streaming) > 0,
		Left:                 n.Left || n.Mode == ModeDecommissioned || n.Gone,
		Running:              n.jvmUp(),
		Gone:                 n.Gone,
		DecommissionsStarted: n.Started,
		DecommissionCalls:    n.Calls,
		Fault:                n.Fault,
		Joining:              n.Joining || n.Repl != nil,
		Drains:               n.Drains,
		Cleanups:             n.Cleanups,
		Restarts:             n.Restarts,
		Execs:                n.Execs,
		Throughput:           n.throughputs(st.Options),
		Tokens:               n.Spec.Tokens,
		Bootstrap:            n.bootState(),
		ExitCode:             n.Exit,
		StartupError:         n.startupError(),
		Detached:             n.Detached,
		Removed:              !n.RemovedAt.IsZero(),
		Rebuilding:           n.rebuilding() != nil,
		RebuildsStarted:      n.RebuildsStarted,
	}
	if n.Repl != nil {
		v.Replacing = n.Repl.Address
		v.ReplaceFailed = n.Repl.Failed
	}
	return v
}

// bootState is system.local's bootstrap state as nodetool prints it.
func (n *node) bootState() string {
	switch {
	case n.Mode == ModeDecommissioned:
		return "DECOMMISSIONED"
	case n.Left:
		return "NEEDS_BOOTSTRAP" // set by leaveRing, before the announce sleep
	case n.Boot == bootCompleted:
		return "COMPLETED"
	}
	return n.Boot
}
