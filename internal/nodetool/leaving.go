package nodetool

import "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"

// SendsUnbootstrap reports whether netstats lists a decommission's stream plan
// (Unbootstrap) that this node sends: the node is leaving. A receiving peer lists the
// same plan with Receiving sessions, which does not count. Plans whose sessions could
// not be read (no summary line) count: unknown is never "not leaving".
func (n Netstats) SendsUnbootstrap() bool {
	if !n.Streaming {
		return false
	}
	if len(n.Streams) == 0 {
		return true
	}
	for _, s := range n.Streams {
		if s.Plan == PlanUnbootstrap && s.Direction == DirSending {
			return true
		}
	}
	return false
}

// LeavingEvidence says what shows a node in the middle of a decommission whatever its
// own mode reads, or "" when nothing does: its netstats (ns) list an Unbootstrap plan it
// sends, or reader's successful ring read lists it leaving (row: UL, DL) or no longer
// lists it (listed false: LEFT announced). On 5.0 the mode can read DECOMMISSION_FAILED
// while the node is still leaving (CASSANDRA-21493, CASSANDRA-21583), so the mode alone
// never says a decommission failed.
func LeavingEvidence(ns Netstats, row nodetool.Node, listed bool, reader string) string {
	switch {
	case ns.SendsUnbootstrap():
		return "its netstats list an Unbootstrap stream it sends"
	case !listed:
		return "the ring read on " + reader + " no longer lists it (LEFT announced)"
	case row.State == "L":
		return reader + " sees it " + row.Code() + " (leaving)"
	}
	return ""
}
