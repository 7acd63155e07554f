package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The stream plans of `nodetool netstats` (docs/how-it-works/streaming.md §2.1, §2.2, §2.5):
// one session per plan, four equal SSTables per session, sent one after another.

// planView is one plan as one node lists it.
type planView struct {
	desc     string // "Unbootstrap", "Bootstrap"
	id       string
	peer     *node // the other end; nil prints the header only
	total    int64 // the session's bytes
	f        float64
	outgoing bool // a Sending block, else Receiving
}

// writePlans prints every plan self takes part in and returns how many:
//   - its decommission (Unbootstrap, Sending to its target) while it streams;
//   - a leaving peer's, when self is that peer's target (Receiving);
//   - its bootstrap (Bootstrap, Receiving from its source) while it streams;
//   - the replacement and removal plans it sends or receives (writeOpPlans);
//   - when metered, the bootstraps self is the source of (Sending). Kept to metered
//     streaming so that the fixed-time mode lists what it always did.
func (st *state) writePlans(b *strings.Builder, self *node, inv invocation, now time.Time) int {
	plans := 0
	for _, a := range st.phaseOf(self, now).streaming {
		st.writePlan(b, planView{"Unbootstrap", a.ID, st.streamTarget(self), int64(st.leaveBytes(self)), st.progress(self, a, now), true}, inv)
		plans++
	}
	for _, other := range st.Nodes {
		if other == self || st.streamTarget(other) != self {
			continue
		}
		for _, a := range st.phaseOf(other, now).streaming {
			st.writePlan(b, planView{"Unbootstrap", a.ID, other, int64(st.leaveBytes(other)), st.progress(other, a, now), false}, inv)
			plans++
		}
	}
	if f, ok := st.joinStreaming(self, now); ok {
		if src := st.streamTarget(self); src != nil {
			st.writePlan(b, planView{"Bootstrap", bootstrapID(self), src, int64(self.LoadBytes), f, false}, inv)
			plans++
		}
	}
	plans += st.writeOpPlans(b, self, inv, now)
	if !st.Options.metered() {
		return plans
	}
	for _, j := range st.Nodes {
		if j == self || st.streamTarget(j) != self {
			continue
		}
		if f, ok := st.joinStreaming(j, now); ok {
			st.writePlan(b, planView{"Bootstrap", bootstrapID(j), j, int64(j.LoadBytes), f, true}, inv)
			plans++
		}
	}
	return plans
}

// bootstrapID is the plan id of n's bootstrap, the same on both ends.
func bootstrapID(n *node) string { return timeUUID(n.JoinStart, "bootstrap/"+n.Spec.Pod) }

// writePlan prints one plan with its single session. A Bootstrap receiver names its
// entries the receiver's way (§2.2): "<ks>/<table>-<seq>" on 4.0+, and on 3.11 one
// "<ks>/<table>" entry that each file overwrites, so 3.11's done bytes undercount.
// Everyone else names the sender's Data.db paths.
func (st *state) writePlan(b *strings.Builder, pv planView, inv invocation) {
	b.WriteString(pv.desc + " " + pv.id + "\n")
	if pv.peer == nil {
		return
	}
	sent := min(int64(pv.f*float64(pv.total)), pv.total)
	st.writeSession(b, pv.peer, pv.total, sent, pv.outgoing, pv.desc == "Bootstrap" && !pv.outgoing, inv)
}

// writeSession prints one session with peer: its peer line, summary and per-file
// lines; receiver names the entries the receiver's way.
func (st *state) writeSession(b *strings.Builder, peer *node, total, sent int64, outgoing, receiver bool, inv invocation) {
	o := st.Options
	addr := "/" + peer.address(inv.printPort)
	b.WriteString("    " + addr + "\n")
	sizes := fileSizes(total)
	files := int64(len(sizes))
	var done int64
	var lines []string
	prefix := map[string]string{V311: "mc", V40: "nb", V41: "nb", V50: "oa"}[o.Version]
	ks := "app"
	if len(o.Keyspaces) > 0 {
		ks = o.Keyspaces[0]
	}
	verb, past, dir := "Sending", "sent", "sent to "
	if !outgoing {
		verb, past, dir = "Receiving", "received", "received from "
	}
	left := sent
	for i, sz := range sizes {
		cur := min(left, sz)
		if cur <= 0 {
			break
		}
		left -= cur
		if cur == sz {
			done++
		}
		pct := int64(100)
		if sz > 0 {
			pct = cur * 100 / sz
		}
		name := fmt.Sprintf("/var/lib/cassandra/data/%s/%s/%s-%d-big-Data.db", ks, streamTable, prefix, 41+i)
		if receiver && o.is311() {
			// One entry per table, overwritten by each file: only the latest shows.
			name = ks + "/events"
			lines = lines[:0]
			done = 0
			if cur == sz {
				done = 1
			}
			sent = cur
		} else if receiver {
			name = fmt.Sprintf("%s/events-%d", ks, i)
		}
		sep := " bytes "
		if o.is311() {
			sep = " bytes" // 3.11's ProgressInfo has no space before the parenthesis
		}
		lines = append(lines, fmt.Sprintf("%s %d/%d%s(%d%%) %sidx:0%s", name, cur, sz, sep, pct, dir, addr))
	}
	size := func(v int64) string {
		if inv.human {
			return stringifyFileSize(float64(v))
		}
		return strconv.FormatInt(v, 10) + " bytes"
	}
	if o.is311() {
		fmt.Fprintf(b, "        %s %d files, %s total. Already %s %d files, %s total\n", verb, files, size(total), past, done, size(sent))
	} else {
		filePct := float64(done) / float64(files) * 100
		bytePct := 100.0
		if total > 0 {
			bytePct = float64(sent) / float64(total) * 100
		}
		fmt.Fprintf(b, "        %s %d files, %s total. Already %s %d files (%s%%), %s total (%s%%)\n",
			verb, files, size(total), past, done, javaFixed(filePct, 2), size(sent), javaFixed(bytePct, 2))
	}
	for _, l := range lines {
		b.WriteString("            " + l + "\n")
	}
}

// writeOpPlans prints the replacement and removal plans (plans.go) self receives or
// sends, one block per session, receiving first; receivers name their entries the
// receiver's way (docs/how-it-works/streaming.md §2.2). It returns how many it printed.
func (st *state) writeOpPlans(b *strings.Builder, self *node, inv invocation, now time.Time) int {
	count := 0
	for _, op := range st.ops() {
		p := op.p
		if !p.active(now) {
			continue
		}
		header := false
		for _, outgoing := range []bool{false, true} {
			for _, s := range p.Sessions {
				me, other := s.To, s.From
				if outgoing {
					me, other = s.From, s.To
				}
				peer := st.attached(other)
				if me != self.Spec.Pod || peer == nil {
					continue
				}
				if !header {
					b.WriteString(p.Desc + " " + p.ID + "\n")
					header = true
					count++
				}
				st.writeSession(b, peer, int64(s.Bytes), int64(st.sent(p, s, now)), outgoing, !outgoing, inv)
			}
		}
	}
	return count
}
