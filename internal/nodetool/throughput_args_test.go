package nodetool

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	v311old = Version{3, 11, 11}
	v311    = Version{3, 11, 18}
	v40     = Version{4, 0, 13}
	v41     = Version{4, 1, 6}
	v50     = Version{5, 0, 3}
)

// TestGetThroughputArgs: 3.11/4.0 have no flags, 4.1+ read with -m or -e, never
// without a flag (docs/how-it-works/streaming.md §1.1, §1.3, §1.8).
func TestGetThroughputArgs(t *testing.T) {
	for _, tc := range []struct {
		v    Version
		l    Limiter
		want []string
	}{
		{v311, LimiterStream, []string{"getstreamthroughput"}},
		{v40, LimiterInterDC, []string{"getinterdcstreamthroughput"}},
		{v41, LimiterStream, []string{"getstreamthroughput", "-m"}},
		{v41, LimiterEntireSSTable, []string{"getstreamthroughput", "-e"}},
		{v50, LimiterInterDC, []string{"getinterdcstreamthroughput", "-m"}},
		{v50, LimiterEntireSSTableInterDC, []string{"getinterdcstreamthroughput", "-e"}},
	} {
		got, err := GetThroughputArgs(tc.v, tc.l)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%s %s", tc.v, tc.l)
	}
	_, err := GetThroughputArgs(v40, LimiterEntireSSTable)
	assert.ErrorContains(t, err, "no entire-sstable limiter")
}

// TestSetThroughputArgs: the set command per version and unit (§1.1, §1.2, §1.4).
func TestSetThroughputArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    Version
		l    Limiter
		t    Throughput
		want []string
	}{
		{"3.11 megabits", v311, LimiterStream, MegabitsPerSecond(400), []string{"setstreamthroughput", "400"}},
		{"3.11 unthrottled", v311, LimiterStream, Unthrottled(), []string{"setstreamthroughput", "0"}},
		{"3.11.11 MiB/s are 8 old megabits each", v311old, LimiterStream, MiBPerSecond(24), []string{"setstreamthroughput", "192"}},
		{"4.0 inter-DC", v40, LimiterInterDC, MegabitsPerSecond(100), []string{"setinterdcstreamthroughput", "100"}},
		{"4.0 MiB/s that are whole megabits", v40, LimiterStream, MiBPerSecond(15625), []string{"setstreamthroughput", "131072"}},
		{"4.1 MiB/s with -m", v41, LimiterStream, MiBPerSecond(48), []string{"setstreamthroughput", "-m", "48"}},
		{"4.1 megabits without flag", v41, LimiterStream, MegabitsPerSecond(200), []string{"setstreamthroughput", "200"}},
		{"4.1 megabits that are whole MiB/s", v41, LimiterStream, MegabitsPerSecond(8.388608), []string{"setstreamthroughput", "-m", "1"}},
		{"4.1 unthrottled", v41, LimiterStream, Unthrottled(), []string{"setstreamthroughput", "0"}},
		{"4.1 entire-SSTable", v41, LimiterEntireSSTable, MiBPerSecond(64), []string{"setstreamthroughput", "-e", "64"}},
		{"4.1 entire-SSTable unthrottled", v41, LimiterEntireSSTable, MiBPerSecond(0), []string{"setstreamthroughput", "-e", "0"}},
		{"5.0 inter-DC entire-SSTable", v50, LimiterEntireSSTableInterDC, MiBPerSecond(10), []string{"setinterdcstreamthroughput", "-e", "10"}},
		{"5.0 largest -m", v50, LimiterStream, MiBPerSecond(255999999), []string{"setstreamthroughput", "-m", "255999999"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SetThroughputArgs(tc.v, tc.l, tc.t)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestSetThroughputArgsRefuses: rates the setter cannot take exactly, with the nearest
// it can; and values it would refuse (§1.4).
func TestSetThroughputArgsRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		v       Version
		l       Limiter
		t       Throughput
		nearest Throughput
	}{
		{"4.0 24 MiB/s is 201.326592 megabits", v40, LimiterStream, MiBPerSecond(24), MegabitsPerSecond(201)},
		{"3.11.18 fractional megabits", v311, LimiterStream, MegabitsPerSecond(2.5), MegabitsPerSecond(3)},
		{"4.1 fractional MiB/s", v41, LimiterStream, MiBPerSecond(0.5), MiBPerSecond(1)},
		{"4.1 entire-SSTable in megabits", v41, LimiterEntireSSTable, MegabitsPerSecond(200), MiBPerSecond(24)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SetThroughputArgs(tc.v, tc.l, tc.t)
			var ie *InexpressibleRateError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tc.nearest, ie.Nearest)
			_, err = SetThroughputArgs(tc.v, tc.l, ie.Nearest)
			assert.NoError(t, err, "the nearest rate is settable")
		})
	}
	for _, tc := range []struct {
		name, err string
		v         Version
		l         Limiter
		t         Throughput
	}{
		{"no entire-SSTable limiter before 4.1", "no entire-sstable limiter", v40, LimiterEntireSSTable, MiBPerSecond(24)},
		{"negative", "want a rate >= 0", v41, LimiterStream, MiBPerSecond(-1)},
		{"no unit", "want a rate >= 0", v41, LimiterStream, Throughput{Value: 5}},
		{"4.1 -m too large", "at most 255999999 MiB/s", v41, LimiterStream, MiBPerSecond(256000000)},
		{"4.1 megabits too large", "too large", v41, LimiterStream, MegabitsPerSecond(2147483647)},
		{"3.11 beyond an Integer", "too large", v311, LimiterStream, MegabitsPerSecond(2147483648)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SetThroughputArgs(tc.v, tc.l, tc.t)
			assert.ErrorContains(t, err, tc.err)
		})
	}
}

// TestLimiters: what to set to change how fast a node streams (§1.8).
func TestLimiters(t *testing.T) {
	assert.Equal(t, []Limiter{LimiterStream}, Limiters(v40, false))
	assert.Equal(t, []Limiter{LimiterStream, LimiterInterDC}, Limiters(v311, true))
	assert.Equal(t, []Limiter{LimiterStream, LimiterEntireSSTable}, Limiters(v41, false))
	assert.Equal(t, []Limiter{LimiterStream, LimiterEntireSSTable, LimiterInterDC, LimiterEntireSSTableInterDC}, Limiters(v50, true))
}

// TestThroughputBytes: the bytes/s a setting lets through (§1.2).
func TestThroughputBytes(t *testing.T) {
	for _, tc := range []struct {
		v    Version
		t    Throughput
		want float64
	}{
		{v311old, MegabitsPerSecond(200), 26214400},
		{v311, MegabitsPerSecond(200), 25000000},
		{Version{4, 0, 1}, MegabitsPerSecond(200), 26214400},
		{v40, MegabitsPerSecond(200), 25000000},
		{v41, MegabitsPerSecond(200), 25000000},
		{v41, MiBPerSecond(24), 25165824},
	} {
		got, ok := tc.t.BytesPerSecond(tc.v)
		assert.True(t, ok)
		assert.Equal(t, tc.want, got, "%s %s", tc.v, tc.t)
	}
	_, ok := Unthrottled().BytesPerSecond(v41)
	assert.False(t, ok)
	assert.Equal(t, "24 MiB/s", MiBPerSecond(24).String())
	assert.Equal(t, "unlimited", Unthrottled().String())
}
