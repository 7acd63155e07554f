package steps

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/observation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// recordThroughput reads the limiters the operation will change on each of its nodes
// and records them in the checkpoint. The record is the step's whole effect: it reaches
// the server with the next write, set's "started", before set acts.
type recordThroughput struct{ throughputStep }

// Describe implements engine.Describer.
func (s *recordThroughput) Describe() string { return "record the stream throughput of " + s.who() }

// PlanText implements PlanTexter.
func (s *recordThroughput) PlanText() string {
	v, _ := nodetool.ParseVersion(s.w.CP.Throughput.Version)
	return fmt.Sprintf("read the stream throughput of %s (%s) and record it in the checkpoint, to put it back after", s.who(), limiterWords(nodetool.Limiters(v, s.w.CP.Throughput.InterDC)))
}

// Done: every node has its record (what the checkpoint holds is the effect).
func (s *recordThroughput) Done(context.Context) (bool, error) {
	for _, p := range s.pods {
		if _, ok := s.w.CP.Throughput.RecordOf(p); !ok {
			return false, nil
		}
	}
	return true, nil
}

// Safe: reading changes nothing.
func (s *recordThroughput) Safe(context.Context) error { return nil }

// Do reads each node without a record (its version, then each limiter to change) and
// records it; a node gone has nothing to record. A value nodetool could not set back
// exactly is refused before anything changes.
func (s *recordThroughput) Do(ctx context.Context) error {
	t, err := s.w.throttler()
	if err != nil {
		return err
	}
	for _, pod := range s.pods {
		if _, ok := s.w.CP.Throughput.RecordOf(pod); ok {
			continue
		}
		v, err := t.Version(ctx, pod)
		if err != nil {
			if why, gerr := s.gone(ctx, pod); gerr == nil && why != "" {
				continue
			}
			return &operation.Retryable{Err: fmt.Errorf("cannot read the Cassandra version of %s: %w", pod, err)}
		}
		order := nodetool.Limiters(v, s.w.CP.Throughput.InterDC)
		// A mark left on the pod says what the node had before an operation set the
		// rate it may still read: that value is what it had, never the rate.
		p, err := s.w.getPod(ctx, pod)
		if err != nil {
			return &operation.Retryable{Err: err}
		}
		var mark ThroughputMark
		marked := false
		if p != nil {
			if mark, marked, err = markOf(p); err != nil {
				return &engine.NotStarted{Code: operation.ExitRefused, Err: fmt.Errorf("%w: remove it, or set it right, then run again", err)}
			}
		}
		read, err := s.limits(ctx, pod, v, order)
		if err != nil {
			return &operation.Retryable{Err: fmt.Errorf("cannot read the stream throughput of %s: %w", pod, err)}
		}
		r := record.RecordedThroughput{Pod: pod, Version: v.String(), Limiters: map[string]record.Rate{}, At: s.w.Clock().UTC()}
		for _, l := range order {
			had := hadFromMark(mark, marked, l, read[l], v)
			if err := restorable(pod, v, l, had); err != nil {
				return &engine.NotStarted{Code: operation.ExitRefused, Err: err}
			}
			r.Limiters[string(l)] = RecordRate(had)
		}
		s.w.amend(func() { s.w.CP.Throughput.Recorded = append(s.w.CP.Throughput.Recorded, r) })
	}
	return nil
}

// Wait: Do recorded every node it could read, or found it gone; a gone node has no
// record, which Done alone would wait for.
func (s *recordThroughput) Wait(context.Context) error { return nil }

// Evident implements engine.Evident: its effect is the checkpoint itself, carried by
// the next write (set's "started", written before set acts).
func (s *recordThroughput) Evident() {}

// Passive implements engine.Passive: it reads, and changes nothing to fence.
func (s *recordThroughput) Passive() {}

// KeepsObservations implements engine.ObservationKeeper: the values it read are still
// true for set, right after.
func (s *recordThroughput) KeepsObservations() {}

// setThroughput sets the operation's rate on each limiter of each node. It is written
// "started" before it acts (never engine.Evident): that write carries the record.
type setThroughput struct{ throughputStep }

// Describe implements engine.Describer.
func (s *setThroughput) Describe() string {
	return fmt.Sprintf("set the stream throughput of %s to %s", s.who(), s.target())
}

