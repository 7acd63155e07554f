package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The replacement state machine (docs/how-it-works/replace.md §4.3, §4.4). Every test uses
// JoinTime 60 s, unmetered: RING_DELAY is 10 s, so a different-address replacement
// checks at 20 s, announces BOOT_REPLACE, streams from 30 s to 60 s; a same-address one
// checks and streams at 10 s, done at 40 s.

const (
	deadAddr = "10.244.3.10" // podF, the dead node
	deadID   = "0d2f4a6c-8e0a-4c2e-b4d6-3f5a7b9c1d96"
	newAddr  = "10.244.3.11"
	newID    = "7e1c4b2a-9d3f-4a5e-8b6c-0d1e2f3a4b5c"
)

func replaceOptions(v string) Options { return Options{Version: v, JoinTime: time.Minute} }

// deadF is the six-node cluster with podF's JVM stopped a minute ago.
func deadF(t *testing.T, o Options) (*Store, *fakeClock) {
	t.Helper()
	clk := newClock()
	s := NewMemory(o, sixNodes(), clk.Now)
	require.NoError(t, s.SetFault(podF, Fault{Down: true}))
	clk.Advance(time.Minute)
	return s, clk
}

// replacementOf is podF's pod on a fresh volume at addr.
func replacementOf(addr string) NodeSpec {
	return NodeSpec{Pod: podF, Address: addr, HostID: newID, DC: "dc1", Rack: "r3"}
}

func firstBoot(addr string) StartOptions {
	return StartOptions{ReplaceAddress: addr, FirstBoot: true}
}

// rowOf is the status row of addr split in fields, nil when there is none.
func rowOf(status, addr string) []string {
	for _, l := range strings.Split(status, "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && (f[1] == addr || strings.HasPrefix(f[1], addr+":")) {
			return f
		}
	}
	return nil
}

func endpoint(v, addr string) string {
	if v == V311 {
		return "/" + addr
	}
	return "/" + addr + ":7000"
}

func logOf(t *testing.T, s *Store, pod string) string {
	t.Helper()
	l, err := s.Log(pod)
	require.NoError(t, err)
	return strings.Join(l, "\n")
}

