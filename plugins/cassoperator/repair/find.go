package repair

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
)

// The stuck states cass-operator does not leave by itself (FACTS §8, each verified on
// the real operator), and what un-sticks each.
const (
	// leftUnmarked: killed when its decommission call arrived, the node left the ring
	// but its pod was never labelled Decommissioning; the operator waits on the pod for
	// ever. Label it, then set ScalingDown: CheckDecommissioningNodes
	// (pkg/reconciliation/decommission_node.go) runs only while ScalingDown is True and
	// only on labelled pods, and finishes the removal itself.
	leftUnmarked = "left-unmarked"
	// orphanClaim: killed between its StatefulSet shrink and its claim delete, the
	// removed pod's server-data claim stays (a later scale-up starts on it and
	// crash-loops), its nodeStatuses entry too. Delete the claim, remove the entry.
	orphanClaim = "orphan-claim"
	// staleEntry: a nodeStatuses entry for a pod removed in full (killed after its claim
	// delete). Remove the entry.
	staleEntry = "stale-entry"
	// leftoverMark: a pod labelled Decommissioning whose node is NORMAL and a member, the
	// operator not scaling down (a decommission that never ran, its label kept): it
	// would be taken for leaving. Label it Started again.
	leftoverMark = "leftover-mark"
)

// seen is what find judges: the datacenter and its pods, claims and ring as read.
type seen struct {
	dc        string
	size      int
	split     map[string]int // rack -> count the size asks for
	replicas  map[string]int // rack -> StatefulSet replicas
	sts       map[string]string
	scaling   bool                     // ScalingDown or ScalingUp True
	entries   map[string]entry         // status.nodeStatuses
	pods      map[string]podSeen       // every pod of the datacenter, by name
	claims    map[string]claimSeen     // every server-data claim of the datacenter, by pod
	ring      nodetool.Ring            // a successful read from a member outside the findings
	modes     map[string]nodetool.Mode // pod -> netstats mode, for the pods above their rack's count
	podsAddrs []string                 // the IPs of the pods that exist (Unaccounted)
}

type entry struct{ hostID, ip, rack string }

type podSeen struct {
	name, uid, rack, ip, state string
	ordinal                    int
	deleting                   bool
}

type claimSeen struct {
	name, uid, pod, rack string
	ordinal              int
	deleting             bool
}

// finding is one stuck state, verified.
type finding struct {
	kind           string
	pod, rack      string
	ordinal        int
	podUID, hostID string
	address        string
	claims         []claimSeen
	text           string
}

// find judges what was read: the stuck states it can verify, and what it saw but
// leaves alone (notes). Nothing is found for a node still in the ring.
func find(s seen) (found []finding, notes []string) {
	for _, p := range sortedPods(s.pods) {
		target := s.split[p.rack]
		switch {
		case p.ordinal >= target && !s.scaling && !p.deleting:
			// Labelled Decommissioning already is the same state with its first repair
			// made (a repair stopped after its label): the label step reads as done.
			hostID := s.entries[p.name].hostID
			if member(s.ring, hostID, p.ip) {
				notes = append(notes, fmt.Sprintf("pod %s is above rack %s's count (%d) and its node is still in the ring: not stuck, the operator has yet to decommission it", p.name, p.rack, target))
				continue
			}
			if m := s.modes[p.name]; m != nodetool.ModeDecommissioned {
				notes = append(notes, fmt.Sprintf("pod %s is out of the ring but its node says %q, not DECOMMISSIONED: left alone", p.name, m))
				continue
			}
			found = append(found, finding{kind: leftUnmarked, pod: p.name, rack: p.rack, ordinal: p.ordinal, podUID: p.uid, hostID: hostID, address: p.ip,
				claims: claimsOf(s, p.name),
				text:   leftUnmarkedText(p, hostID)})
		case p.state == cassoperator.StateDecommissioning && p.ordinal < target && !s.scaling && !p.deleting:
			row, ok := s.ring.ByAddress(p.ip)
			if !ok || row.Code() != "UN" {
				notes = append(notes, fmt.Sprintf("pod %s is labelled %s below rack %s's count and its node is not UN: left alone", p.name, cassoperator.StateDecommissioning, p.rack))
				continue
			}
			found = append(found, finding{kind: leftoverMark, pod: p.name, rack: p.rack, ordinal: p.ordinal, podUID: p.uid, hostID: row.HostID, address: p.ip,
				text: fmt.Sprintf("pod %s is labelled %s but its node is UN (Host ID %s) and the datacenter's size keeps it: a leftover label", p.name, cassoperator.StateDecommissioning, row.HostID)})
		}
	}
	unaccounted := s.ring.Unaccounted(s.dc, s.podsAddrs)
	for _, pod := range removedPods(s) {
		if s.scaling {
			// Mid-resize the operator has yet to delete them itself.
			notes = append(notes, fmt.Sprintf("pod %s is gone and its claims or status entry are still there, but the operator is resizing: left to it", pod))
			continue
		}
		e, tracked := s.entries[pod]
		claims := claimsOf(s, pod)
		if member(s.ring, e.hostID, e.ip) || (e.hostID == "" && len(unaccounted) > 0) {
			notes = append(notes, fmt.Sprintf("pod %s is gone but its node may still be in the ring: its claims and status entry are left alone", pod))
			continue
		}
		rack, ordinal := e.rack, -1
		if len(claims) > 0 {
			rack, ordinal = claims[0].rack, claims[0].ordinal
		}
		f := finding{pod: pod, rack: rack, ordinal: ordinal, hostID: e.hostID, address: e.ip, claims: claims}
		if len(claims) > 0 {
			f.kind = orphanClaim
			f.text = fmt.Sprintf("pod %s is gone and its node out of the ring (Host ID %s), but its claim %s is left over: a later scale-up would start on it and crash-loop (cass-operator killed between its StatefulSet shrink and its claim delete)",
				pod, orUnknown(e.hostID), claimNames(claims))
		} else if tracked {
			f.kind = staleEntry
			f.text = fmt.Sprintf("pod %s is gone with its claims and its node is out of the ring (Host ID %s), but status.nodeStatuses still lists it", pod, orUnknown(e.hostID))
		} else {
			continue
		}
		found = append(found, f)
	}
	return found, notes
}

