package nodetool

import (
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseNetstatsFixtures(t *testing.T) {
	tests := []struct {
		file string
		want Netstats
	}{
		{"netstats-4.1-leaving-streaming.txt", Netstats{Mode: nodetool.ModeLeaving, Streaming: true}},
		{"netstats-4.1-normal-receiving.txt", Netstats{Mode: nodetool.ModeNormal, Streaming: true}},
		{"netstats-4.1-leaving-idle.txt", Netstats{Mode: nodetool.ModeLeaving, Streaming: false}},
		{"netstats-4.1-decommissioned.txt", Netstats{Mode: nodetool.ModeDecommissioned, Streaming: false}},
		{"netstats-5.0-decommission-failed.txt", Netstats{Mode: nodetool.ModeDecommissionFailed, Streaming: false}},
		{"netstats-4.1-starting.txt", Netstats{Mode: nodetool.ModeStarting, Streaming: false}},
		{"netstats-3.11-leaving-streaming.txt", Netstats{Mode: nodetool.ModeLeaving, Streaming: true}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseNetstats(fixture(t, tt.file))
			require.NoError(t, err)
			got.Streams = nil // TestParseNetstatsProgress checks them
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestParseNetstatsProgress: the summed session bytes of each version's format
// (testdata/netstats-*.txt; testdata/README.md says where each comes from).
func TestParseNetstatsProgress(t *testing.T) {
	tests := []struct {
		file      string
		plan, dir string
		want      StreamTotals
	}{
		{"netstats-4.1-leaving-streaming.txt", PlanUnbootstrap, DirSending, StreamTotals{DoneBytes: 209715200, TotalBytes: 1153433600, Peers: 2}},
		{"netstats-4.1-normal-receiving.txt", PlanUnbootstrap, DirReceiving, StreamTotals{DoneBytes: 282066944, TotalBytes: 629145600, Peers: 1}},
		{"netstats-3.11-leaving-streaming.txt", PlanUnbootstrap, DirSending, StreamTotals{DoneBytes: 282066944, TotalBytes: 629145600, Peers: 1}},
		{"netstats-4.x-leaving-zero-copy.txt", PlanUnbootstrap, DirSending, StreamTotals{DoneBytes: 1070936074, TotalBytes: 2141872148, Peers: 1}},
		{"netstats-4.x-joining-bootstrap.txt", PlanBootstrap, DirReceiving, StreamTotals{DoneBytes: 503316480, TotalBytes: 1879048192, Peers: 2}},
		{"netstats-4.x-bootstrap-source.txt", PlanBootstrap, DirSending, StreamTotals{DoneBytes: 369098752, TotalBytes: 1073741824, Peers: 1}},
		{"netstats-3.11-joining-bootstrap.txt", PlanBootstrap, DirReceiving, StreamTotals{DoneBytes: 234881024, TotalBytes: 1879048192, Peers: 2}},
		{"netstats-3.11-bootstrap-source.txt", PlanBootstrap, DirSending, StreamTotals{DoneBytes: 369098752, TotalBytes: 1073741824, Peers: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ns, err := ParseNetstats(fixture(t, tt.file))
			require.NoError(t, err)
			got, ok := ns.StreamProgress(tt.plan, tt.dir)
			require.True(t, ok)
			assert.Equal(t, tt.want, got)
			_, ok = ns.StreamProgress("Rebuild", tt.dir)
			assert.False(t, ok, "another plan's sessions are not counted")
		})
	}
}

// TestParseNetstatsProgressIgnoresHumanSizes: -H summaries are not bytes; no figure
// beats a wrong one.
func TestParseNetstatsProgressIgnoresHumanSizes(t *testing.T) {
	ns, err := ParseNetstats("Mode: JOINING\nBootstrap 3f6c2d10-5a7e-11ef-9c41-2b7d8e9f0a1b\n    /10.244.1.12\n" +
		"        Receiving 5 files, 1 GiB total. Already received 1 files (20.00%), 352 MiB total (34.38%)\n")
	require.NoError(t, err)
	assert.True(t, ns.Streaming)
	_, ok := ns.StreamProgress(PlanBootstrap, DirReceiving)
	assert.False(t, ok)
}

func TestParseNetstatsAcceptsEveryMode(t *testing.T) {
	for _, m := range []nodetool.Mode{nodetool.ModeStarting, nodetool.ModeNormal, nodetool.ModeJoining, nodetool.ModeJoiningFailed, nodetool.ModeLeaving, nodetool.ModeDecommissioned, nodetool.ModeDecommissionFailed, nodetool.ModeMoving, nodetool.ModeDraining, nodetool.ModeDrained} {
		t.Run(string(m), func(t *testing.T) {
			got, err := ParseNetstats("Mode: " + string(m) + "\nNot sending any streams.\n")
			require.NoError(t, err)
			assert.Equal(t, Netstats{Mode: m}, got)
		})
	}
}

func TestParseNetstatsModeLineOnly(t *testing.T) {
	// `nodetool netstats | head -1`, with and without its newline, CRLF, JVM banner first.
	for _, out := range []string{
		"Mode: DECOMMISSIONED\n",
		"Mode: DECOMMISSIONED",
		"Mode: DECOMMISSIONED\r\n",
		"Picked up JAVA_TOOL_OPTIONS: -Dcom.sun.jndi.rmiURLParsing=legacy\nMode: DECOMMISSIONED\n",
	} {
		got, err := ParseNetstats(out)
		require.NoError(t, err, "%q", out)
		assert.Equal(t, Netstats{Mode: nodetool.ModeDecommissioned}, got, "%q", out)
	}
}

func TestParseNetstatsOtherPlansCountAsStreaming(t *testing.T) {
	got, err := ParseNetstats("Mode: NORMAL\nRebuild 2c3d4e5f-4e2b-11ef-a3c1-6f1d2b3c4d5e\n    /10.244.1.13\n")
	require.NoError(t, err)
	assert.Equal(t, Netstats{Mode: nodetool.ModeNormal, Streaming: true}, Netstats{Mode: got.Mode, Streaming: got.Streaming})
}

func TestParseNetstatsRejects(t *testing.T) {
	tests := []struct {
		name, out, wantErr string
	}{
		{"empty", "", `netstats: empty output, no "Mode:" line`},
		{"whitespace", " \n\n", `netstats: empty output, no "Mode:" line`},
		{"unknown mode", "Mode: BOOTSTRAPPING\nNot sending any streams.\n", `netstats line 1: unknown operation mode "BOOTSTRAPPING"`},
		{"lower-case mode", "Mode: normal\n", `netstats line 1: unknown operation mode "normal"`},
		{"no mode word", "Mode: \n", `netstats line 1: want "Mode: <MODE>", got "Mode:"`},
		{"missing mode line", "Not sending any streams.\nRead Repair Statistics:\n", `netstats line 1: want "Mode: <MODE>", got "Not sending any streams."`},
		{"connect failure", "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'.\n",
			`netstats: nodetool printed an error instead of a mode: "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'."`},
		{"stack trace", "error: null\n-- StackTrace --\njava.lang.NullPointerException\n", `netstats: nodetool printed an error instead of a mode: "error: null"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNetstats(tt.out)
			require.Error(t, err)
			assert.Equal(t, Netstats{}, got)
			assert.EqualError(t, err, tt.wantErr)
		})
	}
}
