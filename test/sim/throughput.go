package sim

import (
	"math"
	"strconv"
	"strings"
)

// A node's outbound stream limiters (docs/how-it-works/streaming.md §1). They live in the
// JVM only: setstreamthroughput changes the node it runs on, and a restart brings back
// the cassandra.yaml default (§1.5), which is what node.Throttle holds: the settings
// changed since the JVM started.

// limiter names one of the limiters.
type limiter string

const (
	limStream        limiter = "stream"        // stream_throughput_outbound[_megabits_per_sec]
	limInterDC       limiter = "interdc"       // inter_dc_stream_throughput_outbound[_megabits_per_sec]
	limEntire        limiter = "entire"        // entire_sstable_stream_throughput_outbound (4.1+)
	limEntireInterDC limiter = "entireinterdc" // entire_sstable_inter_dc_stream_throughput_outbound (4.1+)
)

// yamlName is the limiter's cassandra.yaml name from 4.1, which the 4.1+ errors print.
func (l limiter) yamlName() string {
	return map[limiter]string{
		limStream:        "stream_throughput_outbound",
		limInterDC:       "inter_dc_stream_throughput_outbound",
		limEntire:        "entire_sstable_stream_throughput_outbound",
		limEntireInterDC: "entire_sstable_inter_dc_stream_throughput_outbound",
	}[l]
}

// Units a setting is held in: before 4.1 Config holds an int of megabits/s; from 4.1 a
// DataRateSpec (quantity, unit): B/s when set in megabits (×125 000), MiB/s when set
// with -m/-e or from the yaml default (4.1 config/DataRateSpec.java).
const (
	unitMb    = "Mb"
	unitBps   = "B/s"
	unitMiBps = "MiB/s"
)

// rateSetting is one limiter's value as the node holds it.
type rateSetting struct {
	Q    int64  `json:"q"`
	Unit string `json:"unit"`
}

// hasDataRates: 4.1 and 5.0 (DataRateSpec, the -m/-d/-e flags, the entire-SSTable
// limiters; the 5.0 nodetool files are identical to 4.1's, §1.1).
func (o Options) hasDataRates() bool { return o.Version == V41 || o.Version == V50 }

// yamlDefault is the value a node starts with: 200 megabits/s before 4.1 (3.11
// Config.java lines 198–199, 4.0 lines 240–241), 24MiB/s for every limiter from 4.1
// (4.1 Config.java lines 340 and 344–345) (§1.6).
func (o Options) yamlDefault() rateSetting {
	if o.hasDataRates() {
		return rateSetting{24, unitMiBps}
	}
	return rateSetting{200, unitMb}
}

// setting is the value limiter l of n has now.
func (n *node) setting(o Options, l limiter) rateSetting {
	if r, ok := n.Throttle[l]; ok {
		return r
	}
	return o.yamlDefault()
}

// releaseAtMost says whether ReleaseVersion is major.minor with a patch ≤ patch. An
// unreadable version counts as a recent one.
func (o Options) releaseAtMost(major, minor, patch int) bool {
	p := strings.SplitN(strings.SplitN(o.ReleaseVersion, "-", 2)[0], ".", 3)
	if len(p) < 3 {
		return false
	}
	nums := make([]int, 3)
	for i, s := range p {
		v, err := strconv.Atoi(s)
		if err != nil {
			return false
		}
		nums[i] = v
	}
	return nums[0] == major && nums[1] == minor && nums[2] <= patch
}

// oldMegabit: 3.11.0–3.11.11 and 4.0.0–4.0.1 took "megabits" as 1024×1024/8 bytes and
// copied a new value into the limiter only when the next file started
// (CASSANDRA-17243 and CASSANDRA-16959 changed both; 3.11.11 streaming/StreamManager.java
// lines 66 and 71–93) (§1.2, §1.4).
func (o Options) oldMegabit() bool {
	return o.releaseAtMost(3, 11, 11) || o.releaseAtMost(4, 0, 1)
}

// megabitBytes is the bytes/s one megabit/s of a pre-4.1 setting gives the limiter.
func (o Options) megabitBytes() float64 {
	if o.oldMegabit() {
		return 1024 * 1024 / 8 // 3.11.11 StreamManager.java line 66
	}
	return 1000 * 1000 / 8.0 // 3.11 StreamManager.java line 67, 4.0 line 66
}

// bytesPerSec is what the limiter lets through; +Inf when unthrottled: 0 in every
// version, negative values too before 4.1 (3.11 StreamManager.java line 102; 4.1+
// refuses them, §1.4, §1.5).
func (o Options) bytesPerSec(r rateSetting) float64 {
	if r.Q <= 0 {
		return math.Inf(1)
	}
	switch r.Unit {
	case unitMb:
		return float64(r.Q) * o.megabitBytes()
	case unitMiBps:
		return float64(r.Q) * mib
	default:
		return float64(r.Q)
	}
}

// mebibytesPerSec and megabitsPerSec are DataRateSpec.toMebibytesPerSecond and
// toMegabitsPerSecond (4.1 config/DataRateSpec.java; MEGABITS_PER_MEBIBYTE =
// 8.388608): the doubles getstreamthroughput -m/-d print.
func (r rateSetting) mebibytesPerSec() float64 {
	if r.Unit == unitMiBps {
		return float64(r.Q)
	}
	return float64(r.Q) / (1024.0 * 1024.0)
}

func (r rateSetting) megabitsPerSec() float64 {
	if r.Unit == unitMiBps {
		return float64(r.Q) * 8.388608
	}
	return float64(r.Q) / 125000.0
}

// megabitsAsInt is DataRateSpec.toMegabitsPerSecondAsInt: Math.round, saturated to int.
func (r rateSetting) megabitsAsInt() int64 {
	v := math.Floor(r.megabitsPerSec() + 0.5)
	return int64(max(min(v, math.MaxInt32), math.MinInt32))
}

// throughputs is the view of n's limiters.
func (n *node) throughputs(o Options) Throughputs {
	t := Throughputs{
		Stream:  o.bytesPerSec(n.setting(o, limStream)),
		InterDC: o.bytesPerSec(n.setting(o, limInterDC)),
	}
	if o.hasDataRates() {
		t.EntireSSTable = o.bytesPerSec(n.setting(o, limEntire))
		t.EntireSSTableInterDC = o.bytesPerSec(n.setting(o, limEntireInterDC))
	}
	return t
}
