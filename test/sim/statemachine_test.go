package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every test here uses a 90 s decommission with a 30 s announce window: waiting 0–30 s,
// streaming 30–60 s (an armed failure fires at 45 s), peers drop the node at 60 s,
// DECOMMISSIONED at 90 s.
func timedOptions(v string) Options {
	return Options{Version: v, DecommissionTime: 90 * time.Second, LeftAnnounce: 30 * time.Second}
}

const (
	e2Text = "nodetool: Node is still decommissioning. Check nodetool netstats.\n" + seeHelp
	e3Text = "nodetool: Unsupported operation: local node is not a member of the token ring yet\n" + seeHelp
)

func e1Text(n int) string {
	return "nodetool: Unsupported operation: Not enough live nodes to maintain replication factor in keyspace system_distributed (RF = 3, N = " +
		string(rune('0'+n)) + "). Perform a forceful decommission to ignore.\n" + seeHelp
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

func TestDecommissionLifecycle(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(timedOptions(v), sixNodes(), clk.Now)
			nv := view(t, s, podF)
			require.Equal(t, ModeNormal, nv.Mode)
			require.Equal(t, "UN", nv.PeerCode)
			require.False(t, nv.Decommissioning)

			ch := startDecommission(t, context.Background(), s, podF)
			nv = view(t, s, podF)
			require.Equal(t, ModeLeaving, nv.Mode)
			require.Equal(t, "UL", nv.PeerCode)
			require.True(t, nv.Decommissioning)
			require.False(t, nv.Streaming)
			require.Equal(t, 1, nv.DecommissionsStarted)
			require.Equal(t, 1, nv.DecommissionCalls)
			require.Contains(t, run(s, podA, "status").stdout, "\nUL  10.244.3.10  ")
			require.Equal(t, "Mode: LEAVING", firstLine(run(s, podF, "netstats").stdout))

			clk.Advance(35 * time.Second)
			require.True(t, view(t, s, podF).Streaming)
			require.Contains(t, run(s, podF, "netstats").stdout, "\nUnbootstrap ")
			notYet(t, ch)

			// Announce window: peers (and the node itself) no longer list it, but its
			// mode is still LEAVING and the call still blocks.
			clk.Advance(30 * time.Second)
			nv = view(t, s, podF)
			require.Equal(t, ModeLeaving, nv.Mode)
			require.Equal(t, "", nv.PeerCode)
			require.True(t, nv.Left)
			require.True(t, nv.Decommissioning)
			for _, pod := range []string{podA, podF} {
				st := run(s, pod, "status")
				require.Equal(t, 0, st.code)
				require.NotContains(t, st.stdout, "10.244.3.10")
				require.Contains(t, st.stdout, "60.0%")
			}
			ns := run(s, podF, "netstats").stdout
			require.True(t, strings.HasPrefix(ns, "Mode: LEAVING\nNot sending any streams.\n"), ns)
			require.Contains(t, run(s, podF, "info").stdout, "Token                  : (node is not joined to the cluster)\n")
			if v != V311 {
				require.Contains(t, run(s, podA, "describecluster").stdout, "\tLeaving: 0\n")
			}
			require.Contains(t, run(s, podA, "gossipinfo").stdout, ":LEFT,")
			notYet(t, ch)

			clk.Advance(25 * time.Second)
			require.Equal(t, result{"", "", 0}, receive(t, ch))
			nv = view(t, s, podF)
			require.Equal(t, ModeDecommissioned, nv.Mode)
			require.False(t, nv.Decommissioning)
			require.True(t, nv.Running, "the JVM stays up after a decommission")
			require.Equal(t, "Mode: DECOMMISSIONED", firstLine(run(s, podF, "netstats").stdout))
			info := run(s, podF, "info").stdout
			require.Contains(t, info, "Gossip active          : false\n")
			require.Contains(t, info, "Native Transport active: false\n")
			require.Contains(t, info, "Generation No          : 0\n")
			if v == V50 {
				require.Contains(t, info, "Bootstrap state        : DECOMMISSIONED\n")
			}
			require.NotContains(t, run(s, podB, "status").stdout, "10.244.3.10")
		})
	}
}

