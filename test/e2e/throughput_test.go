package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// testOpsStreamThroughputSIGKILL: a 4 -> 2 scale-down with --stream-throughput 0
// (unthrottled), SIGKILLed as soon as the first leaving node is unthrottled, then
// resumed: the scale-down converges and every node that stays reads the limits it had
// before (one set by hand). Then 2 -> 1 with the same rate, Cassandra refusing the
// decommission after the node was unthrottled, and abort: the node's limits go back to
// what was recorded (the hand-set value), through the real kubectl exec.
func testOpsStreamThroughputSIGKILL(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "abort")
	ns := newNamespace(t)
	// Metered streaming: 1.2 GiB at the 24 MiB/s default would take 13 s here, unthrottled
	// (the simulated hardware's 256 MiB/s) about 1 s.
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(4), Sim: fixture.SimOptions{StreamTimeScale: 4}})
	g := newPVCGuard(t, ns)
	pod := func(i int) string { return fixture.PodName(cl.Name, "dc1", "rack1", i) }
	simRun(t, cl, pod(1), "setstreamthroughput", "-m", "50")
	before := simLimits(t, cl)

	p := startCassandra(t, ns, append(scaleArgs(cl, "dc1", "rack1", 2), "--stream-throughput", "0")...)
	waitFor(t, pod(3)+" unthrottled", opTimeout, func(context.Context) (bool, error) {
		if p.Exited() {
			t.Fatalf("the plugin ended before %s was unthrottled:\n%s", pod(3), p.result)
		}
		v, err := cl.Sim.Node(pod(3))
		if err != nil {
			return false, err
		}
		return math.IsInf(v.Throughput.Stream, 1), fmt.Errorf("stream limit %v B/s", v.Throughput.Stream)
	})
	killed := p.Kill(t)
	require.Equal(t, 137, killed.Code, "killed by SIGKILL:\n%s", killed)
	summary.crash("scale-down/set-throughput")
	cp, ok := readCheckpoint(t, cl)
	require.True(t, ok, "checkpoint left by the killed run")
	st, _ := cp.Started()
	t.Logf("SIGKILL with %s unthrottled, after %s; step in progress: %s", pod(3), killed.Duration.Round(time.Millisecond), st.ID)
	r := resume(t, cl)
	t.Logf("resume took %s", r.Duration.Round(time.Millisecond))
	assertConverged(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 4, to: 2})
	assertSimLimits(t, cl, before, pod(0), pod(1))

	// 2 -> 1, refused after the node was unthrottled, then aborted.
	require.NoError(t, cl.Sim.SetFault(pod(1), sim.Fault{RefuseRF: true}))
	r = cassandra(t, ns, opTimeout, append(scaleArgs(cl, "dc1", "rack1", 1), "--stream-throughput", "0")...)
	require.Equal(t, exitRefused, r.Code, "a refused decommission exits 3:\n%s", r)
	v, err := cl.Sim.Node(pod(1))
	require.NoError(t, err)
	require.True(t, math.IsInf(v.Throughput.Stream, 1), "%s unthrottled before its refused decommission: %+v", pod(1), v.Throughput)
	r = cassandra(t, ns, opTimeout, "abort", cl.Name, "--yes")
	require.Equal(t, exitOK, r.Code, "abort:\n%s", r)
	assert.Contains(t, r.Stderr, "Put back the stream throughput operation", "%s", r)
	assertSimLimits(t, cl, before, pod(0), pod(1))
	summary.markConverged(t)
}

// simRun runs a nodetool command on pod's simulated node, as an SRE would by hand.
func simRun(t *testing.T, cl *fixture.Cluster, pod string, args ...string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cl.Sim.Run(context.Background(), pod, args, &out, &errb)
	require.Equal(t, 0, code, "nodetool %v on %s: %s%s", args, pod, out.String(), errb.String())
}

// simLimits are every simulated node's stream limiters, by pod (bytes/s).
func simLimits(t *testing.T, cl *fixture.Cluster) map[string]sim.Throughputs {
	t.Helper()
	nodes, err := cl.Sim.Nodes()
	require.NoError(t, err)
	out := map[string]sim.Throughputs{}
	for _, n := range nodes {
		out[n.Pod] = n.Throughput
	}
	return out
}

// assertSimLimits: each of pods reads the limits it had before.
func assertSimLimits(t *testing.T, cl *fixture.Cluster, before map[string]sim.Throughputs, pods ...string) {
	t.Helper()
	now := simLimits(t, cl)
	for _, p := range pods {
		assert.Equal(t, before[p], now[p], "node %s's stream limits, against what it had before the operation", p)
	}
}
