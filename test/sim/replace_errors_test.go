package sim

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The startup errors of a replacement (docs/how-it-works/replace.md §4.2): each one is
// printed on the container's stdout as "Exception (<class>) encountered during startup:
// <message>", logged at ERROR with its trace, and the JVM exits 3, after which nodetool
// cannot connect. Messages are exact, per version (replace_rules.go names their source).

// requireCrash checks the JVM of pod exited on the startup error class: msg.
func requireCrash(t *testing.T, s *Store, v, pod, class, msg string) {
	t.Helper()
	nv := view(t, s, pod)
	require.False(t, nv.Running)
	require.Equal(t, 3, nv.ExitCode)
	line := "Exception (" + class + ") encountered during startup: " + msg
	require.Equal(t, line, nv.StartupError)
	log := logOf(t, s, pod)
	require.Contains(t, "\n"+log, "\n"+line+"\nERROR [main] ")
	require.Contains(t, log, " - Exception encountered during startup\n"+class+": "+msg+"\n\tat org.apache.cassandra.")
	connect := "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'.\n"
	if v == V311 {
		connect = "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused (Connection refused)'.\n"
	}
	require.Equal(t, result{"", connect, 1}, run(s, pod, "netstats"), "a JVM that is not running")
}

// otherPod is a replacement in a pod of its own, so that the dead node keeps its pod.
func otherPod(addr string) NodeSpec {
	return NodeSpec{Pod: "replacement-0", Address: addr, HostID: newID, DC: "dc1", Rack: "r3"}
}

const uoe = "java.lang.UnsupportedOperationException"

// TestReplaceLiveNode is R8: a different-address replacement of a live node fails after
// the liveness wait ("Cannot replace a live node... ", trailing space included); 5.0
// logs why first.
func TestReplaceLiveNode(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(replaceOptions(v), sixNodes(), clk.Now)
			require.NoError(t, s.StartFresh(otherPod(newAddr), Fault{}, firstBoot(deadAddr)))
			clk.Advance(20*time.Second - time.Millisecond)
			require.True(t, view(t, s, "replacement-0").Running, "still in its liveness wait")
			require.Equal(t, "UN", rowOf(run(s, podA, "status").stdout, deadAddr)[0])
			clk.Advance(time.Millisecond)
			requireCrash(t, s, v, "replacement-0", uoe, "Cannot replace a live node... ")
			if v == V50 {
				require.Regexp(t, `ERROR \[main\] .* StorageService.java:2110 - Unable to replace node for token=-?\d+\. The node is reporting as alive with updateTimestamp=`, logOf(t, s, "replacement-0"))
				require.Contains(t, logOf(t, s, "replacement-0"), " - Sleeping for 20000ms waiting to make sure no new gossip updates happen for /10.244.3.10:7000\n")
			}
			require.Equal(t, "UN", rowOf(run(s, podA, "status").stdout, deadAddr)[0], "nothing changed")
		})
	}
}

// TestReplaceRecentlyDown is R8 too: the dead node's gossip changed within RING_DELAY
// of the check (it went down 5 s before, RING_DELAY is 10 s).
func TestReplaceRecentlyDown(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(replaceOptions(v), sixNodes(), clk.Now)
			require.NoError(t, s.StartFresh(otherPod(newAddr), Fault{}, firstBoot(deadAddr)))
			clk.Advance(15 * time.Second)
			require.NoError(t, s.SetFault(podF, Fault{Down: true}))
			clk.Advance(5 * time.Second)
			requireCrash(t, s, v, "replacement-0", uoe, "Cannot replace a live node... ")
			if v == V50 {
				require.Contains(t, logOf(t, s, "replacement-0"), "The node is reporting as not alive with updateTimestamp=")
			}
		})
	}
}

// TestReplaceUnknownAddress is R4, at once, with the address as each version prints an
// endpoint.
func TestReplaceUnknownAddress(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s, _ := deadF(t, replaceOptions(v))
			require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{}, firstBoot("10.244.9.9")))
			requireCrash(t, s, v, podF, "java.lang.RuntimeException", "Cannot replace_address "+endpoint(v, "10.244.9.9")+" because it doesn't exist in gossip")
			require.Contains(t, logOf(t, s, podF), " - Gathering node replacement information for "+endpoint(v, "10.244.9.9")+"\n")
			// The dead node is untouched: peers still show it DN.
			require.Equal(t, "DN", rowOf(run(s, podA, "status").stdout, deadAddr)[0])
		})
	}
}

// TestReplaceBootstrappedNode is R1: plain replace_address on a data dir that finished
// bootstrapping (not wiped). The error comes back at every restart until the flag goes.
func TestReplaceBootstrappedNode(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s, _ := deadF(t, replaceOptions(v))
			require.NoError(t, s.RestartWith(podC, StartOptions{ReplaceAddress: deadAddr}))
			msg := "Cannot replace address with a node that is already bootstrapped"
			requireCrash(t, s, v, podC, "java.lang.RuntimeException", msg)
			require.Equal(t, "DN", rowOf(run(s, podA, "status").stdout, "10.244.3.9")[0])
			require.NoError(t, s.Restart(podC))
			requireCrash(t, s, v, podC, "java.lang.RuntimeException", msg)
			require.NoError(t, s.RestartWith(podC, StartOptions{}))
			require.Equal(t, "UN", view(t, s, podC).PeerCode)
		})
	}
}