func TestRerunAnswers(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(timedOptions(v), sixNodes(), clk.Now)
			first := startDecommission(t, context.Background(), s, podF)
			var dups []<-chan result
			rerun := func() {
				switch v {
				case V40, V41:
					require.Equal(t, result{e2Text, "", 1}, run(s, podF, "decommission"))
				case V50:
					require.Equal(t, result{"This node is still decommissioning.\n", "", 0}, run(s, podF, "decommission"))
				case V311:
					// No guard (E2''): a second, concurrent attempt starts and blocks.
					before := view(t, s, podF).DecommissionsStarted
					dups = append(dups, startDecommission(t, context.Background(), s, podF))
					require.Equal(t, before+1, view(t, s, podF).DecommissionsStarted)
				}
			}
			clk.Advance(10 * time.Second)
			rerun() // running
			clk.Advance(60 * time.Second)
			require.True(t, view(t, s, podF).Left)
			rerun() // announce window
			notYet(t, first)
			clk.Advance(20 * time.Second)
			require.Equal(t, 0, receive(t, first).code)
			for _, d := range dups {
				require.Equal(t, result{"", "", 0}, receive(t, d))
			}
			// Already decommissioned.
			if v == V50 {
				require.Equal(t, result{"Node was already decommissioned.\n", "", 0}, run(s, podF, "decommission"))
			} else {
				require.Equal(t, result{e3Text, "", 1}, run(s, podF, "decommission"))
			}
			nv := view(t, s, podF)
			require.Equal(t, ModeDecommissioned, nv.Mode)
			if v == V311 {
				require.Equal(t, 3, nv.DecommissionsStarted)
			} else {
				require.Equal(t, 1, nv.DecommissionsStarted)
			}
			require.Equal(t, 4, nv.DecommissionCalls)
		})
	}
}

func TestRFRefusal(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s := NewMemory(Options{Version: v}, threeNodes(), nil) // instant decommissions
			if v == V311 {
				// No RF check at all: N = RF = 3 proceeds.
				require.Equal(t, result{"", "", 0}, run(s, podC, "decommission"))
				require.Equal(t, ModeDecommissioned, view(t, s, podC).Mode)
				return
			}
			require.Equal(t, result{e1Text(3), "", 1}, run(s, podC, "decommission"))
			nv := view(t, s, podC)
			require.Equal(t, "UN", nv.PeerCode, "gossip stays NORMAL")
			require.Equal(t, 0, nv.DecommissionsStarted)
			require.Equal(t, 1, nv.DecommissionCalls)
			if v == V50 {
				require.Equal(t, ModeDecommissionFailed, nv.Mode)
				require.Contains(t, run(s, podC, "info").stdout, "Decommission failed    : true\n")
				// The node is not leaving, so the RF check runs (and fails) again.
				require.Equal(t, result{e1Text(3), "", 1}, run(s, podC, "decommission"))
			} else {
				require.Equal(t, ModeNormal, nv.Mode)
			}
			require.Equal(t, result{"", "", 0}, run(s, podC, "decommission", "--force"))
			require.Equal(t, ModeDecommissioned, view(t, s, podC).Mode)
			// -f is the short form.
			require.Equal(t, result{e1Text(2), "", 1}, run(s, podB, "decommission"))
			require.Equal(t, result{"", "", 0}, run(s, podB, "-h", "127.0.0.1", "decommission", "-f"))
		})
	}
}

func TestRefuseRFFault(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s := NewMemory(Options{Version: v}, sixNodes(), nil)
			require.NoError(t, s.SetFault(podF, Fault{RefuseRF: true}))
			if v == V311 {
				require.Equal(t, result{"", "", 0}, run(s, podF, "decommission"))
				return
			}
			// The actual N of the DC is printed.
			require.Equal(t, result{e1Text(6), "", 1}, run(s, podF, "decommission"))
			require.Equal(t, result{"", "", 0}, run(s, podF, "decommission", "--force"))
			require.Equal(t, ModeDecommissioned, view(t, s, podF).Mode)
		})
	}
}

func TestForceOn311(t *testing.T) {
	s := NewMemory(Options{Version: V311}, sixNodes(), nil)
	for _, f := range []string{"--force", "-f"} {
		require.Equal(t, result{"nodetool: Found unexpected parameters: [" + f + "]\n" + seeHelp, "", 1}, run(s, podF, "decommission", f))
	}
	nv := view(t, s, podF)
	require.Equal(t, ModeNormal, nv.Mode)
	require.Equal(t, 2, nv.DecommissionCalls)
	require.Equal(t, 0, nv.DecommissionsStarted)
}

