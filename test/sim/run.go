package sim

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

const seeHelp = "See 'nodetool help' or 'nodetool help <command>'.\n"

// invocation is a parsed nodetool command line.
type invocation struct {
	host, port string
	printPort  bool // -pp (4.0+)
	cmd        string
	positional []string
	force      bool // decommission --force/-f
	human      bool // netstats -H
	allTokens  bool // info -T
	unexpected []string
	missing    string // option given without its value

	// get/set(interdc)streamthroughput (throughput_cmd.go): -e, -m, -d, the value and
	// airline's conversion error for a value that is no int.
	entire, mib, precise bool
	value                string
	hasValue             bool
	convErr              string

	// JMX credentials (-u, -pw, -pwf): see authenticate.
	username, password, passwordFile string

	// rebuild's options and source DC (rebuild.go).
	rebuild rebuildArgs
}

// rebuildValueOpts are Rebuild's options that take a value (3.11–5.0), by their title.
var rebuildValueOpts = map[string]string{
	"-ks": "keyspace", "--keyspace": "keyspace",
	"-ts": "tokens", "--tokens": "tokens",
	"-s": "sources", "--sources": "sources",
}

// globalValueOpts are NodeToolCmd's options that take a value (same in every version).
var globalValueOpts = map[string]bool{
	"-h": true, "--host": true, "-p": true, "--port": true,
	"-u": true, "--username": true, "-pw": true, "--password": true,
	"-pwf": true, "--password-file": true,
}

// parseArgs parses like airline does for the commands the simulator knows: global
// options anywhere, then the command's own options and arguments. Anything it cannot
// place ends up in unexpected, which nodetool reports as "Found unexpected parameters".
func parseArgs(o Options, args []string) invocation {
	inv := invocation{host: "127.0.0.1", port: "7199"}
	var rest []string
	dashes := -1 // index in rest of airline's "--": every later token is an argument
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" && inv.cmd != "" {
			dashes = len(rest)
			rest = append(rest, args[i+1:]...)
			break
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") {
			name, hasVal = a, false
		}
		if globalValueOpts[name] {
			if !hasVal {
				if i+1 >= len(args) {
					inv.missing = name
					break
				}
				i++
				val = args[i]
			}
			switch name {
			case "-h", "--host":
				inv.host = val
			case "-p", "--port":
				inv.port = val
			case "-u", "--username":
				inv.username = val
			case "-pw", "--password":
				inv.password = val
			case "-pwf", "--password-file":
				inv.passwordFile = val
			}
			continue
		}
		if (a == "-pp" || a == "--print-port") && !o.is311() {
			inv.printPort = true
			continue
		}
		if inv.cmd == "" && !strings.HasPrefix(a, "-") {
			inv.cmd = a
			continue
		}
		rest = append(rest, a)
	}
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if inv.cmd == "rebuild" {
			j = inv.rebuildArg(o, rest, j, dashes >= 0 && j >= dashes)
			continue
		}
		switch {
		case inv.cmd == "help":
			// help takes any command names; the simulator prints the general usage.
		case inv.cmd == "decommission" && (a == "-f" || a == "--force") && !o.is311():
			inv.force = true
		case inv.cmd == "netstats" && (a == "-H" || a == "--human-readable"):
			inv.human = true
		case inv.cmd == "info" && (a == "-T" || a == "--tokens"):
			inv.allTokens = true
		case inv.cmd == "status" && (a == "-r" || a == "--resolve-ip"):
			// Addresses are IPs without reverse DNS here, so resolving changes nothing.
		case (inv.cmd == "status" || inv.cmd == "removenode") && !strings.HasPrefix(a, "-") && len(inv.positional) == 0:
			inv.positional = append(inv.positional, a)
		case throughputCmds[inv.cmd]:
			inv.throughputArg(o, a)
		default:
			inv.unexpected = append(inv.unexpected, a)
		}
	}
	return inv
}

