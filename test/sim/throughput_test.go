package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// step is one command of a scripted session and what it must print.
type step struct {
	args           []string
	stdout, stderr string // stderr: a prefix (traces follow)
	code           int
}

func runSteps(t *testing.T, s *Store, steps []step) {
	t.Helper()
	for _, st := range steps {
		r := run(s, podA, st.args...)
		require.Equal(t, st.stdout, r.stdout, "%v", st.args)
		require.True(t, strings.HasPrefix(r.stderr, st.stderr), "%v: stderr %q", st.args, r.stderr)
		if st.stderr == "" {
			require.Empty(t, r.stderr, "%v", st.args)
		}
		require.Equal(t, st.code, r.code, "%v", st.args)
	}
}

func usage(msg string) string { return "nodetool: " + msg + "\n" + seeHelp }

func args(s string) []string { return strings.Fields(s) }

// TestThroughputBefore41: 3.11 and 4.0 print the int in Mb/s as set, 0 and negatives
// included, and know no flags (docs/how-it-works/streaming.md §1.1, §1.3, §1.4).
func TestThroughputBefore41(t *testing.T) {
	for _, v := range []string{V311, V40} {
		t.Run(v, func(t *testing.T) {
			s := NewMemory(Options{Version: v}, sixNodes(), newClock().Now)
			runSteps(t, s, []step{
				// §1.3: the defaults.
				{args: args("getstreamthroughput"), stdout: "Current stream throughput: 200 Mb/s\n"},
				{args: args("getinterdcstreamthroughput"), stdout: "Current inter-datacenter stream throughput: 200 Mb/s\n"},
				// §1.4: set prints nothing; 0 is printed as is, no "unlimited".
				{args: args("setstreamthroughput 0")},
				{args: args("getstreamthroughput"), stdout: "Current stream throughput: 0 Mb/s\n"},
				{args: args("setinterdcstreamthroughput 400")},
				{args: args("getinterdcstreamthroughput"), stdout: "Current inter-datacenter stream throughput: 400 Mb/s\n"},
				// §1.1: no -m/-d/-e; a get rejects them as unexpected, a set converts them
				// as its value (airline Parser.parseArg).
				{args: args("getstreamthroughput -m"), stdout: usage("Found unexpected parameters: [-m]"), code: 1},
				{args: args("setstreamthroughput -m 5"), stdout: usage(`stream_throughput: can not convert "-m" to a Integer`), code: 1},
				{args: args("setstreamthroughput 1.2"), stdout: usage(`stream_throughput: can not convert "1.2" to a Integer`), code: 1},
				{args: args("setstreamthroughput"), stdout: usage("Required parameters are missing: stream_throughput"), code: 1},
				{args: args("setinterdcstreamthroughput"), stdout: usage("Required parameters are missing: inter_dc_stream_throughput"), code: 1},
			})
		})
	}
}

