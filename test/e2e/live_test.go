package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// liveScenarios are the status --wait cases (internal/cli/status_live.go, judge).
func liveScenarios() []scenario {
	return []scenario{{name: "status-wait", run: testStatusWait, group: true}}
}

// testStatusWait: `status --wait` through kubectl exits with the result of an
// operation finished, failed, interrupted, and one started by another process.
func testStatusWait(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	requireCommand(t, "status")
	wait := func(t *testing.T, cl *fixture.Cluster) Result {
		return cassandra(t, cl.Namespace, opTimeout, "status", "-n", cl.Namespace, cl.Name, "--wait", "--timeout", "5m", "--nodetool-interval", "1s")
	}
	t.Run("finished", func(t *testing.T) {
		ns := newNamespace(t)
		cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
		r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
		require.Equal(t, exitOK, r.Code, "%s", r)
		r = wait(t, cl)
		assert.Equal(t, exitOK, r.Code, "%s", r)
		assert.Contains(t, r.Stdout, "done: ", "%s", r)
	})
	t.Run("failed", func(t *testing.T) {
		ns := newNamespace(t)
		cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
		require.NoError(t, cl.Sim.SetFault(cl.Pods[1].Name, sim.Fault{RefuseRF: true}))
		r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
		require.NotEqual(t, exitOK, r.Code, "%s", r)
		if _, ok := readCheckpoint(t, cl); !ok {
			t.Skip("this build refuses before writing a checkpoint: nothing in flight to wait for")
		}
		r = wait(t, cl)
		assert.Contains(t, []int{exitError, exitRefused}, r.Code, "%s", r)
		assert.Regexp(t, `^(failed|stuck): `, r.Stdout, "%s", r)
	})
	t.Run("interrupted", func(t *testing.T) {
		ns := newNamespace(t)
		cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3)})
		p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
		interruptAtDecommission(t, cl, p)
		r := p.Wait(t, opTimeout)
		require.Equal(t, exitInterrupted, r.Code, "%s", r)
		r = wait(t, cl)
		assert.Equal(t, exitInterrupted, r.Code, "%s", r)
		assert.Contains(t, r.Stdout, "interrupted: ", "%s", r)
	})
	t.Run("started-by-another-process", func(t *testing.T) {
		ns := newNamespace(t)
		cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3)})
		p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
		waitFor(t, "the other process's checkpoint", opTimeout, func(context.Context) (bool, error) {
			_, ok := readCheckpoint(t, cl)
			return ok, nil
		})
		r := wait(t, cl)
		assert.Equal(t, exitOK, r.Code, "%s", r)
		assert.Contains(t, r.Stderr, "waiting for scale-down", "%s", r)
		other := p.Wait(t, opTimeout)
		assert.Equal(t, exitOK, other.Code, "%s", other)
		assert.True(t, strings.HasPrefix(r.Stdout, "done: "), "%s", r)
	})
}

// interruptAtDecommission sends SIGINT once the checkpoint records a decommission started.
func interruptAtDecommission(t *testing.T, cl *fixture.Cluster, p *Proc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_ = watchCR(ctx, cl, opTimeout, func(cr *unstructured.Unstructured) bool {
		cp, ok, _ := parseCheckpoint(cr)
		if !ok {
			return false
		}
		for _, s := range cp.Steps {
			if s.Kind == "decommission" && s.State != "pending" {
				_ = p.cmd.Process.Signal(syscall.SIGINT)
				return true
			}
		}
		return false
	})
}
