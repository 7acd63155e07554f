package sim

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// `nodetool rebuild [-ks <keyspace>] [-ts <tokens>] [-s <sources>] [--exclude-local-dc]
// [--] [<src-dc-name>]` (tools/nodetool/Rebuild.java; StorageService.rebuild,
// RangeStreamer, StreamResultFuture, StreamStateStore, the same shape in 3.11–5.0):
//
//   - The node fetches, for every non-local keyspace (-ks: that one), the ranges it
//     replicates: nothing for a keyspace without replicas in its DC. Each range comes
//     from one live replica that passes the source filters (FailureDetectorSourceFilter;
//     SingleDatacenterFilter with a source DC), nearest first (the snitch's proximity
//     order: its own DC before the others when no source DC is given, so a new DC
//     rebuilt without one streams from its own, empty, peers). The optimised range
//     fetch map spreads the ranges over the candidates: one session per source node,
//     equal shares. A range without a candidate is RangeStreamer's IllegalStateException
//     "Unable to find sufficient sources for streaming range …".
//   - Ranges already in system.available_ranges are skipped (RangeStreamer.fetchAsync);
//     StreamStateStore adds a session's requested ranges there when that session
//     completes successfully. So a rebuild run again after a failure streams only what
//     the failed sessions had to bring, and one run after a success streams nothing.
//     Restarts keep them (a system table).
//   - The call blocks on the plan (resultFuture.get()): a session that fails (its source
//     died, or Fault.RebuildFailures) lets the others finish, then the plan fails with
//     StreamException "Stream failed", rethrown as RuntimeException "Error while
//     rebuilding node: Stream failed" (NodeTool.err: stderr, exit 2). The operation mode
//     stays NORMAL throughout (rebuild never calls setMode).
//   - Received data counts in Load as it arrives; a failed session's is discarded
//     (its SSTables are only added when the session completes), a completed session's
//     stays.
//
// The amount a node fetches for keyspace k is its share of k's data: the data of the
// source group (the candidates' DC) spread over the keyspaces it replicates (user
// keyspaces hold the data, system ones none; each the same size), k's copy being
// min(RF, N)/N of it per node of the rebuilding node's DC.

// Rebuild outcomes ("" while it streams).
const (
	rbOK      = "ok"
	rbFailed  = "failed"  // a session failed: "Stream failed"
	rbRefused = "refused" // a check refused it (the management API's job then errors)
	rbAborted = "aborted" // the rebuilding node's JVM stopped
)

// rebuildOp is one rebuild the node ran (nodetool or the management API).
type rebuildOp struct {
	ID       string    `json:"id"`
	Source   string    `json:"source,omitempty"`   // the source DC; "" = any
	Keyspace string    `json:"keyspace,omitempty"` // -ks; "" = all
	Start    time.Time `json:"start"`
	Plan     *plan     `json:"plan,omitempty"`
	Result   string    `json:"result,omitempty"`
	Err      string    `json:"err,omitempty"` // what the call (or the job) reports on failure
	Ended    time.Time `json:"ended,omitzero"`
}

// rebuildArgs is a rebuild's request.
type rebuildArgs struct {
	source, keyspace, tokens string
	sources                  string // -s: accepted, not modelled (sources come from the DC filter)
	excludeLocal             bool
}

// rebuilding is n's running rebuild (isRebuilding), if any.
func (n *node) rebuilding() *rebuildOp {
	for _, r := range n.Rebuilds {
		if r.Result == "" {
			return r
		}
	}
	return nil
}

// refusal is a rebuild check that failed: the exception class and message.
type refusal struct{ class, msg string }

// text is how nodetool prints it: IllegalArgument/IllegalState through badUse (stdout,
// exit 1), anything else through err (stderr, exit 2).
func (r refusal) text(o Options) (out, errOut string, code int) {
	switch r.class {
	case "java.lang.IllegalArgumentException", "java.lang.IllegalStateException":
		return "nodetool: " + r.msg + "\n" + seeHelp, "", ExitUsage
	}
	return "", javaError(o, r.class, r.msg), ExitFailure
}

