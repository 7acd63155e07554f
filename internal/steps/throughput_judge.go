package steps

import (
	"fmt"
	"math"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
)

// The throughput steps' decisions, over what was read (throughput.go reads, these judge).

// sameRate: a and b let the same bytes through on v: both unthrottled, or one rate in
// two units (200 Mb/s reads back as 23.84185791015625 MiB/s with -m on 4.1).
func sameRate(a, b nodetool.Throughput, v nodetool.Version) bool {
	ab, aok := a.BytesPerSecond(v)
	bb, bok := b.BytesPerSecond(v)
	if !aok || !bok {
		return aok == bok
	}
	return math.Abs(ab-bb) <= 1e-9*math.Max(ab, bb)
}

// toSet are the limiters (in order) whose reading is not the target yet.
func toSet(order []nodetool.Limiter, read map[nodetool.Limiter]nodetool.Throughput, target nodetool.Throughput, v nodetool.Version) []nodetool.Limiter {
	var out []nodetool.Limiter
	for _, l := range order {
		if !sameRate(read[l], target, v) {
			out = append(out, l)
		}
	}
	return out
}

// restoreLook is what one limiter of a node shows when its restore is judged.
type restoreLook struct {
	Pod     string
	Limiter nodetool.Limiter
	// Now is its reading, Recorded what it read before the operation, Target what the
	// operation sets.
	Now, Recorded, Target nodetool.Throughput
	Version               nodetool.Version
	// SetDone: the operation's set on this node is recorded done (so it did set it);
	// RestoreStarted: the restore itself may have acted already.
	SetDone, RestoreStarted bool
}

// judgeRestore says whether the limiter must be set back to its recorded value, and
// what to warn about. A limiter at the target goes back. One at its recorded value has
// nothing to restore; when the operation had set it and its restore never acted,
// something else put it back: the node restarted (its cassandra.yaml value) or someone
// set it, which is said rather than "restored". One at neither was changed by someone
// else, or the node restarted with another yaml value: left as it is, and said.
func judgeRestore(l restoreLook) (set bool, warning string) {
	switch {
	case sameRate(l.Now, l.Recorded, l.Version):
		if l.SetDone && !l.RestoreStarted && !sameRate(l.Recorded, l.Target, l.Version) {
			return false, fmt.Sprintf("the %s limiter of %s reads %s, its value before this operation, not the %s it set: the node restarted since (a restart brings its cassandra.yaml value back) or someone set it back; nothing to restore",
				l.Limiter, l.Pod, l.Now, l.Target)
		}
		return false, ""
	case sameRate(l.Now, l.Target, l.Version):
		return true, ""
	}
	return false, fmt.Sprintf("the %s limiter of %s reads %s, neither the %s this operation set nor the %s recorded before it: the node restarted since with another cassandra.yaml value, or someone changed it; left as it is",
		l.Limiter, l.Pod, l.Now, l.Target, l.Recorded)
}

// restorable is nil when a recorded value can be set back exactly on v: a value
// nodetool cannot take (entire-SSTable limiters take whole MiB/s only) would come back
// as another, so the operation refuses to change it at all.
func restorable(pod string, v nodetool.Version, l nodetool.Limiter, t nodetool.Throughput) error {
	_, err := nodetool.SetThroughputArgs(v, l, t)
	if err == nil {
		return nil
	}
	return fmt.Errorf("the %s limiter of %s reads %s, which nodetool cannot set back exactly (%v): refusing to change it. "+
		"Set it to a value nodetool can set (nodetool setstreamthroughput; docs/how-it-works/streaming.md §1.1), then resume; or abort", l, pod, t, err)
}

// StreamTimeText says how long load takes through one sender throttled at rate on v,
// beside the version's default: "1.2 GiB in ≥ 7s (in ≥ 52s at the default 24 MiB/s)".
// Load ÷ rate is a lower bound (the waits around the streaming and the hardware add
// to it); an unthrottled rate has none.
func StreamTimeText(load int64, rate nodetool.Throughput, v nodetool.Version) string {
	at := func(t nodetool.Throughput) string {
		bps, ok := t.BytesPerSecond(v)
		if !ok {
			return "as fast as disk and network go"
		}
		return "in ≥ " + shortDuration(time.Duration(float64(load)/bps*float64(time.Second)))
	}
	def := nodetool.DefaultThroughput(v)
	return fmt.Sprintf("%s %s (%s at the default %s)", output.Bytes(load), at(rate), at(def), def)
}

// shortDuration prints a duration as people read it: "45s", "19m", "2h05m".
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(math.Ceil(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(math.Ceil(d.Minutes())))
	}
	m := int(math.Ceil(d.Minutes()))
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}
