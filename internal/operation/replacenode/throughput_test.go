package replacenode

import (
	"testing"

	"github.com/stretchr/testify/assert"

	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestThrottledSteps: the sources' limits are recorded and set before the first step
// that can start the replacement (the option written, or the task created), and put
// back once it is verified, before the option goes and the operator comes back.
func TestThrottledSteps(t *testing.T) {
	ids := func(list []record.Step) []string {
		var out []string
		for _, s := range list {
			out = append(out, s.ID)
		}
		return out
	}
	assert.Equal(t, []string{"pause-operator", "record-throughput", "set-throughput", "set-replace-option/p2", "delete-dead-claims/p2",
		"delete-dead-pod/p2", "wait-replaced/p2", "restore-throughput", "remove-replace-option/p2", "resume-operator"},
		ids(throttled(Steps(&record.Replacement{Pod: "p2"}, true))))
	assert.Equal(t, []string{"record-throughput", "set-throughput", "create-replace-task/p2", "wait-replaced/p2", "restore-throughput", "wait-replace-task/p2"},
		ids(throttled(Steps(&record.Replacement{Pod: "p2", Task: "t"}, false))))
}

// TestExpectedLoad: the dead node's Load when the ring knows it, else the average of
// the datacenter's other nodes (another datacenter's do not count).
func TestExpectedLoad(t *testing.T) {
	ring := pubnodetool.Ring{Nodes: []pubnodetool.Node{row("UN", "10.0.0.1", "a", 16, "1 GiB"), row("UN", "10.0.0.2", "b", 16, "3 GiB"),
		row("DN", "10.0.0.3", "old", 16, "?"), {DC: "dc2", Status: "U", State: "N", HostID: "c", Load: "100 GiB"}}}
	l, ok := expectedLoad("1.5 GiB", ring, "dc1")
	assert.True(t, ok)
	assert.Equal(t, int64(3<<29), l)
	l, ok = expectedLoad("?", ring, "dc1")
	assert.True(t, ok)
	assert.Equal(t, int64(2<<30), l)
	_, ok = expectedLoad("?", pubnodetool.Ring{}, "dc1")
	assert.False(t, ok)
}
