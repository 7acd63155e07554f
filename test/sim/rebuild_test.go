package sim

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rebuild (rebuild.go). A new DC dc2 (three empty nodes) next to dc1 (three nodes of
// 1 GiB); app replicates 3 times to both, so each dc2 node holds all of app: 1 GiB,
// fetched from the three dc1 nodes in three sessions of 1/3 GiB.

const (
	newDC0 = "dc2-r1-0"
	oldDC0 = "dc1-r1-0"
)

func newDCNodes() []NodeSpec {
	return []NodeSpec{
		{Pod: oldDC0, Address: "10.244.1.12", DC: "dc1", Rack: "r1", Load: "1 GiB"},
		{Pod: "dc1-r2-0", Address: "10.244.2.17", DC: "dc1", Rack: "r2", Load: "1 GiB"},
		{Pod: "dc1-r3-0", Address: "10.244.3.9", DC: "dc1", Rack: "r3", Load: "1 GiB"},
		{Pod: newDC0, Address: "10.245.1.20", DC: "dc2", Rack: "r1", Load: "0 bytes"},
		{Pod: "dc2-r2-0", Address: "10.245.2.21", DC: "dc2", Rack: "r2", Load: "0 bytes"},
		{Pod: "dc2-r3-0", Address: "10.245.3.22", DC: "dc2", Rack: "r3", Load: "0 bytes"},
	}
}

func rebuildOptions(v string) Options {
	return Options{Version: v, RebuildTime: time.Minute}
}

// startRebuildCmd launches a blocking rebuild and waits until the node streams.
func startRebuildCmd(t *testing.T, ctx context.Context, s *Store, pod string, args ...string) <-chan result {
	t.Helper()
	ch := goRun(ctx, s, pod, append([]string{"rebuild"}, args...)...)
	waitFor(t, "rebuild running", func() bool {
		select {
		case r := <-ch:
			t.Fatalf("rebuild returned early: %+v", r)
		default:
		}
		return view(t, s, pod).Rebuilding
	})
	return ch
}

func loadBytes(t *testing.T, s *Store, pod string) float64 {
	t.Helper()
	b, err := parseSize(view(t, s, pod).Load)
	require.NoError(t, err)
	return b
}

func TestRebuildStreamsTheNodesShareThenNothing(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(rebuildOptions(v), newDCNodes(), clk.Now)
			ch := startRebuildCmd(t, context.Background(), s, newDC0, "--", "dc1")

			clk.Advance(30 * time.Second)
			// Mode stays NORMAL (a rebuild never sets it); one Rebuild plan, a session
			// per dc1 node on the receiver, the outgoing one on each source.
			requireSameText(t, fixture(t, "netstats_"+v+"_rebuild_receiving.txt"), run(s, newDC0, "netstats").stdout)
			requireSameText(t, fixture(t, "netstats_"+v+"_rebuild_source.txt"), run(s, oldDC0, "netstats").stdout)
			require.InDelta(t, gib/2, loadBytes(t, s, newDC0), gib/100) // received so far counts
			notYet(t, ch)

			clk.Advance(30 * time.Second)
			r := receive(t, ch)
			require.Equal(t, result{"", "", ExitOK}, r)
			require.InDelta(t, gib, loadBytes(t, s, newDC0), gib/500) // Load is printed rounded
			require.NotContains(t, run(s, newDC0, "netstats").stdout, "Rebuild ")
			require.Equal(t, gib, loadBytes(t, s, oldDC0), "sources keep their load")

			// Every range is in available_ranges now: a second run streams nothing.
			r = run(s, newDC0, "rebuild", "dc1")
			require.Equal(t, result{"", "", ExitOK}, r)
			require.InDelta(t, gib, loadBytes(t, s, newDC0), gib/500) // Load is printed rounded
			require.Equal(t, 2, view(t, s, newDC0).RebuildsStarted)
		})
	}
}

