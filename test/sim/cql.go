package sim

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Exit codes of cqlsh (bin/cqlsh.py): 1 when it cannot connect ("Connection error: …",
// sys.exit(1) in main), 2 when a statement given with -e failed (the shell's
// statement_error) or for an optparse usage error.
const (
	cqlExitConnect   = 1
	cqlExitStatement = 2
)

// cqlInvocation is a parsed cqlsh command line: `cqlsh [options] [host [port]]`.
type cqlInvocation struct {
	host, port         string
	cqlshrc            string
	username, password string
	execute            string
	hasExecute         bool
	usage              string // optparse's error, if any
}

// parseCQLArgs parses cqlsh's options as optparse does for the ones the simulator knows:
// --cqlshrc, -e/--execute, -u/--username, -p/--password; positional host and port.
func parseCQLArgs(args []string) cqlInvocation {
	inv := cqlInvocation{host: "127.0.0.1", port: nativePort}
	var pos []string
	valueOf := func(i *int, name string) (string, bool) {
		if n, v, ok := strings.Cut(args[*i], "="); ok && strings.HasPrefix(n, "--") {
			return v, true
		}
		if *i+1 >= len(args) {
			inv.usage = name + " option requires 1 argument"
			return "", false
		}
		*i++
		return args[*i], true
	}
	for i := 0; i < len(args) && inv.usage == ""; i++ {
		a := args[i]
		name, _, _ := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") {
			name = a
		}
		switch name {
		case "--cqlshrc":
			inv.cqlshrc, _ = valueOf(&i, name)
		case "-e", "--execute":
			inv.execute, inv.hasExecute = valueOf(&i, name)
		case "-u", "--username":
			inv.username, _ = valueOf(&i, name)
		case "-p", "--password":
			inv.password, _ = valueOf(&i, name)
		default:
			if strings.HasPrefix(a, "-") {
				inv.usage = "no such option: " + name
				continue
			}
			pos = append(pos, a)
		}
	}
	switch {
	case inv.usage != "":
	case len(pos) > 2:
		inv.usage = "too many arguments"
	default:
		if len(pos) > 0 {
			inv.host = pos[0]
		}
		if len(pos) > 1 {
			inv.port = pos[1]
		}
	}
	return inv
}

