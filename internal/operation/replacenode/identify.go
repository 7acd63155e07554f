package replacenode

import (
	"fmt"
	"sort"
	"strings"

	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
)

// deadRow is the dead node's row in ring: the row at address when the user named one,
// else the row at the pod's address, else the one DN row of the rack that no pod of
// the cluster has the address of (a pod re-created since got another address). Any
// doubt refuses: the identity of the node replaced is what everything is checked
// against.
func deadRow(r pubnodetool.Ring, dc, rack, pod, podIP, address string, liveIPs map[string]bool) (pubnodetool.Node, error) {
	if address != "" {
		row, ok := r.ByAddress(address)
		if !ok {
			return row, fmt.Errorf("no node of the ring has address %s (--address)", address)
		}
		if row.DC != dc {
			return row, fmt.Errorf("node %s is in datacenter %s, pod %s in %s", address, row.DC, pod, dc)
		}
		return row, nil
	}
	if podIP != "" {
		if row, ok := r.ByAddress(podIP); ok {
			return row, nil
		}
	}
	var cands []pubnodetool.Node
	for _, n := range r.Nodes {
		if n.DC != dc || (n.Rack != "" && n.Rack != rack) || n.Status == "U" || liveIPs[n.Address] {
			continue
		}
		cands = append(cands, n)
	}
	switch len(cands) {
	case 1:
		return cands[0], nil
	case 0:
		return pubnodetool.Node{}, fmt.Errorf("no node of the ring is pod %s's: its address %q is in no row, and rack %s of datacenter %s has no down node without a pod", pod, podIP, rack, dc)
	}
	var rows []string
	for _, n := range cands {
		rows = append(rows, n.Address+" ("+n.HostID+")")
	}
	sort.Strings(rows)
	return pubnodetool.Node{}, fmt.Errorf("rack %s has several down nodes without a pod (%s): name the one pod %s ran with --address", rack, strings.Join(rows, ", "), pod)
}

// ringProblems says why the ring forbids a replace of dead now (empty: it allows it):
// dead must be DN; every other node of dc UN; no node of any datacenter joining,
// leaving or moving (Cassandra refuses a replace while the ring changes: §4.2 R7).
// The reader's own row must be UN: a node that sees the dead one down.
func ringProblems(r pubnodetool.Ring, dc, deadID, readerIP string) []string {
	var bad []string
	seen := false
	for _, n := range r.Nodes {
		switch {
		case n.HostID == deadID:
			seen = true
			if n.Code() != "DN" {
				bad = append(bad, fmt.Sprintf("node %s (Host ID %s) is %s, not DN: a node that is up is never replaced", n.Address, n.HostID, n.Code()))
			}
		case n.State != "N":
			bad = append(bad, fmt.Sprintf("node %s of datacenter %s is %s: a replace waits until no node joins, leaves or moves", n.Address, n.DC, n.Code()))
		case n.DC == dc && n.Status != "U":
			bad = append(bad, fmt.Sprintf("node %s of datacenter %s is %s: every other node must be UN (its ranges may have no live replica to stream from)", n.Address, n.DC, n.Code()))
		}
		if readerIP != "" && pubnodetool.SameAddress(n.Address, readerIP) && n.Code() != "UN" {
			bad = append(bad, fmt.Sprintf("the node that read the ring (%s) is itself %s", n.Address, n.Code()))
		}
	}
	if !seen {
		bad = append(bad, fmt.Sprintf("the dead node (Host ID %s) is not in the ring any more", deadID))
	}
	sort.Strings(bad)
	return bad
}
