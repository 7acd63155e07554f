package sim

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSentByAndReachAt(t *testing.T) {
	t0 := fixtureEpoch
	steps := []rateStep{{t0, 100}, {t0.Add(10 * time.Second), 200}}
	start := t0.Add(5 * time.Second)
	require.Equal(t, 0.0, sentBy(steps, start, t0))
	require.Equal(t, 500.0, sentBy(steps, start, t0.Add(10*time.Second)))
	require.Equal(t, 900.0, sentBy(steps, start, t0.Add(12*time.Second)))
	at, ok := reachAt(steps, start, 900)
	require.True(t, ok)
	require.Equal(t, t0.Add(12*time.Second), at)
	at, _ = reachAt(steps, start, 300)
	require.Equal(t, t0.Add(8*time.Second), at)
	at, _ = reachAt(steps, start, 0)
	require.Equal(t, start, at)
	_, ok = reachAt(nil, start, 1)
	require.False(t, ok)
	_, ok = reachAt([]rateStep{{t0, 0}}, start, 1)
	require.False(t, ok)
}

// meteredNodes: the six-node cluster with round loads: podF (leaving) 1200 MiB, so at
// 24 MiB/s it streams for 50 s.
func meteredNodes() []NodeSpec {
	nodes := sixNodes()
	nodes[5].Load = "1200 MiB"
	return nodes
}

// meteredOptions: a 30 s wait before streaming and a 30 s announce window around the
// metered streaming, on the store's (fake) clock at real speed.
func meteredOptions(v string) Options {
	return Options{Version: v, StreamTimeScale: 1, DecommissionTime: 90 * time.Second, LeftAnnounce: 30 * time.Second}
}

// TestMeteredDecommission: the leaving node streams its Load at its stream throughput
// (24MiB/s by default on 4.1+) and a setstreamthroughput on it takes effect at once on
// 3.11.12+/4.0.2+/4.1+ (docs/how-it-works/streaming.md §1.4, §1.7); netstats shows the
// bytes sent (§2.1).
func TestMeteredDecommission(t *testing.T) {
	for _, v := range []string{V41, V50} {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(meteredOptions(v), meteredNodes(), clk.Now)
			ch := startDecommission(t, t.Context(), s, podF)
			clk.Advance(55 * time.Second) // 30 s wait + 25 s at 24 MiB/s: half sent
			require.Contains(t, run(s, podF, "netstats").stdout,
				"        Sending 4 files, 1258291200 bytes total. Already sent 2 files (50.00%), 629145600 bytes total (50.00%)\n")
			// A receiver's setting does not matter (§1.7); the sender's does, at once.
			require.Equal(t, 0, run(s, podA, "setstreamthroughput", "-m", "1").code)
			require.Equal(t, 0, run(s, podF, "setstreamthroughput", "-m", "48").code)
			clk.Advance(12*time.Second + 400*time.Millisecond) // 600 MiB at 48 MiB/s: 12.5 s
			require.Equal(t, "UL", view(t, s, podF).PeerCode)
			clk.Advance(100 * time.Millisecond)
			require.Equal(t, "", view(t, s, podF).PeerCode, "LEFT once the bytes are sent")
			notYet(t, ch)
			clk.Advance(30 * time.Second)
			require.Equal(t, 0, receive(t, ch).code)
			require.Equal(t, ModeDecommissioned, view(t, s, podF).Mode)
		})
	}
}

// TestMeteredNextFile: 3.11.0–3.11.11 and 4.0.0–4.0.1 count 131 072 bytes per
// "megabit" (200 = 25 MiB/s) and read a new value when the next file starts
// (docs/how-it-works/streaming.md §1.2, §1.4). The 1200 MiB go as four 300 MiB files.
func TestMeteredNextFile(t *testing.T) {
	clk := newClock()
	s := NewMemory(meteredOptions(V311), meteredNodes(), clk.Now) // 3.11.11
	ch := startDecommission(t, t.Context(), s, podF)
	clk.Advance(48 * time.Second) // 18 s at 25 MiB/s: 450 MiB, half of the second file
	require.Equal(t, 0, run(s, podF, "setstreamthroughput", "400").code)
	clk.Advance(6 * time.Second) // the second file ends at the old rate: 600 MiB
	require.Contains(t, run(s, podF, "netstats").stdout, "Already sent 2 files, 629145600 bytes total\n")
	clk.Advance(12 * time.Second) // then 600 MiB at 50 MiB/s
	require.Equal(t, "", view(t, s, podF).PeerCode)
	clk.Advance(30 * time.Second)
	require.Equal(t, 0, receive(t, ch).code)
}

