package sim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func runIn(s *Store, pod, stdin string, args ...string) result {
	var out, errb bytes.Buffer
	code := s.RunInput(context.Background(), pod, args, strings.NewReader(stdin), &out, &errb)
	return result{out.String(), errb.String(), code}
}

// TestJMXAuth: with JMX authentication on, nodetool without -u, or with a wrong
// password, is refused as connect() prints a SecurityException (stderr, exit 1, the
// JDK's texts); the right credentials by -pw, by -pwf on stdin or in a file work; help
// needs no connection; a JVM that is down answers the connect error first; a missing
// password file is nodetool's RuntimeException (exit 2).
func TestJMXAuth(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			s := NewMemory(Options{Version: v}, threeNodes(), newClock().Now)
			require.NoError(t, s.SetJMXAuth(&JMXAuth{Username: "jmx", Password: "s3cret"}))
			required := result{"", "nodetool: Failed to connect to '127.0.0.1:7199' - SecurityException: 'Authentication failed! Credentials required'.\n", 1}
			invalid := result{"", "nodetool: Failed to connect to '127.0.0.1:7199' - SecurityException: 'Authentication failed! Invalid username or password'.\n", 1}
			require.Equal(t, required, run(s, podA, "status"))
			require.Equal(t, required, run(s, podA, "decommission"))
			require.Equal(t, 0, view(t, s, podA).DecommissionsStarted)
			require.Equal(t, invalid, run(s, podA, "-u", "jmx", "-pw", "nope", "status"))
			require.Equal(t, invalid, run(s, podA, "-u", "jmx", "status")) // no console: empty password
			require.Equal(t, invalid, runIn(s, podA, "other s3cret\n", "-u", "jmx", "-pwf", StdinPath, "info"))
			require.Equal(t, 0, run(s, podA, "-u", "jmx", "-pw", "s3cret", "status").code)
			ok := runIn(s, podA, "jmx s3cret\n", "-u", "jmx", "-pwf", StdinPath, "status")
			require.Equal(t, 0, ok.code, ok.stderr)
			require.Contains(t, ok.stdout, "Datacenter: dc1")
			file := filepath.Join(t.TempDir(), "jmxremote.password")
			require.NoError(t, os.WriteFile(file, []byte("monitor x\njmx   s3cret\n"), 0o600))
			require.Equal(t, 0, run(s, podA, "--username=jmx", "--password-file="+file, "netstats").code)
			missing := run(s, podA, "-u", "jmx", "-pwf", "/nonexistent", "status")
			require.Equal(t, 2, missing.code)
			require.True(t, strings.HasPrefix(missing.stderr, "error: /nonexistent (No such file or directory)\n-- StackTrace --\n"), missing.stderr)
			require.Equal(t, 0, run(s, podA, "help").code)
			require.NoError(t, s.SetFault(podB, Fault{Down: true}))
			require.Contains(t, run(s, podB, "status").stderr, "ConnectException")
			require.NoError(t, s.SetJMXAuth(nil))
			require.Equal(t, 0, run(s, podA, "status").code)
		})
	}
}
