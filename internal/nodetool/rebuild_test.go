package nodetool

import (
	"errors"
	"testing"
)

// The answers of `nodetool rebuild`, as the simulator prints them (test/sim/rebuild.go,
// each with its source there).
func TestClassifyRebuild(t *testing.T) {
	exit2 := errors.New("command terminated with exit code 2")
	for _, c := range []struct {
		name, out, errOut string
		err               error
		want              RebuildOutcome
	}{
		{"returned", "", "", nil, RebuildReturned},
		{"jvm chatter only", "", "Picked up JAVA_TOOL_OPTIONS: -Dx=y\n", nil, RebuildReturned},
		{"still rebuilding", "nodetool: Node is still rebuilding. Check nodetool netstats.\nSee 'nodetool help' or 'nodetool help <command>'.\n", "", errors.New("exit 1"), RebuildRunning},
		{"stream failed", "", "error: Error while rebuilding node: Stream failed\n-- StackTrace --\njava.lang.RuntimeException: Error while rebuilding node: Stream failed\n", exit2, RebuildFailed},
		{"unknown source", "nodetool: Provided datacenter 'dc9' is not a valid datacenter, available datacenters are: dc1,dc2\n", "", errors.New("exit 1"), RebuildRefused},
		{"no source", "", "error: Unable to find sufficient sources for streaming range (1,2] in keyspace app\n", exit2, RebuildRefused},
		{"jmx", "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'.\n", "", errors.New("exit 1"), RebuildRefused},
		{"killed", "", "", errors.New("exit 137"), RebuildUnknown},
	} {
		if got, line := ClassifyRebuild(c.out, c.errOut, c.err); got != c.want {
			t.Errorf("%s: %v (%q), want %v", c.name, got, line, c.want)
		}
	}
}
