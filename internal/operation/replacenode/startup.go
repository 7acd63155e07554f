package replacenode

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// A replacement that breaks a precondition prints "Exception (<class>) encountered
// during startup: <message>" and its JVM exits 3 (docs/how-it-works/replace.md §4.2); the
// container restarts, in a loop. The run reports Cassandra's own line, read from the
// terminated container's message (terminationMessagePolicy FallbackToLogsOnError) or
// its log, says what state things are in and how to go on.

// startupExit is the exit status of a JVM that failed to start (exitOrFail(3, …)).
const startupExit = 3

// startFailure is a Fatal error when the new pod's Cassandra container exited 3 with a
// startup error that does not go away by itself; nil otherwise (it runs, or restarts
// for another reason). A start refused while the ring changes (R7) is retried by the
// kubelet and succeeds once the other node is done: it is what the wait waits for.
func (s *waitReplaced) startFailure(ctx context.Context, p *corev1.Pod) error {
	se, ok := s.startupError(ctx, p)
	return s.fatalStart(p, se, ok)
}

// fatalStart is startFailure's judgement of a startup error already read.
func (s *waitReplaced) fatalStart(p *corev1.Pod, se nodetool.StartupError, ok bool) error {
	if !ok || se.Cause == nodetool.CauseRingChanging {
		return nil
	}
	return &operation.Fatal{Code: exit.Error, Err: fmt.Errorf("the replacement on pod %s does not start: Cassandra says %q (%s). %s",
		p.Name, se.Line, se.Cause, s.advice(se))}
}

// startupError is the startup error the new pod's Cassandra container last exited on,
// while it is not running.
func (s *waitReplaced) startupError(ctx context.Context, p *corev1.Pod) (nodetool.StartupError, bool) {
	if p == nil {
		return nodetool.StartupError{}, false
	}
	term := lastExit(p, s.w.Container)
	if term == nil || term.ExitCode != startupExit {
		return nodetool.StartupError{}, false
	}
	text := term.Message
	if _, ok := nodetool.ParseStartupError(text); !ok {
		text = s.previousLog(ctx, p)
	}
	return nodetool.ParseStartupError(text)
}

// lastExit is how the container last terminated while it is not running (terminated,
// or waiting to restart): a start that failed once and then came up (a ring that
// stopped changing, R7) is running now, and no failure.
func lastExit(p *corev1.Pod, container string) *corev1.ContainerStateTerminated {
	for _, c := range p.Status.ContainerStatuses {
		if c.Name != container {
			continue
		}
		if c.State.Running != nil {
			return nil
		}
		if c.State.Terminated != nil {
			return c.State.Terminated
		}
		return c.LastTerminationState.Terminated
	}
	return nil
}

// previousLog is the log of the container's previous run ("" when unreadable).
func (s *waitReplaced) previousLog(ctx context.Context, p *corev1.Pod) string {
	raw, err := s.w.Kube.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: s.w.Container, Previous: true}).DoRaw(ctx)
	if err != nil {
		return ""
	}
	return string(raw)
}

// advice says what state things are in after a startup error, and how to go on.
func (s *waitReplaced) advice(se nodetool.StartupError) string {
	cp := s.w.CP
	state := fmt.Sprintf("The dead node's claims and pod were deleted; pod %s restarts in a loop and the dead node (Host ID %s) is still in the ring.", s.rep.Pod, s.rep.HostID)
	next := fmt.Sprintf("Fix the cause, then resume (kubectl cassandra resume -n %s %s): the new pod retries on its next start.", cp.Namespace, cp.Cluster)
	switch se.Cause {
	case nodetool.CauseLiveNode:
		next = "Cassandra still sees the dead node alive (R8): make sure its process is gone everywhere, then resume: " + next
	case nodetool.CauseRingChanging:
		next = "Another node is joining, leaving or moving (R7): let it finish, then resume. " + next
	case nodetool.CauseNoBootstrap:
		next = "The replacement would not bootstrap (R3: it is in its own seed list, or auto_bootstrap is false): take it off its own seed list, or set auto_bootstrap: true. " + next
	case nodetool.CauseUnknownAddress:
		next = fmt.Sprintf("Gossip no longer knows %s (R4: someone removed or assassinated it meanwhile), so there is nothing left to replace: take the replace option out of the pod's start (CassKop: this operation's block in pre_run.sh) and delete the pod; it then bootstraps as a new node with as many tokens, and resume finishes.", s.rep.Address)
	case nodetool.CauseNoSources:
		next = "A range has no live replica to stream from (R11): bring the other replicas up, then resume. " + next
	case nodetool.CauseEarlierData:
		next = "Cassandra 5.0 found data of an earlier bootstrap (§4.6): delete the new pod's data claim and pod so it starts fresh, then resume. " + next
	}
	return state + " " + strings.TrimSpace(next)
}

// errorsAs is errors.As (kept short in the wait loop).
func errorsAs(err error, target any) bool { return errors.As(err, target) }
