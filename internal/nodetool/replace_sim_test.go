package nodetool

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// The parsers read what the simulated Cassandra prints during a replacement and a
// removenode, in every version (the simulator follows docs/how-it-works/replace.md).

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }
func newSimClock() *clock            { return &clock{t: time.Unix(1718086400, 0)} }
func simRun(s *sim.Store, pod string, args ...string) (string, string, error) {
	var o, e bytes.Buffer
	var err error
	if code := s.Run(context.Background(), pod, args, &o, &e); code != 0 {
		err = fmt.Errorf("command terminated with non-zero exit code %d", code)
	}
	return o.String(), e.String(), err
}

func simNodes() []sim.NodeSpec {
	return []sim.NodeSpec{
		{Pod: "r1-0", Address: "10.244.1.12", DC: "dc1", Rack: "r1", Load: "1.2 GiB"},
		{Pod: "r2-0", Address: "10.244.2.17", DC: "dc1", Rack: "r2", Load: "1.16 GiB"},
		{Pod: "r3-0", Address: "10.244.3.9", DC: "dc1", Rack: "r3", Load: "1.24 GiB"},
		{Pod: "r1-1", Address: "10.244.1.13", DC: "dc1", Rack: "r1", Load: "1.22 GiB"},
		{Pod: "r2-1", Address: "10.244.2.18", DC: "dc1", Rack: "r2", Load: "1.18 GiB"},
		{Pod: "r3-1", Address: "10.244.3.10", DC: "dc1", Rack: "r3", Load: "1 GiB"},
	}
}

var simVersions = []string{sim.V311, sim.V40, sim.V41, sim.V50}

func TestReplacementAgainstSim(t *testing.T) {
	for _, v := range simVersions {
		t.Run(v, func(t *testing.T) {
			clk := newSimClock()
			s := sim.NewMemory(sim.Options{Version: v, JoinTime: time.Minute}, simNodes(), clk.now)
			dead, err := s.Node("r3-1")
			require.NoError(t, err)
			require.NoError(t, s.SetFault("r3-1", sim.Fault{Down: true}))
			clk.add(time.Minute)
			require.NoError(t, s.StartFresh(sim.NodeSpec{Pod: "r3-1", Address: "10.244.3.11", DC: "dc1", Rack: "r3"}, sim.Fault{},
				sim.StartOptions{ReplaceAddress: "10.244.3.10", FirstBoot: true}))
			clk.add(45 * time.Second)

			out, _, err := simRun(s, "r1-0", "status")
			require.NoError(t, err)
			ring, err := ParseStatus(out)
			require.NoError(t, err)
			_, ok := ring.ByHostID(dead.HostID)
			assert.False(t, ok, "the dead node's row is gone")
			row, ok := ring.ByAddress("10.244.3.11")
			require.True(t, ok)
			assert.Equal(t, "UJ", row.Code())
			assert.Equal(t, "?", row.Owns)
			assert.Equal(t, dead.Tokens, row.Tokens)
			assert.NotEqual(t, dead.HostID, row.HostID)

			out, _, err = simRun(s, "r3-1", "netstats")
			require.NoError(t, err)
			ns, err := ParseNetstats(out)
			require.NoError(t, err)
			assert.Equal(t, nodetool.ModeJoining, ns.Mode)
			p, ok := ns.StreamProgress(PlanBootstrap, DirReceiving)
			require.True(t, ok)
			assert.Equal(t, 4, p.Peers, "one session per source replica")
			assert.InDelta(t, float64(1<<30), float64(p.TotalBytes), 4)
			if v != sim.V311 { // 3.11's receiver undercounts (§2.2)
				assert.InDelta(t, float64(1<<29), float64(p.DoneBytes), 4)
			}
			out, _, err = simRun(s, "r1-0", "netstats")
			require.NoError(t, err)
			ns, err = ParseNetstats(out)
			require.NoError(t, err)
			p, ok = ns.StreamProgress(PlanBootstrap, DirSending)
			require.True(t, ok)
			assert.Equal(t, 1, p.Peers)

			out, _, err = simRun(s, "r1-0", "describecluster")
			require.NoError(t, err)
			if dc, err := ParseDescribeCluster(out); assert.NoError(t, err) && v != sim.V311 {
				assert.Equal(t, 1, dc.Joining)
			}
			out, _, err = simRun(s, "r3-1", "info")
			require.NoError(t, err)
			info, err := ParseInfo(out)
			require.NoError(t, err)
			assert.False(t, info.NativeActive)
			if v == sim.V50 {
				assert.Equal(t, "IN_PROGRESS", info.BootstrapState)
			}
		})
	}
}

