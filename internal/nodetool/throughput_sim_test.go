package nodetool

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// simExec runs the argv the Client builds against the simulated nodetool.
type simExec struct{ s *sim.Store }

func (e simExec) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	i := slices.Index(argv, "nodetool")
	var out, errb bytes.Buffer
	if code := e.s.Run(ctx, pod, argv[i+1:], &out, &errb); code != 0 {
		return out.String(), errb.String(), fmt.Errorf("command terminated with non-zero exit code: %d", code)
	}
	return out.String(), errb.String(), nil
}

// TestThroughputAgainstSim: the argv built for each version is what that version's
// nodetool takes, and what it prints reads back as the rate set, in the bytes/s the
// simulated node applies (docs/how-it-works/streaming.md §1.2–§1.4).
func TestThroughputAgainstSim(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		version, release string
		rate             Throughput // a rate every limiter of the version takes
	}{
		{sim.V311, "3.11.11", MiBPerSecond(48)}, // 384 old megabits
		{sim.V311, "3.11.18", MegabitsPerSecond(400)},
		{sim.V40, "4.0.13", MegabitsPerSecond(400)},
		{sim.V41, "4.1.6", MiBPerSecond(48)},
		{sim.V50, "5.0.3", MiBPerSecond(48)},
	} {
		t.Run(tc.release, func(t *testing.T) {
			s := sim.NewMemory(sim.Options{Version: tc.version, ReleaseVersion: tc.release},
				[]sim.NodeSpec{{Pod: "a", Address: "10.0.0.1"}, {Pod: "b", Address: "10.0.0.2"}}, nil)
			c := Client{Exec: simExec{s}}
			v, err := c.Version(ctx, "a")
			require.NoError(t, err)
			def := MegabitsPerSecond(200) // the yaml defaults (§1.6)
			if v.HasDataRates() {
				def = MiBPerSecond(24)
			}
			for _, l := range Limiters(v, true) {
				got, err := c.ReadThroughput(ctx, "a", v, l)
				require.NoError(t, err, l)
				assert.Equal(t, def, got, l)

				require.NoError(t, c.SetThroughput(ctx, "a", v, l, tc.rate), l)
				got, err = c.ReadThroughput(ctx, "a", v, l)
				require.NoError(t, err, l)
				want, _ := tc.rate.BytesPerSecond(v)
				bps, _ := got.BytesPerSecond(v)
				assert.InDelta(t, want, bps, 1e-6, l)

				require.NoError(t, c.SetThroughput(ctx, "a", v, l, Unthrottled()), l)
				got, err = c.ReadThroughput(ctx, "a", v, l)
				require.NoError(t, err, l)
				assert.True(t, got.Unlimited, l)
			}
			// The simulated node applies what the parser computes.
			require.NoError(t, c.SetThroughput(ctx, "a", v, LimiterStream, tc.rate))
			nv, err := s.Node("a")
			require.NoError(t, err)
			want, _ := tc.rate.BytesPerSecond(v)
			assert.InDelta(t, want, nv.Throughput.Stream, 1e-6)
		})
	}
}

// TestThroughputSimQuirks: the sim's 4.1 answers read as §1.3 says: the flagless get
// on the default wants -d, the inter-DC line with its stray prefix still parses.
func TestThroughputSimQuirks(t *testing.T) {
	s := sim.NewMemory(sim.Options{Version: sim.V41}, []sim.NodeSpec{{Pod: "a", Address: "10.0.0.1"}}, nil)
	ctx := context.Background()
	var out, errb bytes.Buffer
	require.Equal(t, 2, s.Run(ctx, "a", []string{"getstreamthroughput"}, &out, &errb))
	_, err := ParseThroughput(errb.String())
	assert.ErrorIs(t, err, ErrPreciseFlagNeeded)

	out.Reset()
	require.Equal(t, 0, s.Run(ctx, "a", []string{"setinterdcstreamthroughput", "200"}, &out, &errb))
	require.Equal(t, 0, s.Run(ctx, "a", []string{"getinterdcstreamthroughput"}, &out, &errb))
	r, err := ParseThroughput(out.String())
	require.NoError(t, err)
	assert.Equal(t, ThroughputReading{LimiterInterDC, MegabitsPerSecond(200)}, r)

	// A node whose JVM is down: nodetool cannot connect.
	require.NoError(t, s.SetFault("a", sim.Fault{Down: true}))
	err = Client{Exec: simExec{s}}.SetThroughput(ctx, "a", Version{4, 1, 6}, LimiterStream, MiBPerSecond(48))
	var ue *nodetool.UnreachableError
	assert.ErrorAs(t, err, &ue)
}
