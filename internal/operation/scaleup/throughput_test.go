package scaleup

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestThrottledSteps: the sources' limits are recorded and set before the first new
// node is asked for, and restored once the last one joined, before the count is set
// and the cleanups run.
func TestThrottledSteps(t *testing.T) {
	var ids []string
	for _, s := range throttled(Steps([]record.Node{{Pod: "n1"}, {Pod: "n2"}}, []record.Node{{Pod: "o0"}}, true)) {
		ids = append(ids, s.ID)
	}
	assert.Equal(t, []string{"pause-operator", "record-throughput", "set-throughput",
		"grow-statefulset/n1", "wait-joined/n1", "grow-statefulset/n2", "wait-joined/n2", "restore-throughput",
		"update-cluster", "resume-operator", "cleanup/o0"}, ids)
}
