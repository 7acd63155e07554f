package removedc

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
)

// replicas is what the keyspaces say about removing dc: the ones that still replicate
// to it and would keep replicas elsewhere (each with its ALTER statement), and the ones
// that cannot lose it (their last replicas are there, or their strategy places
// replicas in every datacenter).
type replicas struct {
	alter    []alteration
	blocking []string
}

// alteration is one keyspace's replication with dc dropped.
type alteration struct {
	Keyspace  string
	Statement string
}

// judgeKeyspaces is the pure decision over the keyspaces read: node-local keyspaces
// never replicate; an NTS keyspace with dc among its options must lose it, which it
// can only while another datacenter keeps replicas; any other replicated strategy
// (SimpleStrategy) places replicas in dc too and has no per-datacenter option.
func judgeKeyspaces(list []cql.Keyspace, dc string) replicas {
	var r replicas
	for _, k := range list {
		switch {
		case k.Local():
		case k.NTS():
			if k.RF(dc) == 0 {
				continue
			}
			rest := k.Without(dc)
			if len(rest) == 0 {
				r.blocking = append(r.blocking, fmt.Sprintf("keyspace %s replicates only to %s (%s): removing it would lose the keyspace's last replicas; drop the keyspace, or add its replicas to another datacenter first (ALTER KEYSPACE, then nodetool rebuild there)", k.Name, dc, rfText(k.DCs)))
				continue
			}
			r.alter = append(r.alter, alteration{Keyspace: k.Name, Statement: cql.Alter(k.Name, rest)})
		default:
			r.blocking = append(r.blocking, fmt.Sprintf("keyspace %s uses %s, which places replicas in every datacenter: give it NetworkTopologyStrategy with replicas in the datacenters that stay first (ALTER KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', …}, then nodetool repair)", k.Name, shortClass(k.Class), k.Name))
		}
	}
	return r
}

func rfText(dcs map[string]int) string {
	var parts []string
	for dc, rf := range dcs {
		parts = append(parts, fmt.Sprintf("%s=%d", dc, rf))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func shortClass(c string) string { return c[strings.LastIndex(c, ".")+1:] }

// statements lists the ALTER statements, one per line, for a refusal.
func (r replicas) statements() string {
	var lines []string
	for _, a := range r.alter {
		lines = append(lines, "  "+a.Statement+";")
	}
	return strings.Join(lines, "\n")
}

// keyspaceNames lists the keyspaces to alter.
func (r replicas) keyspaceNames() []string {
	var out []string
	for _, a := range r.alter {
		out = append(out, a.Keyspace)
	}
	return out
}

// systemAuth is the keyspace Cassandra 5.0 requires to replicate to every datacenter
// that has nodes (5.0's NetworkTopologyStrategy, test/sim/cql_replication.go: "Following datacenters have active nodes and must be present in replication options
// for keyspace system_auth").
const systemAuth = "system_auth"

// authDeferred reports whether system_auth's change must wait until no node of the
// datacenter is left in the ring: on 5.0, while system_auth still replicates to it.
func authDeferred(r replicas, v50 bool) bool {
	return v50 && r.has(systemAuth)
}

// has reports whether keyspace ks is among the ones to alter.
func (r replicas) has(ks string) bool {
	for _, a := range r.alter {
		if a.Keyspace == ks {
			return true
		}
	}
	return false
}

// without is r without keyspace ks's change (system_auth's, deferred on 5.0).
func (r replicas) without(ks string) replicas {
	out := replicas{blocking: r.blocking}
	for _, a := range r.alter {
		if a.Keyspace != ks {
			out.alter = append(out.alter, a)
		}
	}
	return out
}

// onlyAuth reports whether system_auth is the only keyspace that replicates to the
// datacenter (and keeps replicas elsewhere): then a decommission the replication
// check refuses loses nothing, the other datacenters hold system_auth in full.
func (r replicas) onlyAuth() bool {
	return len(r.blocking) == 0 && len(r.alter) == 1 && r.alter[0].Keyspace == systemAuth
}

// forceNeeded is a decommission's --force (5.0, system_auth changed last): system_auth
// is the only keyspace that replicates to dc, and the replication check would refuse
// the decommission for it: N, dc's token owners that are not leaving (as the ring
// lists them), is at most system_auth's replicas in dc (StorageService.decommission,
// /work/shared/cassandra/NODETOOL.md E1/E6; test/sim/run.go rfCheck). --force skips
// only that check.
func forceNeeded(ks []cql.Keyspace, ring pubnodetool.Ring, dc string) bool {
	if !judgeKeyspaces(ks, dc).onlyAuth() {
		return false
	}
	owners := 0
	for _, n := range ring.Nodes {
		if n.DC == dc && (n.State == "N" || n.State == "M") {
			owners++
		}
	}
	k, _ := keyspaceOf(ks, systemAuth)
	return owners <= k.RF(dc)
}

// keyspaceOf is keyspace name among ks.
func keyspaceOf(ks []cql.Keyspace, name string) (cql.Keyspace, bool) {
	for _, k := range ks {
		if k.Name == name {
			return k, true
		}
	}
	return cql.Keyspace{}, false
}
