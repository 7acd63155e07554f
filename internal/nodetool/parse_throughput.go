package nodetool

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrPreciseFlagNeeded is 4.1+'s get(interdc)streamthroughput without a flag on a value
// that is no whole number of megabits/s, the 24MiB/s default included: exit 2, no
// output (docs/how-it-works/streaming.md §1.3). GetThroughputArgs never asks that way.
var ErrPreciseFlagNeeded = errors.New("nodetool wants -d: the throughput is not a whole number of megabits/s")

// throughputLine matches the one line get(interdc)streamthroughput prints, searched
// rather than anchored at column 0: 4.1's inter-DC form prints a double in front of it
// (GetInterDCStreamThroughput.java line 82). Java's Double.toString may use an exponent;
// 3.11/4.0 print a negative setting as is.
var throughputLine = lazyRE(`Current (entire SSTable )?(inter-datacenter )?stream throughput: ` +
	`(?:(unlimited)|(-?[0-9]+(?:\.[0-9]+)?(?:E-?[0-9]+)?) (Mb/s|MiB/s))$`)

// ThroughputReading is one parsed line of get(interdc)streamthroughput.
type ThroughputReading struct {
	// Limiter is what the line names. 4.1's `getinterdcstreamthroughput -d` says
	// "stream throughput", so it reads as LimiterStream.
	Limiter Limiter `json:"limiter"`
	Throughput
}

// ParseThroughput parses get(interdc)streamthroughput of 3.11 to 5.0 (§1.3): a value
// with its unit, "unlimited", and before 4.1 a 0 or negative value as unlimited (§1.5).
func ParseThroughput(out string) (ThroughputReading, error) {
	if strings.Contains(out, "Use the -d flag to quiet this error") {
		return ThroughputReading{}, ErrPreciseFlagNeeded
	}
	for _, l := range splitLines(out) {
		l = strings.TrimRight(l, " \t")
		if isJVMNoise(l) {
			continue
		}
		if m := throughputLine().FindStringSubmatch(l); m != nil {
			return throughputReading(m)
		}
	}
	if e := firstErrorLine(out); e != "" {
		return ThroughputReading{}, fmt.Errorf("stream throughput: nodetool printed an error: %s", quote(e))
	}
	return ThroughputReading{}, errors.New("stream throughput: no \"Current … stream throughput:\" line")
}

func throughputReading(m []string) (ThroughputReading, error) {
	r := ThroughputReading{Limiter: LimiterStream}
	switch {
	case m[1] != "" && m[2] != "":
		r.Limiter = LimiterEntireSSTableInterDC
	case m[1] != "":
		r.Limiter = LimiterEntireSSTable
	case m[2] != "":
		r.Limiter = LimiterInterDC
	}
	if m[3] != "" {
		r.Unlimited = true
		return r, nil
	}
	v, err := strconv.ParseFloat(m[4], 64)
	if err != nil {
		return ThroughputReading{}, fmt.Errorf("stream throughput: %q: %w", m[4], err)
	}
	r.Value, r.Unit, r.Unlimited = v, RateUnit(m[5]), v <= 0
	return r, nil
}
