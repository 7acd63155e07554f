package steps

import (
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// StreamMeter turns successive netstats reads of one stream plan into progress with
// rate and ETA.
type StreamMeter struct {
	samples []streamSample
	// last is the last read's progress (nil: that read listed no stream).
	last *record.Progress
}

type streamSample struct {
	at   time.Time
	done int64
}

// add records a read and returns the rate in bytes/s (0 while unknown). A total that
// shrank or bytes that went back mean a new plan (the decommission was issued again):
// the window starts over.
func (m *StreamMeter) add(at time.Time, t nodetool.StreamTotals) float64 {
	if n := len(m.samples); n > 0 && t.DoneBytes < m.samples[n-1].done {
		m.samples = nil
	}
	m.samples = append(m.samples, streamSample{at: at, done: t.DoneBytes})
	// Keep the newest sample at least rateWindow old, and everything after it.
	for len(m.samples) > 2 && at.Sub(m.samples[1].at) >= time.Minute {
		m.samples = m.samples[1:]
	}
	first, last := m.samples[0], m.samples[len(m.samples)-1]
	dt := last.at.Sub(first.at).Seconds()
	if len(m.samples) < 2 || dt <= 0 {
		return 0
	}
	return float64(last.done-first.done) / dt
}

// Sample reads the progress of plan in direction dir out of ns, read at at, for
// operation op ("decommission", "bootstrap") of pod. ok is false when the plan is not
// listed (not started yet, or over).
func (m *StreamMeter) Sample(at time.Time, ns nodetool.Netstats, op, pod, plan, dir string) (record.Progress, bool) {
	m.last = nil
	t, ok := ns.StreamProgress(plan, dir)
	if !ok {
		return record.Progress{}, false
	}
	p := record.Progress{Operation: op, Pod: pod, DoneBytes: t.DoneBytes, TotalBytes: t.TotalBytes, Peers: t.Peers, At: at.UTC()}
	if rate := m.add(at, t); rate > 0 {
		p.BytesPerSecond = rate
		p.ETASeconds = int64(float64(max(t.TotalBytes-t.DoneBytes, 0))/rate + 0.5)
	}
	m.last = &p
	return p, true
}

// look is what the last read showed, for timing the next one (nextRead); ok is false
// when that read listed no stream or was not made (forget).
func (m *StreamMeter) look() (l streamLook, ok bool) {
	if m.last == nil {
		return l, false
	}
	return streamLook{Remaining: max(m.last.TotalBytes-m.last.DoneBytes, 0), Rate: m.last.BytesPerSecond}, true
}

// forget drops the last read before a new look, so a look that fails to read the stream
// predicts nothing.
func (m *StreamMeter) forget() { m.last = nil }

// reportStream reports the plan's progress in ns for step id: to the reporter, and for
// the checkpoint's next write.
func (w *World) reportStream(id, op, pod string, ns nodetool.Netstats, plan, dir string, m *StreamMeter) {
	p, ok := m.Sample(w.Clock(), ns, op, pod, plan, dir)
	if !ok {
		return
	}
	if w.NoteProgress != nil {
		w.NoteProgress(id, p)
	}
	if r, ok := w.Reporter.(engine.ProgressReporter); ok {
		r.Progress(id, p)
	}
}

// ReportStream is reportStream for the steps of a kind's own package (replace-node).
func (w *World) ReportStream(id, op, pod string, ns nodetool.Netstats, plan, dir string, m *StreamMeter) {
	w.reportStream(id, op, pod, ns, plan, dir, m)
}
