package sim

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// `nodetool removenode <host-id> | status | force` (docs/how-it-works/replace.md §5;
// StorageService.removeNode, getRemovalStatus, forceRemoveCompletion and
// Gossiper.advertiseRemoving, the same in 3.11–5.0 but for the endpoint format).
//
// The node it runs on coordinates: it checks the target, lists the live nodes that gain
// its ranges (replicatingNodes) and puts the target in its own leaving set at once (DL
// there), sleeps RING_DELAY, checks the target's generation did not change, then gossips
// "removing" (DL everywhere). Each gainer streams a "Restore replica count" plan from a
// surviving replica and confirms; when all have, the target is excised ("removed",
// row gone) and the call, blocked all along, returns. The state is the coordinator's
// JVM's only: a restart loses it, while peers keep the gossiped "removing".
// RING_DELAY and the streaming take DecommissionTime's timeline (its wait, then its
// streaming window) unless metered.

// The WARNs removenode logs (SS lines at the refs of replace_rules.go).
var (
	srcNotConfirmed    = lines("StorageService.java", 4584, 4950, 5261, 5608)
	srcNoForce         = lines("StorageService.java", 4596, 4962, 5273, 5620)
	srcAlreadyRemoving = lines("StorageService.java", 4630, 4996, 5307, 5654)
)

// removal is one removenode a node coordinates.
type removal struct {
	ID     string    `json:"id"`
	Target string    `json:"target"` // host ID
	Start  time.Time `json:"start"`
	Token  string    `json:"token"` // the target's first token, which status prints
	// Gainers are replicatingNodes (pods), Plans their restore plans in that order.
	Gainers    []string  `json:"gainers,omitempty"`
	Advertised bool      `json:"advertised,omitempty"`
	Plans      []*plan   `json:"plans,omitempty"`
	Result     string    `json:"result,omitempty"`
	Ended      time.Time `json:"ended,omitzero"`
}

// Removal outcomes ("" while it runs).
const (
	rmOK      = "ok"
	rmForced  = "forced"  // removenode force cleared it: the blocked call returns 0
	rmFailed  = "failed"  // generation changed: the call failed, the state stays
	rmAborted = "aborted" // the coordinator's JVM stopped
)

// pending: removingNode is set on the coordinator (status shows it, a new removenode is
// refused). A failed one stays until forced: nothing clears it.
func (r *removal) pending() bool { return r.Result == "" || r.Result == rmFailed }

// pendingRemoval is n's removal in process, if any.
func (n *node) pendingRemoval() *removal {
	for _, r := range n.Removals {
		if r.pending() {
			return r
		}
	}
	return nil
}

// removingSeenBy: viewer has n in its leaving set because of a removal: gossiped, or
// viewer is the coordinator (addLeavingEndpoint before the sleep).
func (st *state) removingSeenBy(viewer, n *node) bool {
	if n.Removing != "" {
		return true
	}
	if viewer == nil {
		return false
	}
	r := viewer.pendingRemoval()
	return r != nil && r.Target == n.Spec.HostID
}

// rmTimeline: the RING_DELAY sleep and the unmetered streaming window.
func (o Options) rmTimeline() (wait, stream time.Duration) {
	tl := o.timeline()
	return tl.streamStart, tl.left - tl.streamStart
}

var reHostID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// removeNode runs `removenode <arg>` on self.
func (s *Store) removeNode(ctx context.Context, pod string, inv invocation, stdout, stderr io.Writer) int {
	var out, errOut strings.Builder
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
			connectError(&errOut, st.Options, inv)
			code = ExitUsage
			return nil
		}
		switch arg := inv.positional[0]; arg {
		case "status":
			out.WriteString("RemovalStatus: " + st.removalStatus(n, inv.printPort) + "\n")
		case "force":
			out.WriteString("RemovalStatus: " + st.removalStatus(n, inv.printPort) + "\n")
			st.forceRemoval(n, now)
		default:
			code, id = st.startRemoval(n, arg, now, &out, &errOut)
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(stderr, "nodetool-sim: %v\n", err)
		return ExitUsage
	}
	_, _ = io.WriteString(stdout, out.String())
	_, _ = io.WriteString(stderr, errOut.String())
	if id == "" {
		return code
	}
	return s.waitRemoval(ctx, pod, id, opts, stderr)
}

