package sim

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The fixtures in testdata/ are copies of docs/how-it-works/nodetool.md's CODE-RENDERED samples. Each test
// builds the cluster situation of a fixture (same IPs, host IDs, loads, racks) and
// compares the simulator's output byte for byte, unless a comment says which narrow
// normalisation applies and why.

func TestGoldenStatusSteady(t *testing.T) {
	for _, v := range []string{V40, V41, V50} {
		t.Run(v, func(t *testing.T) {
			s := NewMemory(Options{Version: v}, sixNodes(), newClock().Now)
			for _, pod := range []string{podA, podF} {
				r := run(s, pod, "status")
				require.Equal(t, 0, r.code)
				require.Empty(t, r.stderr)
				requireSameText(t, fixture(t, "status_4.x_steady.txt"), r.stdout)
			}
		})
	}
	s := NewMemory(Options{Version: V311}, sixNodes(), newClock().Now)
	r := run(s, podA, "status")
	require.Equal(t, 0, r.code)
	requireSameText(t, fixture(t, "status_3.11_steady.txt"), r.stdout)
}

// decommissioningCluster returns a cluster in which podF's decommission is in its
// streaming phase, plus the clock and the blocked call.
func decommissioningCluster(t *testing.T, o Options) (*Store, *fakeClock, <-chan result) {
	t.Helper()
	if o.DecommissionTime == 0 {
		o.DecommissionTime = 90 * time.Second
		o.LeftAnnounce = 30 * time.Second
	}
	clk := newClock()
	s := NewMemory(o, sixNodes(), clk.Now)
	ch := startDecommission(t, context.Background(), s, podF)
	return s, clk, ch
}

func TestGoldenStatusLeavingAndAfter(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s, clk, ch := decommissioningCluster(t, Options{Version: v})
			leaving := "status_4.x_leaving.txt"
			if v == V311 {
				leaving = "status_3.11_leaving.txt"
			}
			// Seen from any node, including the leaving node itself, the row reads UL.
			for _, pod := range []string{podA, podF} {
				requireSameText(t, fixture(t, leaving), run(s, pod, "status").stdout)
			}
			clk.Advance(90 * time.Second)
			r := receive(t, ch)
			require.Equal(t, result{"", "", 0}, r)
			if v == V311 {
				return // docs/how-it-works/nodetool.md has no 3.11 "after" fixture
			}
			// Loads grew by 1.21 GiB / 5 each and Owns is 300/5 %; the decommissioned node
			// (JVM still up) prints the same ring without itself.
			for _, pod := range []string{podA, podF} {
				requireSameText(t, fixture(t, "status_4.x_after_decommission.txt"), run(s, pod, "status").stdout)
			}
		})
	}
}

func TestGoldenStatusDown(t *testing.T) {
	for _, v := range []string{V40, V41, V50} {
		s := NewMemory(Options{Version: v}, sixNodes(), newClock().Now)
		require.NoError(t, s.SetFault(podC, Fault{Down: true}))
		requireSameText(t, fixture(t, "status_4.x_down.txt"), run(s, podA, "status").stdout)
	}
}

func TestGoldenStatusNoEffectiveOwnership(t *testing.T) {
	s := NewMemory(Options{Version: V41, MixedReplication: true}, sixNodes(), newClock().Now)
	requireSameText(t, fixture(t, "status_4.x_no_effective_ownership.txt"), run(s, podA, "status").stdout)
	// With a keyspace, ownership is effective for it again.
	requireSameText(t, fixture(t, "status_4.x_steady.txt"), run(s, podA, "status", "app").stdout)
}

func TestGoldenStatusTwoDCs(t *testing.T) {
	s := NewMemory(Options{Version: V40}, twoDCs(), newClock().Now)
	requireSameText(t, fixture(t, "status_4.x_two_dcs.txt"), run(s, "dc2-r3-0", "status").stdout)
	s = NewMemory(Options{Version: V311}, twoDCs(), newClock().Now)
	requireSameText(t, fixture(t, "status_3.11_two_dcs.txt"), run(s, "dc1-r1-0", "status").stdout)
}

