package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestJoin: a node added with JoinTime bootstraps (JOINING, peers UJ, describecluster
// Joining 1, not a ring member yet), then turns NORMAL/UN when its time is up.
func TestJoin(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(Options{Version: v, JoinTime: time.Minute}, threeNodes(), clk.Now)
			require.NoError(t, s.AddNode(NodeSpec{Pod: podD, Address: "10.244.1.13"}))
			n := view(t, s, podD)
			require.True(t, n.Joining)
			require.Equal(t, ModeJoining, n.Mode)
			require.Equal(t, "UJ", n.PeerCode)
			require.Contains(t, run(s, podA, "status").stdout, "\nUJ  10.244.1.13")
			require.Equal(t, "Mode: JOINING\n", strings.SplitAfter(run(s, podD, "netstats").stdout, "\n")[0])
			if v != V311 {
				require.Contains(t, run(s, podA, "describecluster").stdout, "\tJoining: 1\n")
			}
			// Not a member yet: decommission is refused (E8).
			require.Contains(t, run(s, podD, "decommission").stdout, "local node is not a member of the token ring yet")
			// Cleanup is refused anywhere while a node joins (pending ranges).
			r := run(s, podA, "cleanup")
			require.Equal(t, 2, r.code)
			require.Contains(t, r.stderr, "error: Node is involved in cluster membership changes. Not safe to run cleanup.")
			clk.Advance(time.Minute)
			n = view(t, s, podD)
			require.False(t, n.Joining)
			require.Equal(t, ModeNormal, n.Mode)
			require.Contains(t, run(s, podA, "status").stdout, "\nUN  10.244.1.13")
			require.Equal(t, result{"", "", 0}, run(s, podA, "cleanup"))
			require.Equal(t, 1, view(t, s, podA).Cleanups)
		})
	}
}

// TestJoinDefaultIsInstant: without JoinTime, AddNode keeps adding a NORMAL node.
func TestJoinDefaultIsInstant(t *testing.T) {
	s := NewMemory(Options{Version: V41}, threeNodes(), nil)
	require.NoError(t, s.AddNode(NodeSpec{Pod: podD, Address: "10.244.1.13"}))
	n := view(t, s, podD)
	require.False(t, n.Joining)
	require.Equal(t, "UN", n.PeerCode)
}

// TestJoinFails: with JoinFails the bootstrap never ends: 5.0 says JOINING_FAILED,
// 3.11/4.x stay JOINING; clearing the fault lets it finish.
func TestJoinFails(t *testing.T) {
	for _, v := range []string{V41, V50} {
		clk := newClock()
		s := NewMemory(Options{Version: v, JoinTime: time.Second}, threeNodes(), clk.Now)
		require.NoError(t, s.AddNodeWithFault(NodeSpec{Pod: podD, Address: "10.244.1.13"}, Fault{JoinFails: true}))
		clk.Advance(time.Hour)
		n := view(t, s, podD)
		require.True(t, n.Joining, v)
		require.Equal(t, "UJ", n.PeerCode)
		want := ModeJoining
		if v == V50 {
			want = ModeJoiningFailed
		}
		require.Equal(t, want, n.Mode)
		require.NoError(t, s.UpdateFault(podD, func(f *Fault) { f.JoinFails = false }))
		require.Equal(t, ModeNormal, view(t, s, podD).Mode)
	}
}

// TestDrainAndRestart: drain makes the node DRAINED (peers DN, decommission refused with
// E7); a restart brings it back NORMAL/UN.
func TestDrainAndRestart(t *testing.T) {
	for _, v := range allVersions {
		s := NewMemory(Options{Version: v}, threeNodes(), nil)
		require.Equal(t, result{"", "", 0}, run(s, podC, "drain"), v)
		n := view(t, s, podC)
		require.Equal(t, ModeDrained, n.Mode)
		require.Equal(t, "DN", n.PeerCode)
		require.Equal(t, 1, n.Drains)
		require.Contains(t, run(s, podA, "status").stdout, "\nDN  10.244.3.9")
		require.Equal(t, "Mode: DRAINED\n", strings.SplitAfter(run(s, podC, "netstats").stdout, "\n")[0])
		require.Contains(t, run(s, podC, "decommission").stdout, "Node in DRAINED state")
		require.Equal(t, 2, run(s, podC, "cleanup").code)
		// Draining again changes nothing.
		require.Equal(t, result{"", "", 0}, run(s, podC, "drain"))
		require.Equal(t, 1, view(t, s, podC).Drains)
		require.NoError(t, s.Restart(podC))
		n = view(t, s, podC)
		require.Equal(t, ModeNormal, n.Mode)
		require.Equal(t, "UN", n.PeerCode)
		require.Equal(t, 1, n.Restarts)
	}
}

func TestMaintenanceOnDownNode(t *testing.T) {
	s := NewMemory(Options{Version: V41}, threeNodes(), nil)
	require.NoError(t, s.SetFault(podB, Fault{Down: true}))
	for _, cmd := range []string{"drain", "cleanup"} {
		r := run(s, podB, cmd)
		require.Equal(t, 1, r.code)
		require.Contains(t, r.stderr, "nodetool: Failed to connect")
	}
	require.Equal(t, 1, run(s, podB, "cleanup", "extra").code, "usage error")
}
