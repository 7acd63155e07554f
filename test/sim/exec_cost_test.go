package sim

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recordSleeps replaces the store's waits by a record of them (no real sleeping).
func recordSleeps(s *Store) func() []time.Duration {
	var mu sync.Mutex
	var got []time.Duration
	s.sleep = func(_ context.Context, d time.Duration) bool {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d)
		return true
	}
	return func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), got...)
	}
}

// TestExecCost: every invocation pays the JVM start before it answers, help and usage
// errors too (the JVM starts before airline parses), and is counted on its pod.
func TestExecCost(t *testing.T) {
	s := NewMemory(Options{Version: V41, ExecCost: 1500 * time.Millisecond}, sixNodes(), newClock().Now)
	sleeps := recordSleeps(s)
	require.Equal(t, 0, run(s, podA, "status").code)
	require.Equal(t, 1, run(s, podA, "bogus").code)
	require.Equal(t, 0, run(s, podB, "getstreamthroughput", "-m").code)
	require.NoError(t, s.SetFault(podA, Fault{Slow: 50 * time.Millisecond}))
	require.Equal(t, 0, run(s, podA, "version").code)
	require.Equal(t, []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond, 1550 * time.Millisecond}, sleeps())
	require.Equal(t, 3, view(t, s, podA).Execs)
	require.Equal(t, 1, view(t, s, podB).Execs)

	// A process-wide override (the binary's NODETOOL_SIM_EXEC_COST); 0 is free and
	// uncounted.
	s.SetExecCost(0)
	require.Equal(t, 0, run(s, podB, "status").code)
	require.Equal(t, 1, view(t, s, podB).Execs)
}

// TestExecCostDefaultFree: without ExecCost nothing waits and nothing is counted.
func TestExecCostDefaultFree(t *testing.T) {
	s := NewMemory(Options{Version: V40}, sixNodes(), newClock().Now)
	sleeps := recordSleeps(s)
	require.Equal(t, 0, run(s, podA, "status").code)
	require.Empty(t, sleeps())
	require.Equal(t, 0, view(t, s, podA).Execs)
}
