package nodetool

import (
	"regexp"
	"strings"
)

// decommissionRule maps one message of `nodetool decommission` to an outcome.
type decommissionRule struct {
	outcome Outcome
	match   func() *regexp.Regexp
}

// decommissionRules are tried in order; the first rule matching any printed line wins.
// Connection failures come first (nothing else can be trusted then), then the "already
// running / already done" answers, then refusals before failures, so that a refusal
// message wrapped in an "Error while decommissioning node" line still reads as a
// refusal. Every message, with the versions that print it, is a case of
// TestClassifyDecommission (decommission_test.go), named by the E-numbers used here.
var decommissionRules = []decommissionRule{
	// E10: JMX unreachable (ConnectException) or authentication failed (SecurityException).
	{OutcomeUnreachable, lazyRE(`^nodetool: Failed to connect to '`)},
	// E2 (4.x, exit 1) and the 5.0 server variant "... Check nodetool netstats or nodetool info.".
	{OutcomeRunning, lazyRE(`\bNode is still decommissioning\b`)},
	// E2' (5.0 client pre-check, exit 0).
	{OutcomeRunning, lazyRE(`^This node is still decommissioning\.$`)},
	// E3' (5.0 client pre-check, exit 0).
	{OutcomeAlreadyDone, lazyRE(`^Node was already decommissioned\.$`)},
	// E3/E8 (3.11/4.x): decommissioned already, or not yet a member (joining).
	{OutcomeAlreadyDone, lazyRE(`local node is not a member of the token ring yet`)},
	// E1/E6: the replication factor check (4.0+, skipped with --force).
	{OutcomeRefused, lazyRE(`Not enough live nodes to maintain replication factor`)},
	// E5: the only token owner.
	{OutcomeRefused, lazyRE(`no other normal nodes in the ring`)},
	// E7: mode is not NORMAL (drained, draining, moving, starting).
	{OutcomeRefused, lazyRE(`\bNode in [A-Z_]+ state\b`)},
	// E9: pending ranges moving to this node.
	{OutcomeRefused, lazyRE(`data is currently moving to this node`)},
	// E13: --force on 3.11 (and any other argument nodetool rejects before running).
	{OutcomeRefused, lazyRE(`^nodetool: Found unexpected parameters: `)},
	// E11: streaming failed (exit 2, stderr).
	{OutcomeFailed, lazyRE(`Error while decommissioning node`)},
	// E12: the decommission thread was interrupted.
	{OutcomeFailed, lazyRE(`Node interrupted while decommissioning`)},
}

// ClassifyDecommission classifies what `nodetool decommission [--force]` printed and returns
// the outcome with the most informative line (trimmed) of the output.
//
// The text decides, not the exit status: the exec layer reports a non-zero exit only as
// a non-nil execErr, and 5.0 prints "This node is still decommissioning." and "Node was
// already decommissioned." with exit 0. So: no output and no execErr is OutcomeReturned;
// a recognised message gives its outcome whatever execErr is; anything else — an error
// with no recognisable text (killed client, exit 137, broken stream, timeout), or text
// nobody recognises — is OutcomeUnknown, whose message is the first error-looking line,
// else the first line, else execErr's text. JVM chatter on stderr ("Picked up
// JAVA_TOOL_OPTIONS: ...") is ignored.
func ClassifyDecommission(stdout, stderr string, execErr error) (Outcome, string) {
	var lines []string
	for _, s := range []string{stdout, stderr} {
		for _, l := range splitLines(s) {
			l = strings.TrimSpace(l)
			if l != "" && !isJVMNoise(l) {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		if execErr == nil {
			return OutcomeReturned, ""
		}
		return OutcomeUnknown, strings.TrimSpace(execErr.Error())
	}
	for _, r := range decommissionRules {
		for _, l := range lines {
			if r.match().MatchString(l) {
				return r.outcome, l
			}
		}
	}
	// Unrecognised: prefer stderr's first error line (nodetool's "error: <root cause>"),
	// then stdout's, then the first printed line.
	for _, s := range []string{stderr, stdout} {
		if e := firstErrorLine(s); e != "" && !isJVMNoise(e) {
			return OutcomeUnknown, e
		}
	}
	for _, l := range lines {
		if l != "-- StackTrace --" && !strings.HasPrefix(l, "See 'nodetool help") {
			return OutcomeUnknown, l
		}
	}
	return OutcomeUnknown, lines[0]
}
