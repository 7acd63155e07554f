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
	p := describeParser{
		d:    ClusterDescription{SchemaVersions: map[string][]string{}},
		seen: map[int]bool{},
		got:  map[string]bool{},
	}
	for i, raw := range splitLines(out) {
		line := strings.TrimSpace(raw)
		if line == "" || isJVMNoise(line) {
			continue
		}
		more, err := p.line(line)
		if err != nil {
			return ClusterDescription{}, fmt.Errorf("describecluster line %d: %w", i+1, err)
		}
		if !more {
			break // not describecluster output; reported by complete
		}
	}
	if err := p.complete(out); err != nil {
		return ClusterDescription{}, err
	}
	return p.d, nil
}

// describeHeaders are the section headers, each alone on its line.
var describeHeaders = map[string]int{
	"Cluster Information:": dcInfo,
	"Stats for all nodes:": dcStats,
	"Data Centers:":        dcDataCenters,
	"Database versions:":   dcVersions,
	"Keyspaces:":           dcKeyspaces,
}

// describeCounts are the lines of "Stats for all nodes:", in the order 4.0+ prints them.
var describeCounts = []string{"Live", "Joining", "Moving", "Leaving", "Unreachable"}

// describeParser is ParseDescribeCluster's state between lines.
type describeParser struct {
	d       ClusterDescription
	section int
	seen    map[int]bool    // sections met
	got     map[string]bool // counts met
	gotName bool
}

// line reads one trimmed, non-empty line; more is false when the output is not
// describecluster's (no section yet).
func (p *describeParser) line(line string) (more bool, err error) {
	if s, ok := describeHeaders[line]; ok {
		return true, p.header(line, s)
	}
	if p.section == dcNone {
		return false, nil
	}
	// Documented extras: 4.0/4.1 print "Error: <msg>" when effective ownership
	// fails, 5.0 a trailing "Note: <msg>"; neither changes what is parsed here.
	if strings.HasPrefix(line, "Error: ") || strings.HasPrefix(line, "Note: ") {
		return true, nil
	}
	switch p.section {
	case dcInfo:
		return true, p.info(line)
	case dcSchema:
		return true, p.schemaVersion(line)
	case dcStats:
		return true, p.count(line)
	case dcDataCenters:
		if !describeDCLine().MatchString(line) {
			return true, fmt.Errorf("cannot parse data center line %s", quote(line))
		}
	case dcVersions:
		if !describeSchemaLine().MatchString(line) {
			return true, fmt.Errorf("cannot parse database version line %s", quote(line))
		}
	case dcKeyspaces:
		return true, p.keyspace(line)
	}
	return true, nil
}

func (p *describeParser) header(line string, s int) error {
	if p.section == dcNone && s != dcInfo {
		return fmt.Errorf("%s before \"Cluster Information:\"", quote(line))
	}
	if p.seen[s] {
		return fmt.Errorf("section %s is printed twice", quote(line))
	}
	p.seen[s], p.section = true, s
	if s == dcStats {
		p.d.HasStats = true
	}
	return nil
}

// info reads a line of "Cluster Information:"; "Schema versions:" opens its list.
func (p *describeParser) info(line string) error {
	key, val, ok := strings.Cut(line, ":")
	switch {
	case !ok:
		return fmt.Errorf("unexpected line %s in Cluster Information", quote(line))
	case key == "Name":
		p.d.Name, p.gotName = strings.TrimSpace(val), true
	case key == "Schema versions" && strings.TrimSpace(val) == "":
		p.section = dcSchema
	case key == "Snitch" || key == "DynamicEndPointSnitch" || key == "Partitioner":
	default:
		return fmt.Errorf("unexpected line %s in Cluster Information", quote(line))
	}
	return nil
}

func (p *describeParser) schemaVersion(line string) error {
	m := describeSchemaLine().FindStringSubmatch(line)
	if m == nil {
		return fmt.Errorf("cannot parse schema version line %s", quote(line))
	}
	if _, dup := p.d.SchemaVersions[m[1]]; dup {
		return fmt.Errorf("schema version %s is listed twice", m[1])
	}
	p.d.SchemaVersions[m[1]] = splitList(m[2])
	return nil
}

// count reads a line of "Stats for all nodes:".
func (p *describeParser) count(line string) error {
	counts := map[string]*int{"Live": &p.d.Live, "Joining": &p.d.Joining, "Moving": &p.d.Moving, "Leaving": &p.d.Leaving, "Unreachable": &p.d.Unreachable}
	key, val, ok := strings.Cut(line, ": ")
	c, known := counts[key]
	if !ok || !known {
		return fmt.Errorf("unexpected line %s in Stats for all nodes", quote(line))
	}
	v, err := strconv.Atoi(val)
	if err != nil || v < 0 {
		return fmt.Errorf("%s count %q is not a number", key, val)
	}
	if p.got[key] {
		return fmt.Errorf("%s count is given twice", key)
	}
	*c, p.got[key] = v, true
	return nil
}

func (p *describeParser) keyspace(line string) error {
	if name, ok := strings.CutPrefix(line, "something went wrong for keyspace: "); ok {
		return fmt.Errorf("nodetool could not read the replication of keyspace %q", name)
	}
	m := describeKeyspaceLine().FindStringSubmatch(line)
	if m == nil || m[2] == "null" {
		return fmt.Errorf("cannot parse keyspace line %s", quote(line))
	}
	opts, err := parseReplicationOptions(m[3])
	if err != nil {
		return fmt.Errorf("keyspace %s: %v", m[1], err)
	}
	p.d.Keyspaces = append(p.d.Keyspaces, Keyspace{Name: m[1], Class: m[2], Options: opts})
	return nil
}

// complete fails when the output was not describecluster's or was cut short.
func (p *describeParser) complete(out string) error {
	switch {
	case !p.seen[dcInfo]:
		if e := firstErrorLine(out); e != "" {
			return fmt.Errorf("describecluster: nodetool printed an error instead of a description: %s", quote(e))
		}
		if strings.TrimSpace(out) == "" {
			return errors.New("describecluster: empty output")
		}
		return errors.New("describecluster: no \"Cluster Information:\" line")
	case !p.gotName:
		return errors.New("describecluster: no cluster name (truncated output?)")
	case len(p.d.SchemaVersions) == 0:
		return errors.New("describecluster: no schema version (truncated output?)")
	}
	if !p.d.HasStats {
		if p.seen[dcDataCenters] || p.seen[dcVersions] || p.seen[dcKeyspaces] {
			return errors.New("describecluster: 4.0+ sections without \"Stats for all nodes:\"")
		}
		return nil
	}
	for _, k := range describeCounts {
		if !p.got[k] {
			return fmt.Errorf("describecluster: no %q count in Stats for all nodes (truncated output?)", k)
		}
	}
	for _, s := range []struct {
		id   int
		name string
	}{{dcDataCenters, "Data Centers"}, {dcVersions, "Database versions"}, {dcKeyspaces, "Keyspaces"}} {
		if !p.seen[s.id] {
			return fmt.Errorf("describecluster: no %q section (truncated output?)", s.name)
		}
	}
	if len(p.d.Keyspaces) == 0 {
		return errors.New("describecluster: no keyspace listed (truncated output?)")
	}
	return nil
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