// checkRebuild is Rebuild.execute's and StorageService.rebuild's checks in their order:
// 3.11/4.0 test isRebuilding first and know no DC check (an unknown DC finds no source);
// 4.1+ check --exclude-local-dc, the source DC, the tokens, then isRebuilding.
func (st *state) checkRebuild(n *node, a rebuildArgs) *refusal {
	o := st.Options
	iae := func(msg string) *refusal { return &refusal{"java.lang.IllegalArgumentException", msg} }
	if a.keyspace == "" && a.tokens != "" {
		// Rebuild.execute checks it before calling the node.
		return iae("Cannot specify tokens without keyspace.")
	}
	if !o.is311() && o.Version != V40 {
		if a.source != "" && a.source == n.Spec.DC && a.excludeLocal {
			return iae("Cannot set source data center to be local data center, when excludeLocalDataCenter flag is set")
		}
		if dcs := st.ringDCs(); a.source != "" && !contains(dcs, a.source) {
			return iae(fmt.Sprintf("Provided datacenter '%s' is not a valid datacenter, available datacenters are: %s", a.source, strings.Join(dcs, ",")))
		}
	}
	if n.rebuilding() != nil {
		return &refusal{"java.lang.IllegalStateException", "Node is still rebuilding. Check nodetool netstats."}
	}
	if a.keyspace != "" && st.Schema.keyspace(a.keyspace) == nil {
		// Keyspace.open's assertion (Cassandra runs with -ea).
		return &refusal{"java.lang.AssertionError", "Unknown keyspace " + a.keyspace}
	}
	return nil
}

// ringDCs are the DCs of the token owners (TokenMetadata.Topology's DC endpoints), in
// the order the nodes were added (a HashMap's order in Cassandra).
func (st *state) ringDCs() []string {
	var dcs []string
	for _, p := range st.Nodes {
		if p.member() && !contains(dcs, p.Spec.DC) {
			dcs = append(dcs, p.Spec.DC)
		}
	}
	return dcs
}

// rebuildScope are the keyspaces a rebuild adds ranges of.
func (st *state) rebuildScope(ks string) []*keyspace {
	if ks != "" {
		return []*keyspace{st.Schema.keyspace(ks)}
	}
	return st.Schema.replicated()
}

// rebuildCandidates are the live replicas of k that n may fetch from: in src, else in
// the nearest DC that has any (n's own first, then the others in order).
func (st *state) rebuildCandidates(n *node, k *keyspace, src string) []*node {
	byDC := map[string][]*node{}
	var order []string
	for _, p := range st.Nodes {
		if p == n || !p.owner() || !p.jvmUp() || p.down() || k.rfIn(p.Spec.DC) == 0 {
			continue
		}
		if src != "" && p.Spec.DC != src {
			continue
		}
		if _, ok := byDC[p.Spec.DC]; !ok {
			order = append(order, p.Spec.DC)
		}
		byDC[p.Spec.DC] = append(byDC[p.Spec.DC], p)
	}
	if c := byDC[n.Spec.DC]; len(c) > 0 {
		return c
	}
	if len(order) == 0 {
		return nil
	}
	return byDC[order[0]]
}

// ownersIn are the token owners of dc other than except.
func (st *state) ownersIn(dc string, except *node) []*node {
	var out []*node
	for _, p := range st.Nodes {
		if p != except && p.owner() && p.Spec.DC == dc {
			out = append(out, p)
		}
	}
	return out
}

// shareOf is what n holds of keyspace k when the data is read from the owners of dc:
// their load spread over the user keyspaces they replicate, k's copy being
// min(RF, N)/N of it on each node of n's DC. System keyspaces hold nothing.
func (st *state) shareOf(n *node, k *keyspace, dc string) float64 {
	isUser := false
	for _, u := range st.Schema.user() {
		if u == k {
			isUser = true
		}
	}
	group := st.ownersIn(dc, n)
	if !isUser || len(group) == 0 {
		return 0
	}
	load, copies := 0.0, 0.0
	for _, p := range group {
		load += p.LoadBytes
	}
	for _, u := range st.Schema.user() {
		copies += float64(min(u.rfIn(dc), len(group)))
	}
	if copies == 0 {
		return 0
	}
	own := len(st.ownersIn(n.Spec.DC, n)) + 1
	return load / copies * float64(min(k.rfIn(n.Spec.DC), own)) / float64(own)
}

// rebuildSessions lists the sessions of n's rebuild, in node order; missing names the
// first keyspace with a range no candidate serves.
func (st *state) rebuildSessions(n *node, a rebuildArgs) (ss []session, missing *keyspace) {
	bytes := map[string]float64{}
	ranges := map[string]map[string]float64{}
	for _, k := range st.rebuildScope(a.keyspace) {
		if k.Class == classLocal || k.rfIn(n.Spec.DC) == 0 {
			continue // no local ranges: nothing to add
		}
		need := 1 - n.Available[k.Name]
		if need <= 1e-9 {
			continue // all its ranges are available already
		}
		cands := st.rebuildCandidates(n, k, a.source)
		if len(cands) == 0 {
			return nil, k
		}
		b := st.shareOf(n, k, cands[0].Spec.DC) * need
		for _, c := range cands {
			pod := c.Spec.Pod
			bytes[pod] += b / float64(len(cands))
			if ranges[pod] == nil {
				ranges[pod] = map[string]float64{}
			}
			ranges[pod][k.Name] += need / float64(len(cands))
		}
	}
	for _, p := range st.Nodes {
		if r, ok := ranges[p.Spec.Pod]; ok {
			ss = append(ss, session{From: p.Spec.Pod, To: n.Spec.Pod, Bytes: bytes[p.Spec.Pod], Ranges: r})
		}
	}
	return ss, nil
}