// TestReplaceDifferentAddress: §4.4's different-address table, seen from a peer, from
// the replacement itself and from a source.
func TestReplaceDifferentAddress(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(replaceOptions(v), sixNodes(), clk.Now)
			deadTokens := run(s, podF, "info", "-T").stdout
			require.NoError(t, s.SetFault(podF, Fault{Down: true}))
			clk.Advance(time.Minute)
			require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{}, firstBoot(deadAddr)))

			// Steps 1–6: the liveness wait. Peers still show the dead node; the
			// replacement is JOINING and streams nothing.
			nv := view(t, s, podF)
			require.Equal(t, ModeJoining, nv.Mode)
			require.True(t, nv.Joining && nv.Running)
			require.Equal(t, deadAddr, nv.Replacing)
			require.Equal(t, "", nv.PeerCode)
			require.Equal(t, "IN_PROGRESS", nv.Bootstrap)
			eps, err := s.Endpoints()
			require.NoError(t, err)
			require.Len(t, eps, 7, "the dead node is still known, with no pod")
			require.Equal(t, deadID, eps[5].HostID)
			require.True(t, eps[5].Detached)
			require.Equal(t, "DN", eps[5].PeerCode)
			require.Equal(t, eps[5].Tokens, nv.Tokens, "the dead node's token count")
			st := run(s, podA, "status").stdout
			require.Equal(t, "DN", rowOf(st, deadAddr)[0])
			require.Contains(t, rowOf(st, deadAddr), deadID)
			require.Nil(t, rowOf(st, newAddr))
			require.True(t, strings.HasPrefix(run(s, podF, "netstats").stdout, "Mode: JOINING\nNot sending any streams.\n"))
			info := run(s, podF, "info").stdout
			require.Contains(t, info, "ID                     : "+newID+"\n")
			require.Contains(t, info, "Native Transport active: false\n")
			require.Contains(t, info, "Token                  : (node is not joined to the cluster)\n")

			// Step 7: BOOT_REPLACE. The dead node's row is gone, the replacement is UJ
			// with its token count, Owns ?, a new host ID and no data yet.
			clk.Advance(20 * time.Second)
			st = run(s, podA, "status").stdout
			require.Nil(t, rowOf(st, deadAddr))
			tokens := "16"
			if v == V311 {
				tokens = "256"
			}
			require.Equal(t, []string{"UJ", newAddr, "0", "bytes", tokens, "?", newID, "r3"}, rowOf(st, newAddr))
			// Its own ring has no bootstrap tokens of its own: the dead node stays DN there.
			own := run(s, podF, "status").stdout
			require.Equal(t, "DN", rowOf(own, deadAddr)[0])
			require.Nil(t, rowOf(own, newAddr))
			require.Equal(t, "UJ", view(t, s, podF).PeerCode)
			if v != V311 {
				require.Contains(t, run(s, podA, "describecluster").stdout, "\tJoining: 1\n")
			}
			gi := run(s, podA, "gossipinfo").stdout
			require.Regexp(t, `\n  STATUS:\d+:BOOT_REPLACE,`+deadAddr+`\n`, gi)
			if v != V311 {
				require.Regexp(t, `\n  STATUS_WITH_PORT:\d+:BOOT_REPLACE,`+deadAddr+`:7000\n`, gi)
			}
			require.True(t, strings.HasPrefix(run(s, podF, "netstats").stdout, "Mode: JOINING\nNot sending any streams.\n"), "sleeping RING_DELAY for pending range setup")

			// Step 8: streaming from the live replicas of the other racks, half-way.
			clk.Advance(25 * time.Second)
			ns := run(s, podF, "netstats").stdout
			require.True(t, strings.HasPrefix(ns, "Mode: JOINING\nBootstrap "), ns)
			for _, src := range []string{"10.244.1.12", "10.244.2.17", "10.244.1.13", "10.244.2.18"} {
				require.Contains(t, ns, "\n    /"+src+"\n")
			}
			require.NotContains(t, ns, "/10.244.3.9\n", "same-rack nodes hold no replica of its ranges")
			require.Contains(t, run(s, podA, "netstats").stdout, "\n    /"+newAddr+"\n        Sending ")
			require.Equal(t, reUUID.FindString(ns), reUUID.FindString(run(s, podB, "netstats").stdout), "one plan id on every end")
			load := rowOf(run(s, podA, "status").stdout, newAddr)
			require.Equal(t, []string{"UJ", newAddr, "619.52", "MiB"}, load[:4], "half of 1.21 GiB, growing")

			// Step 9: NORMAL with the dead node's tokens; the dead node is forgotten.
			clk.Advance(15 * time.Second)
			nv = view(t, s, podF)
			require.Equal(t, ModeNormal, nv.Mode)
			require.False(t, nv.Joining)
			require.Equal(t, "", nv.Replacing)
			require.Equal(t, "COMPLETED", nv.Bootstrap)
			for _, pod := range []string{podA, podF} {
				st = run(s, pod, "status").stdout
				require.Nil(t, rowOf(st, deadAddr))
				require.Equal(t, []string{"UN", newAddr, "1.21", "GiB"}, rowOf(st, newAddr)[:4])
				require.Contains(t, rowOf(st, newAddr), newID)
			}
			require.NotContains(t, run(s, podA, "gossipinfo").stdout, "/"+deadAddr+"\n")
			tokensOf := func(info string) string { return info[strings.Index(info, "Token "):] }
			require.Equal(t, tokensOf(deadTokens), tokensOf(run(s, podF, "info", "-T").stdout), "exactly the dead node's tokens")
			eps, err = s.Endpoints()
			require.NoError(t, err)
			for _, e := range eps {
				require.NotEqual(t, deadID, e.HostID)
			}
			l := logOf(t, s, podF)
			require.Contains(t, l, "StorageService.java:")
			require.Contains(t, l, " - Gathering node replacement information for "+endpoint(v, deadAddr)+"\n")
			require.Contains(t, l, " - JOINING: Replacing a node with token(s): [")
			require.Contains(t, l, " - JOINING: sleeping 10000 ms for pending range setup\n")
			require.Contains(t, l, " - Bootstrap completed for tokens [")
		})
	}
}

