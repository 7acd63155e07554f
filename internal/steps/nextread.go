package steps

import (
	"time"
)

// When to read a stream's progress next. Each read is a nodetool call, which starts a
// JVM on the node (about 1.5 s of CPU): reads are spent where they tell something.

// readBounds are the shortest and longest waits between two reads, and the wait used
// when nothing predicts the end.
type readBounds struct {
	Min, Max, Fallback time.Duration
}

// streamLook is what the last read of a stream showed.
type streamLook struct {
	// Remaining bytes and the measured Rate (bytes/s; 0: not measured yet).
	Remaining int64
	Rate      float64
	// Since is how long the stream has been watched.
	Since time.Duration
	// EndSignalled: the end is told without a read (the blocking decommission call
	// returns), so reads only report progress and need not close in on the end.
	EndSignalled bool
	// Ended: the node reports its end (DECOMMISSIONED) and what confirms it (the ring
	// dropping the node) is expected any moment; Since counts from then.
	Ended bool
}

// nextRead is how long to wait before reading the stream again. While the end comes by
// itself, the waits double (Since, within bounds): a few reads at first show the stream
// started and its rate, then one every Max. Otherwise the wait is half the predicted time
// left: far from the end reads are rare, and each read halves the distance, so the end
// is seen within Min of it after about log2(time left / Min) reads. With no prediction
// (rate not measured, or nothing left to send while the node still leaves) the wait is
// Fallback. Once the node reports its end, the confirmation is read again after Min,
// then ever less often up to Fallback (it should come at once; one that does not must
// not cost a call a second). The result is always within [Min, Max].
func nextRead(l streamLook, b readBounds) time.Duration {
	d := b.Fallback
	switch {
	case l.Ended:
		d = min(l.Since, b.Fallback)
	case l.EndSignalled:
		d = l.Since
	case l.Rate > 0 && l.Remaining > 0:
		d = seconds(0.5 * float64(l.Remaining) / l.Rate)
	}
	return min(max(d, b.Min), max(b.Max, b.Min))
}

// seconds converts, saturating far beyond any bound.
func seconds(s float64) time.Duration {
	const limit = float64(1<<62) / float64(time.Second)
	if s >= limit {
		return time.Duration(1 << 62)
	}
	return time.Duration(s * float64(time.Second))
}
