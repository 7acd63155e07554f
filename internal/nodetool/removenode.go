package nodetool

import (
	"fmt"
	"regexp"
	"strings"
)

// `nodetool removenode <host-id> | status | force` (docs/how-it-works/replace.md §5). The
// call with a host ID blocks until every node gaining ranges has confirmed; its state
// lives on the node it ran on only, which `removenode status` there reports.

// PlanRestoreReplicaCount is the stream plan of the nodes gaining a removed node's
// ranges (StreamOperation.RESTORE_REPLICA_COUNT).
const PlanRestoreReplicaCount = "Restore replica count"

// RemovalStatus is what `removenode status` (and `force`, first) prints.
type RemovalStatus struct {
	// Removing is false for "No token removals in process.".
	Removing bool   `json:"removing"`
	Token    string `json:"token,omitempty"` // the first token of the node removed
	// Waiting are the addresses that have not confirmed (ports dropped).
	Waiting []string `json:"waiting,omitempty"`
}

var (
	removalNone = lazyRE(`^RemovalStatus: No token removals in process\.$`)
	removalBusy = lazyRE(`^RemovalStatus: Removing token \((\S+)\)\. Waiting for replication confirmation from \[(.*)\]\.$`)
)

// ParseRemovalStatus reads the RemovalStatus line (StorageService.getRemovalStatus: the
// list is joined by "," without spaces, each "/ip" or "/ip:port" with -pp).
func ParseRemovalStatus(out string) (RemovalStatus, error) {
	for _, l := range splitLines(out) {
		l = strings.TrimSpace(l)
		if removalNone().MatchString(l) {
			return RemovalStatus{}, nil
		}
		m := removalBusy().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		st := RemovalStatus{Removing: true, Token: m[1]}
		for _, ep := range strings.Split(m[2], ",") {
			if ep = strings.TrimSpace(ep); ep != "" {
				st.Waiting = append(st.Waiting, endpointAddress(ep))
			}
		}
		return st, nil
	}
	return RemovalStatus{}, fmt.Errorf("no RemovalStatus line in %s", quote(out))
}

// endpointAddress is the IP of an InetAddress(AndPort).toString(): "host/ip[:port]".
func endpointAddress(ep string) string {
	_, ip, _ := strings.Cut(ep, "/")
	if i := strings.LastIndex(ip, ":"); i >= 0 && strings.Count(ip, ":") == 1 {
		ip = ip[:i] // IPv4 with a port; an IPv6 literal keeps its colons
	}
	return ip
}

// RemoveOutcome classifies what `nodetool removenode <host-id>` printed.
type RemoveOutcome string

// removenode outcomes.
const (
	// RemoveReturned: exit 0, no output: the node was removed (or forced by another call).
	RemoveReturned RemoveOutcome = "returned"
	// Refusals (nothing started): StorageService.removeNode's checks.
	RemoveNotFound  RemoveOutcome = "host-id-not-found"
	RemoveNotMember RemoveOutcome = "not-a-member"
	RemoveSelf      RemoveOutcome = "self"
	RemoveAlive     RemoveOutcome = "alive"
	RemoveBusy      RemoveOutcome = "busy"
	RemoveInvalidID RemoveOutcome = "invalid-id"
	RemoveUsage     RemoveOutcome = "usage"
	// RemoveGenerationChanged: the node restarted during the RING_DELAY sleep; the
	// coordinator stays "processing" until `removenode force`.
	RemoveGenerationChanged RemoveOutcome = "generation-changed"
	RemoveUnreachable       RemoveOutcome = "unreachable"
	// RemoveUnknown: the exec broke (killed client, the coordinator's JVM died: "error:
	// null") or printed something unrecognised. The removal may go on or not.
	RemoveUnknown RemoveOutcome = "unknown"
)

// removeRules are tried in order against every printed line.
var removeRules = []struct {
	outcome RemoveOutcome
	match   func() *regexp.Regexp
}{
	{RemoveUnreachable, lazyRE(`^nodetool: Failed to connect to '`)},
	{RemoveInvalidID, lazyRE(`^nodetool: Invalid UUID string: `)},
	{RemoveUsage, lazyRE(`^nodetool: (Required parameters are missing|Found unexpected parameters)`)},
	{RemoveNotFound, lazyRE(`\bHost ID not found\.`)},
	{RemoveNotMember, lazyRE(`Node to be removed is not a member of the token ring`)},
	{RemoveSelf, lazyRE(`\bCannot remove self\b`)},
	{RemoveAlive, lazyRE(`is alive and owns this ID\. Use decommission command`)},
	{RemoveBusy, lazyRE(`This node is already processing a removal\.`)},
	{RemoveGenerationChanged, lazyRE(`generation changed while trying to remove it`)},
}

// ClassifyRemoveNode classifies a `removenode <host-id>` call by its text, like
// ClassifyDecommission: no output and no execErr is RemoveReturned; a recognised
// message gives its outcome; anything else is RemoveUnknown with its most telling line.
func ClassifyRemoveNode(stdout, stderr string, execErr error) (RemoveOutcome, string) {
	var lines []string
	for _, s := range []string{stdout, stderr} {
		for _, l := range splitLines(s) {
			if l = strings.TrimSpace(l); l != "" && !isJVMNoise(l) {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		if execErr == nil {
			return RemoveReturned, ""
		}
		return RemoveUnknown, strings.TrimSpace(execErr.Error())
	}
	for _, r := range removeRules {
		for _, l := range lines {
			if r.match().MatchString(l) {
				return r.outcome, l
			}
		}
	}
	for _, s := range []string{stderr, stdout} {
		if e := firstErrorLine(s); e != "" {
			return RemoveUnknown, e
		}
	}
	return RemoveUnknown, lines[0]
}