func TestStreamFailureThenRetry(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(timedOptions(v), sixNodes(), clk.Now)
			require.NoError(t, s.SetFault(podF, Fault{StreamFailures: 1}))
			ch := startDecommission(t, context.Background(), s, podF)
			clk.Advance(44 * time.Second)
			require.True(t, view(t, s, podF).Streaming)
			notYet(t, ch)
			clk.Advance(time.Second)
			r := receive(t, ch)
			require.Equal(t, 2, r.code)
			require.Empty(t, r.stdout)
			require.True(t, strings.HasPrefix(r.stderr, "error: Error while decommissioning node: Stream failed\n-- StackTrace --\njava.lang.RuntimeException: Error while decommissioning node: Stream failed\n\tat "), r.stderr)

			nv := view(t, s, podF)
			require.False(t, nv.Decommissioning)
			require.Equal(t, "UL", nv.PeerCode, "gossip stays LEAVING")
			require.Equal(t, 0, nv.Fault.StreamFailures, "the armed failure was consumed")
			wantMode := ModeLeaving
			if v == V50 {
				wantMode = ModeDecommissionFailed
			}
			require.Equal(t, wantMode, nv.Mode)
			require.True(t, strings.HasPrefix(run(s, podF, "netstats").stdout, "Mode: "+wantMode+"\nNot sending any streams.\n"))

			// The retry skips the RF check (mode LEAVING on 3.11/4.x; on 5.0 the node is
			// in the leaving set, out of N), so even a forced refusal does not apply.
			require.NoError(t, s.SetFault(podF, Fault{RefuseRF: true}))
			ch = startDecommission(t, context.Background(), s, podF)
			require.Equal(t, ModeLeaving, view(t, s, podF).Mode)
			clk.Advance(90 * time.Second)
			require.Equal(t, result{"", "", 0}, receive(t, ch))
			nv = view(t, s, podF)
			require.Equal(t, ModeDecommissioned, nv.Mode)
			require.Equal(t, 2, nv.DecommissionsStarted)
		})
	}
}

func TestStreamFailuresCountDown(t *testing.T) {
	s := NewMemory(Options{Version: V41}, sixNodes(), nil) // instant: fails immediately
	require.NoError(t, s.SetFault(podF, Fault{StreamFailures: 2}))
	for i := 0; i < 2; i++ {
		r := run(s, podF, "decommission")
		require.Equal(t, 2, r.code)
		require.Contains(t, r.stderr, "Stream failed")
	}
	require.Equal(t, result{"", "", 0}, run(s, podF, "decommission"))
	nv := view(t, s, podF)
	require.Equal(t, 3, nv.DecommissionsStarted)
	require.Equal(t, ModeDecommissioned, nv.Mode)
}

func TestRestartMidDecommission(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(timedOptions(v), sixNodes(), clk.Now)
			ch := startDecommission(t, context.Background(), s, podF)
			clk.Advance(40 * time.Second)
			require.NoError(t, s.Restart(podF))
			r := receive(t, ch)
			require.Equal(t, 2, r.code, "the JMX call breaks when the JVM dies (E15)")
			require.True(t, strings.HasPrefix(r.stderr, "error: null\n-- StackTrace --\n"), r.stderr)
			nv := view(t, s, podF)
			require.Equal(t, ModeNormal, nv.Mode)
			require.Equal(t, "UN", nv.PeerCode)
			require.False(t, nv.Decommissioning)
			require.Contains(t, run(s, podA, "status").stdout, "\nUN  10.244.3.10  ")
			require.Contains(t, run(s, podF, "info").stdout, "Uptime (seconds)       : 0\n")

			// Decommission again from scratch.
			ch = startDecommission(t, context.Background(), s, podF)
			clk.Advance(89 * time.Second)
			notYet(t, ch)
			clk.Advance(time.Second)
			require.Equal(t, 0, receive(t, ch).code)
			nv = view(t, s, podF)
			require.Equal(t, ModeDecommissioned, nv.Mode)
			require.Equal(t, 2, nv.DecommissionsStarted)
		})
	}
}

