package nodetool

import (
	"context"
	"strings"
)

// PlanRebuild is the description of a rebuild's stream plan in netstats
// (StreamOperation.REBUILD).
const PlanRebuild = "Rebuild"

// RebuildOutcome is what `nodetool rebuild` answered. It is never proof the node is
// rebuilt: the caller reads netstats and the node's Load after.
type RebuildOutcome int

// Rebuild outcomes.
const (
	// RebuildReturned: the call returned without an error (every session completed).
	RebuildReturned RebuildOutcome = iota
	// RebuildRunning: a rebuild already runs on the node ("Node is still rebuilding").
	RebuildRunning
	// RebuildFailed: a session failed ("Error while rebuilding node: Stream failed");
	// the completed sessions' ranges are kept, a new call fetches only the rest.
	RebuildFailed
	// RebuildRefused: a check refused it before anything streamed (an unknown source
	// datacenter, no source for a range, JMX unreachable).
	RebuildRefused
	// RebuildUnknown: no recognisable answer (a killed client, a broken exec stream):
	// the rebuild may go on in the node.
	RebuildUnknown
)

// Rebuild runs `nodetool rebuild -- source` on pod: the source always named (without
// it the node streams from its nearest replicas, its own empty datacenter first). It
// blocks as long as the rebuild streams (or until ctx ends).
func (c Client) Rebuild(ctx context.Context, pod, source string) (RebuildOutcome, string) {
	out, errOut, err := c.run(ctx, pod, "rebuild", "--", source)
	return ClassifyRebuild(out, errOut, err)
}

// ClassifyRebuild classifies what `nodetool rebuild` printed (tools/nodetool/Rebuild.java,
// StorageService.rebuild; the messages the simulator prints with their sources in
// test/sim/rebuild.go): the text decides, as for a decommission.
func ClassifyRebuild(stdout, stderr string, execErr error) (RebuildOutcome, string) {
	text := strings.TrimSpace(stdout + "\n" + stderr)
	line := firstMeaningful(text)
	switch {
	case strings.Contains(text, "nodetool: Failed to connect to '"):
		return RebuildRefused, line
	case strings.Contains(text, "Node is still rebuilding"):
		return RebuildRunning, line
	case strings.Contains(text, "Error while rebuilding node"), strings.Contains(text, "Stream failed"):
		return RebuildFailed, line
	case strings.Contains(text, "is not a valid datacenter"), strings.Contains(text, "Unable to find sufficient sources"),
		strings.Contains(text, "Unknown keyspace"), strings.HasPrefix(line, "nodetool: "):
		return RebuildRefused, line
	case execErr == nil && line == "":
		return RebuildReturned, ""
	case execErr == nil:
		return RebuildReturned, line
	}
	if line == "" {
		line = execErr.Error()
	}
	return RebuildUnknown, line
}

// firstMeaningful is the first line that is not JVM chatter.
func firstMeaningful(text string) string {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "Picked up JAVA_TOOL_OPTIONS") {
			continue
		}
		return l
	}
	return ""
}