func TestRebuildRefusals(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(rebuildOptions(v), newDCNodes(), clk.Now)
			usage := func(msg string) result { return result{"nodetool: " + msg + "\n" + seeHelp, "", ExitUsage} }

			r := run(s, newDC0, "rebuild", "dc9")
			if v == V311 || v == V40 {
				// No DC check: the DC filter leaves no source.
				want := "Unable to find sufficient sources for streaming range \\(-?\\d+,-?\\d+\\] in keyspace system_auth"
				if v == V40 {
					want = "Unable to find sufficient sources for streaming range Full\\(/10\\.245\\.1\\.20:7000,\\(-?\\d+,-?\\d+\\]\\) in keyspace system_auth"
				}
				require.Regexp(t, "^nodetool: "+want+"\n"+seeHelp+"$", r.stdout)
				require.Equal(t, ExitUsage, r.code)
			} else {
				require.Equal(t, usage("Provided datacenter 'dc9' is not a valid datacenter, available datacenters are: dc1,dc2"), r)
			}
			require.Equal(t, usage("Cannot specify tokens without keyspace."), run(s, newDC0, "rebuild", "-ts", "(1,2]", "dc1"))
			r = run(s, newDC0, "rebuild", "-ks", "nope", "dc1")
			require.Equal(t, ExitFailure, r.code)
			require.True(t, strings.HasPrefix(r.stderr, "error: Unknown keyspace nope\n-- StackTrace --\njava.lang.AssertionError: Unknown keyspace nope\n"), r.stderr)
			if v == V311 || v == V40 {
				require.Equal(t, usage("Found unexpected parameters: [--exclude-local-dc]"), run(s, newDC0, "rebuild", "--exclude-local-dc", "dc1"))
			} else {
				require.Equal(t, usage("Cannot set source data center to be local data center, when excludeLocalDataCenter flag is set"), run(s, newDC0, "rebuild", "--exclude-local-dc", "dc2"))
			}
			require.Equal(t, usage("Found unexpected parameters: [dc2]"), run(s, newDC0, "rebuild", "dc1", "dc2"))
			require.Equal(t, usage("Required values for option 'ks' not provided"), run(s, newDC0, "rebuild", "dc1", "-ks"))

			// A rebuild already running.
			ch := startRebuildCmd(t, context.Background(), s, newDC0, "dc1")
			require.Equal(t, usage("Node is still rebuilding. Check nodetool netstats."), run(s, newDC0, "rebuild", "dc1"))
			clk.Advance(time.Minute)
			require.Equal(t, ExitOK, receive(t, ch).code)
			require.Equal(t, 1, view(t, s, newDC0).RebuildsStarted, "refused calls start nothing")
		})
	}
}

// Without a source DC the nearest replicas win: the node's own DC, whose nodes have
// nothing yet (the reason to always name the source).
func TestRebuildWithoutSourceDCUsesItsOwnDC(t *testing.T) {
	clk := newClock()
	s := NewMemory(rebuildOptions(V41), newDCNodes(), clk.Now)
	require.Equal(t, result{"", "", ExitOK}, run(s, newDC0, "rebuild"))
	require.Equal(t, 0.0, loadBytes(t, s, newDC0))
}

// No keyspace replicates to the node's DC: nothing to stream, the call returns at once.
func TestRebuildWithNothingToStream(t *testing.T) {
	o := rebuildOptions(V50)
	o.Replication = map[string]map[string]int{
		"app": {"dc1": 3}, ksAuth: {"dc1": 3}, ksDistributed: {"dc1": 3}, ksTraces: {"dc1": 3},
	}
	s := NewMemory(o, newDCNodes(), newClock().Now)
	require.Equal(t, result{"", "", ExitOK}, run(s, newDC0, "rebuild", "dc1"))
	require.Equal(t, 0.0, loadBytes(t, s, newDC0))
	require.False(t, view(t, s, newDC0).Rebuilding)
}