func TestRestartAfterFailureAndInAnnounceWindow(t *testing.T) {
	clk := newClock()
	s := NewMemory(timedOptions(V40), sixNodes(), clk.Now)
	require.NoError(t, s.SetFault(podF, Fault{StreamFailures: 1}))
	ch := startDecommission(t, context.Background(), s, podF)
	clk.Advance(45 * time.Second)
	require.Equal(t, 2, receive(t, ch).code)
	require.NoError(t, s.Restart(podF))
	require.Equal(t, "UN", view(t, s, podF).PeerCode)
	require.Equal(t, ModeNormal, view(t, s, podF).Mode)

	// Inside the announce window (LEFT gossiped) a restart rejoins the ring.
	ch = startDecommission(t, context.Background(), s, podF)
	clk.Advance(70 * time.Second)
	require.Equal(t, "", view(t, s, podF).PeerCode)
	require.NoError(t, s.Restart(podF))
	require.Equal(t, 2, receive(t, ch).code)
	nv := view(t, s, podF)
	require.Equal(t, ModeNormal, nv.Mode)
	require.Equal(t, "UN", nv.PeerCode)
}

func TestRestartAfterDecommissioned(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s := NewMemory(Options{Version: v}, sixNodes(), nil)
			require.Equal(t, 0, run(s, podF, "decommission").code)
			require.NoError(t, s.Restart(podF))
			connect := "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'.\n"
			if v == V311 {
				connect = "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused (Connection refused)'.\n"
			}
			for _, cmd := range []string{"status", "netstats", "info", "decommission"} {
				require.Equal(t, result{"", connect, 1}, run(s, podF, cmd))
			}
			nv := view(t, s, podF)
			require.True(t, nv.Gone)
			require.False(t, nv.Running)
			require.Equal(t, "", nv.PeerCode)
			require.NotContains(t, run(s, podA, "status").stdout, "10.244.3.10")
			// It never comes back.
			require.NoError(t, s.Restart(podF))
			require.NoError(t, s.SetFault(podF, Fault{}))
			require.True(t, view(t, s, podF).Gone)
			require.Equal(t, 1, run(s, podF, "status").code)
		})
	}
}

func TestDownNode(t *testing.T) {
	clk := newClock()
	s := NewMemory(timedOptions(V41), sixNodes(), clk.Now)
	require.NoError(t, s.SetFault(podC, Fault{Down: true}))
	require.Equal(t, result{"", "nodetool: Failed to connect to '10.0.0.5:7299' - ConnectException: 'Connection refused'.\n", 1},
		run(s, podC, "--host", "10.0.0.5", "-p", "7299", "netstats"))
	require.Contains(t, run(s, podA, "status").stdout, "\nDN  10.244.3.9   ?         16      50.0%")
	dc := run(s, podA, "describecluster").stdout
	require.Contains(t, dc, "\tUnreachable: 1\n")
	require.Contains(t, dc, "\t\tUNREACHABLE: [10.244.3.9]\n")
	require.Contains(t, dc, "\tdc1 #Nodes: 6 #Down: 1\n")
	require.Equal(t, "DN", view(t, s, podC).PeerCode)
	// A down peer still counts in N (membership, not liveness): 6 > 3, allowed.
	ch := startDecommission(t, context.Background(), s, podF)
	// The leaving node's JVM dies: the call breaks, peers keep the LEAVING gossip (DL).
	require.NoError(t, s.SetFault(podF, Fault{Down: true}))
	r := receive(t, ch)
	require.Equal(t, 2, r.code)
	require.Equal(t, "DL", view(t, s, podF).PeerCode)
	require.Contains(t, run(s, podA, "status").stdout, "\nDL  10.244.3.10  ?  ")
	// It comes back NORMAL (the mode is in-memory).
	require.NoError(t, s.SetFault(podF, Fault{}))
	nv := view(t, s, podF)
	require.Equal(t, ModeNormal, nv.Mode)
	require.Equal(t, "UN", nv.PeerCode)
	require.True(t, nv.Running)
}