// waitRemoval blocks like removeNode's "while (!replicatingNodes.isEmpty()) sleep(100)".
func (s *Store) waitRemoval(ctx context.Context, pod, id string, o Options, stderr io.Writer) int {
	for {
		var result, target string
		err := s.read(func(st *state, _ time.Time) error {
			result = rmAborted
			n, err := st.node(pod)
			if err != nil {
				return nil
			}
			for _, r := range n.Removals {
				if r.ID == id {
					result = r.Result
					if d := st.byHostID(r.Target, nil); d != nil {
						target = d.Spec.Address
					}
				}
			}
			return nil
		})
		if err != nil {
			fmt.Fprintf(stderr, "nodetool-sim: %v\n", err)
			return ExitFailure
		}
		switch result {
		case rmOK, rmForced:
			return ExitOK
		case rmFailed:
			_, _ = io.WriteString(stderr, javaError(o, "java.lang.RuntimeException",
				"Endpoint "+endpointString(o, target)+" generation changed while trying to remove it"))
			return ExitFailure
		case rmAborted:
			_, _ = io.WriteString(stderr, jvmGoneFrom(o, "removeNode", perVersion{"721", "772", "890", "1009"}.of(o)))
			return ExitFailure
		}
		if !sleepCtx(ctx, s.poll) {
			return ExitKilled
		}
	}
}

// startRemoval is removeNode's checks, in its order; every refusal is an
// UnsupportedOperationException (stderr, exit 2), a malformed ID UUID.fromString's
// IllegalArgumentException (stdout, exit 1).
func (st *state) startRemoval(c *node, arg string, now time.Time, out, errOut *strings.Builder) (int, string) {
	o := st.Options
	refuse := func(msg string) (int, string) {
		errOut.WriteString(javaError(o, "java.lang.UnsupportedOperationException", msg))
		return ExitFailure, ""
	}
	if !reHostID.MatchString(arg) {
		out.WriteString("nodetool: Invalid UUID string: " + arg + "\n" + seeHelp)
		return ExitUsage, ""
	}
	d := st.endpointForHostID(strings.ToLower(arg))
	switch {
	case d == nil:
		return refuse("Host ID not found.")
	case !d.member():
		return refuse("Node to be removed is not a member of the token ring")
	case d == c:
		return refuse("Cannot remove self")
	case d.jvmUp() && !d.down():
		return refuse("Node " + endpointString(o, d.Spec.Address) + " is alive and owns this ID. Use decommission command to remove it from the ring")
	}
	if d.Leaving || d.Removing != "" {
		c.logJMX(now, "WARN", srcAlreadyRemoving, o, "Node "+endpointString(o, d.Spec.Address)+" is already being removed, continuing removal anyway")
	}
	if r := c.pendingRemoval(); r != nil && len(st.unconfirmed(r)) > 0 {
		return refuse("This node is already processing a removal. Wait for it to complete, or use 'removenode force' if this has failed.")
	}
	st.Seq++
	r := &removal{ID: timeUUID(now, fmt.Sprintf("removenode/%s/%d", c.Spec.Pod, st.Seq)), Target: d.Spec.HostID, Start: now, Token: d.tokensOf()[0]}
	for _, g := range st.gainers(d) {
		r.Gainers = append(r.Gainers, g.Spec.Pod)
	}
	c.Removals = append(c.Removals, r)
	if len(c.Removals) > maxHistory {
		c.Removals = c.Removals[len(c.Removals)-maxHistory:]
	}
	return ExitOK, r.ID
}

