package nodetool

import (
	"errors"
	"fmt"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"strconv"
	"strings"
)

var (
	netstatsModeLine = lazyRE(`^Mode: (\S+)$`)
	// netstatsPlanLine is the first line of a listed stream plan, `<description> <planId>`,
	// e.g. "Unbootstrap 8c0f6a50-4e2b-11ef-a3c1-6f1d2b3c4d5e". Sessions and files under
	// it are indented; the statistics that follow do not end with a UUID.
	netstatsPlanLine = lazyRE(`^\S.* ` + uuidPattern + `$`)

	// The peer and summary lines of a session, anchored forms of the regexes of
	// Cassandra's in-tree netstats jvm-dtest (AbstractNetstatsStreaming.java; the format
	// is NetStats.java's, 3.11 lines 55-78, 4.0+ lines 57-166; samples in
	// testdata/netstats-*.txt). 4.0+ prints the percentages, 3.11 does not;
	// the percentages are ignored (they follow the JVM locale and print NaN for a zero
	// total) and computed from the byte counts instead.
	netstatsPeerLine = lazyRE(`^    (\S*/\S+?)(?: \(using (\S*/\S+)\))?$`)
	netstatsSum4     = lazyRE(`^        (Sending|Receiving) (\d+) files, (\d+) bytes total\. Already (?:sent|received) (\d+) files \((?:[0-9.,]+|NaN)%\), (\d+) bytes total \((?:[0-9.,]+|NaN)%\)$`)
	netstatsSum311   = lazyRE(`^        (Sending|Receiving) (\d+) files, (\d+) bytes total\. Already (?:sent|received) (\d+) files, (\d+) bytes total$`)

	knownModes = map[nodetool.Mode]bool{nodetool.ModeStarting: true, nodetool.ModeNormal: true, nodetool.ModeJoining: true, nodetool.ModeJoiningFailed: true, nodetool.ModeLeaving: true, nodetool.ModeDecommissioned: true, nodetool.ModeDecommissionFailed: true, nodetool.ModeMoving: true, nodetool.ModeDraining: true, nodetool.ModeDrained: true}
)

// ParseNetstats parses `nodetool netstats` of Cassandra 3.11 to 5.0. The first line must be
// `Mode: <MODE>` with one of the Mode constants (JVM chatter and blank lines before it are
// skipped); anything else is an error. Streaming is true when a stream plan is listed
// (e.g. "Unbootstrap <uuid>"), false for "Not sending any streams." and when only the
// Mode line was printed (`nodetool netstats | head -1`).
func ParseNetstats(out string) (Netstats, error) {
	lines := splitLines(out)
	first := -1
	for i, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l != "" && !isJVMNoise(l) {
			first = i
			break
		}
	}
	if first < 0 {
		return Netstats{}, errors.New("netstats: empty output, no \"Mode:\" line")
	}
	line := strings.TrimRight(lines[first], " \t")
	m := netstatsModeLine().FindStringSubmatch(line)
	if m == nil {
		if e := firstErrorLine(out); e != "" {
			return Netstats{}, fmt.Errorf("netstats: nodetool printed an error instead of a mode: %s", quote(e))
		}
		return Netstats{}, fmt.Errorf("netstats line %d: want \"Mode: <MODE>\", got %s", first+1, quote(line))
	}
	mode := nodetool.Mode(m[1])
	if !knownModes[mode] {
		return Netstats{}, fmt.Errorf("netstats line %d: unknown operation mode %q", first+1, m[1])
	}
	ns := Netstats{Mode: mode}
	var plan, id, peer string
	for _, l := range lines[first+1:] {
		l = strings.TrimRight(l, " \t")
		if l == "Read Repair Statistics:" {
			break
		}
		if netstatsPlanLine().MatchString(l) {
			ns.Streaming = true
			i := strings.LastIndexByte(l, ' ')
			plan, id, peer = l[:i], l[i+1:], ""
			continue
		}
		if plan == "" {
			continue
		}
		if m := netstatsPeerLine().FindStringSubmatch(l); m != nil {
			peer = m[1]
			continue
		}
		m := netstatsSum4().FindStringSubmatch(l)
		if m == nil {
			m = netstatsSum311().FindStringSubmatch(l)
		}
		if m == nil || peer == "" {
			// Per-file lines, and -H summaries (sizes not in bytes): not summed.
			continue
		}
		ns.Streams = append(ns.Streams, StreamSummary{Plan: plan, PlanID: id, Peer: peer, Direction: m[1],
			Files: atoi64(m[2]), TotalBytes: atoi64(m[3]), FilesDone: atoi64(m[4]), DoneBytes: atoi64(m[5])})
	}
	return ns, nil
}

func atoi64(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64) // the regexes allow digits only
	return v
}

// Stream plan descriptions (StreamOperation.java).
const (
	PlanUnbootstrap = "Unbootstrap" // decommission
	PlanBootstrap   = "Bootstrap"   // bootstrap and replace
)

// Directions of a session's summary line.
const (
	DirSending   = "Sending"
	DirReceiving = "Receiving"
)

// StreamProgress sums the sessions of the plans described as plan in direction dir
// (a decommission's Sending blocks on the leaving node, a bootstrap's Receiving blocks on
// the joining node: the side with the right figures). ok is false when no such session
// is listed. On a 3.11 receiver done undercounts (every file of one table from one peer
// overwrites the same entry): it is a pessimistic figure.
func (n Netstats) StreamProgress(plan, dir string) (p StreamTotals, ok bool) {
	peers := map[string]bool{}
	for _, s := range n.Streams {
		if s.Plan != plan || s.Direction != dir {
			continue
		}
		ok = true
		p.DoneBytes += s.DoneBytes
		p.TotalBytes += s.TotalBytes
		peers[s.Peer] = true
	}
	p.Peers = len(peers)
	return p, ok
}
