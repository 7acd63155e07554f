package nodetool

import (
	"fmt"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"regexp"
	"strconv"
	"strings"
)

// Cells of a `nodetool status` row. Load is `DecimalFormat("#.##")` plus a unit (KiB..TiB
// since 3.6, KB..TB before) or "?"; Owns is `DecimalFormat("##0.0%")` or "?". Both take
// the JVM locale's decimal separator, so "," is accepted as well as ".".
const (
	statusLoad   = `(\?|[0-9][0-9.,]* (?:bytes|KiB|MiB|GiB|TiB|PiB|KB|MB|GB|TB|PB))`
	statusOwns   = `(\?|[0-9][0-9.,]*%)`
	statusHostID = `(` + uuidPattern + `|null)?`
)

var (
	// statusRowStart is what every row starts with: status letter, state letter, space.
	statusRowStart = lazyRE(`^[UD?][NLJM]\s`)

	// statusRowVnodes reads a row under a "Tokens" header (the common case):
	// code, address, load, token count, owns, host ID (or null, or an empty cell), rack.
	statusRowVnodes = lazyRE(`^([UD?])([NLJM])\s+(\S+)\s+` + statusLoad + `\s+(\d+)\s+` +
		statusOwns + `\s+` + statusHostID + `\s*(\S+)$`)

	// statusRowToken reads a row under a "Token" header (single-token layout):
	// code, address, load, owns, host ID (or null, or an empty cell), token, rack.
	statusRowToken = lazyRE(`^([UD?])([NLJM])\s+(\S+)\s+` + statusLoad + `\s+` +
		statusOwns + `\s+` + statusHostID + `\s*(-?\d+)\s+(\S+)$`)

	statusRule        = lazyRE(`^=+$`)
	statusHeader      = lazyRE(`^--\s+Address\s`)
	statusTokensWord  = lazyRE(`\bTokens\b`)
	statusTokenWord   = lazyRE(`\bToken\b`)
	statusHeaderWords = []string{"Address", "Load", "Owns", "Host ID", "Rack"}
)

const (
	statusLegendStatus = "Status=Up/Down"
	statusLegendState  = "|/ State=Normal/Leaving/Joining/Moving"
)

// statusLayout is what the column header line of one datacenter tells the row parser.
type statusLayout struct {
	row *regexp.Regexp
	// vnodes is true for the "Tokens" layout, false for the "Token" one.
	vnodes bool
	// hostIDEnd is the column just after "Host ID" in the header. A row whose Host ID
	// cell is empty (4.0+ prints "" for a null host ID) has its next cell at or beyond it;
	// a cell that starts before it is a Host ID cut short, not an empty cell.
	hostIDEnd int
}

func parseStatusHeader(line string) (statusLayout, error) {
	for _, w := range statusHeaderWords {
		if !strings.Contains(line, w) {
			return statusLayout{}, fmt.Errorf("column header %s has no %q column", quote(line), w)
		}
	}
	l := statusLayout{hostIDEnd: strings.Index(line, "Host ID") + len("Host ID")}
	switch {
	case statusTokensWord().MatchString(line):
		l.row, l.vnodes = statusRowVnodes(), true
	case statusTokenWord().MatchString(line):
		l.row = statusRowToken()
	default:
		return statusLayout{}, fmt.Errorf("column header %s has neither a \"Tokens\" nor a \"Token\" column", quote(line))
	}
	return l, nil
}

func (l statusLayout) parseRow(raw, dc string) (nodetool.Node, error) {
	line := strings.TrimRight(raw, " \t")
	m := l.row.FindStringSubmatchIndex(line)
	if m == nil {
		return nodetool.Node{}, fmt.Errorf("cannot parse row %s", quote(line))
	}
	cell := func(i int) string {
		if m[2*i] < 0 {
			return ""
		}
		return line[m[2*i]:m[2*i+1]]
	}
	n := nodetool.Node{
		DC:      dc,
		Status:  cell(1),
		State:   cell(2),
		Address: cell(3),
		Load:    cell(4),
	}
	var hostIDGroup int
	if l.vnodes {
		tokens, err := strconv.Atoi(cell(5))
		if err != nil {
			return nodetool.Node{}, fmt.Errorf("row %s: token count %q: %w", quote(line), cell(5), err)
		}
		n.Tokens, n.Owns, hostIDGroup, n.Rack = tokens, cell(6), 7, cell(8)
	} else {
		n.Owns, hostIDGroup, n.Token, n.Rack = cell(5), 6, cell(7), cell(8)
	}
	switch id := cell(hostIDGroup); id {
	case "null":
		// 3.11 prints a null Host ID as "null".
	case "":
		// 4.0+ prints a null Host ID as an empty cell, so the next cell starts in or past
		// the Host ID column. Anything earlier is a row cut inside its Host ID or rack.
		next := m[2*(hostIDGroup+1)]
		if next < l.hostIDEnd {
			return nodetool.Node{}, fmt.Errorf("row %s: no host ID, and %q starts inside the Host ID column (truncated row?)",
				quote(line), cell(hostIDGroup+1))
		}
	default:
		n.HostID = id
	}
	return n, nil
}

