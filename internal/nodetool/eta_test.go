package nodetool

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestETAFromSamples: the summed bytes of the §2.5 samples (docs/how-it-works/streaming.md
// §2.5; testdata/netstats-*.txt) and the time left at a rate, or at least at the
// sender's throttle (§2.4 step 4).
func TestETAFromSamples(t *testing.T) {
	ns, err := ParseNetstats(fixture(t, "netstats-4.x-joining-bootstrap.txt"))
	require.NoError(t, err)
	tot, ok := ns.StreamProgress(PlanBootstrap, DirReceiving)
	require.True(t, ok)
	assert.Equal(t, int64(1879048192-503316480), tot.Remaining())
	eta, ok := tot.ETA(1375731712.0 / 8)
	require.True(t, ok)
	assert.Equal(t, 8*time.Second, eta)
	// 24 MiB/s on 4.1: 1375731712 / 25165824 = 54.666… s.
	min41, ok := tot.MinETA(MiBPerSecond(24), Version{4, 1, 6})
	require.True(t, ok)
	assert.Equal(t, time.Duration(math.Ceil(1375731712.0/25165824*1e9)), min41)

	ns, err = ParseNetstats(fixture(t, "netstats-3.11-leaving-streaming.txt"))
	require.NoError(t, err)
	tot, ok = ns.StreamProgress(PlanUnbootstrap, DirSending)
	require.True(t, ok)
	// 200 "megabits" are 26 214 400 B/s on 3.11.11, 25 000 000 on 3.11.18 (§1.2).
	old, _ := tot.MinETA(MegabitsPerSecond(200), Version{3, 11, 11})
	late, _ := tot.MinETA(MegabitsPerSecond(200), Version{3, 11, 18})
	assert.Equal(t, time.Duration(math.Ceil(float64(629145600-282066944)/26214400*1e9)), old)
	assert.Equal(t, time.Duration(math.Ceil(float64(629145600-282066944)/25000000*1e9)), late)

	_, ok = tot.MinETA(Unthrottled(), Version{4, 1, 6})
	assert.False(t, ok, "no bound without a throttle")
	_, ok = tot.ETA(0)
	assert.False(t, ok)
	assert.Equal(t, int64(0), StreamTotals{DoneBytes: 5, TotalBytes: 3}.Remaining())
}