// noSourceMsg is RangeStreamer's message for a range of k without a source: the range
// as Range.toString (3.11) or the Replica's toString (4.0+), here n's first range.
func (st *state) noSourceMsg(n *node, k *keyspace) string {
	rng := st.rangeOf(n)
	if !st.Options.is311() {
		rng = "Full(" + endpointString(st.Options, n.Spec.Address) + "," + rng + ")"
	}
	return "Unable to find sufficient sources for streaming range " + rng + " in keyspace " + k.Name
}

// startRebuild runs the checks and, when they pass, starts the plan. It always records
// the rebuild (the management API's job reads it): refused ones with their refusal.
func (st *state) startRebuild(n *node, a rebuildArgs, now time.Time) (*rebuildOp, *refusal) {
	st.Seq++
	r := &rebuildOp{ID: timeUUID(now, fmt.Sprintf("rebuild/%s/%d", n.Spec.Pod, st.Seq)), Source: a.source, Keyspace: a.keyspace, Start: now}
	ref := st.checkRebuild(n, a) // before r is recorded: it is no running rebuild yet
	n.Rebuilds = append(n.Rebuilds, r)
	if len(n.Rebuilds) > maxHistory {
		n.Rebuilds = n.Rebuilds[len(n.Rebuilds)-maxHistory:]
	}
	var ss []session
	if ref == nil {
		var missing *keyspace
		if ss, missing = st.rebuildSessions(n, a); missing != nil {
			ref = &refusal{"java.lang.IllegalStateException", st.noSourceMsg(n, missing)}
		}
	}
	if ref != nil {
		r.Result, r.Err, r.Ended = rbRefused, ref.msg, now
		return r, ref
	}
	n.RebuildsStarted++
	// Keyspaces whose sessions carry no bytes (system ones) complete at once.
	var live []session
	for _, s := range ss {
		if s.Bytes > 0 {
			live = append(live, s)
			continue
		}
		n.addAvailable(s.Ranges)
	}
	r.Plan = st.newPlan("Rebuild", "rebuild/"+r.ID, now, st.Options.RebuildTime, live)
	if n.Fault.RebuildFailures > 0 && len(live) > 0 {
		n.Fault.RebuildFailures--
		r.Plan.Fail = true
	}
	if len(live) == 0 {
		st.finishRebuild(n, r, now)
	}
	return r, nil
}

func (n *node) addAvailable(r map[string]float64) {
	if len(r) == 0 {
		return
	}
	if n.Available == nil {
		n.Available = map[string]float64{}
	}
	for k, f := range r {
		n.Available[k] = min(1, n.Available[k]+f)
	}
}

// rbDue are the next events of n's running rebuild: each open session's end, or the
// armed failure of its first session half-way.
func (st *state) rbDue(n *node) []event {
	r := n.rebuilding()
	if r == nil || r.Plan == nil {
		return nil
	}
	p := r.Plan
	var out []event
	for i, s := range p.Sessions {
		if s.Done || s.Failed {
			continue
		}
		fail := p.Fail && i == 0
		var at time.Time
		ok := true
		switch {
		case !st.Options.metered() && fail:
			at = p.Start.Add(p.Dur / 2)
		case !st.Options.metered():
			at = p.Start.Add(p.Dur)
		case fail:
			at, ok = reachAt(s.Rates, p.Start, s.Bytes/2)
		default:
			at, ok = reachAt(s.Rates, p.Start, s.Bytes)
		}
		if ok {
			out = append(out, event{at: at, kind: evRbSession, n: n, p: p, si: i, fail: fail, rb: r})
		}
	}
	return out
}

// applyRbSession ends one session: a completed one makes its ranges available; the
// last one to end ends the rebuild.
func (st *state) applyRbSession(e *event) {
	s := &e.p.Sessions[e.si]
	if e.fail {
		s.Failed, s.Ended = true, e.at
	} else {
		s.Done, s.Ended = true, e.at
		e.n.addAvailable(s.Ranges)
	}
	st.maybeFinishRebuild(e.n, e.rb, e.at)
}

