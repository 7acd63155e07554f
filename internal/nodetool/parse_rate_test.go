package nodetool

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRate(t *testing.T) {
	for in, want := range map[string]Throughput{
		"200MiB/s":   MiBPerSecond(200),
		"200 MiB/s":  MiBPerSecond(200),
		" 1600Mb/s ": MegabitsPerSecond(1600),
		"1.5MiB/s":   MiBPerSecond(1.5),
		"0":          Unthrottled(),
		"0MiB/s":     Unthrottled(),
		"0.0 Mb/s":   Unthrottled(),
	} {
		got, err := ParseRate(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		back, err := ParseRate(got.Flag())
		require.NoError(t, err, in)
		assert.Equal(t, got, back, "%s read back from %s", in, got.Flag())
	}
	for in, why := range map[string]string{
		"200":        "has no unit",
		"200MB/s":    `unit "MB/s" is not one nodetool knows`,
		"200mib/s":   `unit "mib/s" is not one nodetool knows`,
		"-5MiB/s":    "want a number and a unit",
		"fast":       "want a number and a unit",
		"":           "want a number and a unit",
		"1e3MiB/s":   "want a number and a unit",
		"200 MiB/s/": `unit "MiB/s/"`,
	} {
		_, err := ParseRate(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), why, in)
	}
}