// endpointForHostID is tokenMetadata.getEndpointForHostId: a listed endpoint (member or
// bootstrapping) with that host ID.
func (st *state) endpointForHostID(id string) *node {
	for _, p := range st.Nodes {
		if p.Spec.HostID == id && p.listed() && (p.member() || p.Joining || (p.Repl != nil && !p.Repl.Announced.IsZero())) {
			return p
		}
	}
	return nil
}

// gainers are the live nodes that take d's ranges: with NetworkTopologyStrategy and at
// least RF racks, the other nodes of its rack when it has any, else the other nodes of
// its DC. RF is the highest of the keyspaces in d's DC; keyspaces with RF 1 are
// skipped ("the data is lost") and those with none in the DC have no range there, so
// then none.
func (st *state) gainers(d *node) []*node {
	rf := st.Schema.maxRFIn(d.Spec.DC)
	if rf <= 1 {
		return nil
	}
	var rack, dc []*node
	for _, p := range st.Nodes {
		if p == d || p.Spec.DC != d.Spec.DC || !p.owner() || p.down() || !p.jvmUp() {
			continue
		}
		dc = append(dc, p)
		if p.Spec.Rack == d.Spec.Rack {
			rack = append(rack, p)
		}
	}
	if st.racks(d.Spec.DC) >= rf && len(rack) > 0 {
		return rack
	}
	return dc
}

// rmSource is a surviving replica g fetches d's ranges from: a live owner other than
// both, in another rack than d when there is one.
func (st *state) rmSource(g, d *node) *node {
	var any *node
	for _, p := range st.Nodes {
		if p == g || p == d || p.Spec.DC != d.Spec.DC || !p.owner() || p.down() || !p.jvmUp() {
			continue
		}
		if p.Spec.Rack != d.Spec.Rack {
			return p
		}
		if any == nil {
			any = p
		}
	}
	return any
}

// unconfirmed lists the gainers of r that have not confirmed (replicatingNodes).
func (st *state) unconfirmed(r *removal) []string {
	var out []string
	for i, g := range r.Gainers {
		if i >= len(r.Plans) || !r.Plans[i].Done {
			out = append(out, g)
		}
	}
	return out
}

// removalStatus is getRemovalStatus(printPort) on n.
func (st *state) removalStatus(n *node, printPort bool) string {
	r := n.pendingRemoval()
	if r == nil {
		return "No token removals in process."
	}
	var eps []string
	for _, g := range st.unconfirmed(r) {
		if p := st.attached(g); p != nil {
			eps = append(eps, "/"+p.address(printPort))
		}
	}
	return fmt.Sprintf("Removing token (%s). Waiting for replication confirmation from [%s].", r.Token, strings.Join(eps, ","))
}

// forceRemoval is forceRemoveCompletion on n: when a removal is pending or n has
// removal targets in its leaving set, excise them all now and clear n's removal (its
// blocked call then returns 0); else only the WARN. Decommissioning nodes, which the
// real call would excise too, are left alone (not simulated).
func (st *state) forceRemoval(n *node, now time.Time) {
	o := st.Options
	var targets []*node
	for _, p := range st.Nodes {
		if p.listed() && st.removingSeenBy(n, p) {
			targets = append(targets, p)
		}
	}
	r := n.pendingRemoval()
	if r == nil && len(targets) == 0 {
		n.logJMX(now, "WARN", srcNoForce, o, "No nodes to force removal on, call 'removenode' first")
		return
	}
	var waiting []string
	if r != nil {
		for _, g := range st.unconfirmed(r) {
			if p := st.attached(g); p != nil {
				waiting = append(waiting, endpointString(o, p.Spec.Address))
			}
		}
	}
	n.logJMX(now, "WARN", srcNotConfirmed, o, "Removal not confirmed for for "+strings.Join(waiting, ","))
	for _, d := range targets {
		st.excise(d, now)
	}
	if r != nil {
		r.Result, r.Ended = rmForced, now
	}
}