// removedPods are the pods above their rack's StatefulSet with no pod object but a
// claim or a nodeStatuses entry left, sorted.
func removedPods(s seen) []string {
	set := map[string]bool{}
	for pod, c := range s.claims {
		if _, exists := s.pods[pod]; !exists && c.ordinal >= s.replicas[c.rack] && !c.deleting {
			set[pod] = true
		}
	}
	for pod, e := range s.entries {
		if _, exists := s.pods[pod]; exists {
			continue
		}
		if o, ok := ordinalOf(pod, s.sts[e.rack]); ok && o < s.replicas[e.rack] {
			continue // the StatefulSet still wants it: it is coming back, not removed
		}
		set[pod] = true
	}
	var out []string
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// member reports whether the node is in the ring: by Host ID when known, else by
// address (an unknown node is never taken for gone: no address, member).
func member(r nodetool.Ring, hostID, addr string) bool {
	if hostID != "" {
		_, ok := r.ByHostID(hostID)
		return ok
	}
	if addr == "" {
		return true
	}
	_, ok := r.ByAddress(addr)
	return ok
}

func claimsOf(s seen, pod string) []claimSeen {
	if c, ok := s.claims[pod]; ok && !c.deleting {
		return []claimSeen{c}
	}
	return nil
}

func claimNames(cs []claimSeen) string {
	var n []string
	for _, c := range cs {
		n = append(n, c.name)
	}
	return strings.Join(n, ", ")
}

func sortedPods(m map[string]podSeen) []podSeen {
	var out []podSeen
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// ordinalOf is the ordinal of pod in StatefulSet sts ("<sts>-<N>").
func ordinalOf(pod, sts string) (int, bool) {
	if sts == "" || !strings.HasPrefix(pod, sts+"-") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(pod, sts+"-"))
	return n, err == nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// leftUnmarkedText says what a leftUnmarked finding is: never labelled by the operator,
// or labelled by a repair that stopped before the rest.
func leftUnmarkedText(p podSeen, hostID string) string {
	if p.state == cassoperator.StateDecommissioning {
		return fmt.Sprintf("pod %s: its node left the ring (DECOMMISSIONED, Host ID %s absent from the ring) and the pod is labelled %s, but the operator is not scaling down: it waits on the pod for ever (a repair stopped after labelling it)",
			p.name, orUnknown(hostID), cassoperator.StateDecommissioning)
	}
	return fmt.Sprintf("pod %s: its node left the ring (DECOMMISSIONED, Host ID %s absent from the ring), but the pod was never labelled %s and the operator is not scaling down: it waits on the pod for ever (cass-operator killed while its decommission call ran)",
		p.name, orUnknown(hostID), cassoperator.StateDecommissioning)
}
