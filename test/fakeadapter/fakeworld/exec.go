package fakeworld

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"
)

// Exec runs the simulated nodetool "in" a pod (nodetool.Execer); a decommission, drain
// or cleanup is a side effect, recorded in History.
func (w *World) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	if _, err := w.Kube.Tracker().Get(podsGVR(), w.NS, pod); err != nil {
		return "", "", fmt.Errorf("exec in %s: %w", pod, err)
	}
	args := argv
	for len(args) > 0 && args[0] != "nodetool" {
		args = args[1:]
	}
	if len(args) == 0 {
		return "", "", fmt.Errorf("not a nodetool command: %v", argv)
	}
	args = args[1:]
	var out, errb bytes.Buffer
	var err error
	if code := w.Cass.Run(ctx, pod, args, &out, &errb); code != 0 {
		err = fmt.Errorf("command terminated with non-zero exit code: %d", code)
	}
	if len(args) > 0 && (args[0] == "decommission" || args[0] == "drain" || args[0] == "cleanup") {
		w.mu.Lock()
		w.recordExec(pod, args[0])
		w.mu.Unlock()
	}
	return out.String(), errb.String(), err
}

// Decommissions returns how many decommissions started leaving on pod's node and how
// many `nodetool decommission` calls it got (refused ones included).
func (w *World) Decommissions(pod string) (started, calls int) {
	w.t.Helper()
	n, err := w.Cass.Node(pod)
	if err != nil {
		w.t.Fatal(err)
	}
	return n.DecommissionsStarted, n.DecommissionCalls
}

// StartDecommission starts a decommission on pod's node as if a nodetool call reached
// Cassandra and its client was killed right after: the node goes on LEAVING for the
// world's DecommissionTime, and the call is no side effect of any run.
func (w *World) StartDecommission(pod string) {
	w.t.Helper()
	w.Cass.Run(killedClient{}, pod, []string{"decommission"}, io.Discard, io.Discard)
	if n, _ := w.Cass.Node(pod); n.Mode != "LEAVING" {
		w.t.Fatalf("the decommission of %s did not start (mode %s)", pod, n.Mode)
	}
}

// killedClient is the context of a nodetool client killed once its call is under way:
// the call reaches Cassandra (Err is nil when asked first), then the wait ends at once
// (Done is closed), as a killed JVM's does (test/sim Run).
type killedClient struct{ context.Context }

func (killedClient) Deadline() (time.Time, bool) { return time.Time{}, false }
func (killedClient) Err() error                  { return nil }
func (killedClient) Value(any) any               { return nil }
func (killedClient) Done() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
