package nodetool

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// TestKeyspacesAndSchemaAgainstSim: what the simulated two-DC cluster prints while an
// ALTER KEYSPACE propagates parses: per-DC replication in describecluster's Keyspaces,
// two schema versions plus UNREACHABLE, then one; status's per-DC ownership.
func TestKeyspacesAndSchemaAgainstSim(t *testing.T) {
	for _, v := range []string{sim.V40, sim.V41, sim.V50} {
		t.Run(v, func(t *testing.T) {
			clk := newSimClock()
			s := sim.NewMemory(sim.Options{Version: v, SchemaAgreeTime: time.Minute}, []sim.NodeSpec{
				{Pod: "a", Address: "10.0.1.1", DC: "dc1"}, {Pod: "b", Address: "10.0.1.2", DC: "dc1"},
				{Pod: "c", Address: "10.0.2.1", DC: "dc2"}, {Pod: "d", Address: "10.0.2.2", DC: "dc2"},
			}, clk.now)
			require.NoError(t, s.SetFault("d", sim.Fault{Down: true}))
			done := make(chan int, 1)
			go func() {
				var out, errb bytes.Buffer
				done <- s.RunCQL(context.Background(), "a", []string{"10.0.1.1", "-e",
					"ALTER KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '2'}"}, nil, &out, &errb)
			}()

			describe := func() ClusterDescription {
				var out, errb bytes.Buffer
				require.Equal(t, 0, s.Run(context.Background(), "c", []string{"describecluster"}, &out, &errb))
				d, err := ParseDescribeCluster(out.String())
				require.NoError(t, err, out.String())
				return d
			}
			var d ClusterDescription
			require.Eventually(t, func() bool { d = describe(); return len(d.SchemaVersions) == 3 }, 10*time.Second, time.Millisecond,
				"new, old, UNREACHABLE")
			require.Equal(t, []string{"10.0.2.2"}, d.SchemaVersions["UNREACHABLE"])
			var app Keyspace
			for _, k := range d.Keyspaces {
				if k.Name == "app" {
					app = k
				}
			}
			require.Equal(t, "NetworkTopologyStrategy", app.Class)
			require.Equal(t, map[string]string{"dc1": "2"}, app.Options)

			clk.add(time.Minute)
			require.Equal(t, 2, <-done, "cqlsh gave up waiting for agreement")
			require.Len(t, describe().SchemaVersions, 2)

			var out, errb bytes.Buffer
			require.Equal(t, 0, s.Run(context.Background(), "a", []string{"status"}, &out, &errb))
			ring, err := ParseStatus(out.String())
			require.NoError(t, err, out.String())
			owns := map[string]string{}
			for _, n := range ring.Nodes {
				owns[n.Address] = n.Owns
			}
			require.Equal(t, map[string]string{"10.0.1.1": "100.0%", "10.0.1.2": "100.0%", "10.0.2.1": "0.0%", "10.0.2.2": "0.0%"}, owns)
		})
	}
}
