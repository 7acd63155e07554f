package nodetool

import (
	"context"
	"fmt"
	"strings"
	"time"

	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
)

// Execer runs a command in a pod's Cassandra container, argv only (no shell).
type Execer interface {
	Exec(ctx context.Context, pod string, argv []string) (stdout, stderr string, err error)
}

// Client runs nodetool commands through an Execer.
type Client struct {
	Exec Execer
	// Retry, when set, tells whether a read (status, netstats, info, describecluster)
	// that failed may be asked again after a short pause: a broken exec stream or a busy
	// API server, never nodetool's own answer. Reads change nothing, so asking again is
	// harmless; decommission, drain and cleanup are never asked twice here.
	Retry func(error) bool
	// Auth, when set, gives the JMX credentials every call passes (nil credentials:
	// none). It is asked on each call, so a Secret is read only when nodetool runs.
	Auth func(context.Context) (*Credentials, error)
}

// readAttempts bounds how often one read is asked; readBackoff is the pause before the
// second attempt (doubled before the third).
const (
	readAttempts = 3
	readBackoff  = 200 * time.Millisecond
)

// argv is the command line for `nodetool args...`: through env, with LANG=C so numbers
// print with a dot, and the JVM option that newer JDKs need for nodetool's JMX URL
// (CASSANDRA-17581).
func argv(args ...string) []string {
	return append([]string{"env", "LANG=C", "JAVA_TOOL_OPTIONS=-Dcom.sun.jndi.rmiURLParsing=legacy", "nodetool"}, args...)
}

func (c Client) run(ctx context.Context, pod string, args ...string) (string, string, error) {
	return c.exec(ctx, pod, args)
}

// read runs a command that only reads, asking again (see Retry) when the exec failed
// for a passing reason.
func (c Client) read(ctx context.Context, pod string, args ...string) (string, string, error) {
	pause := readBackoff
	for attempt := 1; ; attempt++ {
		out, errOut, err := c.run(ctx, pod, args...)
		if err == nil || c.Retry == nil || attempt == readAttempts || ctx.Err() != nil || !c.Retry(err) {
			return out, errOut, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return out, errOut, err
		case <-t.C:
		}
		pause *= 2
	}
}

func execFailure(pod, cmd, stdout, stderr string, err error) error {
	for _, out := range []string{stderr, stdout} {
		if i := strings.Index(out, "nodetool: Failed to connect"); i >= 0 {
			if line := clientFirstLine(out[i:]); strings.Contains(line, "SecurityException") {
				// Cassandra runs and refused the credentials: not "unreachable", which
				// callers read as "its process is not running" (see AuthError).
				return &AuthError{Pod: pod, Message: line}
			}
			return &pub.UnreachableError{Pod: pod, Message: clientFirstLine(out[i:])}
		}
	}
	// Skip the JVM's own lines ("Picked up JAVA_TOOL_OPTIONS: ...") to reach the error.
	msg := firstErrorLine(stderr)
	if msg == "" {
		msg = firstErrorLine(stdout)
	}
	if msg != "" {
		return fmt.Errorf("nodetool %s on %s failed: %s (%v)", cmd, pod, msg, err)
	}
	return fmt.Errorf("nodetool %s on %s failed: %w", cmd, pod, err)
}

// Status reads the ring as seen from pod.
func (c Client) Status(ctx context.Context, pod string) (pub.Ring, error) {
	return readParsed(ctx, c, pod, "status", ParseStatus)
}

// Netstats reads the operation mode of the node in pod.
func (c Client) Netstats(ctx context.Context, pod string) (Netstats, error) {
	return readParsed(ctx, c, pod, "netstats", ParseNetstats)
}

// Info reads `nodetool info` of the node in pod.
func (c Client) Info(ctx context.Context, pod string) (Info, error) {
	return readParsed(ctx, c, pod, "info", ParseInfo)
}

// DescribeCluster reads `nodetool describecluster` from pod.
func (c Client) DescribeCluster(ctx context.Context, pod string) (ClusterDescription, error) {
	return readParsed(ctx, c, pod, "describecluster", ParseDescribeCluster)
}

// readParsed runs the read-only `nodetool cmd` on pod and parses what it printed.
func readParsed[T any](ctx context.Context, c Client, pod, cmd string, parse func(string) (T, error)) (T, error) {
	var zero T
	out, errOut, err := c.read(ctx, pod, cmd)
	if err != nil {
		return zero, execFailure(pod, cmd, out, errOut, err)
	}
	v, err := parse(out)
	if err != nil {
		return zero, fmt.Errorf("nodetool %s on %s: %w", cmd, pod, err)
	}
	return v, nil
}

// Decommission runs `nodetool decommission` on pod and classifies the answer. It blocks
// for as long as the decommission runs (or until ctx ends). The outcome is never proof
// of the node's state, except OutcomeRefused and OutcomeFailed: read the state after.
func (c Client) Decommission(ctx context.Context, pod string, force bool) (Outcome, string) {
	args := []string{"decommission"}
	if force {
		args = append(args, "--force")
	}
	out, errOut, err := c.run(ctx, pod, args...)
	return ClassifyDecommission(out, errOut, err)
}

func clientFirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
