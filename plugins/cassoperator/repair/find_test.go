package repair

import (
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
)

const sts = "demo-dc1-r1-sts"

// base is a datacenter of size 2 on one rack: pods 0 and 1 Started and UN.
func base() seen {
	s := seen{dc: "dc1", size: 2, split: map[string]int{"r1": 2}, replicas: map[string]int{"r1": 2}, sts: map[string]string{"r1": sts},
		entries: map[string]entry{}, pods: map[string]podSeen{}, claims: map[string]claimSeen{}, modes: map[string]nodetool.Mode{}}
	for i, ip := range []string{"10.0.0.1", "10.0.0.2"} {
		pod := sts + "-" + string(rune('0'+i))
		s.pods[pod] = podSeen{name: pod, uid: "u" + pod, rack: "r1", ip: ip, state: cassoperator.StateStarted, ordinal: i}
		s.claims[pod] = claimSeen{name: "server-data-" + pod, uid: "c" + pod, pod: pod, rack: "r1", ordinal: i}
		s.entries[pod] = entry{hostID: "h" + string(rune('0'+i)), ip: ip, rack: "r1"}
		s.ring.Nodes = append(s.ring.Nodes, nodetool.Node{DC: "dc1", Rack: "r1", Status: "U", State: "N", Address: ip, HostID: "h" + string(rune('0'+i))})
		s.podsAddrs = append(s.podsAddrs, ip)
	}
	return s
}

func kinds(fs []finding) string {
	var k []string
	for _, f := range fs {
		k = append(k, f.kind+":"+f.pod)
	}
	return strings.Join(k, " ")
}

// TestFind: each stuck state of FACTS §8 is found only once verified against the ring;
// a node still in the ring is never a finding.
func TestFind(t *testing.T) {
	p2 := sts + "-2"
	cases := []struct {
		name  string
		edit  func(s *seen)
		want  string
		notes int
	}{
		{"settled", func(*seen) {}, "", 0},
		{"state A: left, unlabelled", func(s *seen) {
			s.replicas["r1"] = 3
			s.pods[p2] = podSeen{name: p2, uid: "u2", rack: "r1", ip: "10.0.0.3", state: cassoperator.StateStartedNotReady, ordinal: 2}
			s.claims[p2] = claimSeen{name: "server-data-" + p2, uid: "c2", pod: p2, rack: "r1", ordinal: 2}
			s.entries[p2] = entry{hostID: "h2", ip: "10.0.0.3", rack: "r1"}
			s.modes[p2] = nodetool.ModeDecommissioned
		}, "left-unmarked:" + p2, 0},
		{"above the count, still a member: the operator's to do", func(s *seen) {
			s.replicas["r1"] = 3
			s.pods[p2] = podSeen{name: p2, uid: "u2", rack: "r1", ip: "10.0.0.3", state: cassoperator.StateStarted, ordinal: 2}
			s.entries[p2] = entry{hostID: "h2", ip: "10.0.0.3", rack: "r1"}
			s.ring.Nodes = append(s.ring.Nodes, nodetool.Node{DC: "dc1", Status: "U", State: "N", Address: "10.0.0.3", HostID: "h2"})
		}, "", 1},
		{"out of the ring but not DECOMMISSIONED: unknown", func(s *seen) {
			s.replicas["r1"] = 3
			s.pods[p2] = podSeen{name: p2, uid: "u2", rack: "r1", ip: "10.0.0.3", state: cassoperator.StateStartedNotReady, ordinal: 2}
			s.entries[p2] = entry{hostID: "h2", ip: "10.0.0.3", rack: "r1"}
		}, "", 1},
		{"state C/D: orphaned claim and entry", func(s *seen) {
			s.claims[p2] = claimSeen{name: "server-data-" + p2, uid: "c2", pod: p2, rack: "r1", ordinal: 2}
			s.entries[p2] = entry{hostID: "h2", ip: "10.0.0.3", rack: "r1"}
		}, "orphan-claim:" + p2, 0},
		{"stale entry only", func(s *seen) { s.entries[p2] = entry{hostID: "h2", ip: "10.0.0.3", rack: "r1"} }, "stale-entry:" + p2, 0},
		{"orphaned claim of a node still in the ring: left alone", func(s *seen) {
			s.claims[p2] = claimSeen{name: "server-data-" + p2, uid: "c2", pod: p2, rack: "r1", ordinal: 2}
			s.entries[p2] = entry{hostID: "h2", ip: "10.0.0.3", rack: "r1"}
			s.ring.Nodes = append(s.ring.Nodes, nodetool.Node{DC: "dc1", Status: "D", State: "N", Address: "10.0.0.3", HostID: "h2"})
		}, "", 1},
		{"orphaned claim, no entry, an unaccounted ring member: left alone", func(s *seen) {
			s.claims[p2] = claimSeen{name: "server-data-" + p2, uid: "c2", pod: p2, rack: "r1", ordinal: 2}
			s.ring.Nodes = append(s.ring.Nodes, nodetool.Node{DC: "dc1", Status: "D", State: "N", Address: "10.0.0.9", HostID: "h9"})
		}, "", 1},
		{"leftover Decommissioning label on a UN node the size keeps", func(s *seen) {
			p := s.pods[sts+"-1"]
			p.state = cassoperator.StateDecommissioning
			s.pods[p.name] = p
		}, "leftover-mark:" + sts + "-1", 0},
		{"nothing while the operator is resizing", func(s *seen) {
			s.scaling = true
			p := s.pods[sts+"-1"]
			p.state = cassoperator.StateDecommissioning
			s.pods[p.name] = p
			s.entries[p2] = entry{hostID: "h2", ip: "10.0.0.3", rack: "r1"}
		}, "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := base()
			c.edit(&s)
			found, notes := find(s)
			if got := kinds(found); got != c.want || len(notes) != c.notes {
				t.Fatalf("found %q (want %q), notes %q (want %d)", got, c.want, notes, c.notes)
			}
		})
	}
}