// rebuildArg places rest[j] of a rebuild command line and returns the index of the last
// token it used: -ks/-ts/-s with their value (also --name=value), --exclude-local-dc
// (4.1+), and one argument, the source DC (Rebuild's single-String @Arguments). After
// "--" every token is an argument.
func (inv *invocation) rebuildArg(o Options, rest []string, j int, afterDashes bool) int {
	a := rest[j]
	if !afterDashes && strings.HasPrefix(a, "-") {
		name, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") {
			name, hasVal = a, false
		}
		if title, ok := rebuildValueOpts[name]; ok {
			if !hasVal {
				if j+1 >= len(rest) {
					inv.missing = name
					return j
				}
				j++
				val = rest[j]
			}
			switch title {
			case "keyspace":
				inv.rebuild.keyspace = val
			case "tokens":
				inv.rebuild.tokens = val
			case "sources":
				inv.rebuild.sources = val
			}
			return j
		}
		if a == "--exclude-local-dc" && !o.is311() && o.Version != V40 {
			inv.rebuild.excludeLocal = true
			return j
		}
		inv.unexpected = append(inv.unexpected, a)
		return j
	}
	if len(inv.positional) == 0 {
		inv.positional = append(inv.positional, a)
		inv.rebuild.source = a
		return j
	}
	inv.unexpected = append(inv.unexpected, a)
	return j
}

// knownCommands are the nodetool commands the simulator implements.
var knownCommands = map[string]bool{
	"status": true, "netstats": true, "info": true, "describecluster": true,
	"gossipinfo": true, "decommission": true, "version": true, "help": true,
	"drain": true, "cleanup": true, "removenode": true, "rebuild": true,
	"getstreamthroughput": true, "setstreamthroughput": true,
	"getinterdcstreamthroughput": true, "setinterdcstreamthroughput": true,
}

// usageError is airline's parse error text, if the command line has one: an
// exception while parsing first, then its validation (unexpected, then missing).
func (inv invocation) usageError() string {
	switch {
	case inv.convErr != "":
		return inv.convErr
	case inv.missing != "":
		return fmt.Sprintf("Required values for option '%s' not provided", strings.TrimLeft(inv.missing, "-"))
	case inv.cmd != "" && !knownCommands[inv.cmd]:
		// An unknown command is an unexpected argument of the default (help) command.
		return fmt.Sprintf("Found unexpected parameters: [%s]", strings.Join(append([]string{inv.cmd}, inv.unexpected...), ", "))
	case len(inv.unexpected) > 0:
		return fmt.Sprintf("Found unexpected parameters: [%s]", strings.Join(inv.unexpected, ", "))
	case inv.cmd == "removenode" && len(inv.positional) == 0:
		return "Required parameters are missing: remove_operation" // RemoveNode's @Arguments title
	}
	return inv.throughputUsage()
}

// Run behaves like `nodetool <args>` run inside pod: same stdout/stderr text and exit
// code as the real tool for the simulated Cassandra version. `decommission` blocks
// until its attempt ends (by the clock), but cancelling ctx only ends this call (exit
// 143, like a killed nodetool JVM): the simulated decommission keeps going.
func (s *Store) Run(ctx context.Context, pod string, args []string, stdout, stderr io.Writer) int {
	return s.RunInput(ctx, pod, args, nil, stdout, stderr)
}

// RunInput is Run with nodetool's standard input (nil: none), which a password file
// named /dev/stdin reads (see authenticate).
func (s *Store) RunInput(ctx context.Context, pod string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, wait, up, err := s.startExec(pod)
	if err != nil {
		fmt.Fprintf(stderr, "nodetool-sim: %v\n", err)
		return ExitUsage
	}
	// The JVM start (ExecCost) and a sluggish JMX (Slow) come before anything answers.
	if wait > 0 && !s.sleep(ctx, wait) {
		return ExitKilled
	}
	if ctx.Err() != nil {
		return ExitKilled
	}
	inv := parseArgs(opts, args)
	// Authentication is part of connecting: a JVM that is down answers the connect error
	// first, help and usage errors connect to nothing.
	if up && inv.cmd != "" && inv.cmd != "help" && inv.usageError() == "" {
		if code := authenticate(opts, inv, stdin, stderr); code != ExitOK {
			return code
		}
	}
	if inv.cmd == "decommission" {
		return s.decommission(ctx, pod, inv, stdout, stderr)
	}
	if inv.cmd == "removenode" && inv.usageError() == "" {
		return s.removeNode(ctx, pod, inv, stdout, stderr)
	}
	if inv.cmd == "rebuild" && inv.usageError() == "" {
		return s.runRebuild(ctx, pod, inv, stdout, stderr)
	}
	if (inv.cmd == "drain" || inv.cmd == "cleanup") && inv.usageError() == "" {
		return s.maintenance(pod, inv, stdout, stderr)
	}
	if throughputCmds[inv.cmd] && inv.usageError() == "" {
		return s.streamThroughput(pod, inv, stdout, stderr)
	}
	var out, errOut strings.Builder
	code := ExitOK
	if msg := inv.usageError(); msg != "" {
		out.WriteString("nodetool: " + msg + "\n" + seeHelp)
		code = ExitUsage
	} else if inv.cmd == "" || inv.cmd == "help" {
		// airline's default command: help, which needs no connection.
		out.WriteString(helpText)
	} else {
		err = s.read(func(st *state, now time.Time) error {
			n, err := st.node(pod)
			if err != nil {
				return err
			}
			if !n.jvmUp() {
				connectError(&errOut, st.Options, inv)
				code = ExitUsage
				return nil
			}
			code = st.render(&out, n, inv, now)
			return nil
		})
		if err != nil {
			fmt.Fprintf(stderr, "nodetool-sim: %v\n", err)
			return ExitUsage
		}
	}
	_, _ = io.WriteString(stdout, out.String())
	_, _ = io.WriteString(stderr, errOut.String())
	return code
}

