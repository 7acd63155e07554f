package nodetool

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseRemovalStatus: StorageService.getRemovalStatus's two forms; the list is
// "/ip" (3.11, 4.0+ without -pp) or "/ip:port" (-pp), joined by ",".
func TestParseRemovalStatus(t *testing.T) {
	st, err := ParseRemovalStatus("RemovalStatus: No token removals in process.\n")
	require.NoError(t, err)
	assert.Equal(t, RemovalStatus{}, st)

	for _, out := range []string{
		"RemovalStatus: Removing token (-9076651826346409321). Waiting for replication confirmation from [/10.244.1.12,/10.244.2.17].\n",
		"Picked up JAVA_TOOL_OPTIONS: -Dcom.sun.jndi.rmiURLParsing=legacy\nRemovalStatus: Removing token (-9076651826346409321). Waiting for replication confirmation from [/10.244.1.12:7000,/10.244.2.17:7000].\n",
	} {
		st, err = ParseRemovalStatus(out)
		require.NoError(t, err)
		assert.Equal(t, RemovalStatus{Removing: true, Token: "-9076651826346409321", Waiting: []string{"10.244.1.12", "10.244.2.17"}}, st)
	}
	st, err = ParseRemovalStatus("RemovalStatus: Removing token (42). Waiting for replication confirmation from [].\n")
	require.NoError(t, err)
	assert.Equal(t, RemovalStatus{Removing: true, Token: "42"}, st)

	_, err = ParseRemovalStatus("nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'.\n")
	assert.Error(t, err)
}

// TestClassifyRemoveNode: every answer of docs/how-it-works/replace.md §5.
func TestClassifyRemoveNode(t *testing.T) {
	trace := func(class, msg string) string {
		return "error: " + msg + "\n-- StackTrace --\n" + class + ": " + msg + "\n\tat java.base/java.lang.Thread.run(Thread.java:829)\n"
	}
	const uoe = "java.lang.UnsupportedOperationException"
	for _, tc := range []struct {
		stdout, stderr string
		err            error
		want           RemoveOutcome
	}{
		{"", "", nil, RemoveReturned},
		{"", trace(uoe, "Host ID not found."), errExit2, RemoveNotFound},
		{"", trace(uoe, "Node to be removed is not a member of the token ring"), errExit2, RemoveNotMember},
		{"", trace(uoe, "Cannot remove self"), errExit2, RemoveSelf},
		{"", trace(uoe, "Node /10.244.3.9:7000 is alive and owns this ID. Use decommission command to remove it from the ring"), errExit2, RemoveAlive},
		{"", trace(uoe, "Node /10.244.3.9 is alive and owns this ID. Use decommission command to remove it from the ring"), errExit2, RemoveAlive},
		{"", trace(uoe, "This node is already processing a removal. Wait for it to complete, or use 'removenode force' if this has failed."), errExit2, RemoveBusy},
		{"", trace("java.lang.RuntimeException", "Endpoint /10.244.3.10:7000 generation changed while trying to remove it"), errExit2, RemoveGenerationChanged},
		{"nodetool: Invalid UUID string: foo\n" + seeHelp, "", errExit1, RemoveInvalidID},
		{"nodetool: Required parameters are missing: remove_operation\n" + seeHelp, "", errExit1, RemoveUsage},
		{"", "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'.\n", errExit1, RemoveUnreachable},
		{"", "error: null\n-- StackTrace --\njava.rmi.UnmarshalException: Error unmarshaling return header; nested exception is: \n", errExit2, RemoveUnknown},
		{"", "", errExit137, RemoveUnknown},
	} {
		got, line := ClassifyRemoveNode(tc.stdout, tc.stderr, tc.err)
		assert.Equal(t, tc.want, got, "%q %q -> %q", tc.stdout, tc.stderr, line)
	}
}
