package nodetool

import (
	"fmt"
	"math"
	"strconv"
)

// The argv of get/set(interdc)streamthroughput per version (docs/how-it-works/streaming.md
// §1.1, §1.4, §1.8): 3.11/4.0 take one int of megabits/s and no flag; 4.1+ take an int
// of megabits/s, or of MiB/s with -m, and -e for the entire-SSTable limiters.

// GetThroughputArgs is the read of limiter l on v. 4.1+ always read with -m or -e:
// without a flag they fail on any value that is no whole number of megabits/s (§1.3).
func GetThroughputArgs(v Version, l Limiter) ([]string, error) {
	if !l.ExistsIn(v) {
		return nil, noLimiter(v, l)
	}
	cmd := "getstreamthroughput"
	if l.interDC() {
		cmd = "getinterdcstreamthroughput"
	}
	switch {
	case !v.HasDataRates():
		return []string{cmd}, nil
	case l.entire():
		return []string{cmd, "-e"}, nil
	}
	return []string{cmd, "-m"}, nil
}

func noLimiter(v Version, l Limiter) error {
	return fmt.Errorf("cassandra %s has no %s limiter: before 4.1 entire-SSTable transfers go through the stream limiter", v, l)
}

// InexpressibleRateError is a rate the version's setter cannot take: it wants a whole
// number of its unit. Nearest is the closest rate it can take (never unthrottled).
type InexpressibleRateError struct {
	Version   Version
	Limiter   Limiter
	Requested Throughput
	Nearest   Throughput
}

func (e *InexpressibleRateError) Error() string {
	return fmt.Sprintf("cassandra %s cannot set its %s limiter to %s: it takes whole %s (nearest: %s)",
		e.Version, e.Limiter, e.Requested, e.Nearest.Unit, e.Nearest)
}

// SetThroughputArgs is the command that sets limiter l of a node on v to t. A rate the
// version cannot take exactly is an *InexpressibleRateError: 3.11/4.0 take whole
// megabits/s only (24 MiB/s is 201.326592 of them from 3.11.12 and 4.0.2, 192 before),
// 4.1+ whole megabits/s or whole MiB/s (entire-SSTable: whole MiB/s only). Negative
// and too large values are errors, 0 or Unlimited is "no throttle" (§1.4, §1.5).
func SetThroughputArgs(v Version, l Limiter, t Throughput) ([]string, error) {
	if !l.ExistsIn(v) {
		return nil, noLimiter(v, l)
	}
	if !t.Unlimited && (t.Value < 0 || math.IsNaN(t.Value) || math.IsInf(t.Value, 0) || t.Unit != Megabits && t.Unit != MiB) {
		return nil, fmt.Errorf("stream throughput %s: want a rate >= 0 in Mb/s or MiB/s", t)
	}
	cmd := "setstreamthroughput"
	if l.interDC() {
		cmd = "setinterdcstreamthroughput"
	}
	flagFor := map[RateUnit]string{Megabits: "", MiB: "-m"}
	units := []RateUnit{t.Unit, otherUnit(t.Unit)} // the requested unit first
	switch {
	case !v.HasDataRates():
		units = []RateUnit{Megabits}
	case l.entire():
		units, flagFor = []RateUnit{MiB}, map[RateUnit]string{MiB: "-e"}
	}
	if t.Unlimited || t.Value == 0 {
		return withFlag(cmd, flagFor[units[0]], 0), nil
	}
	for _, u := range units {
		n, whole := wholeIn(t, u, v)
		if !whole {
			continue
		}
		if n >= settable(u, l, v) {
			return nil, fmt.Errorf("stream throughput %s: too large for cassandra %s (at most %d %s)", t, v, settable(u, l, v)-1, u)
		}
		return withFlag(cmd, flagFor[u], n), nil
	}
	u := units[0]
	return nil, &InexpressibleRateError{Version: v, Limiter: l, Requested: t,
		Nearest: Throughput{Value: math.Max(1, math.Round(t.in(u, v))), Unit: u}}
}

func otherUnit(u RateUnit) RateUnit {
	if u == MiB {
		return Megabits
	}
	return MiB
}

func withFlag(cmd, flag string, n int64) []string {
	if flag == "" {
		return []string{cmd, strconv.FormatInt(n, 10)}
	}
	return []string{cmd, flag, strconv.FormatInt(n, 10)}
}

// wholeIn is t in unit u on v, if that is a whole number.
func wholeIn(t Throughput, u RateUnit, v Version) (int64, bool) {
	x := t.in(u, v)
	r := math.Round(x)
	return int64(r), r >= 1 && math.Abs(x-r) <= 1e-9*r
}

// settable is the first value in unit u the setter refuses (§1.4): 3.11/4.0 take any
// Integer; 4.1+ refuse Integer.MAX_VALUE megabits/s, -m values of that many
// megabits/s or more, and -e Integer.MAX_VALUE.
func settable(u RateUnit, l Limiter, v Version) int64 {
	switch {
	case !v.HasDataRates():
		return math.MaxInt32 + 1
	case u == MiB && !l.entire():
		return int64(math.Ceil(math.MaxInt32 / 8.388608))
	}
	return math.MaxInt32
}
