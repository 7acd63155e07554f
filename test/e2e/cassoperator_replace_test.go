package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// testCassOpReplaceTask: the stand-in's replacenode job on a real API server, without
// the plugin: a dead node's pod named in a CassandraTask is deleted with its claim, the
// StatefulSet controller makes both again, and the operator starts the new pod with the
// dead node's address as replace address: a fresh node that replaces it (a new host ID,
// or the old one when kwok gives the pod the old IP) with the dead node's tokens, UN,
// the dead node gone from gossip. The task is Complete before the
// replacement is done (cass-operator #748).
func testCassOpReplaceTask(t *testing.T) {
	ns := newNamespace(t)
	dc := newCassOpDC(t, ns, fixture.DatacenterOptions{Size: 3, Sim: fixture.SimOptions{RF: 3}})
	ctx := context.Background()
	require.NoError(t, dc.SetSimJoinTime(3*time.Second)) // RING_DELAY 500 ms, 1.5 s of streaming
	pod := dc.Pods[1].Name
	dead, ok := dc.SimNode(pod)
	require.True(t, ok)
	require.NoError(t, dc.KillNode(ctx, pod))
	require.NoError(t, dc.CreateReplaceTask(ctx, "replace-"+pod, pod))

	doneBefore := ""
	err := fixture.WaitFor(ctx, "replacement of "+pod, time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		u, err := dc.Task(ctx, "replace-"+pod)
		if err != nil {
			return false, err
		}
		done, _, _ := unstructured.NestedString(u.Object, "status", "completionTime")
		v, ok := dc.SimNode(pod)
		logs, _ := dc.Sim.Log(pod)
		replaced := ok && v.PeerCode == "UN" && v.Mode == sim.ModeNormal &&
			slices.ContainsFunc(logs, func(l string) bool {
				return strings.Contains(l, "Gathering node replacement information for /"+dead.Address)
			}) &&
			slices.ContainsFunc(logs, func(l string) bool { return strings.Contains(l, "Bootstrap completed") })
		if done != "" && doneBefore == "" {
			doneBefore = "no"
			if !replaced {
				doneBefore = "yes"
			}
		}
		r, err := dc.NodeReplacements(ctx)
		if err != nil {
			return false, err
		}
		return done != "" && replaced && len(r) == 0, nil
	})
	if err != nil {
		v, _ := dc.SimNode(pod)
		claim, cerr := suite.clients.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "server-data-"+pod, metav1.GetOptions{})
		p, perr := suite.clients.Kube.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		logs, _ := dc.Sim.Log(pod)
		t.Logf("node %+v\nclaim %v %v\npod %v %v\nlog %q", v, claim.ObjectMeta, cerr, p.Status, perr, logs)
	}
	require.NoError(t, err, "the stand-in waits: %s; actions %q; last step error %v", dc.Operator.Waiting(), dc.Operator.Actions(), dc.Operator.LastError())
	assert.Equal(t, "yes", doneBefore, "the task completed before the replacement was UN (#748)")
	v, _ := dc.SimNode(pod)
	// kwok may give the new pod the old IP: a same-address replacement keeps the host ID
	// ("use the replacee's host Id as our own", STREAMING-AND-REPLACE.md §4.3 step 2).
	if v.Address == dead.Address {
		assert.Equal(t, dead.HostID, v.HostID, "same address: the replacee's host ID")
	} else {
		assert.NotEqual(t, dead.HostID, v.HostID, "a new address: a new host ID")
	}
	assert.Equal(t, dead.Tokens, v.Tokens, "the dead node's tokens")
	ids, err := dc.GossipHostIDs()
	require.NoError(t, err)
	assert.Len(t, ids, 3, "gossip knows the three nodes only, the dead one gone: %v", ids)
	if v.Address != dead.Address {
		assert.False(t, slices.Contains(ids, dead.HostID), "old host ID %s gone from gossip: %v", dead.HostID, ids)
	}
	require.NoError(t, dc.RunErr())
}
