package e2e

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/prerun"
)

// simTokens are the tokens of pod's node (`nodetool info -T` in the simulator).
func simTokens(t *testing.T, cl *fixture.Cluster, pod string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	code := cl.Sim.Run(context.Background(), pod, []string{"info", "-T"}, &out, &errb)
	require.Equal(t, 0, code, "nodetool info -T on %s: %s%s", pod, out.String(), errb.String())
	var toks []string
	for _, l := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "Token" {
			toks = append(toks, strings.TrimSpace(v))
		}
	}
	return toks
}

// testFixtureReplaceByHand checks the fixture's CassKop bootstrap without the plugin
// (docs/how-it-works/replace.md §7.2): a node killed (pod not Ready, nodetool on it
// refused), the replace-node block in pre_run.sh, its claim and pod deleted by hand;
// the StatefulSet re-creates the pod on a new claim, the SimController runs the script
// and the new node replaces the dead one: the dead node's tokens, a new Host ID and the
// dead one gone (or the same Host ID when kwok reuses the IP: §4.3 step 2, §4.4). Every
// other pod that starts runs the block as a no-op.
func testFixtureReplaceByHand(t *testing.T, crd *fixture.CRDInfo) {
	if !prerun.Available() {
		t.Skip(prerun.ErrNoBash)
	}
	ctx := context.Background()
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3)})
	require.NoError(t, cl.SetSimJoinTime(2*time.Second))
	sc := startSimController(t, cl)
	pod, other := fixture.PodName(cl.Name, "dc1", "rack1", 1), fixture.PodName(cl.Name, "dc1", "rack1", 0)
	dead, err := cl.Sim.Node(pod)
	require.NoError(t, err)
	tokens := simTokens(t, cl, pod)
	require.NoError(t, cl.KillNode(ctx, pod))
	r := kubectl(t, 30*time.Second, "-n", ns, "exec", pod, "-c", "cassandra", "--", "nodetool", "status")
	require.NotEqual(t, exitOK, r.Code, "nodetool on a dead node: %s", r)
	p, err := suite.clients.Kube.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	require.NoError(t, err)
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			require.Equal(t, corev1.ConditionFalse, c.Status, "the dead node's pod is Ready")
		}
	}
	waitFor(t, pod+" DN", time.Minute, func(context.Context) (bool, error) {
		v, err := cl.Sim.Node(pod)
		return err == nil && v.PeerCode == "DN", fmt.Errorf("%+v %v", v.PeerCode, err)
	})

	block := "#!/bin/sh\n# kubectl-cassandra replace-node e2e: begin\nif [ \"$(hostname)\" = '" + pod + "' ]; then\n" +
		"  echo '-Dcassandra.replace_address_first_boot=" + dead.Address + "' >> /etc/cassandra/jvm-server.options\nfi\n# kubectl-cassandra replace-node e2e: end\n"
	require.NoError(t, cl.SetPreRun(ctx, block))
	// As cass-operator's replacePod does: the claim first (its finalizer holds it while
	// the pod runs), then the pod.
	r = kubectl(t, time.Minute, "-n", ns, "delete", "pvc", "data-"+pod, "--wait=false")
	require.Equal(t, exitOK, r.Code, "%s", r)
	r = kubectl(t, time.Minute, "-n", ns, "delete", "pod", pod, "--wait=false")
	require.Equal(t, exitOK, r.Code, "%s", r)

	waitFor(t, "the replacement of "+pod+" UN", opTimeout, func(ctx context.Context) (bool, error) {
		// A pod re-created before its claim was gone can be scheduled on it and then
		// waits on the claim, which waits on the pod: delete that pod again.
		c, err := suite.clients.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-"+pod, metav1.GetOptions{})
		if err == nil && c.DeletionTimestamp != nil {
			if np, err := suite.clients.Kube.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{}); err == nil && np.UID != p.UID && np.DeletionTimestamp == nil {
				t.Logf("pod %s (UID %s) waits on the claim being deleted: deleting it again", pod, np.UID)
				_ = suite.clients.Kube.CoreV1().Pods(ns).Delete(ctx, pod, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &np.UID}})
			}
		}
		v, err := cl.Sim.Node(pod)
		if err != nil {
			return false, err
		}
		return slices.Contains(sc.Added(), pod) && v.PeerCode == "UN", fmt.Errorf("started fresh %v, host %s, peers see %q, replacing %q", sc.Added(), v.HostID, v.PeerCode, v.Replacing)
	})
	require.Equal(t, tokens, simTokens(t, cl, pod), "the replacement owns the dead node's tokens")
	v, err := cl.Sim.Node(pod)
	require.NoError(t, err)
	eps, err := cl.Sim.Endpoints()
	require.NoError(t, err)
	// kwok may give the new pod the dead one's IP: the node then keeps its Host ID
	// (§4.3 step 2, same address); else it has a new one and the dead one is gone.
	if v.Address == dead.Address {
		require.Equal(t, dead.HostID, v.HostID, "a same-address replacement keeps the Host ID")
		require.Len(t, eps, 3, "the dead node is no endpoint of its own")
	} else {
		require.NotEqual(t, dead.HostID, v.HostID, "a new address, a new Host ID")
		for _, e := range eps {
			require.NotEqual(t, dead.HostID, e.HostID, "the dead Host ID is gone")
		}
	}
	t.Logf("replaced %s (%s, %s) by %s (%s)", pod, dead.Address, dead.HostID, v.Address, v.HostID)

	// Another pod's start runs the block as a no-op.
	r = kubectl(t, time.Minute, "-n", ns, "delete", "pod", other, "--wait=false")
	require.Equal(t, exitOK, r.Code, "%s", r)
	waitFor(t, other+" restarted", opTimeout, func(context.Context) (bool, error) {
		return sc.Restarts(other) == 1, fmt.Errorf("%d restarts", sc.Restarts(other))
	})
	require.Empty(t, sc.InitFailures())
	require.NoError(t, sc.Err())
	t.Logf("pods that waited on their claim: %v", sc.StuckOnClaim())
}
