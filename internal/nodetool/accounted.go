package nodetool

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