// TestReplaceSameAddress: the replacement gossips hibernate, so peers show the DN row
// with the same host ID for the whole replacement, then UN with that host ID (§4.4).
func TestReplaceSameAddress(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s, clk := deadF(t, replaceOptions(v))
			require.NoError(t, s.StartFresh(replacementOf(deadAddr), Fault{}, firstBoot(deadAddr)))
			nv := view(t, s, podF)
			require.Equal(t, deadID, nv.HostID, "the replacee's host ID, to receive hints")
			require.Equal(t, "DN", nv.PeerCode)
			for _, at := range []time.Duration{0, 15 * time.Second, 10 * time.Second} {
				clk.Advance(at)
				row := rowOf(run(s, podA, "status").stdout, deadAddr)
				require.Equal(t, []string{"DN", deadAddr, "?"}, row[:3])
				require.Contains(t, row, deadID)
			}
			// Its own ring shows it normal and live.
			require.Equal(t, "UN", rowOf(run(s, podF, "status").stdout, deadAddr)[0])
			require.Contains(t, run(s, podF, "netstats").stdout, "\nBootstrap ")
			require.Contains(t, run(s, podA, "gossipinfo").stdout, ":hibernate,true\n")
			if v != V311 {
				require.Contains(t, run(s, podA, "describecluster").stdout, "\tJoining: 0\n\tMoving: 0\n\tLeaving: 0\n\tUnreachable: 1\n")
			}
			window := "max_hint_window_in_ms"
			if v == V50 {
				window = "max_hint_window"
			}
			require.Contains(t, logOf(t, s, podF), "WARN  [main] ")
			require.Contains(t, logOf(t, s, podF), " - Writes will not be forwarded to this node during replacement because it has the same address as the node to be replaced ("+endpoint(v, deadAddr)+"). If the previous node has been down for longer than "+window+", repair must be run after the replacement process in order to make this node consistent.\n")
			clk.Advance(15 * time.Second)
			row := rowOf(run(s, podA, "status").stdout, deadAddr)
			require.Equal(t, []string{"UN", deadAddr, "1.21", "GiB"}, row[:4])
			require.Contains(t, row, deadID)
			eps, err := s.Endpoints()
			require.NoError(t, err)
			require.Len(t, eps, 6, "one endpoint per address")
			require.NotContains(t, run(s, podA, "gossipinfo").stdout, "hibernate")
		})
	}
}

// TestReplaceFirstBootOnBootstrappedNode: _first_boot on a bootstrapped data dir is a
// plain restart with an INFO line; plain replace_address is R1 (§4.1).
func TestReplaceFirstBootOnBootstrappedNode(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s, _ := deadF(t, replaceOptions(v))
			require.NoError(t, s.RestartWith(podA, firstBoot(deadAddr)))
			nv := view(t, s, podA)
			require.True(t, nv.Running)
			require.Equal(t, ModeNormal, nv.Mode)
			require.Equal(t, "UN", nv.PeerCode)
			msg := "Replace address on first boot requested; this node is already bootstrapped"
			if v == V50 {
				msg = "Replace address on the first boot requested; this node is already bootstrapped"
			}
			require.Contains(t, logOf(t, s, podA), "INFO  [main] ")
			require.Contains(t, logOf(t, s, podA), " - "+msg)
			// The flags stay: every restart behaves the same.
			require.NoError(t, s.Restart(podA))
			require.True(t, view(t, s, podA).Running)
		})
	}
}

