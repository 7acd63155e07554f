package nodetool

import (
	"math"
	"time"
)

// Time left of a stream plan from its summed bytes (docs/how-it-works/streaming.md §2.4
// steps 2–4). Netstats does not show the fixed waits around the streaming (§2.4 step 5).

// Remaining is the bytes still to stream (never negative).
func (t StreamTotals) Remaining() int64 { return max(t.TotalBytes-t.DoneBytes, 0) }

// ETA is how long the remaining bytes take at bytesPerSecond (a measured rate); ok is
// false for a rate that is not > 0.
func (t StreamTotals) ETA(bytesPerSecond float64) (time.Duration, bool) {
	if !(bytesPerSecond > 0) {
		return 0, false
	}
	return seconds(float64(t.Remaining()) / bytesPerSecond), true
}

// MinETA is the least time the remaining bytes take through one sender throttled at
// limit on v (§2.4 step 4): a decommission's, whose leaving node is the only sender.
// ok is false when the throttle is off (no bound).
func (t StreamTotals) MinETA(limit Throughput, v Version) (time.Duration, bool) {
	bps, ok := limit.BytesPerSecond(v)
	if !ok {
		return 0, false
	}
	return t.ETA(bps)
}

// seconds converts, saturating at the longest Duration.
func seconds(s float64) time.Duration {
	if s >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Ceil(s * float64(time.Second)))
}
