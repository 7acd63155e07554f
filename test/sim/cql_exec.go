package sim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// execCQL runs one statement on node n (connected), writing what cqlsh prints. It
// returns false when the statement failed (cqlsh then exits 2).
func (st *state) execCQL(n *node, stmt string, now time.Time, out, errOut *strings.Builder) bool {
	toks, ok := lexCQL(stmt)
	if !ok || len(toks) == 0 {
		errOut.WriteString(cqlError("SyntaxException: line 1: unterminated quoted string"))
		return false
	}
	var msg string
	switch {
	case toks[0].keyword("select"):
		msg = st.selectKeyspaces(toks, out)
	case toks[0].keyword("alter") && len(toks) > 1 && toks[1].keyword("keyspace"):
		msg = st.alterKeyspace(n, toks, now)
	case (toks[0].keyword("describe") || toks[0].keyword("desc")) && len(toks) == 3 && toks[1].keyword("keyspace"):
		msg = st.describeKeyspace(toks[2].name(), out)
	default:
		errOut.WriteString("cqlsh-sim: statement not simulated: " + stmt + "\n")
		return false
	}
	if msg != "" {
		errOut.WriteString(cqlError(msg))
		return false
	}
	return true
}

// selectKeyspaces answers `SELECT JSON keyspace_name, replication FROM
// system_schema.keyspaces`, printed as cqlsh prints a result set
// (cqlsh.py print_result / print_formatted_result, the same in 3.11–5.0 for a non-tty
// output): a blank line, the header " [json]", a line of dashes as wide as the widest
// cell plus 2, one row per keyspace right-justified to that width after one space, a
// blank line and "(N rows)". Each row is Cassandra's JSON of the selection
// (Selection.rowToJson: {"col": value, …} with ", " and ": "), the replication map with
// its keys in UTF-8 order. Rows come in system_schema.keyspaces' partition (token)
// order, which the simulator does not compute: its fixed order is system_auth,
// system_schema, system_distributed, system, system_traces, then the user keyspaces.
func (st *state) selectKeyspaces(toks []token, out *strings.Builder) string {
	want := []string{"select", "json", "keyspace_name", ",", "replication", "from", "system_schema", ".", "keyspaces"}
	if len(toks) != len(want) {
		return "cqlsh-sim: only SELECT JSON keyspace_name, replication FROM system_schema.keyspaces is simulated"
	}
	for i, w := range want {
		if !strings.EqualFold(toks[i].text, w) {
			return "cqlsh-sim: only SELECT JSON keyspace_name, replication FROM system_schema.keyspaces is simulated"
		}
	}
	var rows []string
	for _, k := range st.keyspacesInTokenOrder() {
		var parts []string
		opts := k.replicationOptions()
		for _, key := range sortedOptionKeys(opts) {
			parts = append(parts, strconv.Quote(key)+": "+strconv.Quote(opts[key]))
		}
		rows = append(rows, fmt.Sprintf(`{"keyspace_name": %s, "replication": {%s}}`, strconv.Quote(k.Name), strings.Join(parts, ", ")))
	}
	writeResult(out, "[json]", rows)
	return ""
}

// keyspacesInTokenOrder is the simulator's stand-in for the partition order of
// system_schema.keyspaces (see selectKeyspaces).
func (st *state) keyspacesInTokenOrder() []*keyspace {
	var out []*keyspace
	for _, name := range []string{ksAuth, ksSchema, ksDistributed, ksSystem, ksTraces} {
		out = append(out, st.Schema.keyspace(name))
	}
	return append(out, st.Schema.user()...)
}

// writeResult prints a one-column result set as cqlsh does (see selectKeyspaces).
func writeResult(out *strings.Builder, header string, rows []string) {
	w := len(header)
	for _, r := range rows {
		w = max(w, len(r))
	}
	out.WriteString("\n " + header + "\n")
	out.WriteString("-" + strings.Repeat("-", w) + "-\n")
	for _, r := range rows {
		out.WriteString(" " + strings.Repeat(" ", w-len(r)) + r + "\n")
	}
	fmt.Fprintf(out, "\n(%d rows)\n", len(rows))
}

// invalidRequest is an InvalidRequestException as cqlsh prints it: the driver's
// InvalidRequest carries the server error's summary.
func invalidRequest(msg string) string {
	return `InvalidRequest: Error from server: code=2200 [Invalid query] message="` + msg + `"`
}

