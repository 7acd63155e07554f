package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/prerun"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// replaceLines are the progress lines replace-node prints when it starts each step
// kind, in order, for pod (internal/operation/replacenode's Describe texts).
func replaceLines(pod string) []struct{ kind, line string } {
	q := regexp.QuoteMeta(pod)
	return []struct{ kind, line string }{
		{"set-replace-option", `write the replace option for ` + q + ` into ConfigMap`},
		{"delete-dead-claims", `delete the claims of ` + q},
		{"delete-dead-pod", `delete pod ` + q},
		{"wait-replaced", `wait until ` + q + `'s new node replaced`},
		{"remove-replace-option", `take the replace option for ` + q + ` out of ConfigMap`},
	}
}

// replaceArgs is replace-node of pod.
func replaceArgs(cluster, pod string) []string {
	return append([]string{"replace-node", cluster, "--pod", pod}, runFlags...)
}

// testReplaceNodeSIGKILL: on CassKop, replace-node refuses a node that is UN, a seed's
// node and a ring that changes (exit 3, nothing changed); on a dead node (JVM down, pod not Ready) it is
// SIGKILLed as it starts each step kind, each resume killed at the next; the last
// resume finishes: the new pod's node owns the dead node's tokens, the dead Host ID is
// gone (kept on the same address: kwok may reuse the IP), pre_run.sh holds no replace
// option, no checkpoint is left, and every other pod that started ran the block as a
// no-op. Through the real kubectl finding the plugin on PATH.
func testReplaceNodeSIGKILL(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "replace-node")
	if !prerun.Available() {
		t.Skip(prerun.ErrNoBash)
	}
	ctx := context.Background()
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3), Sim: fixture.SimOptions{RF: 3}})
	require.NoError(t, cl.SetSimJoinTime(3*time.Second))
	sc := startSimController(t, cl)
	// Ordinals 0 and 1 are seeds in the fixture's status.seedlist: a seed is refused.
	pod, other, seed := fixture.PodName(cl.Name, "dc1", "rack1", 2), fixture.PodName(cl.Name, "dc1", "rack1", 0), fixture.PodName(cl.Name, "dc1", "rack1", 1)

	r := cassandra(t, ns, opTimeout, replaceArgs(cl.Name, pod)...)
	require.Equal(t, exitRefused, r.Code, "a node that is UN is refused:\n%s", r)
	assert.Contains(t, r.Stderr, "not DN", "%s", r)

	dead, err := cl.Sim.Node(pod)
	require.NoError(t, err)
	tokens := simTokens(t, cl, pod)
	require.NoError(t, cl.KillNode(ctx, pod))
	waitFor(t, pod+" DN", time.Minute, func(context.Context) (bool, error) {
		v, err := cl.Sim.Node(pod)
		return err == nil && v.PeerCode == "DN", fmt.Errorf("%+v %v", v.PeerCode, err)
	})

	r = cassandra(t, ns, opTimeout, replaceArgs(cl.Name, seed)...)
	require.Equal(t, exitRefused, r.Code, "a seed is refused:\n%s", r)

	require.NoError(t, cl.Sim.SetPeerState(other, "UL"))
	r = cassandra(t, ns, opTimeout, replaceArgs(cl.Name, pod)...)
	require.Equal(t, exitRefused, r.Code, "a ring that changes is refused:\n%s", r)
	assert.Contains(t, r.Stderr, "joins, leaves or moves", "%s", r)
	require.NoError(t, cl.Sim.SetPeerState(other, "UN"))
	_, left := readCheckpoint(t, cl)
	require.False(t, left, "a refusal writes no checkpoint")

	args := replaceArgs(cl.Name, pod)
	for _, st := range replaceLines(pod) {
		p := startCassandra(t, ns, args...)
		if !killAtLine(t, p, regexp.MustCompile(`\[(\.\.|OK)\] `+st.line)) {
			r := p.Wait(t, opTimeout)
			t.Fatalf("the run ended before %s:\n%s", st.kind, r)
		}
		summary.crash("replace-node/" + st.kind)
		t.Logf("SIGKILL at %s", st.kind)
		summary.resumed()
		args = resumeArgs(cl)
	}
	r = cassandra(t, ns, opTimeout, args...)
	require.Equal(t, exitOK, r.Code, "the last resume:\n%s", r)

	require.Equal(t, tokens, simTokens(t, cl, pod), "the replacement owns the dead node's tokens")
	v, err := cl.Sim.Node(pod)
	require.NoError(t, err)
	assert.Equal(t, "UN", v.PeerCode)
	eps, err := cl.Sim.Endpoints()
	require.NoError(t, err)
	if v.Address == dead.Address {
		assert.Equal(t, dead.HostID, v.HostID, "a same-address replacement keeps the Host ID")
	} else {
		assert.NotEqual(t, dead.HostID, v.HostID, "a new address, a new Host ID")
		for _, e := range eps {
			assert.NotEqual(t, dead.HostID, e.HostID, "the dead Host ID is gone")
		}
	}
	script, _, err := cl.PreRun(ctx)
	require.NoError(t, err)
	assert.NotContains(t, script, "replace_address", "the replace option is taken out")
	_, left = readCheckpoint(t, cl)
	assert.False(t, left, "no checkpoint left")
	assert.Empty(t, sc.InitFailures(), "no pod's bootstrap init container failed")
	t.Logf("replaced %s (%s, %s) by %s (%s), killed at each of %d step kinds", pod, dead.Address, dead.HostID, v.Address, v.HostID, len(replaceLines(pod)))
	summary.markConverged(t)
}

