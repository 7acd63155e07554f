package cql

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// SelectReplication lists every keyspace's replication, one JSON row each (SELECT JSON:
// Cassandra 2.2+; the rows are the same on 3.11, 4.x and 5.0).
const SelectReplication = "SELECT JSON keyspace_name, replication FROM system_schema.keyspaces"

// NTS is NetworkTopologyStrategy's class, as system_schema.keyspaces holds it.
const NTS = "org.apache.cassandra.locator.NetworkTopologyStrategy"

// Keyspace is one keyspace's replication: its strategy and, for NTS, the replication
// factor per datacenter.
type Keyspace struct {
	Name  string         `json:"name"`
	Class string         `json:"class"`
	DCs   map[string]int `json:"dcs,omitempty"`
	// Options are the strategy's other options (SimpleStrategy's replication_factor).
	Options map[string]string `json:"options,omitempty"`
}

// Local reports whether the keyspace is node-local (system, system_schema:
// LocalStrategy), never replicated nor altered.
func (k Keyspace) Local() bool { return strings.HasSuffix(k.Class, "LocalStrategy") }

// NTS reports whether the keyspace replicates per datacenter.
func (k Keyspace) NTS() bool { return strings.HasSuffix(k.Class, "NetworkTopologyStrategy") }

// RF is the keyspace's replication factor in dc (0: none).
func (k Keyspace) RF(dc string) int { return k.DCs[dc] }

// Replication reads every keyspace's replication through cqlsh in pod.
func (c Client) Replication(ctx context.Context, pod, host string) ([]Keyspace, error) {
	out, _, err := c.Run(ctx, pod, host, SelectReplication)
	if err != nil {
		return nil, err
	}
	return ParseReplication(out)
}

// ParseReplication parses cqlsh's answer to SelectReplication: a " [json]" header, a
// dashes line, one JSON object per row, then "(N rows)". Sorted by name.
func ParseReplication(out string) ([]Keyspace, error) {
	var list []Keyspace
	rows := -1
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "{"):
			var row struct {
				Name        string            `json:"keyspace_name"`
				Replication map[string]string `json:"replication"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				return nil, fmt.Errorf("cqlsh printed a keyspace row that is not JSON (%v): %q", err, line)
			}
			k, err := keyspace(row.Name, row.Replication)
			if err != nil {
				return nil, err
			}
			list = append(list, k)
		case strings.HasPrefix(line, "(") && strings.HasSuffix(line, "rows)"):
			n, err := strconv.Atoi(strings.Fields(strings.Trim(line, "()"))[0])
			if err == nil {
				rows = n
			}
		}
	}
	if rows < 0 || rows != len(list) {
		return nil, fmt.Errorf("cqlsh's keyspace list is incomplete (%d rows read, %d announced): %q", len(list), rows, firstLine(out))
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list, nil
}

func keyspace(name string, repl map[string]string) (Keyspace, error) {
	k := Keyspace{Name: name, Class: repl["class"]}
	if name == "" || k.Class == "" {
		return k, fmt.Errorf("cqlsh printed a keyspace without a name or a replication class: %q %v", name, repl)
	}
	for opt, v := range repl {
		if opt == "class" {
			continue
		}
		if !k.NTS() {
			if k.Options == nil {
				k.Options = map[string]string{}
			}
			k.Options[opt] = v
			continue
		}
		rf, err := strconv.Atoi(v)
		if err != nil {
			return k, fmt.Errorf("keyspace %s replicates to %s with %q, not a number", name, opt, v)
		}
		if k.DCs == nil {
			k.DCs = map[string]int{}
		}
		k.DCs[opt] = rf
	}
	return k, nil
}

// Alter is the statement giving k the replication dcs (NTS).
func Alter(name string, dcs map[string]int) string {
	names := make([]string, 0, len(dcs))
	for dc := range dcs {
		names = append(names, dc)
	}
	sort.Strings(names)
	opts := []string{"'class': 'NetworkTopologyStrategy'"}
	for _, dc := range names {
		opts = append(opts, fmt.Sprintf("'%s': '%d'", dc, dcs[dc]))
	}
	return fmt.Sprintf("ALTER KEYSPACE %s WITH replication = {%s}", quoteName(name), strings.Join(opts, ", "))
}

// Without is k's replication without dc.
func (k Keyspace) Without(dc string) map[string]int {
	out := map[string]int{}
	for d, rf := range k.DCs {
		if d != dc && rf > 0 {
			out[d] = rf
		}
	}
	return out
}

// quoteName double-quotes a keyspace name unless it is a lower-case identifier (CQL
// folds unquoted names to lower case).
func quoteName(name string) string {
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
		}
	}
	return name
}
