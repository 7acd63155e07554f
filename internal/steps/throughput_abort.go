package steps

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// What an operation ended before its restore steps ran (abort, or a plan replaced by
// another) must put back itself: nothing this operation set may stay behind.

// ThroughputToRestore are cp's restore steps not done whose set may have acted (it is
// recorded started or done: the engine writes "started" before it acts, so a set still
// pending never did). skip leaves out the pods another plan takes over (nil: none).
func ThroughputToRestore(cp *record.Checkpoint, skip func(pod string) bool) []record.Step {
	if cp.Throughput == nil {
		return nil
	}
	var out []record.Step
	for _, st := range cp.Steps {
		if st.Kind != record.StepRestoreThroughput || st.State == record.StateDone || skip != nil && skip(st.Pod) {
			continue
		}
		if set, ok := cp.Step(record.StepID(record.StepSetThroughput, st.Pod)); ok && set.State != record.StatePending {
			out = append(out, st)
		}
	}
	return out
}

// ThroughputNotes say what abort puts back before it stops cp (ThroughputToRestore).
func ThroughputNotes(cp *record.Checkpoint) []string {
	var out []string
	for _, st := range ThroughputToRestore(cp, nil) {
		who := st.Pod
		if who == "" {
			who = fmt.Sprintf("the %d nodes that stream to %s", len(cp.Throughput.Sources), receivers(cp))
		}
		out = append(out, fmt.Sprintf("the stream throughput this operation set on %s (%s) goes back to what was recorded before it (unless the node left the ring meanwhile)",
			who, RateThroughput(cp.Throughput.Rate)))
	}
	return out
}

// RestoreThroughput runs the restore steps ThroughputToRestore lists, outside the
// engine (abort, a plan replaced): each asked whether it is done in the world, acted
// on if not, and asked again. The caller has proved it holds the operation's lock.
func RestoreThroughput(ctx context.Context, w *World, skip func(pod string) bool) error {
	for _, rec := range ThroughputToRestore(w.CP, skip) {
		st, err := newThroughputStep(w, rec)
		if err != nil {
			return err
		}
		done, err := st.Done(ctx)
		if err != nil {
			return fmt.Errorf("cannot tell whether %s is done: %w", rec.ID, err)
		}
		if done {
			continue
		}
		markStarted(w.CP, rec.ID) // in memory: its Done then knows the value read back is its own
		if err := st.Do(ctx); err != nil {
			return fmt.Errorf("%s: %w", rec.ID, err)
		}
		w.Forget()
		if done, err := st.Done(ctx); err != nil || !done {
			return fmt.Errorf("%s: the stream throughput does not read its recorded value after it was set back (%v)", rec.ID, err)
		}
	}
	return nil
}

// markStarted records step id started in cp (in memory).
func markStarted(cp *record.Checkpoint, id string) {
	for i := range cp.Steps {
		if cp.Steps[i].ID == id {
			cp.Steps[i].State = record.StateStarted
		}
	}
}

// CarryThroughput hands to, a plan replacing from under the same operation (a re-plan),
// the records from holds of the nodes to sets again: what a node had before the first
// plan set it stays what goes back. It returns the pods whose restore to now owns, which
// from's own restore must skip.
func CarryThroughput(from, to *record.Checkpoint) func(pod string) bool {
	carried := map[string]bool{}
	if from.Throughput == nil || to.Throughput == nil {
		return func(string) bool { return false }
	}
	restores := map[string]bool{}
	for _, st := range to.Steps {
		if st.Kind != record.StepRestoreThroughput {
			continue
		}
		if st.Pod != "" {
			restores[st.Pod] = true
		}
		for _, p := range to.Throughput.Sources {
			restores[p] = restores[p] || st.Pod == ""
		}
	}
	for _, r := range from.Throughput.Recorded {
		if _, has := to.Throughput.RecordOf(r.Pod); restores[r.Pod] && !has {
			to.Throughput.Recorded = append(to.Throughput.Recorded, r)
			carried[r.Pod] = true
			if setMayHaveActed(from, r.Pod) {
				// The first plan may have set it: the new one's set is as far (a resume
				// asks the node; an abort puts it back).
				markSetStarted(to, r.Pod)
			}
		}
	}
	sources := from.Throughput.Sources
	return func(pod string) bool {
		if pod != "" {
			return carried[pod]
		}
		for _, p := range sources {
			if !carried[p] {
				return false
			}
		}
		return len(sources) > 0
	}
}

// setMayHaveActed: cp's set of pod's limits (its own step, or the one of the sources)
// is recorded started or done.
func setMayHaveActed(cp *record.Checkpoint, pod string) bool {
	for _, st := range cp.Steps {
		if st.Kind == record.StepSetThroughput && (st.Pod == pod || st.Pod == "") && st.State != record.StatePending {
			return true
		}
	}
	return false
}

// markSetStarted records cp's pending set of pod's limits started.
func markSetStarted(cp *record.Checkpoint, pod string) {
	for i := range cp.Steps {
		st := &cp.Steps[i]
		if st.Kind == record.StepSetThroughput && (st.Pod == pod || st.Pod == "") && st.State == record.StatePending {
			st.State = record.StateStarted
		}
	}
}
