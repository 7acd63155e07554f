// Package nodetool is what Cassandra's nodetool reports, parsed, as far as an operation
// kind judges the world by it: the ring as one node sees it (`nodetool status`) and a
// node's operation mode (`nodetool netstats`). Running nodetool and parsing its output
// are the plugin's (internal/nodetool).
package nodetool

import "net/netip"

// Node is one row of `nodetool status`.
type Node struct {
	DC      string `json:"dc"`
	Rack    string `json:"rack"`
	Status  string `json:"status"` // "U", "D" or "?"
	State   string `json:"state"`  // "N", "L", "J" or "M"
	Address string `json:"address"`
	Load    string `json:"load"`   // as printed, e.g. "1.2 GiB", "?"
	Tokens  int    `json:"tokens"` // 0 in the single-token layout
	Owns    string `json:"owns"`   // as printed, e.g. "50.0%", "?"
	HostID  string `json:"hostID"` // "" when nodetool printed null / an empty cell
	Token   string `json:"token,omitempty"`
}

// Code is the two-letter state as nodetool prints it, e.g. "UN".
func (n Node) Code() string { return n.Status + n.State }

// Ring is a parsed `nodetool status`. An unreadable ring is never an empty one: a kind
// that cannot read it knows nothing, not that a node left (cass-operator #973).
type Ring struct {
	Nodes []Node   `json:"nodes"`
	Notes []string `json:"notes,omitempty"`
}

// ByHostID finds a node by its Host ID.
func (r Ring) ByHostID(id string) (Node, bool) {
	for _, n := range r.Nodes {
		if id != "" && n.HostID == id {
			return n, true
		}
	}
	return Node{}, false
}

// ByAddress finds a node by its address, compared as parsed IP addresses: Cassandra
// prints IPv6 in full (fd00:10:244:1:0:0:0:5, InetAddress.getHostAddress) where the
// kubelet writes the short form (fd00:10:244:1::5).
func (r Ring) ByAddress(addr string) (Node, bool) {
	for _, n := range r.Nodes {
		if SameAddress(n.Address, addr) {
			return n, true
		}
	}
	return Node{}, false
}

// Unaccounted lists the members of datacenter dc whose address is none of addrs (the
// IPs of the pods that exist). Such a member runs where no pod of ours is: a node whose
// pod is gone while it is still in the ring (DN), whose data may be on a claim that
// looks left over.
func (r Ring) Unaccounted(dc string, addrs []string) []Node {
	var out []Node
	for _, n := range r.Nodes {
		if n.DC != dc {
			continue
		}
		found := false
		for _, a := range addrs {
			if SameAddress(n.Address, a) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}

// SameAddress reports whether two printed addresses name the same IP: parsed when both
// parse (IPv4-mapped IPv6 counts as its IPv4, an IPv6 zone is ignored), else compared as
// text. An empty address matches nothing.
func SameAddress(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	pa, ea := netip.ParseAddr(a)
	pb, eb := netip.ParseAddr(b)
	if ea != nil || eb != nil {
		return a == b
	}
	return pa.Unmap().WithZone("") == pb.Unmap().WithZone("")
}