// TestReplaceStreamFailure: an armed stream failure leaves the replacement running,
// not joined (JOINING, 5.0 JOINING_FAILED), peers still UJ. Wiping it and starting
// again too soon is R7 (peers still hold its bootstrap tokens); once peers have dropped
// it (RING_DELAY after its JVM stopped) the dead node's DN row is back and the retry
// completes (§4.3 step 9, §4.4 last row, §4.6).
func TestReplaceStreamFailure(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s, clk := deadF(t, replaceOptions(v))
			require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{StreamFailures: 1}, firstBoot(deadAddr)))
			clk.Advance(44 * time.Second)
			require.Contains(t, run(s, podF, "netstats").stdout, "\nBootstrap ")
			clk.Advance(time.Second)
			nv := view(t, s, podF)
			want := ModeJoining
			if v == V50 {
				want = ModeJoiningFailed
			}
			require.Equal(t, want, nv.Mode)
			require.True(t, nv.Running && nv.ReplaceFailed)
			require.Equal(t, 0, nv.Fault.StreamFailures, "consumed")
			require.Equal(t, "UJ", nv.PeerCode)
			require.Equal(t, "Mode: "+want+"\nNot sending any streams.\n", strings.Join(strings.SplitAfter(run(s, podF, "netstats").stdout, "\n")[:2], ""))
			require.Contains(t, logOf(t, s, podF), "ERROR [main] ")
			require.Contains(t, logOf(t, s, podF), " - Error while waiting on bootstrap to complete. Bootstrap will have to be restarted.\n")
			require.True(t, strings.HasSuffix(logOf(t, s, podF), " - Some data streaming failed. Use nodetool to check bootstrap state and resume. For more, see `nodetool help bootstrap`. IN_PROGRESS"))
			if v == V50 {
				require.Contains(t, run(s, podF, "info").stdout, "Bootstrap state        : IN_PROGRESS\nBootstrap failed       : true\n")
			}
			clk.Advance(time.Hour)
			require.Equal(t, "UJ", view(t, s, podF).PeerCode, "it never gets anywhere on its own")
			require.Nil(t, rowOf(run(s, podA, "status").stdout, deadAddr))

			// Wipe and retry at once: peers still see the failed one bootstrapping.
			retry := replacementOf("10.244.3.12")
			retry.HostID = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
			require.NoError(t, s.StartFresh(retry, Fault{}, firstBoot(deadAddr)))
			nv = view(t, s, podF)
			require.Equal(t, 3, nv.ExitCode)
			require.False(t, nv.Running)
			require.Equal(t, "Exception (java.lang.UnsupportedOperationException) encountered during startup: Other bootstrapping/leaving/moving nodes detected, cannot bootstrap while cassandra.consistent.rangemovement is true. Nodes detected, bootstrapping: "+endpoint(v, newAddr)+"; leaving: ; moving: ;", nv.StartupError)
			require.Equal(t, "DJ", rowOf(run(s, podA, "status").stdout, newAddr)[0])

			// RING_DELAY later the failed replacement is dropped: the dead node is back.
			clk.Advance(10 * time.Second)
			st := run(s, podA, "status").stdout
			require.Nil(t, rowOf(st, newAddr))
			require.Equal(t, "DN", rowOf(st, deadAddr)[0])
			require.NoError(t, s.Restart(podF)) // the container restarts
			require.Contains(t, logOf(t, s, podF), " - Detected previous bootstrap failure; retrying\n")
			clk.Advance(time.Minute)
			nv = view(t, s, podF)
			require.Equal(t, "UN", nv.PeerCode)
			require.Equal(t, "10.244.3.12", nv.Address)
			st = run(s, podA, "status").stdout
			require.Nil(t, rowOf(st, deadAddr))
			require.Equal(t, []string{"UN", "10.244.3.12", "1.21", "GiB"}, rowOf(st, "10.244.3.12")[:4])
		})
	}
}

// TestReplaceSourceLost: a source's JVM stopping breaks its session, so the bootstrap
// fails like an armed failure.
func TestReplaceSourceLost(t *testing.T) {
	s, clk := deadF(t, replaceOptions(V41))
	require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{}, firstBoot(deadAddr)))
	clk.Advance(40 * time.Second)
	require.NoError(t, s.SetFault(podB, Fault{Down: true}))
	nv := view(t, s, podF)
	require.True(t, nv.ReplaceFailed)
	require.Equal(t, ModeJoining, nv.Mode)
	require.Equal(t, "UJ", nv.PeerCode)
}

// TestReplaceRetryWithoutWipe: restarting a failed replacement on its data dir replaces
// again ("Detected previous bootstrap failure; retrying"). 3.11/4.x skip the ranges
// they have; 5.0 refuses without cassandra.reset_bootstrap_progress (CASSANDRA-17679),
// and with it starts over (§4.6).
func TestReplaceRetryWithoutWipe(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s, clk := deadF(t, replaceOptions(v))
			require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{StreamFailures: 1}, firstBoot(deadAddr)))
			clk.Advance(45 * time.Second)
			require.True(t, view(t, s, podF).ReplaceFailed)
			require.Equal(t, "619.52 MiB", view(t, s, podF).Load, "what it received stays on disk")
			require.NoError(t, s.Restart(podF))
			require.Contains(t, logOf(t, s, podF), " - Detected previous bootstrap failure; retrying\n")
			require.Equal(t, "UJ", view(t, s, podF).PeerCode, "peers keep its bootstrap tokens across the restart")
			clk.Advance(30 * time.Second)
			if v != V50 {
				require.Contains(t, run(s, podF, "netstats").stdout, "Receiving 4 files, 162403450 bytes total", "only the missing half")
				clk.Advance(30 * time.Second)
				require.Equal(t, "UN", view(t, s, podF).PeerCode)
				require.Equal(t, "1.21 GiB", view(t, s, podF).Load)
				return
			}
			nv := view(t, s, podF)
			require.Equal(t, 3, nv.ExitCode)
			require.True(t, strings.HasPrefix(nv.StartupError, "Exception (java.lang.IllegalStateException) encountered during startup: Discovered existing bootstrap data and cassandra.reset_bootstrap_progress is not configured; aborting bootstrap. Please clean up local files manually and try again or set cassandra.reset_bootstrap_progress=true to ignore. Found: [FetchReplica{local=Full(/10.244.3.11:7000,("), nv.StartupError)
			yes := true
			opts := firstBoot(deadAddr)
			opts.ResetBootstrapProgress = &yes
			require.NoError(t, s.RestartWith(podF, opts))
			clk.Advance(30 * time.Second)
			require.Contains(t, logOf(t, s, podF), " - Resetting bootstrap progress to start fresh\n")
			clk.Advance(30 * time.Second)
			require.Equal(t, "UN", view(t, s, podF).PeerCode)
			require.Equal(t, "1.21 GiB", view(t, s, podF).Load)
		})
	}
}

