package sim

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// removenode (docs/how-it-works/replace.md §5). DecommissionTime 90 s with a 30 s announce
// window gives removenode a 30 s RING_DELAY sleep and streaming from 30 s to 60 s. In
// the six-node cluster (3 racks, RF 3) podF's ranges go to podC, the other node of rack
// r3, which fetches them from podA.

func removeOptions(v string) Options {
	return Options{Version: v, DecommissionTime: 90 * time.Second, LeftAnnounce: 30 * time.Second}
}

// firstToken is the first token `info -T` prints on pod.
func firstToken(t *testing.T, s *Store, pod string) string {
	t.Helper()
	m := regexp.MustCompile(`Token +: (-?\d+)\n`).FindStringSubmatch(run(s, pod, "info", "-T").stdout)
	require.NotNil(t, m)
	return m[1]
}

// startRemove launches a blocking removenode and waits until the coordinator has it.
func startRemove(t *testing.T, ctx context.Context, s *Store, pod, id string) <-chan result {
	t.Helper()
	ch := goRun(ctx, s, pod, "removenode", id)
	waitFor(t, "removal recorded", func() bool {
		select {
		case r := <-ch:
			t.Fatalf("removenode returned early: %+v", r)
		default:
		}
		return strings.Contains(run(s, pod, "removenode", "status").stdout, "Removing token")
	})
	return ch
}

const noRemoval = "RemovalStatus: No token removals in process.\n"

func TestRemoveNode(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(removeOptions(v), sixNodes(), clk.Now)
			tok := firstToken(t, s, podF)
			require.NoError(t, s.SetFault(podF, Fault{Down: true}))
			clk.Advance(time.Minute)
			ch := startRemove(t, context.Background(), s, podA, deadID)

			// The coordinator has the node in its leaving set at once; the others only
			// once "removing" is gossiped, after the RING_DELAY sleep.
			require.Equal(t, "DL", rowOf(run(s, podA, "status").stdout, deadAddr)[0])
			require.Equal(t, "DN", rowOf(run(s, podB, "status").stdout, deadAddr)[0])
			require.Equal(t, "DN", view(t, s, podF).PeerCode)
			status := "RemovalStatus: Removing token (" + tok + "). Waiting for replication confirmation from [/10.244.3.9].\n"
			require.Equal(t, result{status, "", 0}, run(s, podA, "removenode", "status"))
			if v != V311 {
				require.Equal(t, result{strings.Replace(status, "/10.244.3.9]", "/10.244.3.9:7000]", 1), "", 0}, run(s, podA, "-pp", "removenode", "status"))
			}
			require.Equal(t, result{noRemoval, "", 0}, run(s, podB, "removenode", "status"), "the state is the coordinator's")
			notYet(t, ch)

			clk.Advance(45 * time.Second)
			require.Equal(t, "DL", rowOf(run(s, podB, "status").stdout, deadAddr)[0])
			require.Equal(t, "DL", view(t, s, podF).PeerCode)
			gi := run(s, podB, "gossipinfo").stdout
			require.Regexp(t, `\n  STATUS:\d+:removing,`+deadID+`\n`, gi)
			require.Regexp(t, `\n  REMOVAL_COORDINATOR:\d+:REMOVER,2f1b8c5e-6a0e-4b0e-9c57-0d3b1f6a7e11\n`, gi)
			gainer := run(s, podC, "netstats").stdout
			require.Regexp(t, `\nRestore replica count [0-9a-f-]{36}\n    /10\.244\.1\.12\n        Receiving 4 files, 1299227607 bytes total\.`, gainer)
			require.Contains(t, run(s, podA, "netstats").stdout, "\n    /10.244.3.9\n        Sending 4 files, 1299227607 bytes total.")
			require.Equal(t, []string{"UN", "10.244.3.9", "1.84", "GiB"}, rowOf(run(s, podB, "status").stdout, "10.244.3.9")[:4], "half received")
			notYet(t, ch)

			clk.Advance(15 * time.Second)
			require.Equal(t, result{"", "", 0}, receive(t, ch))
			for _, pod := range []string{podA, podB, podC} {
				require.Nil(t, rowOf(run(s, pod, "status").stdout, deadAddr))
			}
			require.Equal(t, []string{"UN", "10.244.3.9", "2.45", "GiB"}, rowOf(run(s, podB, "status").stdout, "10.244.3.9")[:4])
			require.Regexp(t, `\n  STATUS:\d+:removed,`+deadID+`,\d+\n`, run(s, podB, "gossipinfo").stdout)
			require.Equal(t, result{noRemoval, "", 0}, run(s, podA, "removenode", "status"))
			nv := view(t, s, podF)
			require.True(t, nv.Removed)
			require.Equal(t, "", nv.PeerCode)
		})
	}
}