// RunCQL behaves like `cqlsh <args>` run inside pod (args are what follows the word
// cqlsh), for what the plugin needs: `cqlsh [--cqlshrc FILE] [HOST [PORT]] -e STATEMENT`,
// FILE being /dev/stdin (StdinPath) to read a cqlshrc from stdin:
//
//	[authentication]
//	username = U
//	password = P
//
// The statements it knows (cql_exec.go, cql_replication.go): SELECT JSON keyspace_name, replication FROM
// system_schema.keyspaces; ALTER KEYSPACE k WITH replication = {…}; DESCRIBE KEYSPACE k.
// HOST is the node cqlsh connects to (127.0.0.1/localhost or an address of the cluster;
// default 127.0.0.1, the pod's own node); it must serve CQL (see servesCQL), and with
// Options.CQLAuth the cqlshrc must carry those credentials. Output, streams and exit
// codes are cqlsh's: 0; 1 when it cannot connect; 2 for a usage error or a failed
// statement ("<stdin>:1:…" on stderr). A schema change blocks, on the store's clock,
// until the other nodes have it (Options.SchemaAgreeTime) or 15 s have passed; then
// cqlsh warns of a schema version mismatch and exits 2 although the change was applied
// (awaitAgreement).
func (s *Store) RunCQL(ctx context.Context, pod string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, wait, _, err := s.startExec(pod)
	if err != nil {
		fmt.Fprintf(stderr, "cqlsh-sim: %v\n", err)
		return cqlExitConnect
	}
	if wait > 0 && !s.sleep(ctx, wait) {
		return ExitKilled
	}
	if ctx.Err() != nil {
		return ExitKilled
	}
	inv := parseCQLArgs(args)
	if inv.usage != "" {
		fmt.Fprintf(stderr, "Usage: cqlsh.py [options] [host [port]]\n\ncqlsh.py: error: %s\n", inv.usage)
		return cqlExitStatement
	}
	if !inv.hasExecute {
		fmt.Fprintf(stderr, "cqlsh-sim: only `-e STATEMENT` is simulated\n")
		return cqlExitStatement
	}
	if inv.password != "" && !opts.is311() {
		// cqlsh 4.0+ warns about a password on the command line (and goes on).
		_, _ = io.WriteString(stderr, "\nWarning: Using a password on the command line interface can be insecure.\nRecommendation: use the credentials file to securely provide the password.\n\n")
	}
	if inv.cqlshrc != "" {
		u, p := readCqlshrc(inv.cqlshrc, stdin)
		// Command-line options win over the cqlshrc (cqlsh.py read_options).
		if inv.username == "" {
			inv.username = u
		}
		if inv.password == "" {
			inv.password = p
		}
	}
	stmts, perr := splitStatements(inv.execute)
	var out, errOut strings.Builder
	code := ExitOK
	var altered time.Time // when an ALTER changed the schema (zero: none did)
	err = s.update(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		target := st.cqlTarget(n, inv.host)
		if msg := st.cqlConnect(target, inv); msg != "" {
			errOut.WriteString(msg)
			code = cqlExitConnect
			return nil
		}
		if perr != "" {
			errOut.WriteString(cqlError(perr))
			code = cqlExitStatement
			return nil
		}
		version := st.Schema.Version
		for _, stmt := range stmts {
			if !st.execCQL(target, stmt, now, &out, &errOut) {
				code = cqlExitStatement
			}
		}
		if st.Schema.Version != version {
			altered = now
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(stderr, "cqlsh-sim: %v\n", err)
		return cqlExitConnect
	}
	if !altered.IsZero() && opts.SchemaAgreeTime > 0 {
		agreed, ok := s.awaitAgreement(ctx, altered, opts.SchemaAgreeTime)
		if !ok {
			return ExitKilled
		}
		if !agreed {
			errOut.WriteString(cqlError("Warning: schema version mismatch detected; check the schema versions of your nodes in system.local and system.peers."))
			code = cqlExitStatement
		}
	}
	_, _ = io.WriteString(stdout, out.String())
	_, _ = io.WriteString(stderr, errOut.String())
	return code
}

// Schema agreement waits of cqlsh after a schema change (cqlsh.py
// perform_simple_statement): the python driver waits up to max_schema_agreement_wait
// (its default, 10 s; cqlsh does not change it) for every live node to report the new
// version, then cqlsh, if they have not, refreshes the schema metadata waiting up to 5 s
// more, and failing that prints the mismatch warning through printerr, which makes the
// -e run exit 2 although the change was applied.
const (
	driverAgreementWait = 10 * time.Second
	cqlshRefreshWait    = 5 * time.Second
)

// awaitAgreement blocks, on the store's clock, as cqlsh does after a schema change made
// at changed when the other nodes take agree to have it: until they agree or cqlsh
// gives up. It reports whether they agreed, and false for ok when ctx ended first (the
// cqlsh process was killed).
func (s *Store) awaitAgreement(ctx context.Context, changed time.Time, agree time.Duration) (agreed, ok bool) {
	limit := driverAgreementWait + cqlshRefreshWait
	deadline := changed.Add(min(agree, limit))
	for {
		now := s.now()
		if !now.Before(deadline) {
			return agree <= limit, true
		}
		if !sleepCtx(ctx, min(s.poll, deadline.Sub(now))) {
			return false, false
		}
	}
}

// readCqlshrc reads the [authentication] username and password of a cqlshrc as
// configparser does (key = value or key: value, # and ; comments). A missing file is
// no error (ConfigParser.read skips it): then there are no credentials. StdinPath reads
// stdin, to its end, when the caller has one.
func readCqlshrc(path string, stdin io.Reader) (user, password string) {
	r := stdin
	if path != StdinPath || stdin == nil {
		f, err := os.Open(path)
		if err != nil {
			return "", ""
		}
		defer f.Close()
		r = f
	}
	section := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
			continue
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.TrimSpace(line[1 : len(line)-1])
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 || section != "authentication" {
			continue
		}
		k, v := strings.ToLower(strings.TrimSpace(line[:i])), strings.TrimSpace(line[i+1:])
		switch k {
		case "username":
			user = v
		case "password":
			password = v
		}
		// configparser reads to the end of the file; the local control plane's exec
		// (kwok) never passes the end of stdin on, so the section's two keys end it, as
		// the simulated nodetool's password file ends at its line.
		if user != "" && password != "" && path == StdinPath {
			break
		}
	}
	return user, password
}

// cqlTarget is the node host names: the pod's own for a loopback name, else the node
// with that address (nil: no such node).
func (st *state) cqlTarget(self *node, host string) *node {
	if host == "127.0.0.1" || host == "localhost" || host == self.Spec.Address {
		return self
	}
	for _, p := range st.Nodes {
		if p.Spec.Address == host && !p.Detached {
			return p
		}
	}
	return nil
}

// servesCQL: the native transport is up. It starts once the node has joined (a joining
// node or a replacement does not serve clients yet), and stops when the JVM stops, on
// drain, and at the end of a decommission (StorageService.shutdownClientServers).
func (n *node) servesCQL() bool {
	return n.jvmUp() && !n.down() && !n.Joining && n.Repl == nil && n.Mode != ModeDecommissioned && !n.neverJoined()
}

