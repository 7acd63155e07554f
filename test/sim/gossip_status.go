package sim

import (
	"fmt"
	"time"
)

// gossipStatus is n's STATUS and STATUS_WITH_PORT (4.0+) in gossipinfo, and whether
// gossip knows n at all (docs/how-it-works/nodetool.md §5, docs/how-it-works/replace.md §4.4,
// §5; VersionedValue's factory): NORMAL, LEAVING, LEFT and removed (kept 3 days),
// removing (removenode), BOOT_REPLACE (an announced replacement: the replaced address,
// with the port in STATUS_WITH_PORT), hibernate (the endpoint of a same-address
// replacement). A replacement that has not announced yet gossips no STATUS.
func (st *state) gossipStatus(n *node, now time.Time) (status, withPort string, ok bool) {
	tok := n.Spec.Token
	same := func(s string) (string, string, bool) { return s, s, true }
	left := n.Left || n.Mode == ModeDecommissioned || n.Gone
	switch {
	case !n.RemovedAt.IsZero():
		if now.Sub(n.RemovedAt) > gossipLeftTTL {
			return "", "", false
		}
		return same(fmt.Sprintf("removed,%s,%d", n.Spec.HostID, n.RemovedAt.Add(gossipLeftTTL).UnixMilli()))
	case left:
		if now.Sub(n.LeftAt) > gossipLeftTTL {
			return "", "", false
		}
		return same(fmt.Sprintf("LEFT,%s,%d", tok, n.LeftAt.Add(gossipLeftTTL).UnixMilli()))
	case n.Repl != nil && n.Repl.Same:
		return "", "", false // one endpoint: the replaced node's block, hibernating
	case n.Repl != nil && !n.Repl.Announced.IsZero():
		return "BOOT_REPLACE," + n.Repl.Address, "BOOT_REPLACE," + n.Repl.Address + ":" + storagePort, true
	case n.Repl != nil:
		return "", "", n.jvmUp()
	case st.hibernating(n):
		return same("hibernate,true")
	case n.Removing != "":
		return same("removing," + n.Spec.HostID)
	case n.Leaving:
		return same("LEAVING," + tok)
	}
	return same("NORMAL," + tok)
}

// hibernating: a same-address replacement of n runs (its JVM gossips hibernate).
func (st *state) hibernating(n *node) bool {
	for _, p := range st.Nodes {
		if p != n && p.Repl != nil && p.Repl.Same && p.Repl.Target == n.Spec.HostID && p.jvmUp() {
			return true
		}
	}
	return false
}