func TestGoldenStatusSingleToken(t *testing.T) {
	for _, v := range []string{V40, V41, V50} {
		s := NewMemory(Options{Version: v}, []NodeSpec{{
			Pod: "cassandra-0", Address: "127.0.0.1", HostID: "2f1b8c5e-6a0e-4b0e-9c57-0d3b1f6a7e11",
			DC: "datacenter1", Rack: "rack1", Load: "45.71 KiB", Tokens: 1, Token: "1849950853373272258",
		}}, newClock().Now)
		requireSameText(t, fixture(t, "status_4.1_single_token.txt"), run(s, "cassandra-0", "status").stdout)
	}
}

func TestGoldenNetstatsExact(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s, clk, ch := decommissioningCluster(t, Options{Version: v})
			// Before streaming (the RING_DELAY-like wait) and in the announce window the
			// leaving node streams nothing. The fixture is labelled 4.x, and 3.11 and 5.0
			// print this case identically.
			requireSameText(t, fixture(t, "netstats_4.x_leaving_no_streams.txt"), run(s, podF, "netstats").stdout)
			clk.Advance(70 * time.Second)
			requireSameText(t, fixture(t, "netstats_4.x_leaving_no_streams.txt"), run(s, podF, "netstats").stdout)
			clk.Advance(20 * time.Second)
			require.Equal(t, 0, receive(t, ch).code)
			requireSameText(t, fixture(t, "netstats_decommissioned.txt"), run(s, podF, "netstats").stdout)
		})
	}
	clk := newClock()
	s := NewMemory(Options{Version: V50, DecommissionTime: 90 * time.Second, LeftAnnounce: 30 * time.Second}, sixNodes(), clk.Now)
	require.NoError(t, s.SetFault(podF, Fault{StreamFailures: 1}))
	ch := startDecommission(t, context.Background(), s, podF)
	clk.Advance(time.Minute)
	require.Equal(t, 2, receive(t, ch).code)
	requireSameText(t, fixture(t, "netstats_5.0_decommission_failed.txt"), run(s, podF, "netstats").stdout)
}

func TestGoldenNetstatsStarting(t *testing.T) {
	// The simulator never stays in STARTING, but the renderer must skip the statistics
	// section for it exactly like NetStats does.
	st, err := newState(Options{Version: V41}, sixNodes(), fixtureEpoch)
	require.NoError(t, err)
	st.Nodes[0].Mode = ModeStarting
	var b strings.Builder
	st.renderNetstats(&b, st.Nodes[0], invocation{}, fixtureEpoch)
	requireSameText(t, fixture(t, "netstats_starting.txt"), b.String())
}

var (
	reUUID  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	reIP    = regexp.MustCompile(`\d+\.\d+\.\d+\.\d+(:\d+)?`)
	rePct   = regexp.MustCompile(`\d+\.\d\d%`)
	reNum   = regexp.MustCompile(`\d+`)
	reTable = regexp.MustCompile(`events-[0-9a-f]{32}`)
)

// streamShape is the narrow normalisation for stream plans: the fixtures' plan ids,
// peers, sizes and progress are invented (and not even consistent with each other, e.g.
// 4 files of 209715200 bytes in a 629145600-byte session), so the plan body is compared
// by shape: UUID, IP, "%.2f%%" and integers become placeholders; every word, space,
// unit and punctuation must match.
func streamShape(l string) string {
	l = reUUID.ReplaceAllString(l, "<UUID>")
	l = reTable.ReplaceAllString(l, "<TABLE>")
	l = reIP.ReplaceAllString(l, "<IP>")
	l = rePct.ReplaceAllString(l, "<PCT>")
	return reNum.ReplaceAllString(l, "<N>")
}