// cqlConnect is the python driver's connection to target, as cqlsh reports its failure
// (cqlsh.py main: "Connection error: %s" and exit 1): refused when no native transport
// listens there, AuthenticationFailed when PasswordAuthenticator (Options.CQLAuth)
// refuses the credentials. It returns "" when connected.
func (st *state) cqlConnect(target *node, inv cqlInvocation) string {
	o := st.Options
	host := inv.host
	// The driver keys errors by endpoint: "host:port" (driver 3.2x, cqlsh 4.0+), the bare
	// address with the 3.11 bundle.
	key := host + ":" + inv.port
	if o.is311() {
		key = host
	}
	if target == nil || !target.servesCQL() || inv.port != nativePort {
		errName := "ConnectionRefusedError"
		if o.is311() {
			errName = "error" // socket.error under Python 2
		}
		return fmt.Sprintf("Connection error: ('Unable to connect to any servers', {'%s': %s(111, \"Tried connecting to [('%s', %s)]. Last error: Connection refused\")})\n",
			key, errName, host, inv.port)
	}
	a := o.CQLAuth
	if a == nil {
		return ""
	}
	var reason string
	switch {
	case inv.username == "":
		reason = "Remote end requires authentication"
	case inv.username != a.Username || inv.password != a.Password:
		// PasswordAuthenticator's message: 3.11's, then 4.0+'s naming the user.
		msg := "Username and/or password are incorrect"
		if !o.is311() {
			msg = "Provided username " + inv.username + " and/or password are incorrect"
		}
		reason = fmt.Sprintf("Failed to authenticate to %s: Error from server: code=0100 [Bad credentials] message=\"%s\"", key, msg)
	default:
		return ""
	}
	// Python 2 (3.11's cqlsh) prints a one-argument exception with a trailing comma.
	comma := ""
	if o.is311() {
		comma = ","
	}
	return fmt.Sprintf("Connection error: ('Unable to connect to any servers', {'%s': AuthenticationFailed('%s'%s)})\n", key, reason, comma)
}

// cqlError is how cqlsh reports a failed statement given with -e: the input name and
// line number first (printerr with show_line_nums, the input being "<stdin>").
func cqlError(msg string) string { return "<stdin>:1:" + msg + "\n" }

// splitStatements cuts -e's text at the semicolons outside quotes; empty statements
// are dropped. It returns a syntax error's text for an unterminated quote.
func splitStatements(text string) ([]string, string) {
	var out []string
	var cur strings.Builder
	var quote rune
	for _, r := range text {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == ';':
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	if quote != 0 {
		return nil, "SyntaxException: line 1: unterminated quoted string"
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out, ""
}

// token is one CQL lexeme: an identifier or keyword (quoted: exact case), a string
// constant, a number, or a punctuation character.
type token struct {
	kind byte // 'i' identifier, 'q' quoted identifier, 's' string, 'n' number, 'p' punctuation
	text string
}

func lexCQL(s string) ([]token, bool) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c { // doubled quote escapes itself
						b.WriteByte(c)
						j++
						continue
					}
					break
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, false
			}
			kind := byte('s')
			if c == '"' {
				kind = 'q'
			}
			toks = append(toks, token{kind, b.String()})
			i = j + 1
		case isIdentStart(c):
			j := i
			for j < len(s) && (isIdentStart(s[j]) || (s[j] >= '0' && s[j] <= '9')) {
				j++
			}
			toks = append(toks, token{'i', s[i:j]})
			i = j
		case (c >= '0' && c <= '9') || c == '-':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			toks = append(toks, token{'n', s[i:j]})
			i = j
		default:
			toks = append(toks, token{'p', string(c)})
			i++
		}
	}
	return toks, true
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// name is an identifier as CQL resolves it: unquoted ones are case-insensitive
// (lowercased), quoted ones exact.
func (t token) name() string {
	if t.kind == 'q' {
		return t.text
	}
	return strings.ToLower(t.text)
}

// keyword reports whether t is the (unquoted) keyword kw.
func (t token) keyword(kw string) bool { return t.kind == 'i' && strings.EqualFold(t.text, kw) }

// parseMap parses a CQL map literal of constants, {k: v, …}, from toks[i] ("{"). Keys
// and values keep their text (CQL turns numbers into strings in replication options).
// It returns the map's entries in order, and the index after "}".
func parseMap(toks []token, i int) ([][2]string, int, bool) {
	if i >= len(toks) || toks[i].text != "{" || toks[i].kind != 'p' {
		return nil, i, false
	}
	i++
	var entries [][2]string
	for {
		if i < len(toks) && toks[i].kind == 'p' && toks[i].text == "}" && len(entries) == 0 {
			return entries, i + 1, true
		}
		if i+2 >= len(toks) || (toks[i].kind != 's' && toks[i].kind != 'n') || toks[i+1].text != ":" || (toks[i+2].kind != 's' && toks[i+2].kind != 'n') {
			return nil, i, false
		}
		entries = append(entries, [2]string{toks[i].text, toks[i+2].text})
		i += 3
		if i >= len(toks) || toks[i].kind != 'p' {
			return nil, i, false
		}
		switch toks[i].text {
		case ",":
			i++
		case "}":
			return entries, i + 1, true
		default:
			return nil, i, false
		}
	}
}

// sortedOptionKeys sorts a text map's keys as Cassandra stores map<text, text> (UTF-8
// byte order).
func sortedOptionKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// replicationOptions is system_schema.keyspaces.replication for k: the strategy's full
// class name and its options (replicas per DC as text).
func (k *keyspace) replicationOptions() map[string]string {
	m := map[string]string{"class": strategyPackage + k.Class}
	if k.Class == classNTS {
		for dc, rf := range k.RF {
			m[dc] = strconv.Itoa(rf)
		}
	}
	return m
}
