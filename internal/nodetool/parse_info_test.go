package nodetool

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func boolp(b bool) *bool { return &b }

func TestParseInfoFixtures(t *testing.T) {
	base := Info{ID: hid6, GossipActive: true, NativeActive: true, Load: "1.21 GiB", DC: "dc1", Rack: "r3"}
	stopped := base
	stopped.GossipActive, stopped.NativeActive = false, false
	with50 := func(i Info, state string, decommissioning, failed bool) Info {
		i.BootstrapState, i.Decommissioning, i.DecommissionFailed = state, boolp(decommissioning), boolp(failed)
		return i
	}
	tests := []struct {
		file string
		want Info
	}{
		{"info-3.11-steady.txt", base},
		{"info-4.1-steady.txt", base},
		{"info-4.1-decommissioned.txt", stopped},
		{"info-5.0-normal.txt", with50(base, "COMPLETED", false, false)},
		{"info-5.0-decommissioning.txt", with50(base, "COMPLETED", true, false)},
		{"info-5.0-left-announced.txt", with50(base, "NEEDS_BOOTSTRAP", true, false)},
		{"info-5.0-decommission-failed.txt", with50(base, "COMPLETED", false, true)},
		{"info-5.0-decommissioned.txt", with50(stopped, "DECOMMISSIONED", false, false)},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseInfo(fixture(t, tt.file))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseInfoLeavesAbsent50FieldsNil(t *testing.T) {
	got, err := ParseInfo(fixture(t, "info-4.1-steady.txt"))
	require.NoError(t, err)
	assert.Nil(t, got.Decommissioning)
	assert.Nil(t, got.DecommissionFailed)
	assert.Empty(t, got.BootstrapState)
}

func TestParseInfoRejects(t *testing.T) {
	steady := fixture(t, "info-4.1-steady.txt")
	tests := []struct {
		name, out, wantErr string
	}{
		{"empty", "", `info: empty output, no "ID" line`},
		{"no ID line", strings.SplitN(steady, "\n", 2)[1], `info: no "ID" line in`},
		{"ID not a uuid", strings.Replace(steady, hid6, "null", 1), `info line 1: ID "null" is not a host ID`},
		{"ID cut short", steady[:40], `info line 1: ID "0d2f4a6c-8e0a-4" is not a host ID`},
		{"bad boolean", strings.Replace(steady, "Gossip active          : true", "Gossip active          : yes", 1), `info line 2: "Gossip active": value "yes" is neither true nor false`},
		{"duplicate field", steady + "Rack                   : r1\n", `info line 19: "Rack" is already given on line 10`},
		{"connect failure", "nodetool: Failed to connect to '127.0.0.1:7199' - SecurityException: 'Authentication failed! Invalid username or password'.\n",
			`info: nodetool printed an error instead of node info: "nodetool: Failed to connect to '127.0.0.1:7199' - SecurityException: 'Authentication failed! Invalid username or password'."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseInfo(tt.out)
			require.Error(t, err)
			assert.Equal(t, Info{}, got)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
	_, err := ParseInfo(strings.Replace(fixture(t, "info-5.0-normal.txt"), "Decommissioning        : false", "Decommissioning        : maybe", 1))
	assert.EqualError(t, err, `info line 22: "Decommissioning": value "maybe" is neither true nor false`)
}