// A session that fails lets the others finish; their ranges are available, so the
// next run streams only what the failed one had to bring.
func TestRebuildFailureThenResume(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(rebuildOptions(v), newDCNodes(), clk.Now)
			require.NoError(t, s.SetFault(newDC0, Fault{RebuildFailures: 1}))
			ch := startRebuildCmd(t, context.Background(), s, newDC0, "dc1")
			clk.Advance(30 * time.Second)
			notYet(t, ch)
			// The failed session's data is discarded, the others' keep coming.
			require.InDelta(t, gib/3, loadBytes(t, s, newDC0), gib/100)
			clk.Advance(30 * time.Second)
			r := receive(t, ch)
			require.Equal(t, ExitFailure, r.code)
			require.Empty(t, r.stdout)
			requireSameText(t, fixture(t, "rebuild_"+v+"_stream_failed.txt"), r.stderr)
			require.InDelta(t, 2*gib/3, loadBytes(t, s, newDC0), gib/500) // Load is printed rounded
			require.Equal(t, 0, view(t, s, newDC0).Fault.RebuildFailures)

			ch = startRebuildCmd(t, context.Background(), s, newDC0, "dc1")
			ns := run(s, newDC0, "netstats").stdout
			require.Contains(t, ns, "Receiving 4 files, 119304647 bytes total") // 1/9 GiB from each source
			clk.Advance(time.Minute)
			require.Equal(t, ExitOK, receive(t, ch).code)
			require.InDelta(t, gib, loadBytes(t, s, newDC0), gib/500) // Load is printed rounded
		})
	}
}

// A source killed half-way breaks its session; the call fails once the others end.
func TestRebuildSourceDies(t *testing.T) {
	clk := newClock()
	s := NewMemory(rebuildOptions(V41), newDCNodes(), clk.Now)
	ch := startRebuildCmd(t, context.Background(), s, newDC0, "dc1")
	clk.Advance(30 * time.Second)
	require.NoError(t, s.SetFault(oldDC0, Fault{Down: true}))
	notYet(t, ch)
	require.Len(t, regexp.MustCompile(`(?m)^    /10\.244\.`).FindAllString(run(s, newDC0, "netstats").stdout, -1), 3, "a failed session stays listed until the plan ends")
	clk.Advance(30 * time.Second)
	r := receive(t, ch)
	require.Equal(t, ExitFailure, r.code)
	require.True(t, strings.HasPrefix(r.stderr, "error: Error while rebuilding node: Stream failed\n"), r.stderr)
	require.InDelta(t, 2*gib/3, loadBytes(t, s, newDC0), gib/500) // Load is printed rounded

	// With the source still down the others serve its ranges.
	ch = startRebuildCmd(t, context.Background(), s, newDC0, "dc1")
	require.Equal(t, 2, strings.Count(run(s, newDC0, "netstats").stdout, "Receiving 4 files, 178956970 bytes total"))
	clk.Advance(time.Minute)
	require.Equal(t, ExitOK, receive(t, ch).code)
	require.InDelta(t, gib, loadBytes(t, s, newDC0), gib/500) // Load is printed rounded

	// Every dc1 node down: no source at all.
	for _, p := range []string{"dc1-r2-0", "dc1-r3-0"} {
		require.NoError(t, s.SetFault(p, Fault{Down: true}))
	}
	r = run(s, "dc2-r2-0", "rebuild", "dc1")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stdout, "nodetool: Unable to find sufficient sources for streaming range Full(/10.245.2.21:7000,(")
}

// The rebuilding node's JVM dies: the call gets the broken JMX connection.
func TestRebuildNodeDies(t *testing.T) {
	clk := newClock()
	s := NewMemory(rebuildOptions(V40), newDCNodes(), clk.Now)
	ch := startRebuildCmd(t, context.Background(), s, newDC0, "dc1")
	clk.Advance(30 * time.Second)
	require.NoError(t, s.SetFault(newDC0, Fault{Down: true}))
	r := receive(t, ch)
	require.Equal(t, ExitFailure, r.code)
	require.Contains(t, r.stderr, "NodeProbe.rebuild(NodeProbe.java:")
	require.NotContains(t, run(s, oldDC0, "netstats").stdout, "Rebuild ")
	require.NoError(t, s.SetFault(newDC0, Fault{}))
	require.Equal(t, 0.0, loadBytes(t, s, newDC0))
}

