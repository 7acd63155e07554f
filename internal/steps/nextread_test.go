package steps

import (
	"testing"
	"time"
)

func TestNextRead(t *testing.T) {
	const mib = 1 << 20
	verify := readBounds{Min: time.Second, Max: time.Minute, Fallback: 5 * time.Second}
	report := readBounds{Min: 5 * time.Second, Max: 3 * time.Minute}
	for _, c := range []struct {
		name string
		look streamLook
		b    readBounds
		want time.Duration
	}{
		{"far from the end: capped at Max", streamLook{Remaining: 24 * mib * 600, Rate: 24 * mib}, verify, time.Minute},
		{"half the time left", streamLook{Remaining: 24 * mib * 40, Rate: 24 * mib}, verify, 20 * time.Second},
		{"near the end: Min", streamLook{Remaining: 24 * mib, Rate: 24 * mib}, verify, time.Second},
		{"rate not measured yet: Fallback", streamLook{Remaining: 24 * mib * 600}, verify, 5 * time.Second},
		{"nothing left to send while leaving: Fallback", streamLook{Rate: 24 * mib}, verify, 5 * time.Second},
		{"negative rate: Fallback", streamLook{Remaining: mib, Rate: -1}, verify, 5 * time.Second},
		{"Fallback below Min is raised", streamLook{}, readBounds{Min: time.Second, Max: time.Minute, Fallback: 100 * time.Millisecond}, time.Second},
		{"Max below Min: Min wins", streamLook{Remaining: 24 * mib * 600, Rate: 24 * mib}, readBounds{Min: 2 * time.Second, Max: time.Second}, 2 * time.Second},
		{"huge remaining saturates to Max", streamLook{Remaining: 1 << 62, Rate: 1e-9}, verify, time.Minute},
		{"ended: the confirmation is read again after Min", streamLook{Ended: true}, verify, time.Second},
		{"ended a while ago: waits grow", streamLook{Ended: true, Since: 3 * time.Second}, verify, 3 * time.Second},
		{"ended long ago: no longer than Fallback", streamLook{Ended: true, Since: time.Hour}, verify, 5 * time.Second},
		{"end signalled, first read: Min", streamLook{EndSignalled: true}, report, 5 * time.Second},
		{"end signalled: waits double with time", streamLook{EndSignalled: true, Since: 40 * time.Second}, report, 40 * time.Second},
		{"end signalled: no dense reads near the end", streamLook{EndSignalled: true, Since: 10 * time.Minute, Remaining: mib, Rate: 24 * mib}, report, 3 * time.Minute},
	} {
		if got := nextRead(c.look, c.b); got != c.want {
			t.Errorf("%s: nextRead(%+v, %+v) = %s, want %s", c.name, c.look, c.b, got, c.want)
		}
	}
}

// TestNextReadCountsFewReads: reading at nextRead's waits, a stream of 10 minutes at a
// steady rate is read a handful of times by both rules, and the end is seen within Min.
func TestNextReadCountsFewReads(t *testing.T) {
	const total, rate = 600 * 24 << 20, 24 << 20 // 10 minutes at 24 MiB/s
	for _, c := range []struct {
		name     string
		signal   bool
		b        readBounds
		maxReads int
	}{
		// 5, 10, 20, 40, 80, 160, 340, 520 s.
		{"while the call runs", true, readBounds{Min: 5 * time.Second, Max: 3 * time.Minute}, 8},
		// Fallback, then 60 s until 2 min are left, then halving down to 1 s.
		{"while verify-left waits", false, readBounds{Min: time.Second, Max: time.Minute, Fallback: 5 * time.Second}, 17},
	} {
		at, reads := time.Duration(0), 0
		var measured float64
		for {
			left := int64(max(0, total-rate*at.Seconds()))
			wait := nextRead(streamLook{Remaining: left, Rate: measured, Since: at, EndSignalled: c.signal}, c.b)
			if at+wait >= 10*time.Minute {
				if !c.signal && at+wait-10*time.Minute > c.b.Min {
					t.Errorf("%s: the end is seen %s late", c.name, at+wait-10*time.Minute)
				}
				break
			}
			at += wait
			reads++
			measured = rate // from the second read on
		}
		if reads > c.maxReads {
			t.Errorf("%s: %d reads during a 10-minute stream, want ≤ %d", c.name, reads, c.maxReads)
		}
		t.Logf("%s: %d reads", c.name, reads)
	}
}