// TestThroughput41: 4.1 and 5.0 (same nodetool files) with their quirks: the flagless
// get fails on the 24MiB/s default, -d/-m/-e print doubles, the inter-DC line carries
// a stray double in front and -d says "stream" (docs/how-it-works/streaming.md §1.3, §1.4).
func TestThroughput41(t *testing.T) {
	const dFlag = "error: Use the -d flag to quiet this error and get the exact throughput in megabits/s\n-- StackTrace --\njava.lang.RuntimeException: "
	for _, v := range []string{V41, V50} {
		t.Run(v, func(t *testing.T) {
			s := NewMemory(Options{Version: v}, sixNodes(), newClock().Now)
			runSteps(t, s, []step{
				// §1.3, default config (24MiB/s = 201.326592 Mb/s).
				{args: args("getstreamthroughput"), stderr: dFlag, code: 2},
				{args: args("getstreamthroughput -d"), stdout: "Current stream throughput: 201.326592 Mb/s\n"},
				{args: args("getstreamthroughput -m"), stdout: "Current stream throughput: 24.0 MiB/s\n"},
				{args: args("getstreamthroughput --mib"), stdout: "Current stream throughput: 24.0 MiB/s\n"},
				{args: args("getstreamthroughput -e"), stdout: "Current entire SSTable stream throughput: 24.0 MiB/s\n"},
				{args: args("getinterdcstreamthroughput"), stderr: dFlag, code: 2},
				{args: args("getinterdcstreamthroughput -m"), stdout: "Current inter-datacenter stream throughput: 24.0 MiB/s\n"},
				{args: args("getinterdcstreamthroughput -e"), stdout: "Current entire SSTable inter-datacenter stream throughput: 24.0 MiB/s\n"},
				{args: args("getinterdcstreamthroughput -d"), stdout: "Current stream throughput: 201.326592 Mb/s\n"},
				// §1.3: two flags.
				{args: args("getstreamthroughput -m -d"), stdout: usage("You cannot use more than one flag with this command"), code: 1},
				{args: args("getstreamthroughput -em"), stdout: usage("You cannot use more than one flag with this command"), code: 1},
				// §1.3, after setstreamthroughput 200.
				{args: args("setstreamthroughput 200")},
				{args: args("getstreamthroughput"), stdout: "Current stream throughput: 200 Mb/s\n"},
				{args: args("getstreamthroughput -d"), stdout: "Current stream throughput: 200.0 Mb/s\n"},
				{args: args("getstreamthroughput -m"), stdout: "Current stream throughput: 23.84185791015625 MiB/s\n"},
				{args: args("getstreamthroughput -e"), stdout: "Current entire SSTable stream throughput: 24.0 MiB/s\n"},
				// The assertDFlagNeeded case of the 4.1 test: -m 1 is 8.388608 Mb/s.
				{args: args("setstreamthroughput -m 1")},
				{args: args("getstreamthroughput"), stderr: dFlag, code: 2},
				// §1.3, after 0: unlimited, per limiter.
				{args: args("setstreamthroughput 0")},
				{args: args("getstreamthroughput"), stdout: "Current stream throughput: unlimited\n"},
				{args: args("getstreamthroughput -d"), stdout: "Current stream throughput: unlimited\n"},
				{args: args("setstreamthroughput -m 0")},
				{args: args("getstreamthroughput -m"), stdout: "Current stream throughput: unlimited\n"},
				{args: args("getstreamthroughput -e"), stdout: "Current entire SSTable stream throughput: 24.0 MiB/s\n"},
				{args: args("setstreamthroughput -e 0")},
				{args: args("getstreamthroughput -e"), stdout: "Current entire SSTable stream throughput: unlimited\n"},
				// §1.3, the inter-DC line after setinterdcstreamthroughput 200.
				{args: args("setinterdcstreamthroughput 200")},
				{args: args("getinterdcstreamthroughput"), stdout: "200.0Current inter-datacenter stream throughput: 200 Mb/s\n"},
				{args: args("getinterdcstreamthroughput -d"), stdout: "Current stream throughput: 200.0 Mb/s\n"},
				{args: args("setinterdcstreamthroughput -e 48")},
				{args: args("getinterdcstreamthroughput -e"), stdout: "Current entire SSTable inter-datacenter stream throughput: 48.0 MiB/s\n"},
				// §1.4 errors (stdout, See-help line, exit 1).
				{args: args("setstreamthroughput"), stdout: usage("Required parameters are missing: stream_throughput"), code: 1},
				{args: args("setstreamthroughput 1.2"), stdout: usage(`stream_throughput: can not convert "1.2" to a int`), code: 1},
				{args: args("setstreamthroughput 2147483647"), stdout: usage("Invalid data rate: 2147483647 megabits per second; stream_throughput_outbound and inter_dc_stream_throughput_outbound should be between 0 and 2147483646 in megabits per second"), code: 1},
				{args: args("setstreamthroughput -m 2147483647"), stdout: usage("stream_throughput_outbound: 2147483647 is too large; it should be less than 2147483647 in megabits/s"), code: 1},
				{args: args("setinterdcstreamthroughput -m 256000000"), stdout: usage("inter_dc_stream_throughput_outbound: 256000000 is too large; it should be less than 2147483647 in megabits/s"), code: 1},
				{args: args("setstreamthroughput -e 2147483647"), stdout: usage("entire_sstable_stream_throughput_outbound: 2147483647 is too large; it should be less than 2147483647 in MiB/s"), code: 1},
				{args: args("setstreamthroughput -e -m 5"), stdout: usage("You cannot use -e and -m at the same time"), code: 1},
				{args: args("setstreamthroughput -5"), stdout: usage("Invalid data rate: value must be non-negative"), code: 1},
				{args: args("setstreamthroughput -d 5"), stdout: usage(`stream_throughput: can not convert "-d" to a int`), code: 1},
				// Refused values changed nothing.
				{args: args("getstreamthroughput -m"), stdout: "Current stream throughput: unlimited\n"},
			})
		})
	}
}

// TestThroughputPerNodeResetOnRestart: a setting is the node's own and lives in its
// JVM: a restart brings back the yaml value (docs/how-it-works/streaming.md §1.5).
func TestThroughputPerNodeResetOnRestart(t *testing.T) {
	s := NewMemory(Options{Version: V41}, sixNodes(), newClock().Now)
	require.Equal(t, result{"", "", 0}, run(s, podA, "setstreamthroughput", "-m", "100"))
	require.Equal(t, "Current stream throughput: 100.0 MiB/s\n", run(s, podA, "getstreamthroughput", "-m").stdout)
	require.Equal(t, "Current stream throughput: 24.0 MiB/s\n", run(s, podB, "getstreamthroughput", "-m").stdout)
	require.Equal(t, 100*mib, view(t, s, podA).Throughput.Stream)
	require.NoError(t, s.Restart(podA))
	require.Equal(t, "Current stream throughput: 24.0 MiB/s\n", run(s, podA, "getstreamthroughput", "-m").stdout)
	// A JVM that is down answers the connect error.
	require.NoError(t, s.SetFault(podB, Fault{Down: true}))
	r := run(s, podB, "setstreamthroughput", "0")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "ConnectException")
}

// TestThroughputBytes: what each setting lets through (docs/how-it-works/streaming.md §1.2):
// 3.11.0–3.11.11 and 4.0.0–4.0.1 count 131 072 bytes per "megabit", later releases
// 125 000; 0 is unthrottled.
func TestThroughputBytes(t *testing.T) {
	for _, tc := range []struct {
		release string
		want    float64
	}{
		{"3.11.11", 200 * 131072}, {"3.11.18", 200 * 125000},
		{"4.0.1", 200 * 131072}, {"4.0.13", 200 * 125000},
	} {
		v := tc.release[:strings.LastIndexByte(tc.release, '.')]
		s := NewMemory(Options{Version: v, ReleaseVersion: tc.release}, sixNodes(), nil)
		tp := view(t, s, podA).Throughput
		require.Equal(t, Throughputs{Stream: tc.want, InterDC: tc.want}, tp, tc.release)
	}
	s := NewMemory(Options{Version: V50}, sixNodes(), nil)
	require.Equal(t, Throughputs{24 * mib, 24 * mib, 24 * mib, 24 * mib}, view(t, s, podA).Throughput)
	require.Equal(t, 0, run(s, podA, "setstreamthroughput", "0").code)
	require.True(t, math.IsInf(view(t, s, podA).Throughput.Stream, 1))
}
