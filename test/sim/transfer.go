package sim

import (
	"math"
	"time"
)

// Metered streaming (Options.StreamTimeScale > 0): a transfer sends its bytes at the
// rate the sender's limiters allow, and that rate changes when they do. As for every
// other state, only discrete facts are stored, here the rate steps; the bytes sent at
// any instant are derived from the clock.

// rateStep: from At on, the transfer moves BPS bytes per second of the store's clock.
type rateStep struct {
	At  time.Time `json:"at"`
	BPS float64   `json:"bps"`
}

func (o Options) metered() bool { return o.StreamTimeScale > 0 }

// stepSpan is the part of step i of steps that lies after start: [lo, hi), hi zero for
// the last step (open-ended).
func stepSpan(steps []rateStep, i int, start time.Time) (lo, hi time.Time) {
	lo = start
	if i > 0 && steps[i].At.After(lo) {
		lo = steps[i].At
	}
	if i+1 < len(steps) {
		hi = steps[i+1].At
	}
	return lo, hi
}

// sentBy is what a transfer that began at start has sent at t.
func sentBy(steps []rateStep, start, t time.Time) float64 {
	sent := 0.0
	for i, s := range steps {
		lo, hi := stepSpan(steps, i, start)
		if hi.IsZero() || hi.After(t) {
			hi = t
		}
		if hi.After(lo) {
			sent += s.BPS * hi.Sub(lo).Seconds()
		}
	}
	return sent
}

// reachAt is when a transfer that began at start has sent bytes; false if it never
// will (no steps, or a last rate of 0).
func reachAt(steps []rateStep, start time.Time, bytes float64) (time.Time, bool) {
	left := bytes
	for i, s := range steps {
		lo, hi := stepSpan(steps, i, start)
		if !hi.IsZero() {
			if !hi.After(lo) {
				continue
			}
			if seg := s.BPS * hi.Sub(lo).Seconds(); seg < left {
				left -= seg
				continue
			}
		}
		if left <= 0 {
			return lo, true
		}
		if s.BPS <= 0 {
			return time.Time{}, false
		}
		// Rounded up, so that the bytes are all sent at the instant returned.
		return lo.Add(time.Duration(math.Ceil(left / s.BPS * float64(time.Second)))), true
	}
	return time.Time{}, false
}

// fileSizes splits a transfer into the four equal SSTables the simulated streams carry
// (the last takes the remainder; one file under 4 bytes).
func fileSizes(total int64) []int64 {
	files := int64(4)
	if total < files {
		files = 1
	}
	sizes := make([]int64, files)
	for i := range sizes {
		sizes[i] = total / files
	}
	sizes[files-1] += total % files
	return sizes
}

// sendRate is the rate at which from streams to to: the sender's limiters only
// (docs/how-it-works/streaming.md §1.7), the inter-DC one as well across DCs (both are
// acquired, §1.5), capped by what the hardware moves, sped up by StreamTimeScale. The
// simulated streams carry partial SSTables (vnodes), so the entire-SSTable limiters
// throttle none of them.
func (st *state) sendRate(from, to *node) float64 {
	o := st.Options
	r := o.bytesPerSec(from.setting(o, limStream))
	if to != nil && to.Spec.DC != from.Spec.DC {
		r = min(r, o.bytesPerSec(from.setting(o, limInterDC)))
	}
	return min(r, o.HardwareRate) * o.StreamTimeScale
}

// restep gives a transfer (begun at start, total bytes) the rate bps from now on, or
// on releases that read a new value only when a file starts (§1.4), from the end of
// the file in flight. A step still pending from an earlier change is replaced: the
// limiter takes the latest value.
func (st *state) restep(steps []rateStep, start time.Time, total, bps float64, now time.Time) []rateStep {
	var keep []rateStep
	for _, s := range steps {
		if !s.At.After(now) {
			keep = append(keep, s)
		}
	}
	at := now
	if st.Options.oldMegabit() && now.After(start) {
		sent, edge := sentBy(keep, start, now), 0.0
		for _, sz := range fileSizes(int64(total)) {
			if edge += float64(sz); edge > sent {
				break
			}
		}
		if t, ok := reachAt(keep, start, edge); ok && t.After(now) {
			at = t
		}
	}
	return append(keep, rateStep{At: at, BPS: bps})
}

// streamStart is when an attempt's streaming begins (after the RING_DELAY-like wait).
func (st *state) streamStart(a *attempt) time.Time {
	return a.Start.Add(st.Options.timeline().streamStart)
}

// joinStreamStart is when a metered bootstrap's streaming begins: JoinTime is the wait
// before it.
func (st *state) joinStreamStart(n *node) time.Time { return n.JoinStart.Add(st.Options.JoinTime) }

// rerate gives every transfer n sends the rate its limiters allow now: its running
// decommissions, the bootstraps it is the source of, the replacement and removal
// sessions it sends (plans.go).
func (st *state) rerate(n *node, now time.Time) {
	if !st.Options.metered() {
		return
	}
	st.rerateOps(n, now)
	if !n.Left {
		to := st.streamTarget(n)
		for _, a := range n.running() {
			a.Rates = st.restep(a.Rates, st.streamStart(a), st.leaveBytes(n), st.sendRate(n, to), now)
		}
	}
	for _, j := range st.Nodes {
		if j.Joining && j.JoinRates != nil && st.streamTarget(j) == n {
			j.JoinRates = st.restep(j.JoinRates, st.joinStreamStart(j), j.LoadBytes, st.sendRate(n, j), now)
		}
	}
}

// startJoinRates starts a metered bootstrap of n from its source.
func (st *state) startJoinRates(n *node, now time.Time) {
	n.JoinRates = nil
	if !st.Options.metered() {
		return
	}
	bps := st.Options.HardwareRate * st.Options.StreamTimeScale // no source: nothing throttles
	if src := st.streamTarget(n); src != nil {
		bps = st.sendRate(src, n)
	}
	n.JoinRates = []rateStep{{At: now, BPS: bps}}
}