// PlanText implements PlanTexter: the rate, who it throttles, and how long the node's
// data takes at it beside the default (Load ÷ rate).
func (s *setThroughput) PlanText() string {
	tp := s.w.CP.Throughput
	v, _ := nodetool.ParseVersion(tp.Version)
	if s.rec.Pod != "" {
		text := fmt.Sprintf("set the stream throughput of %s to %s: it is the sender of its decommission, and only a sender's limit throttles a stream", s.rec.Pod, s.target())
		if load, ok := tp.Loads[s.rec.Pod]; ok {
			text += "; " + StreamTimeText(load, s.target(), v)
		}
		return text
	}
	part := "a bootstrap, and the joining node's plays no part"
	if s.w.CP.Replace != nil {
		part = "the replacement's streaming (as in a bootstrap), and the replacement's own plays no part"
	}
	text := fmt.Sprintf("set the stream throughput of %s to %s: each source's own limit throttles its part of %s", s.who(), s.target(), part)
	var joining []string
	for _, p := range slices.Sorted(maps.Keys(tp.Loads)) {
		joining = append(joining, fmt.Sprintf("%s receives %s", p, StreamTimeText(tp.Loads[p], s.target(), v)))
	}
	if len(joining) > 0 {
		text += "; at most, one source at a time: " + strings.Join(joining, ", ")
	}
	return text
}

// Done: every node reads the rate on each recorded limiter, or has nothing to set (its
// pod gone, or its node left the ring). Once its restore may have acted (recorded
// started or done) the set is over: a resume asks every step again, and a node already
// put back, or half, must not be set to the rate a second time.
func (s *setThroughput) Done(ctx context.Context) (bool, error) {
	if st := s.w.stepState(record.StepRestoreThroughput, s.rec.Pod); st == record.StateStarted || st == record.StateDone {
		return true, nil
	}
	for _, pod := range s.pods {
		ok, err := s.podDone(ctx, pod)
		if !ok || err != nil {
			return false, err
		}
	}
	return true, nil
}

// podDone is Done for one node.
func (s *setThroughput) podDone(ctx context.Context, pod string) (bool, error) {
	r, v, ok, err := s.record(pod)
	if err != nil {
		return false, err
	}
	if ok {
		read, rerr := s.limits(ctx, pod, v, recordedLimiters(r))
		if rerr == nil && len(toSet(recordedLimiters(r), read, s.target(), v)) == 0 {
			return true, nil
		}
		// Not at the rate, or unreadable: a node that left has nothing to set.
		why, gerr := s.gone(ctx, pod)
		switch {
		case gerr != nil:
			return false, gerr
		case why != "":
			s.w.inform("set/"+pod, s.rec.ID, "nothing to set on "+pod+": "+why)
			return true, nil
		}
		return false, rerr // nil: not at the rate yet
	}
	why, err := s.gone(ctx, pod)
	return why != "", err
}

// Safe: every node that is still there has its record: a rate set without one could
// never be put back.
func (s *setThroughput) Safe(ctx context.Context) error {
	for _, pod := range s.pods {
		if _, ok := s.w.CP.Throughput.RecordOf(pod); ok {
			continue
		}
		why, err := s.gone(ctx, pod)
		switch {
		case err != nil:
			return err
		case why == "":
			return fmt.Errorf("the checkpoint holds no record of the stream throughput of %s: refusing to change it (it could not be put back)", pod)
		}
	}
	return nil
}

// Do sets each limiter of each node that is not at the rate yet (one nodetool call
// each, never retried here: the step's Done decides what happened).
func (s *setThroughput) Do(ctx context.Context) error {
	if err := s.w.refuseDeleting(s.rec.ID); err != nil {
		return err
	}
	t, err := s.w.throttler()
	if err != nil {
		return err
	}
	for _, pod := range s.pods {
		r, v, ok, err := s.record(pod)
		if err != nil {
			return err
		}
		if !ok {
			continue // gone (Safe)
		}
		read, err := s.limits(ctx, pod, v, recordedLimiters(r))
		if err != nil {
			return &operation.Retryable{Err: fmt.Errorf("cannot read the stream throughput of %s: %w", pod, err)}
		}
		change := toSet(recordedLimiters(r), read, s.target(), v)
		if len(change) == 0 {
			continue
		}
		// The owner's mark first: a limit is never set without it (throughput_mark.go).
		if err := s.markPod(ctx, pod, r); err != nil {
			return &operation.Retryable{Err: err}
		}
		for _, l := range change {
			if err := s.set(ctx, t, pod, v, l, s.target()); err != nil {
				return err
			}
		}
	}
	return nil
}

// KeepsObservations implements engine.ObservationKeeper: Do changes the limiters only,
// and drops their kept reads itself (set); the node's mode, its pod and the ring read
// before stay true (the decommission next asks them).
func (s *setThroughput) KeepsObservations() {}

// KeepsObservations implements engine.ObservationKeeper, as set's.
func (s *restoreThroughput) KeepsObservations() {}

// set sets one limiter and drops its kept read. A rate the node's version cannot take
// stops the run (exit 3) with the nearest it can: the plan checked it against one
// node's version, and this one differs.
func (s throughputStep) set(ctx context.Context, t throttler, pod string, v nodetool.Version, l nodetool.Limiter, to nodetool.Throughput) error {
	err := t.SetThroughput(ctx, pod, v, l, to)
	observation.Drop(&s.w.obs, throughputKind, pod+"/"+string(l))
	var inexpressible *nodetool.InexpressibleRateError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &inexpressible):
		return &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("%s runs Cassandra %s: %w", pod, v, err)}
	case ctx.Err() != nil:
		return err
	}
	return &operation.Retryable{Err: err}
}

