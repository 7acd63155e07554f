package nodetool

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

var (
	// describeSchemaLine is `\t\t<version|UNREACHABLE>: [host, host]`.
	describeSchemaLine = lazyRE(`^(\S+): \[(.*)\]$`)
	// describeKeyspaceLine is `\t<ks> -> Replication class: <Class> {k=v, k=v}`.
	describeKeyspaceLine = lazyRE(`^(\S+) -> Replication class: (\S+)(?: \{(.*)\})?$`)
	// describeDCLine is `\t<dc> #Nodes: N #Down: M`.
	describeDCLine = lazyRE(`^.+ #Nodes: \d+ #Down: \d+$`)
)

// describecluster sections, in the order nodetool prints them.
const (
	dcNone = iota
	dcInfo
	dcSchema
	dcStats
	dcDataCenters
	dcVersions
	dcKeyspaces
)

// ParseDescribeCluster parses `nodetool describecluster`. Cassandra 3.11 prints only
// "Cluster Information:" with the schema versions (HasStats is false); 4.0+ adds "Stats
// for all nodes:", "Data Centers:", "Database versions:" and "Keyspaces:" (HasStats is
// true). Schema versions are keyed by version UUID, or "UNREACHABLE" for the hosts that
// did not answer. Keyspace options such as `{dc1=3}` land in Keyspace.Options (nil for
// `{}`).
//
// Since a pre-flight check relies on the counts and the keyspace list, it fails rather
// than guess when the output is cut short: no cluster name, no schema version, a 4.0+
// output without all five counts or without its Data Centers, Database versions or
// Keyspaces section or with no keyspace, a keyspace whose replication nodetool could not
// read, or any line describecluster does not print.
func ParseDescribeCluster(out string) (ClusterDescription, error) {
	var (
		d        = ClusterDescription{SchemaVersions: map[string][]string{}}
		section  = dcNone
		seen     = map[int]bool{}
		counts   = map[string]*int{"Live": &d.Live, "Joining": &d.Joining, "Moving": &d.Moving, "Leaving": &d.Leaving, "Unreachable": &d.Unreachable}
		got      = map[string]bool{}
		gotName  bool
		headerAt = map[string]int{
			"Cluster Information:": dcInfo,
			"Stats for all nodes:": dcStats,
			"Data Centers:":        dcDataCenters,
			"Database versions:":   dcVersions,
			"Keyspaces:":           dcKeyspaces,
		}
	)
	fail := func(n int, format string, args ...any) (ClusterDescription, error) {
		return ClusterDescription{}, fmt.Errorf("describecluster line %d: "+format, append([]any{n}, args...)...)
	}
	for i, raw := range splitLines(out) {
		n := i + 1
		line := strings.TrimSpace(raw)
		if line == "" || isJVMNoise(line) {
			continue
		}
		if s, ok := headerAt[line]; ok {
			if section == dcNone && s != dcInfo {
				return fail(n, "%s before \"Cluster Information:\"", quote(line))
			}
			if seen[s] {
				return fail(n, "section %s is printed twice", quote(line))
			}
			seen[s], section = true, s
			if s == dcStats {
				d.HasStats = true
			}
			continue
		}
		if section == dcNone {
			break // not describecluster output; reported below
		}
		// Documented extras: 4.0/4.1 print "Error: <msg>" when effective ownership
		// fails, 5.0 a trailing "Note: <msg>"; neither changes what is parsed here.
		if strings.HasPrefix(line, "Error: ") || strings.HasPrefix(line, "Note: ") {
			continue
		}
		switch section {
		case dcInfo:
			key, val, ok := strings.Cut(line, ":")
			switch {
			case !ok:
				return fail(n, "unexpected line %s in Cluster Information", quote(line))
			case key == "Name":
				d.Name, gotName = strings.TrimSpace(val), true
			case key == "Schema versions" && strings.TrimSpace(val) == "":
				section = dcSchema
			case key == "Snitch" || key == "DynamicEndPointSnitch" || key == "Partitioner":
			default:
				return fail(n, "unexpected line %s in Cluster Information", quote(line))
			}
		case dcSchema:
			m := describeSchemaLine().FindStringSubmatch(line)
			if m == nil {
				return fail(n, "cannot parse schema version line %s", quote(line))
			}
			if _, dup := d.SchemaVersions[m[1]]; dup {
				return fail(n, "schema version %s is listed twice", m[1])
			}
			d.SchemaVersions[m[1]] = splitList(m[2])
		case dcStats:
			key, val, ok := strings.Cut(line, ": ")
			p, known := counts[key]
			if !ok || !known {
				return fail(n, "unexpected line %s in Stats for all nodes", quote(line))
			}
			v, err := strconv.Atoi(val)
			if err != nil || v < 0 {
				return fail(n, "%s count %q is not a number", key, val)
			}
			if got[key] {
				return fail(n, "%s count is given twice", key)
			}
			*p, got[key] = v, true
		case dcDataCenters:
			if !describeDCLine().MatchString(line) {
				return fail(n, "cannot parse data center line %s", quote(line))
			}
		case dcVersions:
			if !describeSchemaLine().MatchString(line) {
				return fail(n, "cannot parse database version line %s", quote(line))
			}
		case dcKeyspaces:
			if strings.HasPrefix(line, "something went wrong for keyspace: ") {
				return fail(n, "nodetool could not read the replication of keyspace %q", strings.TrimPrefix(line, "something went wrong for keyspace: "))
			}
			m := describeKeyspaceLine().FindStringSubmatch(line)
			if m == nil || m[2] == "null" {
				return fail(n, "cannot parse keyspace line %s", quote(line))
			}
			opts, err := parseReplicationOptions(m[3])
			if err != nil {
				return fail(n, "keyspace %s: %v", m[1], err)
			}
			d.Keyspaces = append(d.Keyspaces, Keyspace{Name: m[1], Class: m[2], Options: opts})
		}
	}
	switch {
	case !seen[dcInfo]:
		if e := firstErrorLine(out); e != "" {
			return ClusterDescription{}, fmt.Errorf("describecluster: nodetool printed an error instead of a description: %s", quote(e))
		}
		if strings.TrimSpace(out) == "" {
			return ClusterDescription{}, errors.New("describecluster: empty output")
		}
		return ClusterDescription{}, errors.New("describecluster: no \"Cluster Information:\" line")
	case !gotName:
		return ClusterDescription{}, errors.New("describecluster: no cluster name (truncated output?)")
	case len(d.SchemaVersions) == 0:
		return ClusterDescription{}, errors.New("describecluster: no schema version (truncated output?)")
	}
	if d.HasStats {
		for _, k := range []string{"Live", "Joining", "Moving", "Leaving", "Unreachable"} {
			if !got[k] {
				return ClusterDescription{}, fmt.Errorf("describecluster: no %q count in Stats for all nodes (truncated output?)", k)
			}
		}
		for _, s := range []struct {
			id   int
			name string
		}{{dcDataCenters, "Data Centers"}, {dcVersions, "Database versions"}, {dcKeyspaces, "Keyspaces"}} {
			if !seen[s.id] {
				return ClusterDescription{}, fmt.Errorf("describecluster: no %q section (truncated output?)", s.name)
			}
		}
		if len(d.Keyspaces) == 0 {
			return ClusterDescription{}, errors.New("describecluster: no keyspace listed (truncated output?)")
		}
	} else if seen[dcDataCenters] || seen[dcVersions] || seen[dcKeyspaces] {
		return ClusterDescription{}, errors.New("describecluster: 4.0+ sections without \"Stats for all nodes:\"")
	}
	return d, nil
}

// splitList splits the inside of a Java List.toString(), "a, b, c".
func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return []string{}
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// parseReplicationOptions parses the inside of a Java Map.toString(), "dc1=3, dc2=3".
func parseReplicationOptions(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	opts := map[string]string{}
	for _, p := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("cannot parse replication option %q", strings.TrimSpace(p))
		}
		opts[k] = v
	}
	return opts, nil
}
