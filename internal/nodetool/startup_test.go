package nodetool

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseStartupError: every startup error of docs/how-it-works/replace.md §4.2, with
// the exact text of the version(s) shown, reads as its cause; the last one in the log
// wins (a container restarted in a crash loop logs one per start).
func TestParseStartupError(t *testing.T) {
	const (
		rte = "java.lang.RuntimeException"
		uoe = "java.lang.UnsupportedOperationException"
		ise = "java.lang.IllegalStateException"
	)
	for _, tc := range []struct {
		class, msg string
		cause      StartupCause
	}{
		{rte, "Cannot replace address with a node that is already bootstrapped", CauseBootstrapped},
		{"org.apache.cassandra.exceptions.ConfigurationException", "Cannot set both join_ring=false and attempt to replace a node", CauseJoinRing},
		{rte, "Replacing a node without bootstrapping risks invalidating consistency guarantees as the expected data may not be present until repair is run. To perform this operation, please restart with -Dcassandra.allow_unsafe_replace=true", CauseNoBootstrap},
		{rte, "Cannot replace_address /10.244.3.9 because it doesn't exist in gossip", CauseUnknownAddress},     // 3.11
		{rte, "Cannot replace_address /127.0.0.5:7000 because it doesn't exist in gossip", CauseUnknownAddress}, // 4.0+, dtest
		{rte, "Could not find tokens for /10.244.3.9:7000 to replace", CauseNoTokens},
		{rte, "Conflicting token ownership information detected between gossip and current ring view during proposed replacement of /10.244.3.9:7000. Some tokens identified in gossip for the node being replaced are currently owned by other peers: 42(/10.244.1.12:7000)", CauseTokenConflict},
		{uoe, "Other bootstrapping/leaving/moving nodes detected, cannot bootstrap while cassandra.consistent.rangemovement is true. Nodes detected, bootstrapping: ; leaving: /10.244.2.18:7000; moving: ;", CauseRingChanging},
		{uoe, "Cannot replace a live node... ", CauseLiveNode},
		{uoe, "Cannot replace token -9076651826346409321 which does not exist!", CauseTokenGone},
		{ise, "Unable to contact any seeds: [/10.244.1.12:7000]", CauseNoSeeds},
		{ise, "Unable to find sufficient sources for streaming range Full(/10.244.3.11:7000,(-1,42]) in keyspace system_auth", CauseNoSources},
		{ise, "Discovered existing bootstrap data and cassandra.reset_bootstrap_progress is not configured; aborting bootstrap. Please clean up local files manually and try again or set cassandra.reset_bootstrap_progress=true to ignore. Found: []. Fully available: []. Transiently available: []", CauseEarlierData},
		{rte, "A node with address /10.244.3.10:7000 already exists, cancelling join. Use cassandra.replace_address if you want to replace this node.", CauseAddressInUse},
		{"java.lang.OutOfMemoryError", "Java heap space", CauseOther},
	} {
		line := "Exception (" + tc.class + ") encountered during startup: " + tc.msg
		log := "INFO  [main] 2024-06-11 06:14:20,000 StorageService.java:653 - Gathering node replacement information for /10.244.3.10:7000\r\n" +
			line + "\nERROR [main] 2024-06-11 06:14:20,000 CassandraDaemon.java:788 - Exception encountered during startup\n" +
			tc.class + ": " + tc.msg + "\n\tat org.apache.cassandra.service.StorageService.prepareForReplacement(StorageService.java:658)\n"
		got, ok := ParseStartupError(log)
		require.True(t, ok, tc.msg)
		assert.Equal(t, StartupError{Class: tc.class, Message: tc.msg, Cause: tc.cause, Line: line}, got)
	}

	two := "Exception (java.lang.RuntimeException) encountered during startup: Cannot replace address with a node that is already bootstrapped\n" +
		"INFO  [main] 2024-06-11 06:15:20,000 CassandraDaemon.java:500 - restarted\n" +
		"Exception (java.lang.UnsupportedOperationException) encountered during startup: Cannot replace a live node... \n"
	got, ok := ParseStartupError(two)
	require.True(t, ok)
	assert.Equal(t, CauseLiveNode, got.Cause)

	_, ok = ParseStartupError("INFO  [main] 2024-06-11 06:14:20,000 CassandraDaemon.java:650 - Startup complete\n")
	assert.False(t, ok)
	_, ok = ParseStartupError("")
	assert.False(t, ok)
}
