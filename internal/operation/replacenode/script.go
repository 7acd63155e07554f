package replacenode

import (
	"fmt"
	"regexp"
	"strings"
)

// The replace option reaches one pod of a CassKop cluster through the pre_run.sh of its
// ConfigMap, which the bootstrap init container of every pod runs under `set -e` on
// every start (docs/how-it-works/replace.md §7.2). The operation's block therefore exits 0
// on every other pod (§7.3: CassKop's own one-liner exits 1 there and breaks them), and
// appends the option to the one file the cluster's version reads (§7.3: jvm.options is
// read by 3.11 only). The block is marked with the operation's ID, so that it is found
// again by any run and taken out leaving the rest of the user's script as it was.

// scriptHead starts a pre_run.sh the operation creates (bootstrap.sh executes the file).
const scriptHead = "#!/bin/sh\n"

// shellSafe are the pod names and addresses the block quotes: nothing a shell or the
// quotes could take for syntax.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)

// marks are the first and last lines of the operation's block.
func marks(opID string) (begin, end string) {
	return "# kubectl-cassandra replace-node " + opID + ": begin", "# kubectl-cassandra replace-node " + opID + ": end"
}

// block is the operation's part of the script: on pod, append the replace option for
// address to file; elsewhere, nothing (exit 0).
func block(opID, pod, address, file string) (string, error) {
	for _, v := range []string{pod, address, file} {
		if !shellSafe.MatchString(strings.ReplaceAll(v, "/", "")) {
			return "", fmt.Errorf("%q cannot be written into a shell script safely", v)
		}
	}
	begin, end := marks(opID)
	return fmt.Sprintf("%s\nif [ \"$(hostname)\" = '%s' ]; then\n  echo '-Dcassandra.replace_address_first_boot=%s' >> %s\nfi\n%s\n",
		begin, pod, address, file, end), nil
}

// withBlock is content (exists: the key is there) with b appended, unless it holds the
// operation's block already.
func withBlock(content string, exists bool, opID, b string) string {
	if hasBlock(content, opID) {
		return content
	}
	if !exists || content == "" {
		return scriptHead + b
	}
	if !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	return content + b
}

// hasBlock reports whether content holds the operation's block, both marks.
func hasBlock(content, opID string) bool {
	begin, end := marks(opID)
	i := strings.Index(content, begin)
	return i >= 0 && strings.Contains(content[i:], end)
}

// withoutBlock is content without the operation's block; empty is true when nothing
// but the head the operation wrote is left (the key can go).
func withoutBlock(content, opID string) (rest string, empty bool) {
	begin, end := marks(opID)
	i := strings.Index(content, begin)
	if i < 0 {
		return content, false
	}
	j := strings.Index(content[i:], end)
	if j < 0 {
		return content, false
	}
	stop := i + j + len(end)
	if stop < len(content) && content[stop] == '\n' {
		stop++
	}
	rest = content[:i] + content[stop:]
	return rest, rest == scriptHead || strings.TrimSpace(rest) == ""
}

// optionFile is the jvm options file in dir that Cassandra of version reads (§7.3:
// 3.x reads jvm.options; 4.0+ read jvm-server.options and jvm<N>-server.options, the
// first whatever the JVM).
func optionFile(dir, version string) string {
	if strings.HasPrefix(version, "3.") || strings.HasPrefix(version, "2.") {
		return dir + "/jvm.options"
	}
	return dir + "/jvm-server.options"
}

// beginMark matches the first line of a block, and names its operation.
var beginMark = regexp.MustCompile(`(?m)^# kubectl-cassandra replace-node (\S+): begin$`)

// blockIDs lists the operations whose blocks content holds (both marks), in order.
func blockIDs(content string) []string {
	var out []string
	for _, m := range beginMark.FindAllStringSubmatch(content, -1) {
		if hasBlock(content, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}
