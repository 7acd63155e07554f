package sim

import "time"

// What one node's `nodetool status` lists: rows come from its token metadata (normal
// and bootstrapping tokens), so during a replacement or a removenode the nodes involved
// do not all see the same ring (docs/how-it-works/replace.md §4.4, §5).

// rowCode is n's two-letter code in viewer's status, false when n has no row there.
// viewer nil is a peer not involved in any operation (NodeView.PeerCode).
func (st *state) rowCode(viewer, n *node, now time.Time) (string, bool) {
	if !n.listed() {
		return "", false
	}
	if r := n.Repl; r != nil {
		switch {
		case r.Same && viewer == n:
			// Its tokens are normal locally; the local node is always live to itself.
			return "UN", true
		case r.Same, viewer == n, r.Announced.IsZero():
			// Same address: the dead node's row is the endpoint's (hibernate, DN).
			// Different address: the replacement is in no token map until BOOT_REPLACE,
			// and not in its own.
			return "", false
		}
		return st.upDown(n) + "J", true
	}
	if st.replacedFor(viewer, n) {
		return "", false
	}
	m := "N"
	switch {
	case n.Joining:
		m = "J"
	case n.Leaving || st.removingSeenBy(viewer, n):
		m = "L"
	}
	return st.upDown(n) + m, true
}

// replacedFor: n's row gives way to a replacement of it. A different-address one
// overwrites n's tokens with its bootstrap tokens once announced, except in its own
// view; a same-address one shows itself instead of n in its own view only.
func (st *state) replacedFor(viewer, n *node) bool {
	for _, p := range st.Nodes {
		if p == n || p.Repl == nil || p.Repl.Target != n.Spec.HostID {
			continue
		}
		if p.Repl.Same && viewer == p {
			return true
		}
		if !p.Repl.Same && !p.Repl.Announced.IsZero() && viewer != p {
			return true
		}
	}
	return false
}

func (st *state) upDown(n *node) string {
	if n.down() {
		return "D"
	}
	return "U"
}

// visible lists the nodes viewer's status shows, in spec order.
func (st *state) visible(viewer *node, now time.Time) []*node {
	var out []*node
	for _, n := range st.Nodes {
		if _, ok := st.rowCode(viewer, n, now); ok {
			out = append(out, n)
		}
	}
	return out
}

// loadOf is n's load as its peers see it now: what it holds plus what its running
// replacement or removal plans have brought in so far.
func (st *state) loadOf(n *node, now time.Time) float64 {
	l := n.LoadBytes
	for _, op := range st.ops() {
		if op.p.active(now) {
			l += st.planSent(op.p, n.Spec.Pod, now)
		}
	}
	return l
}