// TestRemoveNodeErrors: removeNode's refusals, in its order, as UnsupportedOperation-
// Exceptions (stderr, exit 2); airline's and UUID.fromString's errors on stdout, exit 1.
func TestRemoveNodeErrors(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			o := removeOptions(v)
			o.JoinTime = time.Hour
			clk := newClock()
			s := NewMemory(o, sixNodes(), clk.Now)
			refused := func(pod, id, msg string) {
				t.Helper()
				r := run(s, pod, "removenode", id)
				require.Equal(t, 2, r.code)
				require.Empty(t, r.stdout)
				require.True(t, strings.HasPrefix(r.stderr, "error: "+msg+"\n-- StackTrace --\njava.lang.UnsupportedOperationException: "+msg+"\n\tat "), r.stderr)
			}
			refused(podA, "00000000-0000-4000-8000-000000000000", "Host ID not found.")
			refused(podA, "2f1b8c5e-6a0e-4b0e-9c57-0d3b1f6a7e11", "Cannot remove self")
			refused(podA, "9a4d2c71-3b8e-4f2a-a1d0-5e6f7a8b9c02", "Node "+endpoint(v, "10.244.2.17")+" is alive and owns this ID. Use decommission command to remove it from the ring")
			require.NoError(t, s.AddNode(NodeSpec{Pod: "scale-0", Address: "10.244.1.14", HostID: "11111111-2222-4333-8444-555555555555", DC: "dc1", Rack: "r1"}))
			require.NoError(t, s.SetFault("scale-0", Fault{Down: true}))
			refused(podA, "11111111-2222-4333-8444-555555555555", "Node to be removed is not a member of the token ring")

			require.Equal(t, result{"nodetool: Invalid UUID string: not-a-uuid\n" + seeHelp, "", 1}, run(s, podA, "removenode", "not-a-uuid"))
			require.Equal(t, result{"nodetool: Required parameters are missing: remove_operation\n" + seeHelp, "", 1}, run(s, podA, "removenode"))
			require.Equal(t, result{"nodetool: Found unexpected parameters: [extra]\n" + seeHelp, "", 1}, run(s, podA, "removenode", "status", "extra"))
			require.Equal(t, result{noRemoval, "", 0}, run(s, podA, "removenode", "force"), "nothing to force: only a WARN")
			require.Contains(t, logOf(t, s, podA), "WARN  [RMI TCP Connection(2)-127.0.0.1] ")
			require.Contains(t, logOf(t, s, podA), " - No nodes to force removal on, call 'removenode' first")

			// One removal at a time per coordinator.
			require.NoError(t, s.SetFault(podF, Fault{Down: true}))
			require.NoError(t, s.SetFault(podE, Fault{Down: true}))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_ = startRemove(t, ctx, s, podA, deadID)
			refused(podA, "e7f9a1b3-5c7d-4e9f-8a1b-2c3d4e5f6a85", "This node is already processing a removal. Wait for it to complete, or use 'removenode force' if this has failed.")
			// A down coordinator cannot be reached.
			require.NoError(t, s.SetFault(podB, Fault{Down: true}))
			r := run(s, podB, "removenode", deadID)
			require.Equal(t, 1, r.code)
			require.Contains(t, r.stderr, "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: ")
		})
	}
}

// TestRemoveNodeForce: a gainer whose stream broke never confirms, so removenode waits
// for ever; `removenode force` prints the status, excises the node without waiting, and
// the blocked call returns 0.
func TestRemoveNodeForce(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(removeOptions(v), sixNodes(), clk.Now)
			tok := firstToken(t, s, podF)
			require.NoError(t, s.SetFault(podF, Fault{Down: true}))
			clk.Advance(time.Minute)
			ch := startRemove(t, context.Background(), s, podB, deadID)
			clk.Advance(40 * time.Second)
			require.NoError(t, s.SetFault(podA, Fault{Down: true})) // podC's source
			clk.Advance(time.Hour)
			status := "RemovalStatus: Removing token (" + tok + "). Waiting for replication confirmation from [/10.244.3.9].\n"
			require.Equal(t, result{status, "", 0}, run(s, podB, "removenode", "status"))
			notYet(t, ch)
			require.Equal(t, "DL", rowOf(run(s, podC, "status").stdout, deadAddr)[0])

			require.Equal(t, result{status, "", 0}, run(s, podB, "removenode", "force"))
			require.Equal(t, result{"", "", 0}, receive(t, ch))
			require.Nil(t, rowOf(run(s, podC, "status").stdout, deadAddr))
			require.Equal(t, "1.24 GiB", view(t, s, podC).Load, "no re-replication")
			require.Contains(t, logOf(t, s, podB), " - Removal not confirmed for for "+endpoint(v, "10.244.3.9"))
			require.Equal(t, result{noRemoval, "", 0}, run(s, podB, "removenode", "status"))
		})
	}
}

