package removedc

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
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