func TestStartupErrorsAgainstSim(t *testing.T) {
	for _, v := range simVersions {
		t.Run(v, func(t *testing.T) {
			s := sim.NewMemory(sim.Options{Version: v}, simNodes(), newSimClock().now)
			logOf := func(pod string) string {
				l, err := s.Log(pod)
				require.NoError(t, err)
				return strings.Join(l, "\n")
			}
			require.NoError(t, s.StartFresh(sim.NodeSpec{Pod: "new-0", Address: "10.244.3.11"}, sim.Fault{},
				sim.StartOptions{ReplaceAddress: "10.244.9.9", FirstBoot: true}))
			e, ok := ParseStartupError(logOf("new-0"))
			require.True(t, ok)
			assert.Equal(t, CauseUnknownAddress, e.Cause)
			require.NoError(t, s.RestartWith("new-0", sim.StartOptions{ReplaceAddress: "10.244.3.10", FirstBoot: true}))
			e, _ = ParseStartupError(logOf("new-0"))
			assert.Equal(t, CauseLiveNode, e.Cause, "instant: the liveness check runs at once")
			require.NoError(t, s.RestartWith("r1-0", sim.StartOptions{ReplaceAddress: "10.244.3.10"}))
			e, _ = ParseStartupError(logOf("r1-0"))
			assert.Equal(t, CauseBootstrapped, e.Cause)
			// nodetool on a JVM that exited reads as unreachable.
			_, stderr, err := simRun(s, "r1-0", "removenode", "status")
			out, _ := ClassifyRemoveNode("", stderr, err)
			assert.Equal(t, RemoveUnreachable, out)
		})
	}
}

func TestRemoveNodeAgainstSim(t *testing.T) {
	for _, v := range simVersions {
		t.Run(v, func(t *testing.T) {
			clk := newSimClock()
			s := sim.NewMemory(sim.Options{Version: v, DecommissionTime: 90 * time.Second, LeftAnnounce: 30 * time.Second}, simNodes(), clk.now)
			dead, err := s.Node("r3-1")
			require.NoError(t, err)
			alive, err := s.Node("r2-0")
			require.NoError(t, err)
			self, err := s.Node("r1-0")
			require.NoError(t, err)
			require.NoError(t, s.SetFault("r3-1", sim.Fault{Down: true}))

			for id, want := range map[string]RemoveOutcome{
				alive.HostID:                           RemoveAlive,
				self.HostID:                            RemoveSelf,
				"00000000-0000-4000-8000-000000000000": RemoveNotFound,
				"nope":                                 RemoveInvalidID,
			} {
				o, e, err := simRun(s, "r1-0", "removenode", id)
				got, line := ClassifyRemoveNode(o, e, err)
				assert.Equal(t, want, got, line)
			}

			done := make(chan RemoveOutcome, 1)
			go func() {
				o, e, err := simRun(s, "r1-0", "removenode", dead.HostID)
				got, _ := ClassifyRemoveNode(o, e, err)
				done <- got
			}()
			var st RemovalStatus
			require.Eventually(t, func() bool {
				out, _, _ := simRun(s, "r1-0", "removenode", "status")
				st, err = ParseRemovalStatus(out)
				return err == nil && st.Removing
			}, 10*time.Second, time.Millisecond)
			assert.Equal(t, []string{"10.244.3.9"}, st.Waiting)
			out, _, _ := simRun(s, "r1-0", "status")
			ring, err := ParseStatus(out)
			require.NoError(t, err)
			row, _ := ring.ByHostID(dead.HostID)
			assert.Equal(t, "DL", row.Code())

			clk.add(45 * time.Second)
			out, _, _ = simRun(s, "r3-0", "netstats")
			ns, err := ParseNetstats(out)
			require.NoError(t, err)
			p, ok := ns.StreamProgress(PlanRestoreReplicaCount, DirReceiving)
			require.True(t, ok)
			assert.Equal(t, 1, p.Peers)
			clk.add(15 * time.Second)
			assert.Equal(t, RemoveReturned, <-done)
		})
	}
}
