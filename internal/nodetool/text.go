package nodetool

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// splitLines splits nodetool output into lines without their "\n" or "\r\n" ending.
// Trailing whitespace is kept: the status parser needs column positions.
func splitLines(out string) []string {
	out = strings.TrimSuffix(out, "\n")
	if out == "" {
		return nil
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// jvmNoise matches what the JVM itself prints around nodetool's output: the echo of
// JAVA_TOOL_OPTIONS (the exec client always sets it), VM warnings, and the JDK 9-16
// illegal-reflective-access banner. None of it is nodetool's answer.
var jvmNoise = lazyRE(`^(?:(?:NOTE: )?Picked up [A-Z_]+: ` +
	`|(?:OpenJDK|Java HotSpot\(TM\)) (?:64-Bit )?(?:Server|Client) VM warning: ` +
	`|WARNING: (?:An illegal reflective access operation has occurred|Illegal reflective access by |` +
	`Please consider reporting this to the maintainers|Use --illegal-access=warn|All illegal access operations will be denied))`)

// isJVMNoise reports whether a (right-trimmed) line is JVM chatter rather than nodetool output.
func isJVMNoise(line string) bool {
	if line == "" || !strings.ContainsRune("NPOJW", rune(line[0])) {
		return false // cheap exit for the common case; the regexp decides the rest
	}
	return jvmNoise().MatchString(line)
}

// errorish matches the first line of an answer that is an error instead of the
// requested output: nodetool's own messages, `Error:` lines, Java exceptions.
var errorish = lazyRE(`^(?:nodetool: |error: |Error: |Exception in thread |Caused by: |-- StackTrace --$|` +
	`[a-z][a-z0-9_]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)+(?:Exception|Error)\b)`)

// firstErrorLine returns the first line of out that looks like an error, trimmed, or "".
func firstErrorLine(out string) string {
	for _, l := range splitLines(out) {
		l = strings.TrimSpace(l)
		if errorish().MatchString(l) && l != "-- StackTrace --" {
			return l
		}
	}
	return ""
}

// uuidPattern is a UUID as java.util.UUID.toString() prints it (lower case, though
// upper case is accepted).
const uuidPattern = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`

var uuidRE = lazyRE(`^` + uuidPattern + `$`)

// quote shortens a line for an error message and quotes it.
func quote(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}

// lazyRE compiles pattern on first use. Every command of the plugin loads this package,
// but most parse no nodetool output: compiling all 27 patterns at start-up took about
// 1 ms of each run's start (measured with GODEBUG=inittrace=1).
func lazyRE(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
