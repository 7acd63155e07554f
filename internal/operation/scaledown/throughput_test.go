package scaledown

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
)

func ids(list []checkpoint.Step) []string {
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
	nodes := []checkpoint.Node{{Pod: "a"}, {Pod: "b", Unstarted: true}, {Pod: "c"}}
	list := Steps(nodes, true)
	markLeft(list, map[string]bool{"c": true}, time.Now())
	assert.Equal(t, []string{"pause-operator",
		"record-throughput/a", "set-throughput/a", "decommission/a", "verify-left/a", "restore-throughput/a", "shrink-statefulset/a", "wait-pod-gone/a", "delete-pvcs/a",
		"shrink-statefulset/b", "wait-pod-gone/b", "delete-pvcs/b",
		"decommission/c", "verify-left/c", "shrink-statefulset/c", "wait-pod-gone/c", "delete-pvcs/c",
		"update-cluster", "resume-operator"}, ids(throttled(list)))

	driven := throttled(drivenSteps([]checkpoint.Node{{Pod: "a"}}))
	assert.Equal(t, []string{"record-throughput/a", "set-throughput/a", steps.StepRequestRemoval + "/a", steps.StepWaitLeaving + "/a", "verify-left/a", "restore-throughput/a",
		"wait-pod-gone/a", steps.StepWaitClaimsGone + "/a", steps.StepWaitReleased + "/a"}, ids(driven), "the operator decommissions, the plugin sets and restores around it")
}