// TestRemoveNodeCoordinatorRestart: the removal lives in the coordinator's JVM: a
// restart breaks the blocked call (E15's EOF, from NodeProbe.removeNode) and forgets
// it, while peers keep the gossiped "removing" (DL); `removenode force` on any node that
// sees it leaving finishes it. The gainer's stream goes on meanwhile.
func TestRemoveNodeCoordinatorRestart(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(removeOptions(v), sixNodes(), clk.Now)
			require.NoError(t, s.SetFault(podF, Fault{Down: true}))
			clk.Advance(time.Minute)
			ch := startRemove(t, context.Background(), s, podB, deadID)
			clk.Advance(31 * time.Second)
			require.NoError(t, s.Restart(podB))
			r := receive(t, ch)
			require.Equal(t, 2, r.code)
			require.True(t, strings.HasPrefix(r.stderr, "error: null\n-- StackTrace --\njava.rmi.UnmarshalException: "), r.stderr)
			line := map[string]string{V311: "721", V40: "772", V41: "890", V50: "1009"}[v]
			require.Contains(t, r.stderr, "\tat org.apache.cassandra.tools.NodeProbe.removeNode(NodeProbe.java:"+line+")\n")
			require.Equal(t, result{noRemoval, "", 0}, run(s, podB, "removenode", "status"))
			for _, pod := range []string{podB, podC} {
				require.Equal(t, "DL", rowOf(run(s, pod, "status").stdout, deadAddr)[0])
			}
			clk.Advance(time.Minute)
			require.Equal(t, "2.45 GiB", view(t, s, podC).Load, "the gainer streamed its share")
			require.Equal(t, "DL", rowOf(run(s, podC, "status").stdout, deadAddr)[0], "nobody confirms to a dead coordinator")
			require.Equal(t, result{noRemoval, "", 0}, run(s, podD, "removenode", "force"))
			require.Nil(t, rowOf(run(s, podC, "status").stdout, deadAddr))
		})
	}
}

// TestRemoveNodeGenerationChanged: the node restarted during advertiseRemoving's sleep:
// RuntimeException (exit 2); the coordinator's state stays set, so status still shows
// the removal and a new one is refused until `removenode force`.
func TestRemoveNodeGenerationChanged(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			clk := newClock()
			s := NewMemory(removeOptions(v), sixNodes(), clk.Now)
			require.NoError(t, s.SetFault(podF, Fault{Down: true}))
			clk.Advance(time.Minute)
			ch := startRemove(t, context.Background(), s, podA, deadID)
			clk.Advance(10 * time.Second)
			require.NoError(t, s.Restart(podF))
			require.NoError(t, s.SetFault(podF, Fault{Down: true}))
			clk.Advance(20 * time.Second)
			r := receive(t, ch)
			require.Equal(t, 2, r.code)
			msg := "Endpoint " + endpoint(v, deadAddr) + " generation changed while trying to remove it"
			require.True(t, strings.HasPrefix(r.stderr, "error: "+msg+"\n-- StackTrace --\njava.lang.RuntimeException: "+msg+"\n"), r.stderr)
			require.Contains(t, run(s, podA, "removenode", "status").stdout, "RemovalStatus: Removing token (")
			require.Equal(t, "DL", rowOf(run(s, podA, "status").stdout, deadAddr)[0])
			require.Equal(t, "DN", rowOf(run(s, podB, "status").stdout, deadAddr)[0], "never gossiped")
			require.Equal(t, 0, run(s, podA, "removenode", "force").code)
			require.Nil(t, rowOf(run(s, podB, "status").stdout, deadAddr))
		})
	}
}

// TestRemoveNodeRF1: keyspaces with RF 1 are skipped ("the data is lost"), so nobody
// has to confirm: the node is removed right after the RING_DELAY sleep.
func TestRemoveNodeRF1(t *testing.T) {
	o := removeOptions(V41)
	o.RF = 1
	clk := newClock()
	s := NewMemory(o, sixNodes(), clk.Now)
	tok := firstToken(t, s, podF)
	require.NoError(t, s.SetFault(podF, Fault{Down: true}))
	ch := startRemove(t, context.Background(), s, podA, deadID)
	require.Equal(t, result{"RemovalStatus: Removing token (" + tok + "). Waiting for replication confirmation from [].\n", "", 0}, run(s, podA, "removenode", "status"))
	clk.Advance(30 * time.Second)
	require.Equal(t, result{"", "", 0}, receive(t, ch))
	require.Nil(t, rowOf(run(s, podA, "status").stdout, deadAddr))
}