// Metered, the sessions move at the senders' inter-DC rate; the clock, not the wall,
// decides when it ends.
func TestRebuildMetered(t *testing.T) {
	clk := newClock()
	o := rebuildOptions(V41)
	o.StreamTimeScale = 1
	s := NewMemory(o, newDCNodes(), clk.Now)
	ch := startRebuildCmd(t, context.Background(), s, newDC0, "dc1")
	// 24 MiB/s per sender (4.1's default): 1/3 GiB takes about 14.2 s.
	clk.Advance(7 * time.Second)
	require.Regexp(t, `Receiving 4 files, 357913941 bytes total\. Already received 1 files \(25\.00%\), 176160768 bytes total`, run(s, newDC0, "netstats").stdout)
	notYet(t, ch)
	clk.Advance(8 * time.Second)
	require.Equal(t, ExitOK, receive(t, ch).code)
	require.InDelta(t, gib, loadBytes(t, s, newDC0), gib/500) // Load is printed rounded
}

func TestRebuildThroughTheManagementAPI(t *testing.T) {
	clk := newClock()
	s := NewMemory(rebuildOptions(V41), newDCNodes(), clk.Now)
	code, id, out, err := s.StartRebuild(newDC0, "dc1")
	require.NoError(t, err)
	require.Equal(t, ExitOK, code)
	require.Empty(t, out)
	j, err := s.RebuildJob(newDC0, id)
	require.NoError(t, err)
	require.Equal(t, Job{ID: id, Type: "rebuild", Status: JobWaiting}, j)
	require.True(t, view(t, s, newDC0).Rebuilding)

	// A second one is a job that errors with the refusal.
	_, id2, _, err := s.StartRebuild(newDC0, "dc1")
	require.NoError(t, err)
	j, err = s.RebuildJob(newDC0, id2)
	require.NoError(t, err)
	require.Equal(t, Job{ID: id2, Type: "rebuild", Status: JobError, Error: "Node is still rebuilding. Check nodetool netstats."}, j)

	clk.Advance(time.Minute)
	j, err = s.RebuildJob(newDC0, id)
	require.NoError(t, err)
	require.Equal(t, JobCompleted, j.Status)

	_, id3, _, err := s.StartRebuild("dc2-r2-0", "dc9")
	require.NoError(t, err)
	j, err = s.RebuildJob("dc2-r2-0", id3)
	require.NoError(t, err)
	require.Equal(t, Job{ID: id3, Type: "rebuild", Status: JobError, Error: "Provided datacenter 'dc9' is not a valid datacenter, available datacenters are: dc1,dc2"}, j)

	// A restart loses the jobs (kept in memory).
	require.NoError(t, s.Restart(newDC0))
	_, err = s.RebuildJob(newDC0, id)
	require.Error(t, err)

	require.NoError(t, s.SetFault("dc2-r3-0", Fault{Down: true}))
	code, id, out, err = s.StartRebuild("dc2-r3-0", "dc1")
	require.NoError(t, err)
	require.Equal(t, ExitUsage, code)
	require.Empty(t, id)
	require.Contains(t, out, "Failed to connect")
}

// The add-DC flow: before any keyspace replicates to dc2 a rebuild has nothing to
// fetch; once ALTER KEYSPACE adds dc2, the same rebuild fetches the node's share.
func TestRebuildAfterAlterKeyspace(t *testing.T) {
	o := rebuildOptions(V41)
	dc1 := map[string]int{"dc1": 3}
	o.Replication = map[string]map[string]int{"app": dc1, ksAuth: dc1, ksDistributed: dc1, ksTraces: dc1}
	clk := newClock()
	s := NewMemory(o, newDCNodes(), clk.Now)
	require.Equal(t, result{"", "", ExitOK}, run(s, newDC0, "rebuild", "dc1"))
	require.Equal(t, 0.0, loadBytes(t, s, newDC0))

	for _, ks := range []string{"app", ksAuth, ksDistributed, ksTraces} {
		r := receive(t, goCQL(t, s, oldDC0, "-e", "ALTER KEYSPACE "+ks+" WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 3}"))
		require.Equal(t, ExitOK, r.code, r.stderr)
	}
	ch := startRebuildCmd(t, context.Background(), s, newDC0, "dc1")
	clk.Advance(time.Minute)
	require.Equal(t, ExitOK, receive(t, ch).code)
	require.InDelta(t, gib, loadBytes(t, s, newDC0), gib/500) // Load is printed rounded
	require.Equal(t, 2, view(t, s, newDC0).RebuildsStarted)
}