func TestEmptyRingAndGarbled(t *testing.T) {
	s := NewMemory(Options{Version: V41}, sixNodes(), nil)
	require.NoError(t, s.SetFault(podA, Fault{EmptyRing: true}))
	require.Equal(t, result{"", "", 0}, run(s, podA, "status"))
	require.Equal(t, "Mode: NORMAL", firstLine(run(s, podA, "netstats").stdout), "only status is affected")

	require.NoError(t, s.SetFault(podB, Fault{Garbled: true}))
	st := run(s, podB, "status")
	require.Equal(t, 0, st.code)
	require.True(t, strings.HasPrefix(st.stdout, "Datacenter: dc1\n"), "starts like a real one")
	require.Contains(t, st.stdout, "\x00")
	require.NotContains(t, st.stdout, "10.244.2.17", "the ring is cut before most rows")
	lines := strings.Split(st.stdout, "\n")
	require.True(t, strings.HasPrefix(lines[5], "UN  10.244.1.12"), "a truncated row")
	require.NotContains(t, lines[5], "r1")
	ns := run(s, podB, "netstats")
	require.Equal(t, 0, ns.code)
	require.False(t, strings.HasPrefix(ns.stdout, "Mode: "), ns.stdout)
	require.Contains(t, run(s, podB, "info").stdout, "ID                     : 9a4d2c71")
	// Peers are unaffected.
	require.Equal(t, fixture(t, "status_4.x_steady.txt"), run(s, podC, "status").stdout)
}

func TestSlow(t *testing.T) {
	s := NewMemory(Options{Version: V40}, sixNodes(), nil)
	require.NoError(t, s.SetFault(podA, Fault{Slow: 50 * time.Millisecond}))
	start := time.Now()
	require.Equal(t, 0, run(s, podA, "status").code)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
	// A caller giving up while the node is slow kills the client, nothing else.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	require.Equal(t, ExitKilled, runCtx(ctx, s, podA, "decommission").code)
	nv := view(t, s, podA)
	require.Equal(t, 0, nv.DecommissionCalls, "never reached the node")
	require.Equal(t, ModeNormal, nv.Mode)
}

func TestCancelledCallerStillCompletes(t *testing.T) {
	clk := newClock()
	s := NewMemory(timedOptions(V41), sixNodes(), clk.Now)
	ctx, cancel := context.WithCancel(context.Background())
	ch := startDecommission(t, ctx, s, podF)
	cancel()
	require.Equal(t, result{"", "", ExitKilled}, receive(t, ch))
	require.True(t, view(t, s, podF).Decommissioning, "server-side work goes on")
	clk.Advance(90 * time.Second)
	nv := view(t, s, podF)
	require.Equal(t, ModeDecommissioned, nv.Mode)
	require.Equal(t, "", nv.PeerCode)
	require.Equal(t, 1, nv.DecommissionCalls)
	require.Equal(t, 1, nv.DecommissionsStarted)
}

func TestCommandLine(t *testing.T) {
	s := NewMemory(Options{Version: V41}, sixNodes(), nil)
	steady := fixture(t, "status_4.x_steady.txt")
	require.Equal(t, result{steady, "", 0}, run(s, podA, "-h", "127.0.0.1", "-p", "7199", "-u", "cassandra", "-pw", "secret", "status"))
	require.Equal(t, result{steady, "", 0}, run(s, podA, "--host=127.0.0.1", "--port", "7199", "status", "-r"))
	require.Equal(t, result{"ReleaseVersion: 4.1.6\n", "", 0}, run(s, podA, "version"))
	require.Equal(t, result{"nodetool: Found unexpected parameters: [frobnicate]\n" + seeHelp, "", 1}, run(s, podA, "frobnicate"))
	require.Equal(t, result{"nodetool: Found unexpected parameters: [extra]\n" + seeHelp, "", 1}, run(s, podA, "netstats", "extra"))
	require.Equal(t, result{"\nError: The keyspace nope, does not exist\n", "", 1}, run(s, podA, "status", "nope"))
	sys := run(s, podA, "status", "system").stdout
	require.Contains(t, sys, "--  Address      Load      Tokens  Owns  Host ID                               Rack\n")
	require.True(t, strings.HasSuffix(sys, "\n\nNote: Ownership values for keyspaces with LocalStrategy are meaningless\n"))
	pp := run(s, podA, "-pp", "status").stdout
	require.Contains(t, pp, "\nUN  10.244.1.12:7000  1.2 GiB   16")
	help := run(s, podA)
	require.Equal(t, 0, help.code)
	require.True(t, strings.HasPrefix(help.stdout, "usage: nodetool "))
	require.Contains(t, run(s, podA, "netstats", "-H").stdout, "Mode: NORMAL\n")
	require.Contains(t, run(s, podA, "info", "-T").stdout, "Token                  : ")
	r := run(s, "no-such-pod", "status")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "no-such-pod")
	// 3.11 has no -pp.
	s = NewMemory(Options{Version: V311}, sixNodes(), nil)
	require.Equal(t, result{"nodetool: Found unexpected parameters: [-pp]\n" + seeHelp, "", 1}, run(s, podA, "-pp", "status"))
}

