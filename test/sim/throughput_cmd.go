package sim

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// The get/set(interdc)streamthroughput commands (docs/how-it-works/streaming.md §1.1–§1.4;
// tools/nodetool/{Get,Set}{,InterDC}StreamThroughput.java of each version).

var throughputCmds = map[string]bool{
	"getstreamthroughput": true, "setstreamthroughput": true,
	"getinterdcstreamthroughput": true, "setinterdcstreamthroughput": true,
}

func isThroughputSet(cmd string) bool { return throughputCmds[cmd] && strings.HasPrefix(cmd, "set") }

func interDC(cmd string) bool { return strings.Contains(cmd, "interdc") }

// throughputArg places one argument of a throughput command the way airline's Parser
// does: a known flag (4.1+ only, §1.1; -em style groups too), else for the set commands
// the value, converted at once (a bad one ends the parse with the conversion error),
// else an unexpected parameter. The last value wins (airline Accessor.addValues).
func (inv *invocation) throughputArg(o Options, a string) {
	if inv.convErr != "" {
		return
	}
	if o.hasDataRates() && inv.throughputFlag(a) {
		return
	}
	if !isThroughputSet(inv.cmd) {
		inv.unexpected = append(inv.unexpected, a)
		return
	}
	if _, err := strconv.ParseInt(a, 10, 32); err != nil {
		// 4.1 declares an int, 3.11/4.0 an Integer; airline names the type
		// (ParseOptionConversionException; §1.4, 4.1 SetGetStreamThroughputTest line 104).
		typ := "Integer"
		if o.hasDataRates() {
			typ = "int"
		}
		inv.convErr = fmt.Sprintf("%s: can not convert \"%s\" to a %s", throughputTitle(inv.cmd), a, typ)
		return
	}
	inv.value, inv.hasValue = a, true
}

// throughputTitle is the @Arguments title the "missing" and "convert" errors name.
func throughputTitle(cmd string) string {
	if interDC(cmd) {
		return "inter_dc_stream_throughput"
	}
	return "stream_throughput"
}

// throughputFlag sets the flag(s) a names, if it is one: -e/--entire-sstable-throughput
// and -m/--mib on both commands, -d/--precise-mbit on get only.
func (inv *invocation) throughputFlag(a string) bool {
	get := !isThroughputSet(inv.cmd)
	switch a {
	case "--entire-sstable-throughput":
		inv.entire = true
		return true
	case "--mib":
		inv.mib = true
		return true
	case "--precise-mbit":
		if get {
			inv.precise = true
		}
		return get
	}
	letters := "em"
	if get {
		letters = "emd"
	}
	if len(a) < 2 || a[0] != '-' || strings.Trim(a[1:], letters) != "" {
		return false
	}
	for _, c := range a[1:] {
		switch c {
		case 'e':
			inv.entire = true
		case 'm':
			inv.mib = true
		case 'd':
			inv.precise = true
		}
	}
	return true
}

// throughputUsage is the parse error airline raises after the command line was read:
// the missing value of a set command ("Required parameters are missing", §1.4).
func (inv invocation) throughputUsage() string {
	if isThroughputSet(inv.cmd) && !inv.hasValue {
		return "Required parameters are missing: " + throughputTitle(inv.cmd)
	}
	return ""
}

// limiterOf is the limiter a command line reads or sets.
func (inv invocation) limiterOf() limiter {
	switch {
	case inv.entire && interDC(inv.cmd):
		return limEntireInterDC
	case inv.entire:
		return limEntire
	case interDC(inv.cmd):
		return limInterDC
	}
	return limStream
}

// badUse is an IllegalArgumentException reaching NodeTool: stdout, the See-help line,
// exit 1 (docs/how-it-works/nodetool.md §1).
func badUse(out *strings.Builder, msg string) int {
	out.WriteString("nodetool: " + msg + "\n" + seeHelp)
	return ExitUsage
}

// getThroughput prints get(interdc)streamthroughput for n (§1.3).
func (st *state) getThroughput(out, errOut *strings.Builder, n *node, inv invocation) int {
	o := st.Options
	r := n.setting(o, inv.limiterOf())
	if !o.hasDataRates() {
		// 3.11/4.0: the int as is, 0 and negatives too ("0 Mb/s", no "unlimited").
		label := "stream throughput"
		if interDC(inv.cmd) {
			label = "inter-datacenter stream throughput"
		}
		fmt.Fprintf(out, "Current %s: %d Mb/s\n", label, r.Q)
		return ExitOK
	}
	if (inv.entire && (inv.mib || inv.precise)) || (inv.mib && inv.precise) {
		return badUse(out, "You cannot use more than one flag with this command")
	}
	inter := ""
	if interDC(inv.cmd) {
		inter = "inter-datacenter "
	}
	orUnlimited := func(v float64, unit string) string {
		if v > 0 {
			return javaDoubleString(v) + " " + unit
		}
		return "unlimited"
	}
	switch {
	case inv.entire:
		fmt.Fprintf(out, "Current entire SSTable %sstream throughput: %s\n", inter, orUnlimited(r.mebibytesPerSec(), "MiB/s"))
	case inv.mib:
		fmt.Fprintf(out, "Current %sstream throughput: %s\n", inter, orUnlimited(r.mebibytesPerSec(), "MiB/s"))
	case inv.precise:
		// The inter-DC -d line says "stream throughput" (4.1 GetInterDCStreamThroughput.java line 71).
		fmt.Fprintf(out, "Current stream throughput: %s\n", orUnlimited(r.megabitsPerSec(), "Mb/s"))
	default:
		return flaglessThroughput(out, errOut, r, inter)
	}
	return ExitOK
}

