package nodetool

import "context"

// Drain runs `nodetool drain` on pod: Cassandra flushes its tables and stops listening
// (peers see it DN) until its process restarts. It prints nothing on success. A failure
// to connect is an *UnreachableError.
func (c Client) Drain(ctx context.Context, pod string) error {
	out, errOut, err := c.run(ctx, pod, "drain")
	if err != nil {
		return execFailure(pod, "drain", out, errOut, err)
	}
	return nil
}

// Cleanup runs `nodetool cleanup` on pod (every keyspace): it drops the data the node no
// longer owns after nodes joined. It blocks until done and prints nothing on success;
// running it again is harmless. A failure to connect is an *UnreachableError.
func (c Client) Cleanup(ctx context.Context, pod string) error {
	out, errOut, err := c.run(ctx, pod, "cleanup")
	if err != nil {
		return execFailure(pod, "cleanup", out, errOut, err)
	}
	return nil
}
