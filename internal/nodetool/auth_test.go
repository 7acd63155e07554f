package nodetool

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/stretchr/testify/require"
)

// fakeStreamer answers like nodetool would with JMX authentication on, recording argv
// and stdin.
type fakeStreamer struct {
	argv  [][]string
	stdin []string
}

func (f *fakeStreamer) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	f.argv = append(f.argv, argv)
	return "", "nodetool: Failed to connect to '127.0.0.1:7199' - SecurityException: 'Authentication failed! Credentials required'.\n", errors.New("command terminated with non-zero exit code: 1")
}

func (f *fakeStreamer) Stream(ctx context.Context, pod string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f.argv = append(f.argv, argv)
	b, _ := io.ReadAll(stdin)
	f.stdin = append(f.stdin, string(b))
	_, _ = io.WriteString(stdout, "Mode: NORMAL\n")
	return nil
}

// TestAuthPasswordOnStdin: with credentials, the password goes on stdin in the password
// file's format and argv names only the user and /dev/stdin.
func TestAuthPasswordOnStdin(t *testing.T) {
	f := &fakeStreamer{}
	c := Client{Exec: f, Auth: func(context.Context) (*Credentials, error) {
		return &Credentials{Username: "jmx", Password: "pw-123"}, nil
	}}
	n, err := c.Netstats(context.Background(), "p")
	require.NoError(t, err)
	require.Equal(t, nodetool.ModeNormal, n.Mode)
	require.Equal(t, []string{"env", "LANG=C", "JAVA_TOOL_OPTIONS=-Dcom.sun.jndi.rmiURLParsing=legacy", "nodetool", "-u", "jmx", "-pwf", "/dev/stdin", "netstats"}, f.argv[0])
	require.Equal(t, []string{"jmx pw-123\n"}, f.stdin)

	bad := Client{Exec: f, Auth: func(context.Context) (*Credentials, error) {
		return &Credentials{Username: "jmx", Password: "two words"}, nil
	}}
	_, err = bad.Netstats(context.Background(), "p")
	require.ErrorContains(t, err, "white space")
	require.NotContains(t, err.Error(), "two words")
	require.Len(t, f.argv, 1, "nothing ran with credentials nodetool cannot read")
}

// TestAuthRefusalIsNotUnreachable: a SecurityException is an *AuthError naming
// --jmx-secret, never an *UnreachableError (read as "Cassandra is not running").
func TestAuthRefusalIsNotUnreachable(t *testing.T) {
	_, err := Client{Exec: &fakeStreamer{}}.Status(context.Background(), "p")
	var auth *AuthError
	var unreachable *nodetool.UnreachableError
	require.ErrorAs(t, err, &auth)
	require.False(t, errors.As(err, &unreachable))
	require.Contains(t, err.Error(), "--jmx-secret")
}

func TestRedact(t *testing.T) {
	got := strings.Join(Redact([]string{"nodetool", "-u", "a", "-pw", "x1", "--password", "x2", "--password=x3", "status"}), " ")
	require.Equal(t, "nodetool -u a -pw REDACTED --password REDACTED --password=REDACTED status", got)
}