// TestMeteredUnthrottledIsHardwareBound: throughput 0 lifts the throttle, and the
// hardware sets the pace (Options.HardwareRate).
func TestMeteredUnthrottledIsHardwareBound(t *testing.T) {
	clk := newClock()
	o := meteredOptions(V40)
	o.HardwareRate = 100 * mib
	s := NewMemory(o, meteredNodes(), clk.Now)
	require.Equal(t, 0, run(s, podF, "setstreamthroughput", "0").code)
	ch := startDecommission(t, t.Context(), s, podF)
	clk.Advance(30*time.Second + 12*time.Second) // 1200 MiB at 100 MiB/s
	require.Equal(t, "", view(t, s, podF).PeerCode)
	clk.Advance(30 * time.Second)
	require.Equal(t, 0, receive(t, ch).code)
}

// TestMeteredTimeScale: StreamTimeScale makes the same bytes take that many times less.
func TestMeteredTimeScale(t *testing.T) {
	clk := newClock()
	o := meteredOptions(V41)
	o.StreamTimeScale = 100
	s := NewMemory(o, meteredNodes(), clk.Now)
	ch := startDecommission(t, t.Context(), s, podF)
	clk.Advance(30*time.Second + 500*time.Millisecond) // 50 s / 100
	require.Equal(t, "", view(t, s, podF).PeerCode)
	clk.Advance(30 * time.Second)
	require.Equal(t, 0, receive(t, ch).code)
}

// TestMeteredInterDC: across datacenters the inter-DC limiter applies as well, the
// smaller one wins (docs/how-it-works/streaming.md §1.5).
func TestMeteredInterDC(t *testing.T) {
	st, err := newState(Options{Version: V41, StreamTimeScale: 2}, twoDCs(), fixtureEpoch)
	require.NoError(t, err)
	a, b, x := st.Nodes[0], st.Nodes[1], st.Nodes[3]
	a.Throttle = map[limiter]rateSetting{limInterDC: {8, unitMiBps}}
	require.Equal(t, 48*mib, st.sendRate(a, b))
	require.Equal(t, 16*mib, st.sendRate(a, x))
	a.Throttle[limStream] = rateSetting{4, unitMiBps}
	require.Equal(t, 8*mib, st.sendRate(a, x))
}

// TestMeteredStreamFailureAndHold: a failing attempt fails once half its bytes are
// sent; HoldStreaming keeps one at its start for as long as it is set.
func TestMeteredStreamFailureAndHold(t *testing.T) {
	clk := newClock()
	s := NewMemory(meteredOptions(V41), meteredNodes(), clk.Now)
	require.NoError(t, s.SetFault(podF, Fault{StreamFailures: 1}))
	ch := startDecommission(t, t.Context(), s, podF)
	clk.Advance(30*time.Second + 25*time.Second - time.Millisecond)
	notYet(t, ch)
	clk.Advance(time.Millisecond)
	require.Equal(t, 2, receive(t, ch).code)

	require.NoError(t, s.SetFault(podF, Fault{HoldStreaming: true}))
	ch = startDecommission(t, t.Context(), s, podF)
	clk.Advance(10 * time.Minute)
	require.Contains(t, run(s, podF, "netstats").stdout, "Already sent 0 files (0.00%), 0 bytes total (0.00%)\n")
	require.NoError(t, s.SetFault(podF, Fault{}))
	clk.Advance(50 * time.Second)
	require.Equal(t, "", view(t, s, podF).PeerCode)
	clk.Advance(30 * time.Second)
	require.Equal(t, 0, receive(t, ch).code)
}