// requireStreamShape: the first line and the statistics section must match exactly,
// every plan line must have the shape of a fixture plan line, and the simulator must
// print each kind of plan line the fixture has (plan, session, summary, file).
func requireStreamShape(t *testing.T, want, got string) {
	t.Helper()
	wl := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	gl := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	const tail = 8 // Read Repair (4 lines) + pool table (4 lines)
	require.Greater(t, len(gl), tail+1, got)
	require.Equal(t, wl[0], gl[0])
	require.Equal(t, wl[len(wl)-tail:], gl[len(gl)-tail:])
	allowed := map[string]bool{}
	for _, l := range wl[1 : len(wl)-tail] {
		allowed[streamShape(l)] = true
	}
	seen := map[string]bool{}
	for _, l := range gl[1 : len(gl)-tail] {
		sh := streamShape(l)
		require.Truef(t, allowed[sh], "plan line %q has shape %q, not one of the fixture's %v", l, sh, allowed)
		seen[sh] = true
	}
	for sh := range allowed {
		require.Truef(t, seen[sh], "simulator never printed a line shaped %q", sh)
	}
}

func TestGoldenNetstatsStreaming(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s, clk, _ := decommissioningCluster(t, Options{Version: v})
			// Streaming runs from 30 s to 60 s; at 42 s 40% is sent: 1 file done, 1 partial.
			clk.Advance(42 * time.Second)
			got := run(s, podF, "netstats").stdout
			if v == V311 {
				requireStreamShape(t, fixture(t, "netstats_3.11_leaving_streaming.txt"), got)
				return
			}
			if v == V50 {
				// 5.0 writes "oa" SSTables where 4.x writes "nb"; the fixture is 4.x.
				require.Contains(t, got, "/oa-41-big-Data.db ")
				got = strings.ReplaceAll(got, "/oa-", "/nb-")
			}
			requireStreamShape(t, fixture(t, "netstats_4.x_leaving_streaming.txt"), got)
			// The target peer lists the same plan with Receiving.
			peer := strings.ReplaceAll(run(s, podA, "netstats").stdout, "/oa-", "/nb-")
			requireStreamShape(t, fixture(t, "netstats_4.x_receiving_peer.txt"), peer)
			require.Equal(t, reUUID.FindString(got), reUUID.FindString(peer), "same plan id on both ends")
			require.Contains(t, got, "    /10.244.1.12\n")
			require.Contains(t, peer, "    /10.244.3.10\n")
			// The numbers are consistent: 1.21 GiB in 4 files, 40% sent.
			require.Contains(t, got, "        Sending 4 files, 1299227607 bytes total. Already sent 1 files (25.00%), 519691042 bytes total (40.00%)\n")
		})
	}
}

func TestGoldenInfo(t *testing.T) {
	for _, v := range []string{V40, V41} {
		t.Run(v, func(t *testing.T) {
			s := NewMemory(Options{Version: v}, sixNodes(), newClock().Now)
			requireSameText(t, fixture(t, "info_4.x_steady.txt"), run(s, podF, "info").stdout)
			require.Equal(t, 0, run(s, podF, "decommission").code) // instant
			requireSameText(t, fixture(t, "info_4.x_decommissioned.txt"), run(s, podF, "info").stdout)
		})
	}
	s := NewMemory(Options{Version: V311}, sixNodes(), newClock().Now)
	requireSameText(t, fixture(t, "info_3.11_steady.txt"), run(s, podF, "info").stdout)

	s = NewMemory(Options{Version: V50}, sixNodes(), newClock().Now)
	require.Equal(t, 0, run(s, podF, "decommission").code)
	requireSameText(t, fixture(t, "info_5.0_decommissioned.txt"), run(s, podF, "info").stdout)
}

// info5Tail returns the last four lines of 5.0's info.
func info5Tail(t *testing.T, s *Store, pod string) string {
	t.Helper()
	lines := strings.SplitAfter(run(s, pod, "info").stdout, "\n")
	require.GreaterOrEqual(t, len(lines), 5)
	return strings.Join(lines[len(lines)-5:], "")
}

