package nodetool

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseThroughput: every line of docs/how-it-works/streaming.md §1.3
// (STREAMING-AND-REPLACE.md §1.3 of the research notes).
func TestParseThroughput(t *testing.T) {
	tests := []struct {
		source, out string
		want        ThroughputReading
	}{
		{"§1.3 3.11/4.0 default", "Current stream throughput: 200 Mb/s\n",
			ThroughputReading{LimiterStream, MegabitsPerSecond(200)}},
		{"§1.3 3.11/4.0 after set 0", "Current stream throughput: 0 Mb/s\n",
			ThroughputReading{LimiterStream, Throughput{Unlimited: true, Unit: Megabits}}},
		{"§1.5 3.11/4.0 negative = unthrottled", "Current stream throughput: -5 Mb/s\n",
			ThroughputReading{LimiterStream, Throughput{Unlimited: true, Value: -5, Unit: Megabits}}},
		{"§1.3 3.11/4.0 inter-DC", "Current inter-datacenter stream throughput: 200 Mb/s\n",
			ThroughputReading{LimiterInterDC, MegabitsPerSecond(200)}},
		{"§1.3 4.1 -d default", "Current stream throughput: 201.326592 Mb/s\n",
			ThroughputReading{LimiterStream, MegabitsPerSecond(201.326592)}},
		{"§1.3 4.1 -m default", "Current stream throughput: 24.0 MiB/s\n",
			ThroughputReading{LimiterStream, MiBPerSecond(24)}},
		{"§1.3 4.1 -e default", "Current entire SSTable stream throughput: 24.0 MiB/s\n",
			ThroughputReading{LimiterEntireSSTable, MiBPerSecond(24)}},
		{"§1.3 4.1 after set 200", "Current stream throughput: 200 Mb/s\n",
			ThroughputReading{LimiterStream, MegabitsPerSecond(200)}},
		{"§1.3 4.1 -m after set 200", "Current stream throughput: 23.84185791015625 MiB/s\n",
			ThroughputReading{LimiterStream, MiBPerSecond(23.84185791015625)}},
		{"§1.3 4.1 after set 0", "Current stream throughput: unlimited\n",
			ThroughputReading{LimiterStream, Unthrottled()}},
		{"§1.3 4.1 -e after set -e 0", "Current entire SSTable stream throughput: unlimited\n",
			ThroughputReading{LimiterEntireSSTable, Unthrottled()}},
		{"§1.3 4.1 inter-DC prefix bug", "200.0Current inter-datacenter stream throughput: 200 Mb/s\n",
			ThroughputReading{LimiterInterDC, MegabitsPerSecond(200)}},
		{"§1.3 4.1 inter-DC -m", "Current inter-datacenter stream throughput: 24.0 MiB/s\n",
			ThroughputReading{LimiterInterDC, MiBPerSecond(24)}},
		{"§1.3 4.1 inter-DC -e", "Current entire SSTable inter-datacenter stream throughput: 24.0 MiB/s\n",
			ThroughputReading{LimiterEntireSSTableInterDC, MiBPerSecond(24)}},
		{"§1.3 Double.toString exponent", "Current stream throughput: 1.6777216E7 MiB/s\n",
			ThroughputReading{LimiterStream, MiBPerSecond(16777216)}},
		{"JVM banner first, CRLF", "Picked up JAVA_TOOL_OPTIONS: -Dcom.sun.jndi.rmiURLParsing=legacy\r\nCurrent stream throughput: 24.0 MiB/s\r\n",
			ThroughputReading{LimiterStream, MiBPerSecond(24)}},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			got, err := ParseThroughput(tt.out)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseThroughputRejects(t *testing.T) {
	// §1.3: 4.1's flagless get on the default.
	_, err := ParseThroughput("error: Use the -d flag to quiet this error and get the exact throughput in megabits/s\n-- StackTrace --\njava.lang.RuntimeException: Use the -d flag to quiet this error and get the exact throughput in megabits/s\n")
	assert.ErrorIs(t, err, ErrPreciseFlagNeeded)
	// §1.1: a flag 3.11/4.0 do not know.
	_, err = ParseThroughput("nodetool: Found unexpected parameters: [-m]\nSee 'nodetool help' or 'nodetool help <command>'.\n")
	assert.EqualError(t, err, `stream throughput: nodetool printed an error: "nodetool: Found unexpected parameters: [-m]"`)
	for _, out := range []string{"", "Current stream throughput: fast\n", "Current stream throughput: 24.0 GiB/s\n"} {
		_, err = ParseThroughput(out)
		assert.Error(t, err, "%q", out)
	}
}
