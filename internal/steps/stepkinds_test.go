package steps

import (
	"slices"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestPublishedStepKinds: the driven scale's step kinds an operator's kind lists in its
// schema (pkg/record) are the library's, as driven.go names them.
func TestPublishedStepKinds(t *testing.T) {
	if !slices.Equal(record.DrivenSteps(), DrivenStepKinds) {
		t.Fatalf("record.DrivenSteps() = %v, the library's are %v", record.DrivenSteps(), DrivenStepKinds)
	}
	for pub, own := range map[string]string{record.StepRequestRemoval: StepRequestRemoval, record.StepWaitLeaving: StepWaitLeaving,
		record.StepWaitClaimsGone: StepWaitClaimsGone, record.StepWaitReleased: StepWaitReleased, record.StepRequestGrowth: StepRequestGrowth} {
		if pub != own {
			t.Errorf("pkg/record names %q, the library %q", pub, own)
		}
	}
}