func TestGoldenInfo50States(t *testing.T) {
	// The fixture holds four annotated groups; "#" lines are annotations.
	groups := map[string]string{}
	var cur string
	for _, l := range strings.SplitAfter(fixture(t, "info_5.0_trailing_states.txt"), "\n") {
		if strings.HasPrefix(l, "# ") {
			cur, _, _ = strings.Cut(strings.TrimSpace(strings.TrimPrefix(l, "# ")), " (")
			continue
		}
		groups[cur] += l
	}
	require.Len(t, groups, 4)

	clk := newClock()
	s := NewMemory(Options{Version: V50, DecommissionTime: 90 * time.Second, LeftAnnounce: 30 * time.Second}, sixNodes(), clk.Now)
	require.Contains(t, groups, "decommission running")
	requireSameText(t, groups["NORMAL"], info5Tail(t, s, podF))
	ch := startDecommission(t, context.Background(), s, podF)
	requireSameText(t, groups["decommission running"], info5Tail(t, s, podF))
	// In the announce window the bootstrap state is already NEEDS_BOOTSTRAP.
	clk.Advance(61 * time.Second)
	require.Equal(t, strings.Replace(groups["decommission running"], "COMPLETED", "NEEDS_BOOTSTRAP", 1), info5Tail(t, s, podF))
	clk.Advance(30 * time.Second)
	require.Equal(t, 0, receive(t, ch).code)
	requireSameText(t, groups["decommissioned"], info5Tail(t, s, podF))

	// A failed one (stream failure) on another node.
	require.NoError(t, s.SetFault(podE, Fault{StreamFailures: 1}))
	ch = startDecommission(t, context.Background(), s, podE)
	clk.Advance(time.Minute)
	require.Equal(t, 2, receive(t, ch).code)
	requireSameText(t, groups["decommission failed"], info5Tail(t, s, podE))
}

func TestGoldenDescribeCluster(t *testing.T) {
	for _, v := range []string{V40, V41, V50} {
		t.Run(v, func(t *testing.T) {
			// The fixture is 4.1's; other versions only differ by the release version.
			s, _, _ := decommissioningCluster(t, Options{Version: v, ReleaseVersion: "4.1.6"})
			requireSameText(t, fixture(t, "describecluster_4.x_leaving.txt"), run(s, podA, "describecluster").stdout)
		})
	}
	s := NewMemory(Options{Version: V311}, sixNodes(), newClock().Now)
	requireSameText(t, fixture(t, "describecluster_3.11.txt"), run(s, podA, "describecluster").stdout)
}

// gossipShape is the narrow normalisation for gossipinfo: the fixture says its
// application-state versions and heartbeat are invented, so only those numbers are
// replaced; generation, STATUS (token and expiry), LOAD and every other value must match.
func gossipShape(s string) string {
	s = regexp.MustCompile(`(?m)^  heartbeat:\d+$`).ReplaceAllString(s, "  heartbeat:<N>")
	return regexp.MustCompile(`(?m)^  ([A-Z_]+):\d+:`).ReplaceAllString(s, "  $1:<V>:")
}

func TestGoldenGossipInfoLeftPeer(t *testing.T) {
	nodes := sixNodes()
	nodes[5].Load = "1299441040 bytes" // the fixture's LOAD 1.29944104E9
	nodes[5].Token = "-9076651826346409321"
	clk := newClock()
	s := NewMemory(Options{Version: V41, DecommissionTime: 90 * time.Second, LeftAnnounce: 30 * time.Second}, nodes, clk.Now)
	// LEFT expiry = LEFT time + 3 days = 1718604800000 ms: LEFT at 1718345600, i.e. the
	// decommission starts 60 s before.
	clk.Set(time.Unix(1718345600-60, 0))
	ch := startDecommission(t, context.Background(), s, podF)
	clk.Advance(2 * time.Minute)
	require.Equal(t, 0, receive(t, ch).code)
	out := run(s, podA, "gossipinfo").stdout
	i := strings.Index(out, "/10.244.3.10\n")
	require.GreaterOrEqual(t, i, 0, out)
	block := out[i:]
	if j := strings.Index(block[1:], "\n/"); j >= 0 {
		block = block[:j+2]
	}
	require.Equal(t, gossipShape(fixture(t, "gossipinfo_4.1_left_peer.txt")), gossipShape(block))
}