// testCassOpReplaceNode: on cass-operator, replace-node refuses an UN node, then on a
// dead one creates one replacenode task (killed right after, and again while it
// verifies), and the resume verifies the replacement in the ring: the task completing
// proves nothing (#748). The plugin deletes nothing itself and never pauses the operator.
func testCassOpReplaceNode(t *testing.T) {
	requireCommand(t, "replace-node")
	ctx := context.Background()
	ns := newNamespace(t)
	dc := newCassOpDC(t, ns, fixture.DatacenterOptions{Size: 3, Sim: fixture.SimOptions{RF: 3}})
	require.NoError(t, dc.SetSimJoinTime(3*time.Second))
	pod := dc.Pods[1].Name
	r := cassandra(t, ns, opTimeout, replaceArgs(dc.Name, pod)...)
	require.Equal(t, exitRefused, r.Code, "a node that is UN is refused:\n%s", r)

	dead, ok := dc.SimNode(pod)
	require.True(t, ok)
	require.NoError(t, dc.KillNode(ctx, pod))
	args := replaceArgs(dc.Name, pod)
	for _, st := range []struct{ kind, line string }{
		{"create-replace-task", `create task \S+ \(replacenode ` + regexp.QuoteMeta(pod) + `\)`},
		{"wait-replaced", `wait until ` + regexp.QuoteMeta(pod) + `'s new node replaced`},
	} {
		p := startCassandra(t, ns, args...)
		if !killAtLine(t, p, regexp.MustCompile(`\[(\.\.|OK)\] `+st.line)) {
			r := p.Wait(t, opTimeout)
			t.Fatalf("the run ended before %s:\n%s", st.kind, r)
		}
		summary.crash("cass-operator/replace-node/" + st.kind)
		summary.resumed()
		args = cassOpResumeArgs(dc)
	}
	r = cassandra(t, ns, opTimeout, args...)
	require.Equal(t, exitOK, r.Code, "the last resume:\n%s", r)
	v, ok := dc.SimNode(pod)
	require.True(t, ok)
	assert.Equal(t, "UN", v.PeerCode)
	assert.Equal(t, sim.ModeNormal, v.Mode)
	assert.Equal(t, dead.Tokens, v.Tokens, "the replacement's token count")
	ids, err := dc.GossipHostIDs()
	require.NoError(t, err)
	if v.Address != dead.Address {
		assert.NotContains(t, ids, dead.HostID, "the dead Host ID is gone from gossip")
	}
	tasks := kubectl(t, 30*time.Second, "-n", ns, "get", "cassandratasks", "-o", "name")
	require.Equal(t, exitOK, tasks.Code, "%s", tasks)
	assert.Equal(t, 1, strings.Count(tasks.Stdout, "replacenode"), "one replacenode task: %s", tasks.Stdout)
	summary.markConverged(t)
}