// withSimStats puts the simulator's statistics section under a fixture's stream
// section: the §2.5 samples have invented message counts of their own.
func withSimStats(t *testing.T, sample, sim string) string {
	t.Helper()
	i, j := strings.Index(sample, "Read Repair Statistics:"), strings.Index(sim, "Read Repair Statistics:")
	require.True(t, i > 0 && j > 0)
	return sample[:i] + sim[j:]
}

// TestMeteredBootstrap: a joining node waits JoinTime, then receives its Load from its
// source at the source's stream throughput; the joiner's own setting does nothing, the
// source's counts, and a restart of the source brings its yaml value back
// (docs/how-it-works/streaming.md §1.5, §1.7). Both ends list the Bootstrap plan in the
// shape of the §2.5 samples.
func TestMeteredBootstrap(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(Options{Version: v, StreamTimeScale: 1, JoinTime: 30 * time.Second}, threeNodes(), clk.Now)
			require.NoError(t, s.AddNode(NodeSpec{Pod: podD, Address: "10.244.1.13", Load: "1200 MiB"}))
			// Not streaming yet: the wait before the plan.
			require.Equal(t, "Mode: JOINING\nNot sending any streams.\n", strings.Join(strings.SplitAfter(run(s, podD, "netstats").stdout, "\n")[:2], ""))
			rate := 24.0 // MiB/s: 4.1+ default; 3.11.11's 200 "megabits" are 25 MiB/s
			switch v {
			case V311:
				rate = 25
			case V40:
				rate = 200 * 125000 / mib
			}
			half := time.Duration(600 / rate * float64(time.Second))
			clk.Advance(30*time.Second + half)
			joiner, source := run(s, podD, "netstats").stdout, run(s, podA, "netstats").stdout
			suffix, sample := "4.x", strings.NewReplacer("/oa-", "/nb-").Replace
			if v == V311 {
				suffix, sample = "3.11", strings.NewReplacer("/mc-", "/me-").Replace
			}
			requireStreamShape(t, withSimStats(t, fixture(t, "netstats_"+suffix+"_joining_bootstrap.txt"), joiner), joiner)
			requireStreamShape(t, withSimStats(t, fixture(t, "netstats_"+suffix+"_bootstrap_source.txt"), source), sample(source))
			require.Equal(t, reUUID.FindString(joiner), reUUID.FindString(source), "same plan id on both ends")
			require.Contains(t, source, "    /10.244.1.13\n")
			require.Contains(t, joiner, "    /10.244.1.12\n")

			if v == V311 {
				// 3.11.11 reads a new value only when the next file starts (TestMeteredNextFile).
				clk.Advance(half)
				require.Equal(t, "UN", view(t, s, podD).PeerCode)
				return
			}
			require.Equal(t, 0, run(s, podD, "setstreamthroughput", "1").code) // the receiver's: no effect
			require.Equal(t, 0, run(s, podA, "setstreamthroughput", "0").code) // unthrottled: 256 MiB/s
			clk.Advance(time.Second)
			require.NoError(t, s.Restart(podA)) // back to the yaml value for the last 344 MiB
			rest := time.Duration(math.Ceil(344 / rate * float64(time.Second)))
			clk.Advance(rest - time.Millisecond)
			require.True(t, view(t, s, podD).Joining)
			clk.Advance(time.Millisecond)
			require.Equal(t, "UN", view(t, s, podD).PeerCode)
		})
	}
}

// TestMeteredJoinWithoutJoinTime: metered, every added node bootstraps.
func TestMeteredJoinWithoutJoinTime(t *testing.T) {
	clk := newClock()
	s := NewMemory(Options{Version: V41, StreamTimeScale: 1}, threeNodes(), clk.Now)
	require.NoError(t, s.AddNode(NodeSpec{Pod: podD, Address: "10.244.1.13", Load: "240 MiB"}))
	require.Equal(t, "UJ", view(t, s, podD).PeerCode)
	clk.Advance(10 * time.Second)
	require.Equal(t, "UN", view(t, s, podD).PeerCode)
}