// failRebuildSessions fails, at now, the open sessions of r that src sends (its JVM
// stopped: the connection broke).
func (st *state) failRebuildSessions(n *node, r *rebuildOp, src *node, now time.Time) {
	for i := range r.Plan.Sessions {
		s := &r.Plan.Sessions[i]
		if s.From == src.Spec.Pod && !s.Done && !s.Failed {
			s.Failed, s.Ended = true, now
		}
	}
	st.maybeFinishRebuild(n, r, now)
}

func (st *state) maybeFinishRebuild(n *node, r *rebuildOp, at time.Time) {
	for _, s := range r.Plan.Sessions {
		if !s.Done && !s.Failed {
			return
		}
	}
	st.finishRebuild(n, r, at)
}

// finishRebuild ends r once every session has: the completed sessions' data stays.
func (st *state) finishRebuild(n *node, r *rebuildOp, at time.Time) {
	p := r.Plan
	failed := false
	for _, s := range p.Sessions {
		if s.Done {
			n.LoadBytes += s.Bytes
		} else {
			failed = true
		}
	}
	p.Ended = at
	r.Ended = at
	if failed {
		p.Failed = true
		r.Result, r.Err = rbFailed, "Error while rebuilding node: Stream failed"
		return
	}
	p.Done = true
	r.Result = rbOK
}

// abortRebuild: the rebuilding node's JVM stopped; its rebuild and the sessions die.
func (st *state) abortRebuild(n *node, at time.Time) {
	r := n.rebuilding()
	if r == nil {
		return
	}
	if p := r.Plan; p != nil {
		for i := range p.Sessions {
			if s := &p.Sessions[i]; !s.Done && !s.Failed {
				s.Failed, s.Ended = true, at
			}
		}
		p.Failed, p.Ended = true, at
	}
	// Not a Cassandra text: the job's error names what happened for a reader of the sim.
	r.Result, r.Err, r.Ended = rbAborted, "the node's JVM stopped during the rebuild", at
}

// rebuildFailedText is the stream failure (stderr, exit 2).
func rebuildFailedText(o Options) string {
	return javaErrorAt(o, "java.lang.RuntimeException", "Error while rebuilding node: Stream failed",
		"org.apache.cassandra.service.StorageService.rebuild(StorageService.java:"+srcRebuildThrow.of(o)+")")
}

// Line of StorageService.rebuild's "throw new RuntimeException("Error while rebuilding
// node: …")" and of NodeProbe.rebuild's call, per version. Not checked against each
// release's file: only the text above them is.
var (
	srcRebuildThrow = perVersion{"1280", "1345", "1401", "1436"}
	srcProbeRebuild = perVersion{"1290", "1466", "1650", "1789"}
)

// javaErrorAt is javaError with the server frame that threw first.
func javaErrorAt(o Options, class, msg, frame string) string {
	return "error: " + msg + "\n-- StackTrace --\n" + class + ": " + msg + "\n\tat " + frame + "\n" + javaFrames(o) + "\n"
}

// runRebuild runs `nodetool rebuild` on pod: the checks under the lock, then (when a
// plan started) a wait without it until the rebuild ended, like the JMX call.
func (s *Store) runRebuild(ctx context.Context, pod string, inv invocation, stdout, stderr io.Writer) int {
	var out, errOut string
	code := ExitOK
	var id string
	var opts Options
	err := s.update(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		opts = st.Options
		if !n.jvmUp() {
			var b strings.Builder
			connectError(&b, st.Options, inv)
			errOut, code = b.String(), ExitUsage
			return nil
		}
		r, ref := st.startRebuild(n, inv.rebuild, now)
		if ref != nil {
			out, errOut, code = ref.text(st.Options)
			return nil
		}
		if r.Result == "" {
			id = r.ID
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(stderr, "nodetool-sim: %v\n", err)
		return ExitUsage
	}
	_, _ = io.WriteString(stdout, out)
	_, _ = io.WriteString(stderr, errOut)
	if id == "" {
		return code
	}
	for {
		result := rbAborted
		if err := s.read(func(st *state, _ time.Time) error {
			if n, err := st.node(pod); err == nil {
				for _, r := range n.Rebuilds {
					if r.ID == id {
						result = r.Result
					}
				}
			}
			return nil
		}); err != nil {
			fmt.Fprintf(stderr, "nodetool-sim: %v\n", err)
			return ExitFailure
		}
		switch result {
		case rbOK:
			return ExitOK // success prints nothing
		case rbFailed:
			_, _ = io.WriteString(stderr, rebuildFailedText(opts))
			return ExitFailure
		case rbAborted:
			_, _ = io.WriteString(stderr, jvmGoneFrom(opts, "rebuild", srcProbeRebuild.of(opts)))
			return ExitFailure
		}
		if !sleepCtx(ctx, s.poll) {
			return ExitKilled
		}
	}
}
