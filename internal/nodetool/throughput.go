package nodetool

import (
	"math"
	"strconv"
)

// A node's outbound stream limiters (docs/how-it-works/streaming.md §1): per node, in
// memory (a restart brings the cassandra.yaml value back), and only the sender's
// throttle a stream: the leaving node's for a decommission, every source's for a
// bootstrap (§1.5, §1.7).

// Limiter names one of them.
type Limiter string

const (
	// LimiterStream throttles every outbound stream (stream_throughput_outbound).
	LimiterStream Limiter = "stream"
	// LimiterInterDC also throttles streams to other datacenters; the smaller wins.
	LimiterInterDC Limiter = "inter-dc"
	// LimiterEntireSSTable throttles zero-copy (entire-SSTable) transfers from 4.1;
	// before, they go through LimiterStream.
	LimiterEntireSSTable Limiter = "entire-sstable"
	// LimiterEntireSSTableInterDC is its inter-DC counterpart (4.1+).
	LimiterEntireSSTableInterDC Limiter = "entire-sstable-inter-dc"
)

func (l Limiter) interDC() bool { return l == LimiterInterDC || l == LimiterEntireSSTableInterDC }
func (l Limiter) entire() bool {
	return l == LimiterEntireSSTable || l == LimiterEntireSSTableInterDC
}

// ExistsIn says whether version v has the limiter.
func (l Limiter) ExistsIn(v Version) bool { return !l.entire() || v.HasDataRates() }

// Limiters are the limiters that throttle a node's outbound streams on v, those of
// inter-DC streams too when interDC: what to set, and restore, to change how fast a
// node streams (both stream and entire-SSTable from 4.1, §1.8).
func Limiters(v Version, interDC bool) []Limiter {
	ls := []Limiter{LimiterStream}
	if v.HasDataRates() {
		ls = append(ls, LimiterEntireSSTable)
	}
	if interDC {
		ls = append(ls, LimiterInterDC)
		if v.HasDataRates() {
			ls = append(ls, LimiterEntireSSTableInterDC)
		}
	}
	return ls
}

// RateUnit is a unit nodetool prints or takes a throughput in.
type RateUnit string

const (
	// Megabits is nodetool's "Mb/s": megabits per second, 125 000 B/s, except on
	// 3.11.0–3.11.11 and 4.0.0–4.0.1 where it was 131 072 B/s (MegabitBytes).
	Megabits RateUnit = "Mb/s"
	// MiB is mebibytes per second, 1 048 576 B/s (4.1+ -m and -e).
	MiB RateUnit = "MiB/s"
)

// Throughput is a limiter's setting, or a rate to set.
type Throughput struct {
	// Unlimited: no throttle (nodetool's 0, "unlimited"; before 4.1 a negative too).
	Unlimited bool     `json:"unlimited,omitempty"`
	Value     float64  `json:"value"`
	Unit      RateUnit `json:"unit"`
}

// Unthrottled is the setting without a limit (0).
func Unthrottled() Throughput { return Throughput{Unlimited: true} }

// MiBPerSecond is a rate in MiB/s.
func MiBPerSecond(v float64) Throughput { return Throughput{Value: v, Unit: MiB} }

// MegabitsPerSecond is a rate in nodetool's Mb/s.
func MegabitsPerSecond(v float64) Throughput { return Throughput{Value: v, Unit: Megabits} }

func (t Throughput) String() string {
	if t.Unlimited {
		return "unlimited"
	}
	return strconv.FormatFloat(t.Value, 'f', -1, 64) + " " + string(t.Unit)
}

// MegabitBytes is the bytes/s one Mb/s gives the limiter on v (§1.2).
func MegabitBytes(v Version) float64 {
	if v.oldMegabit() {
		return 1024 * 1024 / 8
	}
	return 1000 * 1000 / 8
}

func unitBytes(u RateUnit, v Version) float64 {
	if u == MiB {
		return 1024 * 1024
	}
	return MegabitBytes(v)
}

// BytesPerSecond is what the setting lets through on v; ok is false when unlimited.
func (t Throughput) BytesPerSecond(v Version) (bps float64, ok bool) {
	if t.Unlimited || t.Value <= 0 || math.IsNaN(t.Value) {
		return 0, false
	}
	return t.Value * unitBytes(t.Unit, v), true
}

// in is the setting's value in unit u on v (unlimited: 0).
func (t Throughput) in(u RateUnit, v Version) float64 {
	bps, ok := t.BytesPerSecond(v)
	if !ok {
		return 0
	}
	return bps / unitBytes(u, v)
}

// DefaultThroughput is the cassandra.yaml default of the stream limiters on v: 200
// megabits/s before 4.1, 24 MiB/s from 4.1 (docs/how-it-works/streaming.md §1.6).
func DefaultThroughput(v Version) Throughput {
	if v.HasDataRates() {
		return MiBPerSecond(24)
	}
	return MegabitsPerSecond(200)
}
