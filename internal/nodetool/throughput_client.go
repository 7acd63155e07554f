package nodetool

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Version reads `nodetool version` of the node in pod.
func (c Client) Version(ctx context.Context, pod string) (Version, error) {
	return readParsed(ctx, c, pod, "version", ParseVersionOutput)
}

// ReadThroughput reads limiter l of the node in pod, which runs Cassandra v.
func (c Client) ReadThroughput(ctx context.Context, pod string, v Version, l Limiter) (Throughput, error) {
	args, err := GetThroughputArgs(v, l)
	if err != nil {
		return Throughput{}, err
	}
	cmd := strings.Join(args, " ")
	out, errOut, err := c.read(ctx, pod, args...)
	if err != nil {
		if _, perr := ParseThroughput(errOut); errors.Is(perr, ErrPreciseFlagNeeded) {
			return Throughput{}, fmt.Errorf("nodetool %s on %s: %w", cmd, pod, perr)
		}
		return Throughput{}, execFailure(pod, cmd, out, errOut, err)
	}
	r, err := ParseThroughput(out)
	if err != nil {
		return Throughput{}, fmt.Errorf("nodetool %s on %s: %w", cmd, pod, err)
	}
	if r.Limiter != l {
		return Throughput{}, fmt.Errorf("nodetool %s on %s: read the %s limiter, asked for %s", cmd, pod, r.Limiter, l)
	}
	return r.Throughput, nil
}

// SetThroughput sets limiter l of the node in pod (Cassandra v) to t. It changes that
// node only, until its JVM restarts (docs/how-it-works/streaming.md §1.5). A rate v cannot
// take is an *InexpressibleRateError before anything runs. Like every write, it is
// asked once (no Retry).
func (c Client) SetThroughput(ctx context.Context, pod string, v Version, l Limiter, t Throughput) error {
	args, err := SetThroughputArgs(v, l, t)
	if err != nil {
		return err
	}
	cmd := strings.Join(args, " ")
	out, errOut, err := c.run(ctx, pod, args...)
	if err != nil {
		return execFailure(pod, cmd, out, errOut, err)
	}
	// Success prints nothing (§1.4); an answer that is an error is one, whatever the exit.
	if e := firstErrorLine(out + "\n" + errOut); e != "" {
		return fmt.Errorf("nodetool %s on %s failed: %s", cmd, pod, e)
	}
	return nil
}
