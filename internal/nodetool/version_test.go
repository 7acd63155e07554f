package nodetool

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{
		"4.1.6":          {4, 1, 6},
		"5.0.3-SNAPSHOT": {5, 0, 3},
		" 3.11.18 ":      {3, 11, 18},
		"4.0":            {4, 0, PatchUnknown},
	} {
		got, err := ParseVersion(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "4", "4.x.1", "4.1.6.2", "v4.1"} {
		_, err := ParseVersion(in)
		assert.Error(t, err, in)
	}
	assert.Equal(t, "4.0", Version{4, 0, PatchUnknown}.String())
}

// TestOldMegabit: the releases that counted 131 072 bytes per megabit
// (docs/how-it-works/streaming.md §1.2); an unknown patch gets the newest rules.
func TestOldMegabit(t *testing.T) {
	for v, want := range map[Version]bool{
		{3, 11, 11}: true, {3, 11, 12}: false, {3, 0, 25}: true,
		{4, 0, 1}: true, {4, 0, 2}: false, {4, 0, PatchUnknown}: false,
		{4, 1, 0}: false, {5, 0, 3}: false,
	} {
		assert.Equal(t, want, v.oldMegabit(), v.String())
	}
}

func TestParseVersionOutput(t *testing.T) {
	v, err := ParseVersionOutput("Picked up JAVA_TOOL_OPTIONS: -Dcom.sun.jndi.rmiURLParsing=legacy\nReleaseVersion: 4.1.6\n")
	require.NoError(t, err)
	assert.Equal(t, Version{4, 1, 6}, v)
	_, err = ParseVersionOutput("nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'.\n")
	assert.ErrorContains(t, err, "nodetool printed an error")
	_, err = ParseVersionOutput("")
	assert.Error(t, err)
}