func TestStatusStableOrderAndOwns(t *testing.T) {
	nodes := append(sixNodes(), NodeSpec{Pod: "seventh", Address: "10.244.1.14", Rack: "r1", DC: "dc1"})
	s := NewMemory(Options{Version: V50}, nodes, nil)
	a := run(s, podA, "status").stdout
	for i := 0; i < 5; i++ {
		require.Equal(t, a, run(s, podC, "status").stdout)
	}
	require.Contains(t, a, "42.9%") // 300/7
	require.Less(t, strings.Index(a, "10.244.1.12"), strings.Index(a, "10.244.1.14"))
}

func TestLastNodeAndAddRemove(t *testing.T) {
	s := NewMemory(Options{Version: V40}, sixNodes()[:1], nil)
	require.Equal(t, result{"nodetool: Unsupported operation: no other normal nodes in the ring; decommission would be pointless\n" + seeHelp, "", 1},
		run(s, podA, "decommission", "--force"))
	require.NoError(t, s.AddNode(NodeSpec{Pod: podB, Address: "10.244.2.17"}))
	require.Error(t, s.AddNode(NodeSpec{Pod: podB, Address: "10.244.2.99"}))
	require.Equal(t, result{"", "", 0}, run(s, podA, "decommission", "--force"))
	require.NoError(t, s.RemoveNode(podA))
	_, err := s.Node(podA)
	require.Error(t, err)
	require.Error(t, s.RemoveNode(podA))
	require.Contains(t, run(s, podB, "status").stdout, "\nUN  10.244.2.17  2.2 GiB  16      100.0%", "it received the leaver's 1.2 GiB")
}

func TestFormatting(t *testing.T) {
	require.Equal(t, "1.2 GiB", stringifyFileSize(1.2*gib))
	require.Equal(t, "1.4 GiB", stringifyFileSize(1.16*gib+1.21*gib/5))
	require.Equal(t, "103.25 KiB", stringifyFileSize(103.25*kib))
	require.Equal(t, "512 bytes", stringifyFileSize(512))
	require.Equal(t, "1.01", javaFixed(1.005, 2), "Java rounds HALF_UP on the shortest repr")
	require.Equal(t, "33.33", javaFixed(100.0/3, 2))
	require.Equal(t, "100.00", javaFixed(99.999, 2))
	require.Equal(t, "0.00", javaFixed(0, 2))
	require.Equal(t, "1.29944104E9", javaDoubleString(1299441040))
	require.Equal(t, "1.0E7", javaDoubleString(1e7))
	require.Equal(t, "123.0", javaDoubleString(123))
	require.Equal(t, "60.0%", percentOneDecimal(float32(3)/float32(5)))
	v, err := parseSize("1,5 MiB")
	require.NoError(t, err)
	require.Equal(t, 1.5*mib, v)
	_, err = parseSize("lots")
	require.Error(t, err)
}

func TestInvalidSetup(t *testing.T) {
	require.Panics(t, func() { NewMemory(Options{Version: "2.2"}, sixNodes(), nil) })
	require.Panics(t, func() { NewMemory(Options{Version: V40}, append(sixNodes(), sixNodes()[0]), nil) })
	require.Panics(t, func() { NewMemory(Options{Version: V40}, []NodeSpec{{Pod: "x"}}, nil) })
	s := NewMemory(Options{Version: V40}, sixNodes(), nil)
	require.Error(t, s.SetFault("nope", Fault{}))
	require.Error(t, s.Restart("nope"))
	require.Error(t, s.SetFault(podA, Fault{StreamFailures: -1}))
}