// render runs a read-only command on a reachable node.
func (st *state) render(b *strings.Builder, n *node, inv invocation, now time.Time) int {
	switch inv.cmd {
	case "status":
		if n.Fault.EmptyRing {
			return ExitOK
		}
		ks := ""
		if len(inv.positional) > 0 {
			ks = inv.positional[0]
		}
		var sb strings.Builder
		code := st.renderStatus(&sb, n, inv, ks, now)
		if n.Fault.Garbled && code == ExitOK {
			b.WriteString(garbleStatus(sb.String()))
			return ExitOK
		}
		b.WriteString(sb.String())
		return code
	case "netstats":
		if n.Fault.Garbled {
			b.WriteString(garbledNetstats)
			return ExitOK
		}
		st.renderNetstats(b, n, inv, now)
	case "info":
		st.renderInfo(b, n, inv, now)
	case "describecluster":
		st.renderDescribeCluster(b, n, now)
	case "gossipinfo":
		st.renderGossipInfo(b, now)
	case "version":
		b.WriteString("ReleaseVersion: " + st.Options.ReleaseVersion + "\n")
	}
	return ExitOK
}

// connectError is E10: what NodeTool.connect() prints when JMX is unreachable. JDK 8
// (Cassandra 3.11) repeats the reason in parentheses, JDK 11+ does not.
func connectError(b *strings.Builder, o Options, inv invocation) {
	reason := "Connection refused"
	if o.is311() {
		reason = "Connection refused (Connection refused)"
	}
	fmt.Fprintf(b, "nodetool: Failed to connect to '%s:%s' - ConnectException: '%s'.\n", inv.host, inv.port, reason)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// maintenance runs `nodetool drain` or `nodetool cleanup` (both print nothing and exit 0
// on success):
//   - drain: mode DRAINED (peers show the node DN) until the JVM restarts; a running
//     decommission dies with it. Draining a drained node does nothing.
//   - cleanup: refused while any node joins, replaces or leaves (pending ranges), like
//     StorageService.forceKeyspaceCleanup; otherwise it only counts (Cleanups).
func (s *Store) maintenance(pod string, inv invocation, stdout, stderr io.Writer) int {
	var out, errOut strings.Builder
	code := ExitOK
	err := s.update(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		if !n.jvmUp() {
			connectError(&errOut, st.Options, inv)
			code = ExitUsage
			return nil
		}
		switch inv.cmd {
		case "drain":
			if n.Mode == ModeDrained || n.Mode == ModeDecommissioned {
				return nil
			}
			n.abort(now)
			n.Mode = ModeDrained
			n.Drains++
		case "cleanup":
			if n.Mode == ModeDrained {
				errOut.WriteString(javaError(st.Options, "java.lang.IllegalStateException", "Node is drained"))
				code = ExitFailure
				return nil
			}
			for _, p := range st.Nodes {
				if p.listed() && (p.Joining || p.Leaving || p.Removing != "" || (p.Repl != nil && !p.Repl.Announced.IsZero())) {
					errOut.WriteString(javaError(st.Options, "java.lang.RuntimeException", "Node is involved in cluster membership changes. Not safe to run cleanup."))
					code = ExitFailure
					return nil
				}
			}
			n.Cleanups++
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(stderr, "nodetool-sim: %v\n", err)
		return ExitUsage
	}
	_, _ = io.WriteString(stdout, out.String())
	_, _ = io.WriteString(stderr, errOut.String())
	return code
}

// javaError is what NodeTool.err prints for a server-side exception: the message, the
// marker line and the trace.
func javaError(o Options, class, msg string) string {
	return "error: " + msg + "\n-- StackTrace --\n" + class + ": " + msg + "\n" + javaFrames(o) + "\n"
}

// decommission runs `nodetool decommission`: it decides under the lock, then (if an
// attempt started) waits without the lock, checking the clock and ctx, until the attempt
// has an outcome.
func (s *Store) decommission(ctx context.Context, pod string, inv invocation, stdout, stderr io.Writer) int {
	var out, errOut strings.Builder
	code := ExitOK
	var id string
	var opts Options
	err := s.update(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		opts = st.Options
		n.Calls++
		if msg := inv.usageError(); msg != "" {
			out.WriteString("nodetool: " + msg + "\n" + seeHelp)
			code = ExitUsage
			return nil
		}
		if !n.jvmUp() {
			connectError(&errOut, st.Options, inv)
			code = ExitUsage
			return nil
		}
		code, id = st.decide(n, inv.force, now, &out)
		return nil
	})
	if err != nil {
		fmt.Fprintf(stderr, "nodetool-sim: %v\n", err)
		return ExitUsage
	}
	if id == "" {
		_, _ = io.WriteString(stdout, out.String())
		_, _ = io.WriteString(stderr, errOut.String())
		return code
	}
	for {
		var result string
		var wait time.Duration
		err := s.read(func(st *state, now time.Time) error {
			result = resultAborted // node or attempt vanished: the JVM we talked to is gone
			n, err := st.node(pod)
			if err != nil {
				return nil
			}
			a := n.attempt(id)
			if a == nil {
				return nil
			}
			result = a.Result
			wait = st.endOf(n, a).Sub(now)
			return nil
		})
		if err != nil {
			fmt.Fprintf(stderr, "nodetool-sim: %v\n", err)
			return ExitFailure
		}
		switch result {
		case resultOK:
			return ExitOK // success prints nothing
		case resultFailed:
			_, _ = io.WriteString(stderr, streamFailedText(opts))
			return ExitFailure
		case resultAborted:
			_, _ = io.WriteString(stderr, jvmGoneText(opts))
			return ExitFailure
		}
		// Sleep in small slices: the attempt may be aborted (restart, Down) at any time,
		// and a cancelled ctx must end this call promptly.
		d := min(s.poll, max(wait, time.Millisecond))
		if !sleepCtx(ctx, d) {
			return ExitKilled
		}
	}
}

// decide applies the decommission rules of the version (client pre-checks on 5.0,
// StorageService.decommission's checks, the RF check) and starts an attempt when they
// pass. It returns the exit code and, if an attempt started, its id. It mutates n only
// once the outcome is known, so the memory store needs no rollback.
func (st *state) decide(n *node, force bool, now time.Time, out *strings.Builder) (int, string) {
	o := st.Options
	running := len(n.running()) > 0
	if o.is50() {
		// Decommission.java's client-side pre-checks (exit 0, E2'/E3').
		if running {
			out.WriteString("This node is still decommissioning.\n")
			return ExitOK, ""
		}
		if n.Mode == ModeDecommissioned {
			out.WriteString("Node was already decommissioned.\n")
			return ExitOK, ""
		}
	}
	// The server skips these when already LEAVING (a retry after a failure, or on 3.11 a
	// duplicate of a running attempt).
	if n.Mode != ModeLeaving {
		if !n.member() {
			return unsupported(out, "local node is not a member of the token ring yet"), "" // E3/E8
		}
		if st.ownersAfterAllLeft() < 2 {
			return unsupported(out, "no other normal nodes in the ring; decommission would be pointless"), "" // E5
		}
		if n.Mode != ModeNormal && (!o.is50() || n.Mode != ModeDecommissionFailed) {
			return unsupported(out, fmt.Sprintf("Node in %s state; wait for status to become normal or restart", n.Mode)), "" // E7
		}
	}
	if running && !o.is311() {
		// E2. 3.11's guard never fires (E2''), so a duplicate starts below.
		msg := "Node is still decommissioning. Check nodetool netstats."
		if o.is50() {
			msg = "Node is still decommissioning. Check nodetool netstats or nodetool info."
		}
		out.WriteString("nodetool: " + msg + "\n" + seeHelp)
		return ExitUsage, ""
	}
	// RF check (4.0+, not with --force, not when already leaving: a leaving node is out of
	// N and 5.0 only fails when this node is in that set).
	if !o.is311() && !force && n.Mode != ModeLeaving && !n.Leaving {
		if msg := st.rfCheck(n); msg != "" || n.Fault.RefuseRF {
			if msg == "" {
				msg = st.rfRefusal(st.Schema.keyspace(ksDistributed), n)
			}
			code := unsupported(out, msg)
			if o.is50() {
				// The check runs inside the try whose catch sets DECOMMISSION_FAILED.
				n.Mode = ModeDecommissionFailed
			}
			return code, ""
		}
	}
	st.Seq++
	a := &attempt{ID: timeUUID(now, fmt.Sprintf("%s/%d", n.Spec.Pod, st.Seq)), Start: now}
	if o.metered() {
		a.Rates = []rateStep{{At: now, BPS: st.sendRate(n, st.streamTarget(n))}}
	}
	if n.Fault.StreamFailures > 0 {
		a.Fail = true
		n.Fault.StreamFailures--
	}
	n.Attempts = append(n.Attempts, a)
	n.trimHistory()
	n.Started++
	if !n.Leaving {
		n.Leaving = true
		n.StatusVersion++
	}
	n.Mode = ModeLeaving
	return ExitOK, a.ID
}

// rfCheck is StorageService.decommission's replication check (4.0+, CASSANDRA-12510;
// the same loop in 4.0, 4.1 and 5.0): for each keyspace that is not LocalStrategy
// (Schema.getNonLocalStrategyKeyspaces), NetworkTopologyStrategy's
// getReplicationFactor(localDC) against N, the endpoints of the local DC in
// tokenMetadata.cloneAfterAllLeft() (non-leaving token owners, this node and down ones
// included); it refuses when N <= RF. A keyspace that does not replicate to the DC
// (RF 0) never refuses, so a DC no keyspace replicates to can decommission down to its
// last node. It returns the refusal's text, "" when every keyspace passes.
func (st *state) rfCheck(n *node) string {
	for _, k := range st.rfCheckOrder() {
		if st.dcOwners(n.Spec.DC) <= k.rfIn(n.Spec.DC) {
			return st.rfRefusal(k, n)
		}
	}
	return ""
}

// rfCheckOrder is the order keyspaces are checked in. The real order is the schema's
// (not fixed, docs/how-it-works/nodetool.md §12); the simulator checks
// system_distributed first, the keyspace the fixtures and dtests name.
func (st *state) rfCheckOrder() []*keyspace {
	out := []*keyspace{st.Schema.keyspace(ksDistributed)}
	for _, k := range st.Schema.replicated() {
		if k.Name != ksDistributed {
			out = append(out, k)
		}
	}
	return out
}

// dcOwners is N of the RF check: the DC's token owners that are not leaving.
func (st *state) dcOwners(dc string) int {
	c := 0
	for _, p := range st.Nodes {
		if p.Spec.DC == dc && p.owner() {
			c++
		}
	}
	return c
}

// rfRefusal is E1's text for keyspace k.
func (st *state) rfRefusal(k *keyspace, n *node) string {
	return fmt.Sprintf("Not enough live nodes to maintain replication factor in keyspace %s (RF = %d, N = %d). Perform a forceful decommission to ignore.",
		k.Name, k.rfIn(n.Spec.DC), st.dcOwners(n.Spec.DC))
}

// ownersAfterAllLeft is tokenMetadata.cloneAfterAllLeft(): endpoints (4.0+) or tokens
// (3.11 counts sortedTokens) of the ring without the leaving nodes.
func (st *state) ownersAfterAllLeft() int {
	c := 0
	for _, p := range st.Nodes {
		if p.owner() {
			if st.Options.is311() {
				c += p.Spec.Tokens
			} else {
				c++
			}
		}
	}
	return c
}

// unsupported prints a server UnsupportedOperationException as Decommission.execute
// rethrows it (IllegalStateException "Unsupported operation: …": stdout, exit 1).
func unsupported(out *strings.Builder, msg string) int {
	out.WriteString("nodetool: Unsupported operation: " + msg + "\n" + seeHelp)
	return ExitUsage
}

// javaFrames is the RMI part of a server-side stack trace as nodetool prints it.
func javaFrames(o Options) string {
	if o.is311() { // JDK 8
		return "\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n" +
			"\tat sun.reflect.NativeMethodAccessorImpl.invoke(NativeMethodAccessorImpl.java:62)\n" +
			"\tat sun.reflect.DelegatingMethodAccessorImpl.invoke(DelegatingMethodAccessorImpl.java:43)\n" +
			"\tat java.lang.reflect.Method.invoke(Method.java:498)\n" +
			"\tat sun.rmi.server.UnicastServerRef.dispatch(UnicastServerRef.java:357)\n" +
			"\tat sun.rmi.transport.Transport$1.run(Transport.java:200)\n" +
			"\tat java.lang.Thread.run(Thread.java:748)\n"
	}
	return "\tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n" +
		"\tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke(NativeMethodAccessorImpl.java:62)\n" +
		"\tat java.base/jdk.internal.reflect.DelegatingMethodAccessorImpl.invoke(DelegatingMethodAccessorImpl.java:43)\n" +
		"\tat java.base/java.lang.reflect.Method.invoke(Method.java:566)\n" +
		"\tat java.rmi/sun.rmi.server.UnicastServerRef.dispatch(UnicastServerRef.java:359)\n" +
		"\tat java.rmi/sun.rmi.transport.Transport$1.run(Transport.java:200)\n" +
		"\tat java.base/java.lang.Thread.run(Thread.java:829)\n"
}

// streamFailedText is E11 (stderr, exit 2). NodeTool.err prints the root-cause message,
// the marker line and the trace (whose own trailing newline println doubles).
func streamFailedText(o Options) string {
	line := map[bool]string{true: "4860", false: "5104"}[o.is311()]
	return "error: Error while decommissioning node: Stream failed\n" +
		"-- StackTrace --\n" +
		"java.lang.RuntimeException: Error while decommissioning node: Stream failed\n" +
		"\tat org.apache.cassandra.service.StorageService.decommission(StorageService.java:" + line + ")\n" +
		javaFrames(o) + "\n"
}

// jvmGoneText is E15: the Cassandra JVM died under the JMX call. The root cause is an
// EOFException, whose message is null.
func jvmGoneText(o Options) string {
	return jvmGoneFrom(o, "decommission", map[bool]string{true: "668", false: "813"}[o.is311()])
}

// jvmGoneFrom is E15 for a call of NodeProbe's method at line.
func jvmGoneFrom(o Options, method, line string) string {
	return "error: null\n" +
		"-- StackTrace --\n" +
		"java.rmi.UnmarshalException: Error unmarshaling return header; nested exception is: \n" +
		"\tjava.io.EOFException\n" +
		"\tat sun.rmi.transport.StreamRemoteCall.executeCall(StreamRemoteCall.java:236)\n" +
		"\tat sun.rmi.server.UnicastRef.invoke(UnicastRef.java:161)\n" +
		"\tat javax.management.remote.rmi.RMIConnectionImpl_Stub.invoke(Unknown Source)\n" +
		"\tat org.apache.cassandra.tools.NodeProbe." + method + "(NodeProbe.java:" + line + ")\n" +
		"Caused by: java.io.EOFException\n" +
		"\tat java.io.DataInputStream.readByte(DataInputStream.java:267)\n" +
		"\tat sun.rmi.transport.StreamRemoteCall.executeCall(StreamRemoteCall.java:222)\n" +
		"\t... 3 more\n\n"
}

const helpText = `usage: nodetool [(-h <host> | --host <host>)] [(-p <port> | --port <port>)]
        [(-pw <password> | --password <password>)]
        [(-pwf <passwordFilePath> | --password-file <passwordFilePath>)]
        [(-u <username> | --username <username>)] <command> [<args>]

The most commonly used nodetool commands are:
    cleanup                      Triggers the immediate cleanup of keys no longer belonging to a node. By default, clean all keyspaces
    decommission                 Decommission the *node I am connecting to*
    describecluster              Print the name, snitch, partitioner and schema version of a cluster
    drain                        Drain the node (stop accepting writes and flush all tables)
    getinterdcstreamthroughput   Print the throughput cap for inter-datacenter streaming in the system
    getstreamthroughput          Print the throughput cap for streaming in the system
    gossipinfo                   Shows the gossip information for the cluster
    help                         Display help information
    info                         Print node information (uptime, load, ...)
    netstats                     Print network information on provided host (connecting node by default)
    rebuild                      Rebuild data by streaming from other nodes (similarly to bootstrap)
    removenode                   Show status of current node removal, force completion of pending removal or remove provided ID
    setinterdcstreamthroughput   Set the throughput cap for inter-datacenter streaming in the system, or 0 to disable throttling
    setstreamthroughput          Set the throughput cap for streaming in the system, or 0 to disable throttling
    status                       Print cluster information (state, load, IDs, ...)
    version                      Print cassandra version

See 'nodetool help <command>' for more information on a specific command.

`
