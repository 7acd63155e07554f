package nodetool

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

const seeHelp = "See 'nodetool help' or 'nodetool help <command>'.\n"

// What the exec layer returns for a non-zero exit; it does not pass the exit code through.
var (
	errExit1   = errors.New("command terminated with non-zero exit code: error executing command [env LANG=C nodetool decommission], exit code 1")
	errExit2   = errors.New("Internal error occurred: error executing command in container: cmd wait: process exited: exit status 2")
	errExit137 = errors.New("command terminated with non-zero exit code: error executing command [env LANG=C nodetool decommission], exit code 137")
	errReset   = errors.New("exec in demo/demo-dc1-r3-sts-1: stream error: stream ID 3; INTERNAL_ERROR; received from peer")
)

func stackTrace(first, exception string) string {
	return first + "\n-- StackTrace --\n" + exception + "\n" +
		"\tat org.apache.cassandra.service.StorageService.decommission(StorageService.java:5148)\n" +
		"\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n" +
		"\tat org.apache.cassandra.tools.NodeProbe.decommission(NodeProbe.java:1073)\n" +
		"\tat org.apache.cassandra.tools.nodetool.Decommission.execute(Decommission.java:42)\n"
}

func TestClassifyDecommission(t *testing.T) {
	const javaOpts = "Picked up JAVA_TOOL_OPTIONS: -Dcom.sun.jndi.rmiURLParsing=legacy\n"
	e1 := "nodetool: Unsupported operation: Not enough live nodes to maintain replication factor in keyspace system_distributed (RF = 3, N = 3). Perform a forceful decommission to ignore."
	e6 := "nodetool: Unsupported operation: Not enough live nodes to maintain replication factor in keyspace app (RF = 1, N = 1). Perform a forceful decommission to ignore."
	tests := []struct {
		name           string
		stdout, stderr string
		err            error
		want           Outcome
		msg            string
	}{
		// Success: 3.11/4.x/5.0 print nothing and exit 0.
		{"success", "", "", nil, OutcomeReturned, ""},
		{"success with JVM banner on stderr", "", javaOpts, nil, OutcomeReturned, ""},
		{"success with JDK 11 warnings on stderr", "", "WARNING: An illegal reflective access operation has occurred\n" +
			"WARNING: Illegal reflective access by org.apache.cassandra.utils.FBUtilities (file:/opt/cassandra/lib/apache-cassandra-3.11.17.jar) to field java.io.FileDescriptor.fd\n" +
			"WARNING: Please consider reporting this to the maintainers of org.apache.cassandra.utils.FBUtilities\n" +
			"WARNING: Use --illegal-access=warn to enable warnings of further illegal reflective access operations\n" +
			"WARNING: All illegal access operations will be denied in a future release\n" +
			"OpenJDK 64-Bit Server VM warning: Option UseConcMarkSweepGC was deprecated in version 9.0 and will likely be removed in a future release.\n",
			nil, OutcomeReturned, ""},
		{"success with whitespace only", "\n", " \n", nil, OutcomeReturned, ""},

		// Already running.
		{"E2 4.x still decommissioning (exit 1)", "nodetool: Node is still decommissioning. Check nodetool netstats.\n" + seeHelp, javaOpts, errExit1,
			OutcomeRunning, "nodetool: Node is still decommissioning. Check nodetool netstats."},
		{"E2 4.x still decommissioning, exit code lost", "nodetool: Node is still decommissioning. Check nodetool netstats.\n" + seeHelp, "", nil,
			OutcomeRunning, "nodetool: Node is still decommissioning. Check nodetool netstats."},
		{"E2 5.0 server variant", "nodetool: Node is still decommissioning. Check nodetool netstats or nodetool info.\n" + seeHelp, "", errExit1,
			OutcomeRunning, "nodetool: Node is still decommissioning. Check nodetool netstats or nodetool info."},
		{"E2' 5.0 pre-check (exit 0)", "This node is still decommissioning.\n", javaOpts, nil,
			OutcomeRunning, "This node is still decommissioning."},

		// Already done.
		{"E3' 5.0 already decommissioned (exit 0)", "Node was already decommissioned.\n", "", nil,
			OutcomeAlreadyDone, "Node was already decommissioned."},
		{"E3 3.11/4.x already decommissioned", "nodetool: Unsupported operation: local node is not a member of the token ring yet\n" + seeHelp, "", errExit1,
			OutcomeAlreadyDone, "nodetool: Unsupported operation: local node is not a member of the token ring yet"},
		{"E8 joining node", "nodetool: Unsupported operation: local node is not a member of the token ring yet\n" + seeHelp, "", errExit2,
			OutcomeAlreadyDone, "nodetool: Unsupported operation: local node is not a member of the token ring yet"},

		// Refused before starting.
		{"E1 RF check", e1 + "\n" + seeHelp, "", errExit1, OutcomeRefused, e1},
		{"E1 RF check, exit code lost", e1 + "\n" + seeHelp, "", nil, OutcomeRefused, e1},
		{"E6 last node of its DC", e6 + "\n" + seeHelp, "", errExit1, OutcomeRefused, e6},
		{"E5 only token owner", "nodetool: Unsupported operation: no other normal nodes in the ring; decommission would be pointless\n" + seeHelp, "", errExit1,
			OutcomeRefused, "nodetool: Unsupported operation: no other normal nodes in the ring; decommission would be pointless"},
		{"E7 drained", "nodetool: Unsupported operation: Node in DRAINED state; wait for status to become normal or restart\n" + seeHelp, "", errExit1,
			OutcomeRefused, "nodetool: Unsupported operation: Node in DRAINED state; wait for status to become normal or restart"},
		{"E7 draining", "nodetool: Unsupported operation: Node in DRAINING state; wait for status to become normal or restart\n" + seeHelp, "", errExit1,
			OutcomeRefused, "nodetool: Unsupported operation: Node in DRAINING state; wait for status to become normal or restart"},
		{"E7 moving", "nodetool: Unsupported operation: Node in MOVING state; wait for status to become normal or restart\n" + seeHelp, "", errExit1,
			OutcomeRefused, "nodetool: Unsupported operation: Node in MOVING state; wait for status to become normal or restart"},
		{"E7 starting", "nodetool: Unsupported operation: Node in STARTING state; wait for status to become normal or restart\n" + seeHelp, "", errExit1,
			OutcomeRefused, "nodetool: Unsupported operation: Node in STARTING state; wait for status to become normal or restart"},
		{"E9 pending ranges", "nodetool: Unsupported operation: data is currently moving to this node; unable to leave the ring\n" + seeHelp, "", errExit1,
			OutcomeRefused, "nodetool: Unsupported operation: data is currently moving to this node; unable to leave the ring"},
		{"E13 --force on 3.11", "nodetool: Found unexpected parameters: [--force]\n" + seeHelp, "", errExit1,
			OutcomeRefused, "nodetool: Found unexpected parameters: [--force]"},

		// Started and failed.
		{"E11 stream failed (exit 2)", "", stackTrace("error: Error while decommissioning node: Stream failed",
			"java.lang.RuntimeException: Error while decommissioning node: Stream failed"), errExit2,
			OutcomeFailed, "error: Error while decommissioning node: Stream failed"},
		{"E11 stream failed, exit code lost", "", stackTrace("error: Error while decommissioning node: Stream failed",
			"java.lang.RuntimeException: Error while decommissioning node: Stream failed"), nil,
			OutcomeFailed, "error: Error while decommissioning node: Stream failed"},
		{"E12 interrupted", "", stackTrace("error: Node interrupted while decommissioning",
			"java.lang.RuntimeException: Node interrupted while decommissioning"), errExit2,
			OutcomeFailed, "error: Node interrupted while decommissioning"},

		// JMX unreachable.
		{"E10 connection refused JDK 8", "", "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused (Connection refused)'.\n", errExit1,
			OutcomeUnreachable, "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused (Connection refused)'."},
		{"E10 connection refused JDK 11", "", javaOpts + "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'.\n", errExit1,
			OutcomeUnreachable, "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'."},
		{"E10 authentication failed", "", "nodetool: Failed to connect to '127.0.0.1:7199' - SecurityException: 'Authentication failed! Invalid username or password'.\n", errExit1,
			OutcomeUnreachable, "nodetool: Failed to connect to '127.0.0.1:7199' - SecurityException: 'Authentication failed! Invalid username or password'."},

		// Anything else: unknown, the node's state must be read.
		{"E14 client killed (137)", "", "", errExit137, OutcomeUnknown, errExit137.Error()},
		{"stream reset", "", "", errReset, OutcomeUnknown, errReset.Error()},
		{"timeout", "", "", fmt.Errorf("exec: %w", context.DeadlineExceeded), OutcomeUnknown, "exec: context deadline exceeded"},
		{"error with JVM banner only", "", javaOpts, errExit2, OutcomeUnknown, errExit2.Error()},
		{"E12' 4.1 interrupted", "", stackTrace("error: sleep interrupted", "java.lang.InterruptedException: sleep interrupted"), errExit2,
			OutcomeUnknown, "error: sleep interrupted"},
		{"E15 Cassandra died mid-call", "", stackTrace("error: error unmarshalling return; nested exception is: ",
			"java.rmi.UnmarshalException: error unmarshalling return; nested exception is: \n\tjava.io.EOFException"), errExit2,
			OutcomeUnknown, "error: error unmarshalling return; nested exception is:"},
		{"unrecognised text, exit 0", "Decommission started\n", "", nil, OutcomeUnknown, "Decommission started"},
		{"unrecognised nodetool error", "nodetool: Unknown command decomission\n" + seeHelp, "", errExit1, OutcomeUnknown, "nodetool: Unknown command decomission"},
		{"see-help line only", seeHelp, "", errExit1, OutcomeUnknown, "See 'nodetool help' or 'nodetool help <command>'."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := ClassifyDecommission(tt.stdout, tt.stderr, tt.err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.msg, msg)
		})
	}
}
