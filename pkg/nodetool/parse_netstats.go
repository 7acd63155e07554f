package nodetool

import (
	"errors"
	"fmt"
	"strings"
)

var (
	netstatsModeLine = lazyRE(`^Mode: (\S+)$`)
	// netstatsPlanLine is the first line of a listed stream plan, `<description> <planId>`,
	// e.g. "Unbootstrap 8c0f6a50-4e2b-11ef-a3c1-6f1d2b3c4d5e". Sessions and files under
	// it are indented; the statistics that follow do not end with a UUID.
	netstatsPlanLine = lazyRE(`^\S.* ` + uuidPattern + `$`)

	knownModes = map[Mode]bool{
		ModeStarting: true, ModeNormal: true, ModeJoining: true, ModeJoiningFailed: true,
		ModeLeaving: true, ModeDecommissioned: true, ModeDecommissionFailed: true,
		ModeMoving: true, ModeDraining: true, ModeDrained: true,
	}
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
	mode := Mode(m[1])
	if !knownModes[mode] {
		return Netstats{}, fmt.Errorf("netstats line %d: unknown operation mode %q", first+1, m[1])
	}
	ns := Netstats{Mode: mode}
	for _, l := range lines[first+1:] {
		l = strings.TrimRight(l, " \t")
		if l == "Read Repair Statistics:" {
			break
		}
		if netstatsPlanLine().MatchString(l) {
			ns.Streaming = true
			break
		}
	}
	return ns, nil
}