// TestReplaceInstant: with JoinTime 0 a replacement completes as it starts.
func TestReplaceInstant(t *testing.T) {
	s, _ := deadF(t, Options{Version: V40})
	require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{}, firstBoot(deadAddr)))
	nv := view(t, s, podF)
	require.Equal(t, "UN", nv.PeerCode)
	require.Equal(t, "1.21 GiB", nv.Load)
	require.Nil(t, rowOf(run(s, podA, "status").stdout, deadAddr))
}

// TestReplaceRF1: with RF 1 the dead node's data has no other replica: a warning, no
// stream, the replacement joins empty (non-strict source choice only warns).
func TestReplaceRF1(t *testing.T) {
	s, clk := deadF(t, Options{Version: V41, RF: 1, JoinTime: time.Minute})
	require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{}, firstBoot(deadAddr)))
	clk.Advance(30 * time.Second)
	require.Contains(t, logOf(t, s, podF), "WARN  [main] ")
	require.Contains(t, logOf(t, s, podF), " in keyspace system_auth with RF=1. Keyspace might be missing data.")
	nv := view(t, s, podF)
	require.Equal(t, "UN", nv.PeerCode)
	require.Equal(t, "0 bytes", nv.Load)
}

// TestReplaceMetered: the replacement receives the dead node's Load from its four
// sources, each session at its sender's stream throughput (docs/how-it-works/streaming.md
// §1.7): setting one source unthrottled speeds that session only. Both ends print the
// plan in the shape of the §2.5 samples.
func TestReplaceMetered(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			nodes := sixNodes()
			nodes[5].Load = "480 MiB" // 120 MiB per source
			clk := newClock()
			s := NewMemory(Options{Version: v, StreamTimeScale: 1, JoinTime: 30 * time.Second}, nodes, clk.Now)
			require.NoError(t, s.SetFault(podF, Fault{Down: true}))
			clk.Advance(time.Minute)
			require.NoError(t, s.StartFresh(replacementOf(newAddr), Fault{}, firstBoot(deadAddr)))
			rate := 24.0 // MiB/s per sender
			switch v {
			case V311:
				rate = 25
			case V40:
				rate = 200 * 125000 / mib
			}
			clk.Advance(29 * time.Second) // 20 s wait + 10 s pending range sleep
			require.Contains(t, run(s, podF, "netstats").stdout, "Not sending any streams.")
			clk.Advance(time.Second + time.Duration(45/rate*float64(time.Second)))
			joiner, source := run(s, podF, "netstats").stdout, run(s, podA, "netstats").stdout
			suffix, sample := "4.x", strings.NewReplacer("/oa-", "/nb-").Replace
			if v == V311 {
				suffix, sample = "3.11", strings.NewReplacer("/mc-", "/me-").Replace
			}
			requireStreamShape(t, withSimStats(t, fixture(t, "netstats_"+suffix+"_joining_bootstrap.txt"), joiner), joiner)
			requireStreamShape(t, withSimStats(t, fixture(t, "netstats_"+suffix+"_bootstrap_source.txt"), source), sample(source))
			require.Equal(t, 4, strings.Count(joiner, "        Receiving 4 files, 125829120 bytes total."))
			if v == V311 {
				return // 3.11.11 applies a new rate at the next file
			}
			require.Equal(t, 0, run(s, podA, "setstreamthroughput", "0").code) // 256 MiB/s for its session
			left := time.Duration((120 - 45) / rate * float64(time.Second))
			clk.Advance(left - time.Second)
			require.Equal(t, "UJ", view(t, s, podF).PeerCode, "the other three sessions are still throttled")
			clk.Advance(2 * time.Second)
			require.Equal(t, "UN", view(t, s, podF).PeerCode)
		})
	}
}
