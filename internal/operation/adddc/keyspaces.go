package adddc

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
)

// grants is what the keyspaces say about giving dc replicas: the keyspaces that need
// it (each with its ALTER statement), and what refuses the addition.
type grants struct {
	alter    []alteration
	wanted   map[string]int
	blocking []string
}

// alteration is one keyspace's replication with dc added.
type alteration struct {
	Keyspace  string
	Statement string
}

// judgeKeyspaces is the pure decision over the keyspaces read: in scope are the ones
// named (else every keyspace that replicates to source); each gets rf replicas in dc
// (0: its count in source). A SimpleStrategy keyspace places replicas by the ring alone:
// the new nodes would take ranges of it on joining, unstreamed; it refuses.
func judgeKeyspaces(list []cql.Keyspace, source, dc string, named []string, rf int) grants {
	g := grants{wanted: map[string]int{}}
	seen := map[string]bool{}
	for _, k := range list {
		seen[k.Name] = true
		if k.Local() {
			continue
		}
		if !k.NTS() {
			g.blocking = append(g.blocking, fmt.Sprintf("keyspace %s uses %s, which would place replicas on the new nodes as they join, without streaming them: give it NetworkTopologyStrategy first (ALTER KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', '%s': N})", k.Name, k.Class[strings.LastIndex(k.Class, ".")+1:], k.Name, source))
			continue
		}
		if len(named) > 0 && !slices.Contains(named, k.Name) || len(named) == 0 && k.RF(source) == 0 {
			continue
		}
		want := rf
		if want == 0 {
			want = k.RF(source)
		}
		if want == 0 {
			g.blocking = append(g.blocking, fmt.Sprintf("keyspace %s has no replica in %s: give --rf for it", k.Name, source))
			continue
		}
		g.wanted[k.Name] = want
		if k.RF(dc) == want {
			continue
		}
		dcs := maps.Clone(k.DCs)
		dcs[dc] = want
		g.alter = append(g.alter, alteration{Keyspace: k.Name, Statement: cql.Alter(k.Name, dcs)})
	}
	for _, n := range named {
		if !seen[n] {
			g.blocking = append(g.blocking, fmt.Sprintf("keyspace %s does not exist", n))
		}
	}
	return g
}

// pending are the keyspaces of wanted that do not replicate to dc yet, with the
// statement that gives them their replicas there.
func pending(list []cql.Keyspace, dc string, wanted map[string]int) []alteration {
	var out []alteration
	for _, k := range list {
		want, ok := wanted[k.Name]
		if !ok || k.RF(dc) > 0 {
			continue
		}
		dcs := maps.Clone(k.DCs)
		dcs[dc] = want
		out = append(out, alteration{Keyspace: k.Name, Statement: cql.Alter(k.Name, dcs)})
	}
	return out
}

// statements lists the ALTER statements, one per line.
func statements(a []alteration) string {
	var lines []string
	for _, x := range a {
		lines = append(lines, "  "+x.Statement+";")
	}
	return strings.Join(lines, "\n")
}

func names(m map[string]int) []string {
	out := slices.Collect(maps.Keys(m))
	sort.Strings(out)
	return out
}
