package nodetool

import (
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseStatusIPv6: Cassandra prints IPv6 addresses in full (Java's
// Inet6Address.getHostAddress: eight groups, no "::"); the row parses as any other.
func TestParseStatusIPv6(t *testing.T) {
	r, err := ParseStatus(fixture(t, "status-4.1-ipv6.txt"))
	require.NoError(t, err)
	require.Len(t, r.Nodes, 3)
	assert.Equal(t, vn("dc1", "UN", "fd00:10:244:1:0:0:0:5", "1.2 GiB", 16, "33.3%", "2f1b8c5e-6a0e-4b0e-9c57-0d3b1f6a7e11", "r1"), r.Nodes[0])
	assert.Equal(t, "UL", r.Nodes[1].Code())
	assert.Equal(t, "fd00:10:244:3:0:0:0:1f", r.Nodes[2].Address)
}

// TestByAddressIPv6: the kubelet's short form (RFC 5952) finds the row Cassandra printed
// in full; every other spelling of the same address too, and nothing else.
func TestByAddressIPv6(t *testing.T) {
	r, err := ParseStatus(fixture(t, "status-4.1-ipv6.txt"))
	require.NoError(t, err)
	for _, addr := range []string{"fd00:10:244:1::5", "FD00:10:244:1:0:0:0:5", "fd00:0010:0244:0001::0005"} {
		n, ok := r.ByAddress(addr)
		require.True(t, ok, addr)
		assert.Equal(t, "2f1b8c5e-6a0e-4b0e-9c57-0d3b1f6a7e11", n.HostID, addr)
	}
	n, ok := r.ByAddress("fd00:10:244:3::1f")
	require.True(t, ok)
	assert.Equal(t, "c3e5f7a9-1b2d-4e6f-8a0b-1c2d3e4f5a63", n.HostID)
	for _, addr := range []string{"fd00:10:244:1::6", "", "10.244.1.5", "fd00:10:244:1"} {
		_, ok := r.ByAddress(addr)
		assert.False(t, ok, addr)
	}
}

func TestSameAddress(t *testing.T) {
	assert.True(t, nodetool.SameAddress("10.244.0.5", "10.244.0.5"))
	assert.True(t, nodetool.SameAddress("::ffff:10.244.0.5", "10.244.0.5"), "IPv4-mapped")
	assert.True(t, nodetool.SameAddress("fe80:0:0:0:0:0:0:1%eth0", "fe80::1"), "zone ignored")
	assert.False(t, nodetool.SameAddress("10.244.0.5", "10.244.0.50"))
	assert.False(t, nodetool.SameAddress("", ""))
	assert.True(t, nodetool.SameAddress("not-an-ip", "not-an-ip"), "unparsable: compared as text")
}

// TestParseStatusDuplicateIPv6: two spellings of one address are one address.
func TestParseStatusDuplicateIPv6(t *testing.T) {
	in := "Datacenter: dc1\n===============\nStatus=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n" +
		"--  Address                Load     Tokens  Owns (effective)  Host ID                               Rack\n" +
		"UN  fd00:10:244:1:0:0:0:5  1.2 GiB  16      50.0%             2f1b8c5e-6a0e-4b0e-9c57-0d3b1f6a7e11  r1  \n" +
		"UN  fd00:10:244:1::5       1.2 GiB  16      50.0%             9a4d2c71-3b8e-4f2a-a1d0-5e6f7a8b9c02  r1  \n"
	_, err := ParseStatus(in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already listed")
}