// restoreThroughput puts back the values recorded before the operation set them, once
// the node's streaming is over. A node gone or decommissioned has nothing to restore
// (its JVM goes with its pod); one that restarted since has its cassandra.yaml value
// back, which is said, not "restored".
type restoreThroughput struct{ throughputStep }

// Describe implements engine.Describer.
func (s *restoreThroughput) Describe() string {
	return "restore the recorded stream throughput of " + s.who()
}

// PlanText implements PlanTexter.
func (s *restoreThroughput) PlanText() string {
	if s.rec.Pod != "" {
		return "put back the stream throughput recorded on " + s.rec.Pod + " (nothing to restore once it has left the ring: its settings go with its JVM)"
	}
	return "put back the stream throughput recorded on " + s.who()
}

// Done: every node has nothing to put back (restoreWork).
func (s *restoreThroughput) Done(ctx context.Context) (bool, error) {
	for _, pod := range s.pods {
		back, _, err := s.restoreWork(ctx, pod)
		if len(back) > 0 || err != nil {
			return false, err
		}
		// Put back: its mark goes too.
		if marked, err := s.ownMark(ctx, pod); marked || err != nil {
			return false, err
		}
	}
	return true, nil
}

// restoreWork reads what pod must have set back (judgeRestore, for each recorded
// limiter) and its version. A node without a record had nothing set; one gone has
// nothing to restore (said once).
func (s *restoreThroughput) restoreWork(ctx context.Context, pod string) ([]nodetool.Limiter, nodetool.Version, error) {
	r, v, ok, err := s.record(pod)
	if !ok || err != nil {
		return nil, v, err
	}
	why, err := s.gone(ctx, pod)
	if err != nil {
		return nil, v, err
	}
	if why != "" {
		s.w.inform("restore/"+pod, s.rec.ID, "nothing to restore on "+pod+": "+why)
		return nil, v, nil
	}
	order := recordedLimiters(r)
	read, err := s.limits(ctx, pod, v, order)
	if err != nil {
		return nil, v, err
	}
	var back []nodetool.Limiter
	for _, l := range order {
		set, warning := judgeRestore(restoreLook{Pod: pod, Limiter: l, Now: read[l], Recorded: RateThroughput(r.Limiters[string(l)]), Target: s.target(), Version: v,
			SetDone: s.w.stepState(record.StepSetThroughput, s.rec.Pod) == record.StateDone, RestoreStarted: s.w.stepState(record.StepRestoreThroughput, s.rec.Pod) != record.StatePending})
		if warning != "" {
			s.w.warnOnce("restore/"+pod+"/"+string(l), s.rec.ID, warning)
		}
		if set {
			back = append(back, l)
		}
	}
	return back, v, nil
}

// Safe: putting a node's own value back is always safe.
func (s *restoreThroughput) Safe(context.Context) error { return nil }

// Do sets back each limiter still at the rate the operation set.
func (s *restoreThroughput) Do(ctx context.Context) error {
	t, err := s.w.throttler()
	if err != nil {
		return err
	}
	for _, pod := range s.pods {
		back, v, err := s.restoreWork(ctx, pod)
		if err != nil {
			return &operation.Retryable{Err: fmt.Errorf("cannot read the stream throughput of %s: %w", pod, err)}
		}
		r, _ := s.w.CP.Throughput.RecordOf(pod)
		for _, l := range back {
			if err := s.set(ctx, t, pod, v, l, RateThroughput(r.Limiters[string(l)])); err != nil {
				return err
			}
		}
		if marked, err := s.ownMark(ctx, pod); err != nil || marked {
			if err == nil {
				err = s.w.writeMark(ctx, pod, nil)
			}
			if err != nil {
				return &operation.Retryable{Err: err}
			}
		}
	}
	return nil
}

// limiterWords names the limiters an operation changes: "its stream and
// entire-SSTable limiters".
func limiterWords(ls []nodetool.Limiter) string {
	names := map[nodetool.Limiter]string{nodetool.LimiterStream: "stream", nodetool.LimiterEntireSSTable: "entire-SSTable",
		nodetool.LimiterInterDC: "inter-DC", nodetool.LimiterEntireSSTableInterDC: "entire-SSTable inter-DC"}
	var w []string
	for _, l := range ls {
		w = append(w, names[l])
	}
	switch len(w) {
	case 1:
		return "its " + w[0] + " limiter"
	default:
		return "its " + strings.Join(w[:len(w)-1], ", ") + " and " + w[len(w)-1] + " limiters"
	}
}
