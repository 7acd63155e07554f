package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// The plugin's annotations on the CassandraCluster.
const (
	annCheckpoint    = fixture.AnnCheckpoint
	annLastOperation = fixture.AnnLastOperation
)

// Exit codes of the plugin (internal/exit).
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitRefused     = 3
	exitInterrupted = 4
)

// Result is a finished command.
type Result struct {
	Args     []string
	Stdout   string
	Stderr   string
	Code     int
	Duration time.Duration
}

func (r Result) String() string {
	return fmt.Sprintf("`%s` exited %d after %s\n--- stdout\n%s--- stderr\n%s", strings.Join(r.Args, " "), r.Code, r.Duration.Round(time.Millisecond), r.Stdout, r.Stderr)
}

// kubectl runs the real kubectl (from PATH) with args and a deadline.
func kubectl(t *testing.T, timeout time.Duration, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := Result{Args: append([]string{"kubectl"}, args...), Stdout: out.String(), Stderr: errb.String(), Duration: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		t.Fatalf("timed out after %s: %s", timeout, r)
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		t.Fatalf("running kubectl: %v", err)
	}
	return r
}

// cassandra runs `kubectl cassandra -n ns args...` to completion.
func cassandra(t *testing.T, ns string, timeout time.Duration, args ...string) Result {
	t.Helper()
	requirePlugin(t)
	return kubectl(t, timeout, append([]string{"cassandra", "-n", ns}, args...)...)
}

// Proc is a plugin run in the background, to be signalled or killed mid-run.
type Proc struct {
	Args    []string
	cmd     *exec.Cmd
	stdout  syncBuffer
	stderr  syncBuffer
	done    chan struct{}
	result  Result
	started time.Time
}

// procs tracks the background processes of the run so that teardown can stop them.
var procs = &procSet{m: map[*Proc]struct{}{}}

type procSet struct {
	mu sync.Mutex
	m  map[*Proc]struct{}
}

func (s *procSet) add(p *Proc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[p] = struct{}{}
}

func (s *procSet) remove(p *Proc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, p)
}

func (s *procSet) killAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.m {
		_ = p.cmd.Process.Kill()
	}
}

// startCassandra starts `kubectl cassandra -n ns args...` in the background. kubectl execs
// the plugin in place (syscall.Exec), so the PID is the plugin's: a signal to it is a
// signal to the plugin, as when a user presses Ctrl-C or the machine dies.
func startCassandra(t *testing.T, ns string, args ...string) *Proc {
	t.Helper()
	requirePlugin(t)
	full := append([]string{"cassandra", "-n", ns}, args...)
	p := &Proc{Args: append([]string{"kubectl"}, full...), done: make(chan struct{})}
	p.cmd = exec.Command("kubectl", full...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %v: %v", p.Args, err)
	}
	procs.add(p)
	go func() {
		err := p.cmd.Wait()
		p.result = Result{Args: p.Args, Stdout: p.stdout.String(), Stderr: p.stderr.String(), Duration: time.Since(p.started)}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.result.Code = ee.ExitCode()
			if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
				p.result.Code = 128 + int(st.Signal())
			}
		} else if err != nil {
			p.result.Code = -1
		}
		procs.remove(p)
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// Signal sends sig to the plugin process.
func (p *Proc) Signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !p.Exited() {
		t.Fatalf("signalling %v: %v", p.Args, err)
	}
}

// Kill SIGKILLs the plugin (a crash: no handler, no cleanup) and waits until it is reaped.
func (p *Proc) Kill(t *testing.T) Result {
	t.Helper()
	_ = p.cmd.Process.Kill()
	return p.Wait(t, 30*time.Second)
}

// Exited tells whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits for the process to end, at most timeout (then fails the test).
func (p *Proc) Wait(t *testing.T, timeout time.Duration) Result {
	t.Helper()
	select {
	case <-p.done:
		return p.result
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("%v still running after %s; killed\n%s", p.Args, timeout, p.result)
		return p.result
	}
}

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Stderr returns what the process wrote to stderr so far.
func (p *Proc) Stderr() string { return p.stderr.String() }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// grew is closed (and replaced) on every write, to wake who waits for some output.
	grew chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grew != nil {
		close(s.grew)
		s.grew = nil
	}
	return s.b.Write(p)
}

// changed returns the buffer so far and a channel closed at the next write.
func (s *syncBuffer) changed() (string, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grew == nil {
		s.grew = make(chan struct{})
	}
	return s.b.String(), s.grew
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it is true or timeout passes (then fails the test with the
// last error cond returned, which should say what it saw).
func waitFor(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := fixture.WaitFor(context.Background(), what, timeout, 100*time.Millisecond, cond); err != nil {
		t.Fatal(err)
	}
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// newNamespace creates a namespace named after the test, deleted when the test ends.
func newNamespace(t *testing.T) string {
	t.Helper()
	requireE2E(t)
	base := strings.ToLower(t.Name())
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	base = strings.Trim(nonDNS.ReplaceAllString(base, "-"), "-")
	if len(base) > 40 {
		base = base[:40]
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	ns := "e2e-" + strings.Trim(base, "-") + "-" + hex.EncodeToString(b[:])
	if err := suite.clients.CreateNamespace(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Not waited for: the next test uses another namespace, and the CRD switch waits
		// for every CR to be gone anyway.
		_ = suite.clients.Kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	return ns
}

// Checkpoint and Step are the fixture's view of the plugin's checkpoint.
type (
	Checkpoint = fixture.Checkpoint
	Step       = fixture.Step
)

// The step kinds of a scale-down, in the order they run for each pod.
var stepKinds = fixture.StepKinds

func parseCheckpoint(cr *unstructured.Unstructured) (*Checkpoint, bool, error) {
	return fixture.ParseCheckpoint(cr)
}

// readCheckpoint reads the current checkpoint of the cluster.
func readCheckpoint(t *testing.T, cl *fixture.Cluster) (*Checkpoint, bool) {
	t.Helper()
	cr, err := cl.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cp, ok, err := parseCheckpoint(cr)
	if err != nil {
		t.Fatal(err)
	}
	return cp, ok
}

// watchCR calls fn with every version of the cluster's CR until fn returns true (see
// fixture.Clients.WatchCR).
func watchCR(ctx context.Context, cl *fixture.Cluster, timeout time.Duration, fn func(cr *unstructured.Unstructured) bool) error {
	return suite.clients.WatchCR(ctx, cl.Namespace, cl.Name, timeout, fn)
}

// lastOperation reads the plugin's last-operation annotation (nil when absent).
func lastOperation(t *testing.T, cr *unstructured.Unstructured) map[string]any {
	t.Helper()
	raw, ok := cr.GetAnnotations()[annLastOperation]
	if !ok {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", annLastOperation, err, raw)
	}
	return m
}
