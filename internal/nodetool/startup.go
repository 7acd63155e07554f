package nodetool

import (
	"strings"
)

// A Cassandra JVM that fails to start prints "Exception (<class>) encountered during
// startup: <message>" on stdout and exits 3 (CassandraDaemon.activate, 3.11–5.0); in
// Kubernetes the container restarts. A replacement's preconditions fail this way
// (docs/how-it-works/replace.md §4.2), so the plugin reports the line from the container
// log and names the rule it breaks.

// StartupCause names the precondition a startup error reports.
type StartupCause string

// The causes ParseStartupError knows; R-numbers are docs/how-it-works/replace.md §4.2's.
const (
	CauseBootstrapped   StartupCause = "already-bootstrapped"   // R1: plain replace_address on a bootstrapped data dir
	CauseJoinRing       StartupCause = "join-ring-false"        // R2
	CauseNoBootstrap    StartupCause = "would-not-bootstrap"    // R3: a seed, or auto_bootstrap: false
	CauseUnknownAddress StartupCause = "address-not-in-gossip"  // R4
	CauseNoTokens       StartupCause = "no-tokens-in-gossip"    // R5
	CauseTokenConflict  StartupCause = "token-conflict"         // R6
	CauseRingChanging   StartupCause = "ring-changing"          // R7: another node joins, leaves or moves
	CauseLiveNode       StartupCause = "replaced-node-alive"    // R8
	CauseTokenGone      StartupCause = "token-has-no-owner"     // R9
	CauseNoSeeds        StartupCause = "no-seed-reachable"      // R10
	CauseNoSources      StartupCause = "insufficient-sources"   // R11
	CauseEarlierData    StartupCause = "earlier-bootstrap-data" // 5.0: reset_bootstrap_progress unset
	CauseAddressInUse   StartupCause = "address-already-exists" // a wiped node on a known address, no flag
	CauseOther          StartupCause = "other"
)

// StartupError is a startup failure read from a container log.
type StartupError struct {
	Class   string       `json:"class"`   // e.g. "java.lang.RuntimeException"
	Message string       `json:"message"` // Cassandra's own text
	Cause   StartupCause `json:"cause"`
	Line    string       `json:"line"` // the whole stdout line
}

// startupCauses map a message to its cause by a fragment every version prints.
var startupCauses = []struct {
	fragment string
	cause    StartupCause
}{
	{"Cannot replace address with a node that is already bootstrapped", CauseBootstrapped},
	{"Cannot set both join_ring=false and attempt to replace a node", CauseJoinRing},
	{"Replacing a node without bootstrapping risks invalidating consistency", CauseNoBootstrap},
	{"because it doesn't exist in gossip", CauseUnknownAddress},
	{"Could not find tokens for ", CauseNoTokens},
	{"Conflicting token ownership information detected", CauseTokenConflict},
	{"Other bootstrapping/leaving/moving nodes detected", CauseRingChanging},
	{"Cannot replace a live node...", CauseLiveNode},
	{"which does not exist!", CauseTokenGone},
	{"Unable to contact any seeds", CauseNoSeeds},
	{"Unable to find sufficient sources for streaming range", CauseNoSources},
	{"Discovered existing bootstrap data", CauseEarlierData},
	{"already exists, cancelling join", CauseAddressInUse},
}

const startupMarker = ") encountered during startup: "

// ParseStartupError finds the last startup error in a container log; false when there
// is none (the JVM started, or was stopped by something else).
func ParseStartupError(log string) (StartupError, bool) {
	lines := splitLines(log)
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimRight(lines[i], "\r")
		rest, ok := strings.CutPrefix(l, "Exception (")
		if !ok {
			continue
		}
		class, msg, ok := strings.Cut(rest, startupMarker)
		if !ok || class == "" {
			continue
		}
		e := StartupError{Class: class, Message: msg, Cause: CauseOther, Line: l}
		for _, c := range startupCauses {
			if strings.Contains(msg, c.fragment) {
				e.Cause = c.cause
				break
			}
		}
		return e, true
	}
	return StartupError{}, false
}