// excise removes d from the ring ("removed,<hostId>,<expire>" in gossip) and ends the
// removals of it: their plans stop.
func (st *state) excise(d *node, at time.Time) {
	d.RemovedAt = at
	d.StatusVersion++
	for _, c := range st.Nodes {
		for _, r := range c.Removals {
			if r.Target != d.Spec.HostID {
				continue
			}
			if r.Result == "" || r.Result == rmFailed {
				r.Result, r.Ended = rmForced, at
			}
			for _, p := range r.Plans {
				if p.active(at) {
					p.Failed, p.Ended = true, at
				}
			}
		}
	}
}

// abortRemovals: the coordinator's JVM stopped; its removal state is gone (peers keep
// the gossiped "removing").
func (st *state) abortRemovals(c *node, at time.Time) {
	for _, r := range c.Removals {
		if r.pending() {
			r.Result, r.Ended = rmAborted, at
		}
	}
}

// rmDue is r's next event: the end of the RING_DELAY sleep, then each gainer's
// confirmation (plans of an aborted removal still finish: the gainers stream on).
func (st *state) rmDue(c *node, r *removal) []event {
	if r.Result == "" && !r.Advertised {
		wait, _ := st.Options.rmTimeline()
		return []event{{at: r.Start.Add(wait), kind: evRmAdvertise, n: c, rm: r}}
	}
	var out []event
	for _, p := range r.Plans {
		if p.Done || p.Failed {
			continue
		}
		if at, ok := st.planEnd(p); ok {
			out = append(out, event{at: at, kind: evRmConfirm, n: c, rm: r, p: p})
		}
	}
	return out
}

// applyRmAdvertise ends advertiseRemoving's sleep: the target's generation must not
// have changed; then "removing" is gossiped and the gainers start streaming.
func (st *state) applyRmAdvertise(c *node, r *removal, at time.Time) {
	o := st.Options
	d := st.byHostID(r.Target, nil)
	if d == nil || d.StartedAt.After(r.Start) {
		r.Result, r.Ended = rmFailed, at
		return
	}
	r.Advertised = true
	d.Removing = c.Spec.HostID
	d.StatusVersion++
	_, dur := o.rmTimeline()
	share := 0.0
	if len(r.Gainers) > 0 {
		share = d.LoadBytes / float64(len(r.Gainers))
	}
	for _, pod := range r.Gainers {
		g := st.attached(pod)
		var ss []session
		if src := st.rmSource(g, d); g != nil && src != nil {
			ss = []session{{From: src.Spec.Pod, To: pod, Bytes: share}}
		}
		st.Seq++
		d := dur
		if len(ss) == 0 {
			d = 0
		}
		p := st.newPlan("Restore replica count", fmt.Sprintf("restore/%s/%d", pod, st.Seq), at, d, ss)
		if g == nil || !g.jvmUp() {
			p.Failed, p.Ended = true, at // a gainer that died since never confirms
		}
		r.Plans = append(r.Plans, p)
	}
	if len(r.Gainers) == 0 {
		st.finishRemoval(r, d, at)
	}
}

// applyRmConfirm: a gainer has its share (REPLICATION_FINISHED); the last one ends the
// removal.
func (st *state) applyRmConfirm(r *removal, p *plan, at time.Time) {
	p.Done, p.Ended = true, at
	for _, s := range p.Sessions {
		if g := st.attached(s.To); g != nil {
			g.LoadBytes += s.Bytes
		}
	}
	if r.Result == "" && len(st.unconfirmed(r)) == 0 {
		if d := st.byHostID(r.Target, nil); d != nil {
			st.finishRemoval(r, d, at)
		}
	}
}

func (st *state) finishRemoval(r *removal, d *node, at time.Time) {
	st.excise(d, at)
	r.Result = rmOK
}