// flaglessThroughput is 4.1's get without a flag: the rounded int, or exit 2 when the
// value is not a whole number of megabits/s, which the 24MiB/s default is not
// (GetStreamThroughput.java lines 75–83). The inter-DC form prints the double in front
// of its line (GetInterDCStreamThroughput.java line 82).
func flaglessThroughput(out, errOut *strings.Builder, r rateSetting, inter string) int {
	i, d := r.megabitsAsInt(), r.megabitsPerSec()
	switch {
	case i <= 0:
		fmt.Fprintf(out, "Current %sstream throughput: unlimited\n", inter)
	case d == math.Trunc(d):
		prefix := ""
		if inter != "" {
			prefix = javaDoubleString(d)
		}
		fmt.Fprintf(out, "%sCurrent %sstream throughput: %d Mb/s\n", prefix, inter, i)
	default:
		class := "GetStreamThroughput.java:82"
		if inter != "" {
			class = "GetInterDCStreamThroughput.java:84"
		}
		errOut.WriteString(clientError("java.lang.RuntimeException",
			"Use the -d flag to quiet this error and get the exact throughput in megabits/s", class))
		return ExitFailure
	}
	return ExitOK
}

// clientError is NodeTool.err for an exception thrown by the command itself (not by
// the server): root-cause message, marker line, trace. The frames below the command's
// are NodeTool's dispatch; their line numbers are illustrative.
func clientError(class, msg, at string) string {
	cmd := strings.TrimSuffix(at[:strings.IndexByte(at, ':')], ".java")
	return "error: " + msg + "\n-- StackTrace --\n" + class + ": " + msg + "\n" +
		"\tat org.apache.cassandra.tools.nodetool." + cmd + ".execute(" + at + ")\n" +
		"\tat org.apache.cassandra.tools.NodeTool$NodeToolCmd.runInternal(NodeTool.java:370)\n" +
		"\tat org.apache.cassandra.tools.NodeTool$NodeToolCmd.run(NodeTool.java:355)\n" +
		"\tat org.apache.cassandra.tools.NodeTool.execute(NodeTool.java:274)\n" +
		"\tat org.apache.cassandra.tools.NodeTool.main(NodeTool.java:98)\n\n"
}

// setThroughput applies set(interdc)streamthroughput to n: no output on success (§1.4).
// It validates before it mutates (the memory store has no rollback).
func (st *state) setThroughput(out *strings.Builder, n *node, inv invocation, now time.Time) int {
	o := st.Options
	v, _ := strconv.ParseInt(inv.value, 10, 32) // throughputArg checked it
	l := inv.limiterOf()
	r := rateSetting{v, unitMb}
	if o.hasDataRates() {
		var msg string
		r, msg = dataRate(inv, l, v)
		if msg != "" {
			return badUse(out, msg)
		}
	}
	if n.Throttle == nil {
		n.Throttle = map[limiter]rateSetting{}
	}
	n.Throttle[l] = r
	st.rerate(n, now)
	return ExitOK
}

// dataRate is what 4.1's setters store for v, or the IllegalArgumentException text
// they throw (4.1 DatabaseDescriptor setStreamThroughputOutbound*, DataRateSpec; §1.4):
// -e and -m together, too large for the unit, negative.
func dataRate(inv invocation, l limiter, v int64) (rateSetting, string) {
	const maxInt = math.MaxInt32
	switch {
	case inv.entire && inv.mib:
		return rateSetting{}, "You cannot use -e and -m at the same time"
	case inv.entire && v == maxInt:
		return rateSetting{}, fmt.Sprintf("%s: %d is too large; it should be less than %d in MiB/s", l.yamlName(), v, maxInt)
	case inv.mib && float64(v)*8.388608 >= maxInt:
		return rateSetting{}, fmt.Sprintf("%s: %d is too large; it should be less than %d in megabits/s", l.yamlName(), v, maxInt)
	case !inv.entire && !inv.mib && v >= maxInt:
		return rateSetting{}, fmt.Sprintf("Invalid data rate: %d megabits per second; stream_throughput_outbound and inter_dc_stream_throughput_outbound should be between 0 and %d in megabits per second", v, maxInt-1)
	case v < 0:
		return rateSetting{}, "Invalid data rate: value must be non-negative"
	case inv.entire || inv.mib:
		return rateSetting{v, unitMiBps}, ""
	}
	return rateSetting{v * 125000, unitBps}, "" // megabitsPerSecondInBytesPerSecond
}

// streamThroughput runs a throughput command on a reachable or unreachable node.
func (s *Store) streamThroughput(pod string, inv invocation, stdout, stderr io.Writer) int {
	var out, errOut strings.Builder
	code := ExitOK
	do := s.read
	if isThroughputSet(inv.cmd) {
		do = s.update
	}
	err := do(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		switch {
		case !n.jvmUp():
			connectError(&errOut, st.Options, inv)
			code = ExitUsage
		case isThroughputSet(inv.cmd):
			code = st.setThroughput(&out, n, inv, now)
		default:
			code = st.getThroughput(&out, &errOut, n, inv)
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
