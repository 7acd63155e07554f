package nodetool

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// rateFlag matches a rate as a user writes it: a number, then a unit (spaces allowed).
var rateFlag = lazyRE(`^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z/]*)$`)

// ParseRate reads a rate as a user writes it (--stream-throughput): "200MiB/s",
// "1600Mb/s", "200 MiB/s", or "0" (no throttle). The units are nodetool's own: MiB/s
// (mebibytes) and Mb/s (megabits). Any other spelling is refused, "MB/s" above all:
// megabytes and megabits differ eightfold, and a slip there is a node streaming at an
// eighth or eight times the rate meant.
func ParseRate(s string) (Throughput, error) {
	in := strings.TrimSpace(s)
	m := rateFlag().FindStringSubmatch(in)
	if m == nil {
		return Throughput{}, fmt.Errorf("rate %q: want a number and a unit, e.g. 200MiB/s or 1600Mb/s (0: no throttle)", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.IsInf(v, 0) {
		return Throughput{}, fmt.Errorf("rate %q: %q is not a number", s, m[1])
	}
	if v == 0 && (m[2] == "" || m[2] == string(MiB) || m[2] == string(Megabits)) {
		return Unthrottled(), nil
	}
	switch m[2] {
	case string(MiB):
		return MiBPerSecond(v), nil
	case string(Megabits):
		return MegabitsPerSecond(v), nil
	case "":
		return Throughput{}, fmt.Errorf("rate %q has no unit: write %sMiB/s (mebibytes) or %sMb/s (megabits); only 0 (no throttle) needs none", s, m[1], m[1])
	}
	return Throughput{}, fmt.Errorf("rate %q: unit %q is not one nodetool knows: write MiB/s (mebibytes per second) or Mb/s (megabits per second)", s, m[2])
}

// Flag is t as ParseRate reads it back: "200MiB/s", "1600Mb/s", "0".
func (t Throughput) Flag() string {
	if t.Unlimited || t.Value <= 0 {
		return "0"
	}
	return strconv.FormatFloat(t.Value, 'f', -1, 64) + string(t.Unit)
}
