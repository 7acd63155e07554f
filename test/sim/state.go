package sim

import (
	"fmt"
	"time"
)

// stateFormat versions the JSON file so a harness built from an older tree fails loudly.
const stateFormat = 1

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
}

// attempt is one decommission that started leaving.
type attempt struct {
	ID     string    `json:"id"`
	Start  time.Time `json:"start"`
	Fail   bool      `json:"fail,omitempty"` // armed stream failure: ends at Start+failAt
	Result string    `json:"result,omitempty"`
	Ended  time.Time `json:"ended,omitzero"`
}

func newState(opts Options, specs []NodeSpec, now time.Time) (*state, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	st := &state{Format: stateFormat, Options: o, Created: now}
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
	for _, n := range st.Nodes {
		if n.Spec.Pod == sp.Pod {
			return fmt.Errorf("sim: pod %q already exists", sp.Pod)
		}
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

func (st *state) node(pod string) (*node, error) {
	for _, n := range st.Nodes {
		if n.Spec.Pod == pod {
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

// jvmUp: nodetool can connect.
func (n *node) jvmUp() bool { return !n.Fault.Down && !n.Gone }

// listed: the node is a token owner (or a joining node) that status/describecluster show.
func (n *node) listed() bool { return !n.Left && !n.Gone && n.Mode != ModeDecommissioned }

// member: the node is in its own token metadata (decommission's isMember check); a
// joining node is not yet.
func (n *node) member() bool { return n.listed() && !n.Joining }

// owner: a listed node that owns tokens and is not leaving (RF and ownership counts).
func (n *node) owner() bool { return n.listed() && !n.Leaving && !n.Joining }

// down: peers see the node down: its JVM is not running, or it was drained (gossip and
// messaging stopped).
func (n *node) down() bool { return n.Fault.Down || n.Mode == ModeDrained }

// peerCode is the two-letter code other nodes print for it ("" when not listed).
func (n *node) peerCode() string {
	if !n.listed() {
		return ""
	}
	s, m := "U", "N"
	if n.down() {
		s = "D"
	}
	if n.Leaving {
		m = "L"
	}
	if n.Joining {
		m = "J"
	}
	return s + m
}

// event is one discrete transition derived from a running attempt.
type event struct {
	at   time.Time
	kind int
	n    *node
	a    *attempt
}

const (
	evLeft = iota // LEFT announced: peers drop the row, load moves to them
	evDone        // DECOMMISSIONED
	evFail        // stream failure
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
				var e event
				switch {
				case a.Fail:
					e = event{a.Start.Add(tl.failAt), evFail, n, a}
				case !n.Left:
					e = event{a.Start.Add(tl.left), evLeft, n, a}
				default:
					e = event{a.Start.Add(tl.done), evDone, n, a}
				}
				if e.at.After(now) {
					continue
				}
				if next == nil || e.at.Before(next.at) {
					next = &e
				}
			}
		}
		if next == nil {
			return
		}
		st.apply(next)
	}
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
	case evLeft:
		n.Left = true
		n.LeftAt = e.at
		n.StatusVersion++
		// The leaving node's data ends up on the remaining nodes of its DC; share it
		// equally (matches docs/reference/nodetool.md's "after the decommission" fixture).
		var peers []*node
		for _, p := range st.Nodes {
			if p != n && p.Spec.DC == n.Spec.DC && p.listed() {
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

// settleJoins ends the bootstrap of joining nodes whose JoinTime is up: NORMAL, or with
// Fault.JoinFails JOINING_FAILED (5.0) / still JOINING (3.11, 4.x).
func (st *state) settleJoins(now time.Time) {
	for _, n := range st.Nodes {
		if !n.Joining || n.Fault.Down || now.Before(n.JoinStart.Add(st.Options.JoinTime)) {
			continue
		}
		if n.Fault.JoinFails {
			if st.Options.is50() && n.Mode != ModeJoiningFailed {
				n.Mode = ModeJoiningFailed
			}
			continue
		}
		n.Joining = false
		n.Mode = ModeNormal
		n.StatusVersion++
	}
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
	tl        timeline
}

func (st *state) phaseOf(n *node, now time.Time) phase {
	p := phase{running: n.running(), tl: st.Options.timeline()}
	if n.Left {
		return p
	}
	for _, a := range p.running {
		el := now.Sub(a.Start)
		if el >= p.tl.streamStart && el < p.tl.left {
			p.streaming = append(p.streaming, a)
		}
	}
	return p
}

// progress is how far an attempt's streaming has got, in [0,1].
func (p phase) progress(a *attempt, now time.Time) float64 {
	span := p.tl.left - p.tl.streamStart
	if span <= 0 {
		return 1
	}
	f := float64(now.Sub(a.Start)-p.tl.streamStart) / float64(span)
	return max(0, min(1, f))
}

func (st *state) view(n *node, now time.Time) NodeView {
	p := st.phaseOf(n, now)
	return NodeView{
		Pod:                  n.Spec.Pod,
		HostID:               n.Spec.HostID,
		Address:              n.Spec.Address,
		DC:                   n.Spec.DC,
		Rack:                 n.Spec.Rack,
		Load:                 stringifyFileSize(n.LoadBytes),
		Mode:                 st.shownMode(n),
		PeerCode:             n.peerCode(),
		Decommissioning:      len(p.running) > 0,
		Streaming:            len(p.streaming) > 0,
		Left:                 n.Left || n.Mode == ModeDecommissioned || n.Gone,
		Running:              n.jvmUp(),
		Gone:                 n.Gone,
		DecommissionsStarted: n.Started,
		DecommissionCalls:    n.Calls,
		Fault:                n.Fault,
		Joining:              n.Joining,
		Drains:               n.Drains,
		Cleanups:             n.Cleanups,
		Restarts:             n.Restarts,
	}
}
