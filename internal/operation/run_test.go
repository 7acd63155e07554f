package operation

import (
	"context"
	"testing"

	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// aheadStep counts the reads it was asked to start as soon as the run holds the lock.
type aheadStep struct{ started int }

func (*aheadStep) Done(context.Context) (bool, error) { return false, nil }
func (*aheadStep) Safe(context.Context) error         { return nil }
func (*aheadStep) Do(context.Context) error           { return nil }
func (s *aheadStep) ReadAfterLock(context.Context)    { s.started++ }

// The first step starts its recheck's read when the run begins only while nothing of
// the operation has started: a resumed operation's first step may be found done, and
// its read would be a nodetool call for nothing.
func TestReadAfterLockOnlyBeforeAnythingStarted(t *testing.T) {
	ctx := context.Background()
	fresh := func() *record.Checkpoint {
		return &record.Checkpoint{Steps: []record.Step{
			{ID: "request-removal-p4", State: record.StatePending},
			{ID: "wait-p4", State: record.StatePending},
		}}
	}
	for _, tc := range []struct {
		name   string
		change func(*record.Checkpoint)
		want   int
	}{
		{"fresh", func(*record.Checkpoint) {}, 1},
		{"first started", func(cp *record.Checkpoint) { cp.Steps[0].State = record.StateStarted }, 0},
		{"first tried before", func(cp *record.Checkpoint) { cp.Steps[0].Attempts = 1 }, 0},
		{"a later step done", func(cp *record.Checkpoint) { cp.Steps[1].State = record.StateDone }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp := fresh()
			tc.change(cp)
			first, second := &aheadStep{}, &aheadStep{}
			readAfterLock(ctx, cp, map[string]pub.Step{"request-removal-p4": first, "wait-p4": second})
			if first.started != tc.want || second.started != 0 {
				t.Fatalf("reads started: first step %d, second %d; want %d and 0", first.started, second.started, tc.want)
			}
		})
	}
	readAfterLock(ctx, &record.Checkpoint{}, nil) // no steps: nothing to start
}
