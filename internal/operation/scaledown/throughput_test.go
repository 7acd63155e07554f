package scaledown

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

func ids(list []record.Step) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.ID)
	}
	return out
}

// TestThrottledSteps: each node that streams has its limits recorded and set right
// before it is asked to leave and restored right after it left; one that never started
// or already left gets none.
func TestThrottledSteps(t *testing.T) {
	nodes := []record.Node{{Pod: "a"}, {Pod: "b", Unstarted: true}, {Pod: "c"}}
	list := Steps(nodes, true)
	markLeft(list, map[string]bool{"c": true}, time.Now())
	assert.Equal(t, []string{"pause-operator",
		"record-throughput/a", "set-throughput/a", "decommission/a", "verify-left/a", "restore-throughput/a", "shrink-statefulset/a", "wait-pod-gone/a", "delete-pvcs/a",
		"shrink-statefulset/b", "wait-pod-gone/b", "delete-pvcs/b",
		"decommission/c", "verify-left/c", "shrink-statefulset/c", "wait-pod-gone/c", "delete-pvcs/c",
		"update-cluster", "resume-operator"}, ids(throttled(list)))

	driven := throttled(drivenSteps([]record.Node{{Pod: "a"}}))
	assert.Equal(t, []string{"record-throughput/a", "set-throughput/a", record.StepRequestRemoval + "/a", record.StepWaitLeaving + "/a", "verify-left/a", "restore-throughput/a",
		"wait-pod-gone/a", record.StepWaitClaimsGone + "/a", record.StepWaitReleased + "/a"}, ids(driven), "the operator decommissions, the plugin sets and restores around it")
}