// TestReplaceWhileRingChanges is R7: another node leaving (a decommission) or
// bootstrapping (a scale-up) makes the replacement refuse at once, listing them.
func TestReplaceWhileRingChanges(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			o := replaceOptions(v)
			o.DecommissionTime = 90 * time.Second
			s, _ := deadF(t, o)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_ = startDecommission(t, ctx, s, podE)
			require.NoError(t, s.AddNode(NodeSpec{Pod: "scale-0", Address: "10.244.1.14", DC: "dc1", Rack: "r1"}))
			require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{}, firstBoot(deadAddr)))
			requireCrash(t, s, v, podF, uoe, "Other bootstrapping/leaving/moving nodes detected, cannot bootstrap while cassandra.consistent.rangemovement is true. Nodes detected, bootstrapping: "+
				endpoint(v, "10.244.1.14")+"; leaving: "+endpoint(v, "10.244.2.18")+"; moving: ;")
			require.Contains(t, logOf(t, s, podF), "StorageService.java:"+map[string]string{V311: "1121", V40: "1799", V41: "1916", V50: "2059"}[v]+")")
		})
	}
}

// TestReplaceSeed is R3: a node in its own seed list does not bootstrap, so it cannot
// replace (since CASSANDRA-14463, 3.11.11/4.0.1); auto_bootstrap: false likewise.
func TestReplaceSeed(t *testing.T) {
	const r3 = "Replacing a node without bootstrapping risks invalidating consistency guarantees as the expected data may not be present until repair is run. To perform this operation, please restart with -Dcassandra.allow_unsafe_replace=true"
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s, _ := deadF(t, replaceOptions(v))
			opts := firstBoot(deadAddr)
			opts.Seeds = []string{"10.244.1.12", newAddr}
			require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{}, opts))
			requireCrash(t, s, v, podF, "java.lang.RuntimeException", r3)
			require.NoError(t, s.RestartWith(podF, StartOptions{ReplaceAddress: deadAddr, FirstBoot: true, NoAutoBootstrap: true}))
			requireCrash(t, s, v, podF, "java.lang.RuntimeException", r3)
		})
	}
	// 3.11.10 did not have the seed rule: the replacement goes on.
	s, _ := deadF(t, Options{Version: V311, ReleaseVersion: "3.11.10", JoinTime: time.Minute})
	opts := firstBoot(deadAddr)
	opts.Seeds = []string{newAddr}
	require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{}, opts))
	require.True(t, view(t, s, podF).Running)
}

// TestReplaceLeftNode is R9: the address is still in gossip (LEFT, kept 3 days) but owns
// no token any more, found after the liveness wait.
func TestReplaceLeftNode(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(replaceOptions(v), sixNodes(), clk.Now)
			require.Equal(t, 0, run(s, podE, "decommission").code) // instant
			require.Equal(t, ModeDecommissioned, view(t, s, podE).Mode)
			require.NoError(t, s.StartFresh(otherPod("10.244.2.19"), Fault{}, firstBoot("10.244.2.18")))
			clk.Advance(20 * time.Second)
			nv := view(t, s, "replacement-0")
			require.Regexp(t, regexp.MustCompile(`^Exception \(java\.lang\.UnsupportedOperationException\) encountered during startup: Cannot replace token -?\d+ which does not exist!$`), nv.StartupError)
		})
	}
}

// TestReplaceInsufficientSources is R11: with RF 3 and racks r1 and r2 each missing a
// node, some range of the dead node has no live replica left. The replacement had
// announced, so peers list it DJ until they drop it.
func TestReplaceInsufficientSources(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s, clk := deadF(t, replaceOptions(v))
			require.NoError(t, s.SetFault(podA, Fault{Down: true}))
			require.NoError(t, s.SetFault(podB, Fault{Down: true}))
			require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{}, firstBoot(deadAddr)))
			clk.Advance(30 * time.Second)
			nv := view(t, s, podF)
			require.Equal(t, 3, nv.ExitCode)
			what := `\(-?\d+,-?\d+\]`
			if v != V311 {
				what = `Full\(/10\.244\.3\.11:7000,\(-?\d+,-?\d+\]\)`
			}
			require.Regexp(t, `^Exception \(java\.lang\.IllegalStateException\) encountered during startup: Unable to find sufficient sources for streaming range `+what+` in keyspace system_auth$`, nv.StartupError)
			require.Equal(t, "DJ", rowOf(run(s, podC, "status").stdout, newAddr)[0])
			clk.Advance(10 * time.Second)
			st := run(s, podC, "status").stdout
			require.Nil(t, rowOf(st, newAddr))
			require.Equal(t, "DN", rowOf(st, deadAddr)[0])
		})
	}
}

// TestFreshNodeOnKnownAddress: a wiped node without a replace flag on the address of a
// ring member is refused (isSafeForStartup), pointing at cassandra.replace_address.
func TestFreshNodeOnKnownAddress(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s, _ := deadF(t, replaceOptions(v))
			require.NoError(t, s.StartFresh(replacementOf(deadAddr), Fault{}, StartOptions{}))
			requireCrash(t, s, v, podF, "java.lang.RuntimeException", "A node with address "+endpoint(v, deadAddr)+" already exists, cancelling join. Use cassandra.replace_address if you want to replace this node.")
		})
	}
	// On a new address it bootstraps as a new node; the dead one stays DN.
	s, clk := deadF(t, replaceOptions(V41))
	require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{}, StartOptions{}))
	require.Equal(t, "UJ", view(t, s, podF).PeerCode)
	clk.Advance(time.Minute)
	st := run(s, podA, "status").stdout
	require.Equal(t, "UN", rowOf(st, newAddr)[0])
	require.Equal(t, "DN", rowOf(st, deadAddr)[0])
	require.True(t, strings.Contains(st, newID))
}
