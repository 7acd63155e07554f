package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// keyspacesOf is describecluster's Keyspaces section (4.0+).
func keyspacesOf(t *testing.T, s *Store, pod string) string {
	t.Helper()
	r := run(s, pod, "describecluster")
	require.Equal(t, 0, r.code, r.stderr)
	_, ks, ok := strings.Cut(r.stdout, "\nKeyspaces:\n")
	require.True(t, ok, r.stdout)
	return ks
}

// TestReplicationDefaultsEveryDC: Options.RF in every DC that has nodes, for the three
// replicated system keyspaces and the user ones (today's behaviour).
func TestReplicationDefaultsEveryDC(t *testing.T) {
	s := NewMemory(Options{Version: V41}, twoDCs(), newClock().Now)
	require.Equal(t, "\tsystem_auth -> Replication class: NetworkTopologyStrategy {dc1=3, dc2=3}\n"+
		"\tsystem_distributed -> Replication class: NetworkTopologyStrategy {dc1=3, dc2=3}\n"+
		"\tsystem_traces -> Replication class: NetworkTopologyStrategy {dc1=3, dc2=3}\n"+
		"\tsystem_schema -> Replication class: LocalStrategy {}\n"+
		"\tsystem -> Replication class: LocalStrategy {}\n"+
		"\tapp -> Replication class: NetworkTopologyStrategy {dc1=3, dc2=3}\n", keyspacesOf(t, s, "dc1-r1-0"))
}

// TestReplicationOption: Options.Replication replaces a keyspace's map; a DC it does not
// name has no replica, which status's effective ownership (computed with the user
// keyspace's settings) shows as 0.0%.
func TestReplicationOption(t *testing.T) {
	s := NewMemory(Options{Version: V41, Replication: map[string]map[string]int{"app": {"dc1": 2}}}, twoDCs(), newClock().Now)
	require.Contains(t, keyspacesOf(t, s, "dc1-r1-0"), "\tapp -> Replication class: NetworkTopologyStrategy {dc1=2}\n")
	st := run(s, "dc1-r1-0", "status").stdout
	require.Regexp(t, `(?m)^UN  10\.244\.1\.12 .* 66\.7% `, st)
	require.Regexp(t, `(?m)^UN  10\.245\.1\.20 .* 0\.0% `, st)

	_, err := newState(Options{Version: V41, Replication: map[string]map[string]int{"nope": {"dc1": 1}}}, twoDCs(), fixtureEpoch)
	require.ErrorContains(t, err, `"nope"`)
}

// TestRFCheckPerKeyspacePerDC: the 4.0+ check compares each keyspace's RF in the
// leaving node's DC with that DC's owners (StorageService.decommission), naming the
// keyspace that fails.
func TestRFCheckPerKeyspacePerDC(t *testing.T) {
	for _, v := range []string{V40, V41, V50} {
		t.Run(v, func(t *testing.T) {
			repl := map[string]map[string]int{
				"system_distributed": {"dc1": 3},
				"system_traces":      {"dc1": 3},
				"app":                {"dc1": 3},
				"system_auth":        {"dc1": 3, "dc2": 3},
			}
			s := NewMemory(Options{Version: v, Replication: repl}, twoDCs(), newClock().Now)
			r := run(s, "dc2-r1-0", "decommission")
			require.Equal(t, result{"nodetool: Unsupported operation: Not enough live nodes to maintain replication factor in keyspace system_auth (RF = 3, N = 3). Perform a forceful decommission to ignore.\n" + seeHelp, "", 1}, r)
			// dc1 is checked against dc1's RF: the same N = RF = 3 refuses there too,
			// naming the first keyspace checked.
			r = run(s, "dc1-r1-0", "decommission")
			require.Contains(t, r.stdout, "keyspace system_distributed (RF = 3, N = 3)")
		})
	}
}

// TestDCWithoutReplicasDecommissionsToZero: when no keyspace replicates to a DC, every
// keyspace's RF there is 0 < N, so each node of it decommissions, down to the last one,
// and streams nothing (no Unbootstrap plan while it leaves).
func TestDCWithoutReplicasDecommissionsToZero(t *testing.T) {
	for _, v := range []string{V40, V41, V50} {
		t.Run(v, func(t *testing.T) {
			dc1 := map[string]int{"dc1": 3}
			repl := map[string]map[string]int{"system_auth": dc1, "system_distributed": dc1, "system_traces": dc1, "app": dc1}
			clk := newClock()
			s := NewMemory(Options{Version: v, Replication: repl, DecommissionTime: 90 * time.Second, LeftAnnounce: 30 * time.Second}, twoDCs(), clk.Now)
			for _, pod := range []string{"dc2-r1-0", "dc2-r2-0", "dc2-r3-0"} {
				ch := startDecommission(t, t.Context(), s, pod)
				clk.Advance(40 * time.Second) // the streaming window of a node that has data
				ns := run(s, pod, "netstats")
				require.Contains(t, ns.stdout, "Mode: LEAVING\nNot sending any streams.\n")
				notYet(t, ch)
				clk.Advance(50 * time.Second)
				require.Equal(t, result{"", "", 0}, receive(t, ch))
				// Nothing moved to dc1.
				require.Equal(t, "1.2 GiB", view(t, s, "dc1-r1-0").Load)
			}
			st := run(s, "dc1-r1-0", "status").stdout
			require.NotContains(t, st, "Datacenter: dc2")
		})
	}
}

// TestDCWithoutReplicasMetered: metered streaming has nothing to send, so LEFT comes as
// soon as streaming would start.
func TestDCWithoutReplicasMetered(t *testing.T) {
	dc1 := map[string]int{"dc1": 3}
	repl := map[string]map[string]int{"system_auth": dc1, "system_distributed": dc1, "system_traces": dc1, "app": dc1}
	clk := newClock()
	s := NewMemory(Options{Version: V41, Replication: repl, StreamTimeScale: 1, DecommissionTime: 90 * time.Second, LeftAnnounce: 30 * time.Second}, twoDCs(), clk.Now)
	ch := startDecommission(t, t.Context(), s, "dc2-r1-0")
	clk.Advance(31 * time.Second)
	require.True(t, view(t, s, "dc2-r1-0").Left)
	clk.Advance(30 * time.Second)
	require.Equal(t, result{"", "", 0}, receive(t, ch))
}