// configurationError is a ConfigurationException as cqlsh prints it (the driver's
// ConfigurationException has a message attribute, printed alone).
func configurationError(msg string) string { return "ConfigurationException: " + msg }

// alterKeyspace runs `ALTER KEYSPACE k WITH replication = {…} [AND durable_writes = b]`
// on n, with the checks of AlterKeyspaceStatement and NetworkTopologyStrategy
// (cql_replication.go), and on success replaces k's replication and bumps the schema
// version (n has it at once, the others after Options.SchemaAgreeTime). It returns
// the error cqlsh prints, "" on success (cqlsh prints nothing).
func (st *state) alterKeyspace(n *node, toks []token, now time.Time) string {
	o := st.Options
	// ALTER KEYSPACE name WITH replication = { … } [AND durable_writes = true|false]
	if len(toks) < 7 || (toks[2].kind != 'i' && toks[2].kind != 'q') || !toks[3].keyword("with") ||
		!toks[4].keyword("replication") || toks[5].text != "=" {
		return "cqlsh-sim: only ALTER KEYSPACE k WITH replication = {…} is simulated"
	}
	name := toks[2].name()
	entries, i, ok := parseMap(toks, 6)
	if ok && i < len(toks) {
		ok = len(toks) == i+4 && toks[i].keyword("and") && toks[i+1].keyword("durable_writes") && toks[i+2].text == "=" &&
			(toks[i+3].keyword("true") || toks[i+3].keyword("false"))
	}
	if !ok {
		return "cqlsh-sim: only ALTER KEYSPACE k WITH replication = {…} [AND durable_writes = …] is simulated"
	}
	k := st.Schema.keyspace(name)
	switch {
	case k == nil && o.is311():
		return invalidRequest("Unknown keyspace " + name) // 3.11 AlterKeyspaceStatement.validate
	case k == nil:
		return invalidRequest("Keyspace '" + name + "' doesn't exist") // 4.0+ AlterKeyspaceStatement.apply
	case k.Class == classLocal && o.is311():
		return invalidRequest("Cannot alter system keyspace")
	case k.Class == classLocal:
		// 4.0+ AlterSchemaStatement.validate.
		return invalidRequest("System keyspace '" + name + "' is not user-modifiable")
	}
	rf, msg := st.ntsOptions(n, k, entries)
	if msg != "" {
		return msg
	}
	k.RF = rf
	st.Schema.Version++
	st.Schema.ChangedAt, st.Schema.ChangedBy = now, n.Spec.Pod
	return ""
}

// describeKeyspace answers `DESCRIBE KEYSPACE k` for a keyspace without tables: a
// blank line and its CREATE statement (4.0+: server-side DESCRIBE, cqlsh's
// describe_element; 3.11: cqlsh from the driver's metadata, export_as_string), with the
// class's simple name and the options in key order (ReplicationParams.appendCqlTo; the
// driver's export_for_schema) and "  AND durable_writes = true;".
func (st *state) describeKeyspace(name string, out *strings.Builder) string {
	k := st.Schema.keyspace(name)
	if k == nil {
		if st.Options.is311() {
			return "Keyspace '" + name + "' not found."
		}
		return "'" + name + "' not found in keyspaces"
	}
	repl := "{'class': '" + k.Class + "'"
	if k.Class == classNTS {
		for _, dc := range dcsOf(k.RF) {
			repl += fmt.Sprintf(", '%s': '%d'", dc, k.RF[dc])
		}
	}
	repl += "}"
	fmt.Fprintf(out, "\nCREATE KEYSPACE %s WITH replication = %s  AND durable_writes = true;\n", cqlName(name), repl)
	return ""
}

// cqlName quotes an identifier when CQL needs it (ColumnIdentifier.maybeQuote).
func cqlName(s string) string {
	plain := s != ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9')) {
			plain = false
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// validDCs is Datacenters.getValidDatacenters() on n: its own DC and those of every
// endpoint token metadata knows (listed nodes, down ones included), sorted.
func (st *state) validDCs(n *node) []string {
	seen := map[string]bool{n.Spec.DC: true}
	for _, p := range st.Nodes {
		if p.listed() {
			seen[p.Spec.DC] = true
		}
	}
	var dcs []string
	for dc := range seen {
		dcs = append(dcs, dc)
	}
	sort.Strings(dcs)
	return dcs
}
