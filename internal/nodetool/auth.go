package nodetool

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
)

// Credentials are a JMX user and password, for Cassandra run with JMX authentication
// (LOCAL_JMX=no and jmxremote.authenticate=true).
type Credentials struct {
	Username, Password string
}

// Streamer runs a command in a pod like Execer, feeding it stdin (nil: none) and copying
// its output as it comes; a non-zero exit is an error carrying the code (kube.ExitCode).
type Streamer interface {
	Stream(ctx context.Context, pod string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// PasswordFile is the password file nodetool is told to read (-pwf): its own standard
// input, which the exec fills with "<user> <password>". So the password is never in
// argv, which is in the exec request's URL (the API server's audit log), in the
// process list of the container, and in any error that quotes the command.
const PasswordFile = "/dev/stdin"

// authArgs are nodetool's global options for c; the user name is not secret (nodetool
// finds the password file's line by it).
func authArgs(c Credentials) []string {
	return []string{"-u", c.Username, "-pwf", PasswordFile}
}

// check refuses credentials that nodetool's password file cannot carry: it splits lines
// on white space (readUserPasswordFromFile's Scanner on \s+).
func (c Credentials) check() error {
	if c.Username == "" {
		return fmt.Errorf("the JMX secret has an empty username")
	}
	if strings.ContainsAny(c.Username+c.Password, " \t\r\n\f\v") {
		return fmt.Errorf("the JMX username or password contains white space, which nodetool's password file (-pwf) cannot carry")
	}
	return nil
}

// command is the argv for `nodetool args...` and the stdin it needs ("" when none).
func (c Client) command(ctx context.Context, args []string) ([]string, string, error) {
	if c.Auth == nil {
		return argv(args...), "", nil
	}
	cred, err := c.Auth(ctx)
	if err != nil {
		return nil, "", err
	}
	if cred == nil {
		return argv(args...), "", nil
	}
	if err := cred.check(); err != nil {
		return nil, "", err
	}
	return argv(append(authArgs(*cred), args...)...), cred.Username + " " + cred.Password + "\n", nil
}

// exec runs `nodetool args...` with the credentials, if any, on stdin.
func (c Client) exec(ctx context.Context, pod string, args []string) (string, string, error) {
	argv, stdin, err := c.command(ctx, args)
	if err != nil {
		return "", "", err
	}
	if stdin == "" {
		return c.Exec.Exec(ctx, pod, argv)
	}
	s, ok := c.Exec.(Streamer)
	if !ok {
		return "", "", fmt.Errorf("this pod exec cannot give nodetool its JMX password on stdin")
	}
	var out, errOut bytes.Buffer
	err = s.Stream(ctx, pod, argv, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

// Stream runs `nodetool args...` in pod with the environment and credentials of the
// plugin's own calls, copying its output to stdout and stderr as it comes (`kubectl
// cassandra nodetool`). nodetool's non-zero exit is an error carrying its code.
func (c Client) Stream(ctx context.Context, pod string, stdout, stderr io.Writer, args ...string) error {
	argv, stdin, err := c.command(ctx, args)
	if err != nil {
		return err
	}
	s, ok := c.Exec.(Streamer)
	if !ok {
		if stdin != "" {
			return fmt.Errorf("this pod exec cannot give nodetool its JMX password on stdin")
		}
		out, errOut, err := c.Exec.Exec(ctx, pod, argv)
		_, _ = io.WriteString(stdout, out)
		_, _ = io.WriteString(stderr, errOut)
		return err
	}
	var in io.Reader
	if stdin != "" {
		in = strings.NewReader(stdin)
	}
	return s.Stream(ctx, pod, argv, in, stdout, stderr)
}

// Output runs a read-only `nodetool args...` (asked again like the other reads when the
// exec broke) and returns what it printed, for the diagnostics report; a failure says
// why as the typed reads do (*UnreachableError, *AuthError).
func (c Client) Output(ctx context.Context, pod string, args ...string) (stdout, stderr string, err error) {
	stdout, stderr, err = c.read(ctx, pod, args...)
	if err != nil {
		err = execFailure(pod, strings.Join(args, " "), stdout, stderr, err)
	}
	return stdout, stderr, err
}

// Redact masks the values of nodetool's password options in argv, for any message that
// quotes a command line (the plugin's own never carry one: see PasswordFile).
func Redact(argv []string) []string {
	out := append([]string(nil), argv...)
	for i := 0; i < len(out); i++ {
		switch a := out[i]; {
		case a == "-pw" || a == "--password":
			if i+1 < len(out) {
				out[i+1] = "REDACTED"
				i++
			}
		case strings.HasPrefix(a, "--password="):
			out[i] = "--password=REDACTED"
		}
	}
	return out
}

// AuthError means nodetool reached Cassandra's JMX port and was refused by its
// authentication ("SecurityException: 'Authentication failed! …'", see auth_test.go): the
// node runs, its state is unknown. It is never an *UnreachableError, which callers take
// for a stopped Cassandra (restart's pod deletion, a decommissioned node that left).
type AuthError struct {
	Pod, Message string
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("nodetool on %s was refused by Cassandra's JMX authentication: %s (give the credentials with --jmx-secret SECRET, a Secret with keys username and password)", e.Pod, e.Message)
}
