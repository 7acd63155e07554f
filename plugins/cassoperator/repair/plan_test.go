package repair

import (
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestCarryOnThroughput: the repair carries a scale's stream throughput on: its rate
// (without the records, which the plan's replacement hands over), its steps not done,
// and a set done whose restore is not (so the restore knows it may have acted); a set
// whose restore is done stays behind, and every carried kind is in the schema.
func TestCarryOnThroughput(t *testing.T) {
	old := &record.Checkpoint{OperationID: "scale-1", Kind: "scale-down",
		Throughput: &record.StreamThroughput{Rate: record.Rate{Value: 200, Unit: "MiB/s"}, Recorded: []record.RecordedThroughput{{Pod: "p2"}, {Pod: "p1"}}},
		Steps: []record.Step{
			{ID: record.StepID(record.StepRecordThroughput, "p2"), Kind: record.StepRecordThroughput, Pod: "p2", State: record.StateDone},
			{ID: record.StepID(record.StepSetThroughput, "p2"), Kind: record.StepSetThroughput, Pod: "p2", State: record.StateDone},
			{ID: record.StepID(record.StepRequestRemoval, "p2"), Kind: record.StepRequestRemoval, Pod: "p2", State: record.StateDone},
			{ID: record.StepID(record.StepRestoreThroughput, "p2"), Kind: record.StepRestoreThroughput, Pod: "p2", State: record.StateDone},
			{ID: record.StepID(record.StepRecordThroughput, "p1"), Kind: record.StepRecordThroughput, Pod: "p1", State: record.StateDone},
			{ID: record.StepID(record.StepSetThroughput, "p1"), Kind: record.StepSetThroughput, Pod: "p1", State: record.StateDone},
			{ID: record.StepID(record.StepRequestRemoval, "p1"), Kind: record.StepRequestRemoval, Pod: "p1", State: record.StateStarted},
			{ID: record.StepID(record.StepRestoreThroughput, "p1"), Kind: record.StepRestoreThroughput, Pod: "p1", State: record.StatePending},
		}}
	plan := &operation.Plan{CP: &record.Checkpoint{}}
	carryOn(plan, old)
	var ids []string
	for _, st := range plan.CP.Steps {
		ids = append(ids, st.ID+"="+st.State)
	}
	want := "set-throughput/p1=pending request-removal/p1=pending restore-throughput/p1=pending"
	if got := strings.Join(ids, " "); got != want {
		t.Errorf("carried steps %s, want %s", got, want)
	}
	if plan.CP.Throughput == nil || plan.CP.Throughput.Rate != old.Throughput.Rate || len(plan.CP.Throughput.Recorded) != 0 {
		t.Errorf("carried throughput %+v, want the rate without the records", plan.CP.Throughput)
	}
	if len(old.Throughput.Recorded) != 2 {
		t.Errorf("the old plan's records changed: %+v", old.Throughput.Recorded)
	}
	schema := Kind{}.Info().Checkpoint.Steps
	for _, k := range append(record.ThroughputSteps(), record.TaskSteps()...) {
		if !strings.Contains(" "+strings.Join(schema, " ")+" ", " "+k+" ") {
			t.Errorf("the repair's schema lacks %s: %v", k, schema)
		}
	}
}