// ParseStatus parses the output of `nodetool status [keyspace]` of Cassandra 3.0 to 5.0:
// the fixed-width printf rows of 3.x (no trailing spaces, no blank line between
// datacenters, rows pushed right by a long Load), the TableBuilder rows of 4.0+ (trailing
// spaces, a blank line between datacenters), the vnodes ("Tokens") and single-token
// ("Token") layouts, "Owns" or "Owns (effective)", "?" loads and owns, null or empty host
// IDs, "," decimal separators and the KB/MB units of old versions. Node.DC comes from the
// "Datacenter: X" line above the row; "Note:" lines are kept in Ring.Notes.
//
// It never returns a partial ring: a line that starts like a row but does not parse, a
// row before any "Datacenter:" line or column header, a datacenter without rows, a
// duplicate datacenter, address or host ID, and any line nodetool does not print in a
// status (an error message, a stack trace) make it fail. Output without any datacenter or
// row (empty, whitespace only) fails with an error wrapping ErrEmpty.
//
// Rack names are single words (a rack with a space in its name fails the row). Output
// cut inside the rack name of its very last row cannot be told from a shorter rack name.
func ParseStatus(out string) (nodetool.Ring, error) {
	p := statusParser{dcs: map[string]bool{}, addresses: map[string]int{}, hostIDs: map[string]int{}}
	for i, raw := range splitLines(out) {
		n := i + 1
		line := strings.TrimRight(raw, " \t")
		var err error
		switch {
		case line == "" || isJVMNoise(line):
			continue
		case strings.HasPrefix(line, "Datacenter:"):
			err = p.datacenter(n, line)
		case p.dc != "" && (statusRule().MatchString(line) || line == statusLegendStatus || line == statusLegendState):
			continue
		case statusHeader().MatchString(line):
			err = p.header(n, line)
		case strings.HasPrefix(line, "Note:"):
			p.ring.Notes = append(p.ring.Notes, strings.TrimSpace(line))
		case statusRowStart().MatchString(line):
			err = p.row(n, raw, line)
		default:
			if e := firstErrorLine(out); e != "" {
				return nodetool.Ring{}, fmt.Errorf("status: nodetool printed an error instead of a ring: %s", quote(e))
			}
			return nodetool.Ring{}, fmt.Errorf("status line %d: unexpected line %s", n, quote(line))
		}
		if err != nil {
			return nodetool.Ring{}, err
		}
	}
	if err := p.endDC(); err != nil {
		return nodetool.Ring{}, err
	}
	if len(p.ring.Nodes) == 0 {
		if p.dc != "" {
			return nodetool.Ring{}, fmt.Errorf("status: datacenter %q has no node rows: %w", p.dc, ErrEmpty)
		}
		return nodetool.Ring{}, fmt.Errorf("status: no datacenter in %d bytes of output: %w", len(out), ErrEmpty)
	}
	return p.ring, nil
}

// statusParser is ParseStatus's state between lines.
type statusParser struct {
	ring   nodetool.Ring
	dc     string // current datacenter, "" before the first "Datacenter:" line
	dcLine int
	dcRows int
	layout *statusLayout // the current datacenter's, nil before its column header
	dcs    map[string]bool
	// addresses and hostIDs give the line each was listed on.
	addresses map[string]int
	hostIDs   map[string]int
}

// endDC fails when the datacenter that ends has no rows while others have (a cut
// output).
func (p *statusParser) endDC() error {
	if p.dc != "" && p.dcRows == 0 && len(p.ring.Nodes) > 0 {
		return fmt.Errorf("status line %d: datacenter %q has no node rows (truncated output?)", p.dcLine, p.dc)
	}
	return nil
}

// datacenter reads a "Datacenter: X" line, which ends the previous datacenter.
func (p *statusParser) datacenter(n int, line string) error {
	if err := p.endDC(); err != nil {
		return err
	}
	name := strings.TrimSpace(strings.TrimPrefix(line, "Datacenter:"))
	if name == "" {
		return fmt.Errorf("status line %d: datacenter header %s has no name", n, quote(line))
	}
	if p.dcs[name] {
		return fmt.Errorf("status line %d: datacenter %q is listed twice", n, name)
	}
	p.dcs[name] = true
	p.dc, p.dcLine, p.dcRows, p.layout = name, n, 0, nil
	return nil
}

// header reads a datacenter's column header, which tells how its rows read.
func (p *statusParser) header(n int, line string) error {
	if p.dc == "" {
		return fmt.Errorf("status line %d: column header before any \"Datacenter:\" line", n)
	}
	l, err := parseStatusHeader(line)
	if err != nil {
		return fmt.Errorf("status line %d: %w", n, err)
	}
	p.layout = &l
	return nil
}

// row reads a node's row (raw keeps the trailing spaces the layout's columns need).
func (p *statusParser) row(n int, raw, line string) error {
	if p.dc == "" {
		return fmt.Errorf("status line %d: node row %s before any \"Datacenter:\" line", n, quote(line))
	}
	if p.layout == nil {
		return fmt.Errorf("status line %d: node row %s before the column header of datacenter %q", n, quote(line), p.dc)
	}
	node, err := p.layout.parseRow(raw, p.dc)
	if err != nil {
		return fmt.Errorf("status line %d: %w", n, err)
	}
	key := addressKey(node.Address)
	if prev, dup := p.addresses[key]; dup {
		return fmt.Errorf("status line %d: address %s is already listed on line %d", n, node.Address, prev)
	}
	p.addresses[key] = n
	if node.HostID != "" {
		if prev, dup := p.hostIDs[node.HostID]; dup {
			return fmt.Errorf("status line %d: host ID %s is already listed on line %d", n, node.HostID, prev)
		}
		p.hostIDs[node.HostID] = n
	}
	p.ring.Nodes = append(p.ring.Nodes, node)
	p.dcRows++
	return nil
}
