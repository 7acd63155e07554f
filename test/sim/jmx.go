package sim

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// JMXAuth turns on JMX authentication (LOCAL_JMX=no with
// com.sun.management.jmxremote.authenticate=true, docs/how-it-works/nodetool.md §1): nodetool must give
// this user and password, with -u and -pw or -pwf.
type JMXAuth struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// SetJMXAuth turns JMX authentication on (nil: off) for every node.
func (s *Store) SetJMXAuth(a *JMXAuth) error {
	return s.update(func(st *state, _ time.Time) error {
		st.Options.JMX = a
		return nil
	})
}

// StdinPath is the password file that names nodetool's standard input.
const StdinPath = "/dev/stdin"

// authenticate is what NodeTool.NodeToolCmd.run() and connect() do before a command
// reaches the server (apache/cassandra src/java/org/apache/cassandra/tools/NodeTool.java,
// the same in 3.11–5.0): with -u, the password comes from -pwf (the first line whose
// first token is the user, readUserPasswordFromFile's Scanner on \s+) or -pw; without
// either it would be prompted through System.console(), which kubectl exec without -t
// does not have, so it stays empty. The JMX server's authenticator then refuses with the
// JDK's texts (com.sun.jmx.remote.security.JMXPluggableAuthenticator: "Credentials
// required" when no -u, FileLoginModule's "Invalid username or password" otherwise), and
// connect() prints them on stderr and exits 1 (docs/how-it-works/nodetool.md §1, "Auth failure").
//
// It returns the exit code, ExitOK when the command may go on.
func authenticate(o Options, inv invocation, stdin io.Reader, stderr io.Writer) int {
	if o.JMX == nil {
		return ExitOK
	}
	password := inv.password
	if inv.username != "" && inv.passwordFile != "" {
		p, err := readPasswordFile(inv.username, inv.passwordFile, stdin)
		if err != nil {
			// A RuntimeException around the FileNotFoundException: NodeTool.err prints
			// the root cause's message and the trace, exit 2.
			msg := inv.passwordFile + " (No such file or directory)"
			fmt.Fprintf(stderr, "error: %s\n-- StackTrace --\njava.lang.RuntimeException: java.io.FileNotFoundException: %s\n"+
				"\tat org.apache.cassandra.tools.NodeTool$NodeToolCmd.readUserPasswordFromFile(NodeTool.java:320)\n"+
				"\tat org.apache.cassandra.tools.NodeTool$NodeToolCmd.run(NodeTool.java:286)\n"+
				"\tat org.apache.cassandra.tools.NodeTool.execute(NodeTool.java:255)\n"+
				"\tat org.apache.cassandra.tools.NodeTool.main(NodeTool.java:64)\n"+
				"Caused by: java.io.FileNotFoundException: %s\n\n", msg, msg, msg)
			return ExitFailure
		}
		password = p
	}
	reason := ""
	switch {
	case inv.username == "":
		reason = "Authentication failed! Credentials required"
	case inv.username != o.JMX.Username || password != o.JMX.Password:
		reason = "Authentication failed! Invalid username or password"
	default:
		return ExitOK
	}
	fmt.Fprintf(stderr, "nodetool: Failed to connect to '%s:%s' - SecurityException: '%s'.\n", inv.host, inv.port, reason)
	return ExitUsage
}

// readPasswordFile reads a jmxremote.password-style file: "<user> <password>" lines,
// up to the first line of user only, as readUserPasswordFromFile's Scanner does: it
// stops there, so a password given on a stdin that is never closed (an exec whose
// client keeps its stream open) is read without waiting for its end. StdinPath reads
// stdin when the caller has one (the in-memory store; the nodetool-sim binary opens the
// path itself, which is its own standard input).
func readPasswordFile(user, path string, stdin io.Reader) (string, error) {
	r := stdin
	if path != StdinPath || stdin == nil {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == user {
			return f[1], nil
		}
	}
	return "", sc.Err()
}
