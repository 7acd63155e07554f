package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// run executes one plugin command against the fake world as a fresh process would,
// dying right after side effect crashAt (0 = never).
func run(w *world.World, crashAt int, args ...string) (stdout, stderr string, code int, crashed bool) {
	return runCtx(context.Background(), w, crashAt, args...)
}

// runCtx is run with a context (cancelling it is what SIGINT/SIGTERM do).
func runCtx(parent context.Context, w *world.World, crashAt int, args ...string) (stdout, stderr string, code int, crashed bool) {
	return runExec(parent, w, w, crashAt, args...)
}

// runWith is run with another pod exec in front of the world's (to count calls).
func runWith(w *world.World, ex nodetool.Execer, args ...string) (stdout, stderr string, code int) {
	stdout, stderr, code, _ = runExec(context.Background(), w, ex, 0, args...)
	return stdout, stderr, code
}

func runExec(parent context.Context, w *world.World, ex nodetool.Execer, crashAt int, args ...string) (stdout, stderr string, code int, crashed bool) {
	return runIO(parent, w, ex, crashAt, nil, args...)
}

// runUntilStderr is run interrupted (as by Ctrl-C) as soon as its stderr contains
// marker: the interruption follows an event of the run, never a wall-clock deadline.
func runUntilStderr(w *world.World, marker string, args ...string) (stdout, stderr string, code int) {
	// The backstop only ends a run whose marker never comes (the test then fails on
	// what it printed); the marker is what ends it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stdout, stderr, code, _ = runIO(ctx, w, w, 0, &onStderr{markers: []string{marker}, fn: cancel}, args...)
	return stdout, stderr, code
}

// runOnStderr is run calling fn once, as soon as its stderr contains one of markers (a
// change of the world made in answer to what the run reported, not after a sleep).
func runOnStderr(w *world.World, markers []string, fn func(), args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a backstop, as above
	defer cancel()
	stdout, stderr, code, _ = runIO(ctx, w, w, 0, &onStderr{markers: markers, fn: fn}, args...)
	return stdout, stderr, code
}

// onStderr calls fn once the text written to it contains one of markers.
type onStderr struct {
	mu      sync.Mutex
	seen    bytes.Buffer
	markers []string
	fn      func()
	fired   bool
}

func (c *onStderr) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen.Write(p)
	for _, m := range c.markers {
		if !c.fired && strings.Contains(c.seen.String(), m) {
			c.fired = true
			c.fn()
		}
	}
	return len(p), nil
}

// runIO is runExec whose stderr is also written to errTee (when not nil).
func runIO(parent context.Context, w *world.World, ex nodetool.Execer, crashAt int, errTee io.Writer, args ...string) (stdout, stderr string, code int, crashed bool) {
	return runBuild(parent, w, repair.Operator{Plugin: casskop.Plugin{}}, ex, crashAt, errTee, args...)
}

// runBuild is runIO by a build of the plugin that supports op (main.go composes
// repair.Operator{casskop.Plugin{}}).
func runBuild(parent context.Context, w *world.World, op operator.Operator, ex nodetool.Execer, crashAt int, errTee io.Writer, args ...string) (stdout, stderr string, code int, crashed bool) {
	return runOperators(parent, w, []operator.Operator{op}, ex, crashAt, errTee, args...)
}

// runOperators is runBuild for a build of several operators, in main.go's order.
func runOperators(parent context.Context, w *world.World, ops []operator.Operator, ex nodetool.Execer, crashAt int, errTee io.Writer, args ...string) (stdout, stderr string, code int, crashed bool) {
	var out, errb bytes.Buffer
	var errOut io.Writer = &errb
	if errTee != nil {
		errOut = io.MultiWriter(&errb, errTee)
	}
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: errOut}, ops...)
	o.Clients = &kube.Clients{Kube: w.Kube, Dynamic: w.Dyn, Discovery: w.Kube.Discovery(), Namespace: w.NS}
	o.Execer = ex
	pid := w.StartProcess()
	defer w.EndProcess(pid)
	o.Identity = func() record.Holder {
		return record.Holder{Host: "test-host", PID: pid, Session: fmt.Sprintf("s%d", pid), LeaseSeconds: 60}
	}
	o.Alive = w.ProcessAlive
	o.Now, o.After = jumpingClock(time.Now)
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	if needsRunFlags(args) {
		// Defaults a test may set itself (the dead-end search waits less).
		for _, f := range [][2]string{{"--poll-interval", "1ms"}, {"--timeout", "20s"}} {
			if !slices.Contains(args, f[0]) {
				args = append(args, f[0], f[1])
			}
		}
	}
	crashed = w.Process(crashAt, func() { code = o.Execute(ctx, args) })
	return out.String(), errb.String(), code, crashed
}

func needsRunFlags(args []string) bool {
	return len(args) > 0 && (args[0] == "scale" || args[0] == "resume" || args[0] == "restart" || args[0] == "repair-operator-state" || args[0] == "abort" || args[0] == "replace-node")
}

// jumpingClock is base plus the time waited so far: After does not wait, it moves the
// clock on by d (a lease wait of a test run takes no time).
func jumpingClock(base func() time.Time) (now func() time.Time, after func(time.Duration) <-chan time.Time) {
	var mu sync.Mutex
	var waited time.Duration
	now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return base().Add(waited)
	}
	after = func(d time.Duration) <-chan time.Time {
		mu.Lock()
		waited += d
		mu.Unlock()
		c := make(chan time.Time, 1)
		c <- now()
		return c
	}
	return now, after
}

// testKinds are the operation kinds of the plugin as main composes it, for tests that
// read or write a checkpoint themselves.
func testKinds() checkpoint.Schemas {
	return NewOptions(genericiooptions.NewTestIOStreamsDiscard(), repair.Operator{Plugin: casskop.Plugin{}}).Kinds.Schemas()
}

// lineWith is the first line of s holding sub (else s's last line).
func lineWith(s, sub string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if sub != "" && strings.Contains(l, sub) {
			return l
		}
	}
	return lines[len(lines)-1]
}

// shortLine is lineWith cut short, for a test's messages.
func shortLine(s, sub string) string {
	l := lineWith(s, sub)
	if len(l) > 300 {
		return l[:300] + "…"
	}
	return l
}