func TestUpdateFault(t *testing.T) {
	s := NewMemory(Options{Version: V41}, sixNodes(), nil)
	require.NoError(t, s.SetFault(podA, Fault{Down: true}))
	require.NoError(t, s.UpdateFault(podA, func(f *Fault) { f.StreamFailures = 2 }))
	nv := view(t, s, podA)
	require.Equal(t, Fault{Down: true, StreamFailures: 2}, nv.Fault)
	require.False(t, nv.Running, "Down was kept")
	require.Error(t, s.UpdateFault(podA, func(f *Fault) { f.Slow = -time.Second }))
	require.Equal(t, Fault{Down: true, StreamFailures: 2}, view(t, s, podA).Fault, "a rejected change changes nothing")
}

// TestHoldStreaming: a held decommission stays streaming however far the clock moves;
// once released it needs the rest of its timeline from then, as if streaming had just
// begun, and then completes as usual.
func TestHoldStreaming(t *testing.T) {
	o := Options{Version: V41, DecommissionTime: 90 * time.Second, LeftAnnounce: 30 * time.Second}
	clk := newClock()
	s := NewMemory(o, sixNodes(), clk.Now)
	require.NoError(t, s.SetFault(podF, Fault{HoldStreaming: true}))
	ch := startDecommission(t, context.Background(), s, podF)
	clk.Advance(10 * time.Minute)
	v := view(t, s, podF)
	require.Equal(t, ModeLeaving, v.Mode)
	require.Equal(t, "UL", v.PeerCode, "peers see it leaving")
	notYet(t, ch)
	require.NoError(t, s.UpdateFault(podF, func(f *Fault) { f.HoldStreaming = false }))
	tl := o.timeline()
	clk.Advance(tl.done - tl.streamStart - time.Second)
	require.Equal(t, ModeLeaving, view(t, s, podF).Mode, "the rest of the timeline runs from the release")
	notYet(t, ch)
	clk.Advance(time.Second)
	require.Equal(t, result{"", "", 0}, receive(t, ch))
	require.Equal(t, ModeDecommissioned, view(t, s, podF).Mode)
}

// TestFailedWhileLeaving: CASSANDRA-21493/21583 on 5.0, the mode reads
// DECOMMISSION_FAILED while the decommission goes on: netstats still lists the
// Unbootstrap plan it sends, peers still see the node UL, info says "Decommission
// failed: true" and "Decommissioning: true", and the attempt ends DECOMMISSIONED as
// usual. Before 5.0 there is no such mode: the fault changes nothing.
func TestFailedWhileLeaving(t *testing.T) {
	o := Options{Version: V50, DecommissionTime: 90 * time.Second, LeftAnnounce: 30 * time.Second}
	clk := newClock()
	s := NewMemory(o, sixNodes(), clk.Now)
	require.NoError(t, s.SetFault(podF, Fault{FailedWhileLeaving: true}))
	require.Equal(t, ModeNormal, view(t, s, podF).Mode, "nothing runs: the mode is the node's")
	ch := startDecommission(t, context.Background(), s, podF)
	tl := o.timeline()
	clk.Advance(tl.streamStart + time.Second)
	v := view(t, s, podF)
	require.Equal(t, ModeDecommissionFailed, v.Mode)
	require.True(t, v.Streaming)
	require.Equal(t, "UL", v.PeerCode)
	ns := run(s, podF, "netstats")
	require.True(t, strings.HasPrefix(ns.stdout, "Mode: DECOMMISSION_FAILED\nUnbootstrap "), ns.stdout)
	require.Contains(t, ns.stdout, "        Sending ")
	st := run(s, podA, "status")
	require.Contains(t, st.stdout, "UL  10.244.3.10")
	info := run(s, podF, "info")
	require.Contains(t, info.stdout, "Decommissioning        : true")
	require.Contains(t, info.stdout, "Decommission failed    : true")
	// A second call answers as for any decommission still running.
	require.Equal(t, result{"This node is still decommissioning.\n", "", ExitOK}, run(s, podF, "decommission"))
	notYet(t, ch)
	clk.Advance(tl.done)
	require.Equal(t, result{"", "", 0}, receive(t, ch))
	require.Equal(t, ModeDecommissioned, view(t, s, podF).Mode)

	s = NewMemory(Options{Version: V41, DecommissionTime: 90 * time.Second}, sixNodes(), clk.Now)
	require.NoError(t, s.SetFault(podF, Fault{FailedWhileLeaving: true}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the call; the simulated decommission is left to run
	_ = startDecommission(t, ctx, s, podF)
	require.Equal(t, ModeLeaving, view(t, s, podF).Mode, "4.1 has no DECOMMISSION_FAILED")
}
