package cli

import (
	"bytes"
	"context"
	"fmt"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// host is one machine running the plugin: both are called "cassandra-tools" and run it
// as PID 1 (two containers of one image); only their machine identity differs. Their
// clocks are skew off the real one.
type host struct {
	user, machine string
	skew          time.Duration
	lease         int
}

var (
	hostA = host{user: "alice", machine: "boot:aaaa/pid:[4026531836]", skew: 5 * time.Minute, lease: 3600}
	hostB = host{user: "bob", machine: "boot:bbbb/pid:[4026531836]", skew: -5 * time.Minute, lease: 60}
)

// gate holds a run inside one nodetool call: the first one after a call of command
// `after` ("" = the very first call), until released.
type gate struct {
	w        *world.World
	after    string
	mu       sync.Mutex
	seen     bool
	held     bool
	blocked  chan struct{}
	released chan struct{}
}

func newGate(w *world.World, after string) *gate {
	return &gate{w: w, after: after, seen: after == "", blocked: make(chan struct{}), released: make(chan struct{})}
}

func (g *gate) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	g.mu.Lock()
	hold := g.seen && !g.held
	if hold {
		g.held = true
	}
	if nodetoolCommand(argv) == g.after {
		g.seen = true
	}
	g.mu.Unlock()
	if hold {
		close(g.blocked)
		<-g.released
	}
	return g.w.Exec(ctx, pod, argv)
}

// runOn runs one command on host h against the world; done receives the outcome.
func runOn(w *world.World, h host, ex *gate, args ...string) (done chan result) {
	done = make(chan result, 1)
	var out, errb bytes.Buffer
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, repair.Operator{Plugin: casskop.Plugin{}})
	o.Clients = &kube.Clients{Kube: w.Kube, Dynamic: w.Dyn, Discovery: w.Kube.Discovery(), Namespace: w.NS}
	o.Execer = ex
	session := h.user + "-session"
	o.Identity = func() record.Holder {
		return record.Holder{User: h.user, Host: "cassandra-tools", PID: 1, Machine: h.machine, Session: session, LeaseSeconds: h.lease}
	}
	o.Alive = func(int) bool { return true } // PID 1 runs on every machine
	o.Now, o.After = jumpingClock(func() time.Time { return time.Now().Add(h.skew) })
	args = append(args, "--poll-interval", "1ms", "--timeout", "20s")
	go func() {
		code := o.Execute(context.Background(), args)
		done <- result{code: code, stdout: out.String(), stderr: errb.String()}
	}()
	return done
}

type result struct {
	code           int
	stdout, stderr string
}

// history is what the world shows acted: StatefulSet writes, claim deletes and
// decommission calls.
type history struct{ stsWrites, pvcDeletes, decommissions int }

func historyOf(w *world.World) history {
	var h history
	for _, a := range w.Kube.Actions() {
		if a.GetResource().Resource == "statefulsets" && (a.GetVerb() == "patch" || a.GetVerb() == "update") {
			h.stsWrites++
		}
	}
	h.pvcDeletes = len(w.PVCDeletes())
	for _, e := range w.ExecLog() {
		if strings.Contains(e, "decommission") {
			h.decommissions++
		}
	}
	return h
}

// TestTwoHostsOneActs: host A (clock 5 min ahead) hangs while its first node leaves;
// host B (clock 5 min behind) takes the operation over — after a lease of unchanged
// record on its own clock, or at once with --force-takeover. Then A wakes up: its next
// action is fenced, so it stops (exit 4, naming B) without acting, and B finishes. The
// world's history shows every action exactly once.
func TestTwoHostsOneActs(t *testing.T) {
	for _, force := range []bool{false, true} {
		t.Run(fmt.Sprintf("force=%v", force), func(t *testing.T) {
			w := world.New(t, world.Opts{Nodes: 3})
			ga, gb := newGate(w, "decommission"), newGate(w, "")
			a := runOn(w, hostA, ga, scale41...)
			<-ga.blocked // A decommissioned demo-dc1-rack1-2 and waits for it to leave
			argsB := resume
			if force {
				argsB = append(append([]string{}, resume...), "--force-takeover")
			}
			b := runOn(w, hostB, gb, argsB...)
			var rb result
			select {
			case <-gb.blocked: // B took over and is about to look at the first node
			case rb = <-b:
				t.Fatalf("B ended before acting: exit %d\n%s", rb.code, rb.stderr)
			}
			cp := loadCP(t, w)
			if cp.Holder.User != "bob" || len(cp.Takeovers) != 1 {
				t.Fatalf("B holds no takeover: holder %s, takeovers %+v", cp.Holder, cp.Takeovers)
			}
			atTakeover := historyOf(w)
			close(ga.released)
			ra := <-a
			if ra.code != exit.Interrupted || !strings.Contains(ra.stderr, "bob@cassandra-tools") || !strings.Contains(ra.stderr, "Another run holds operation") {
				t.Fatalf("A after the takeover: exit %d, want 4 naming bob@cassandra-tools\n%s", ra.code, ra.stderr)
			}
			if h := historyOf(w); h != atTakeover {
				t.Fatalf("A acted after losing the lock: %+v, at the takeover %+v\n%s", h, atTakeover, ra.stderr)
			}
			close(gb.released)
			rb = <-b
			if rb.code != 0 {
				t.Fatalf("B: exit %d\n%s", rb.code, rb.stderr)
			}
			if !force && !strings.Contains(rb.stderr, "waiting 1h0m0s for the lease to expire") {
				t.Fatalf("B did not wait a lease of its own clock:\n%s", rb.stderr)
			}
			w.AssertConverged(1, "two hosts")
			if h := historyOf(w); h != (history{stsWrites: 2, pvcDeletes: 2, decommissions: 2}) {
				t.Fatalf("history %+v, want each of the 2 nodes shrunk, its claim deleted and decommissioned exactly once", h)
			}
		})
	}
}

// TestSkewedClockWaitsForLiveHolder: host B's clock is 10 minutes ahead of A's, so A's
// fresh renewals look 10 minutes old to it. B still waits a lease of its own clock and,
// seeing A's record change meanwhile (A renews), refuses; A finishes alone.
func TestSkewedClockWaitsForLiveHolder(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2})
	renewed := make(chan struct{}, 100)
	w.OnSideEffect = func(int) {
		select {
		case renewed <- struct{}{}:
		default:
		}
	}
	ga := newGate(w, "decommission")
	a := runOn(w, host{user: "alice", machine: hostA.machine, skew: -5 * time.Minute, lease: 1}, ga, scale41...)
	<-ga.blocked
	before := loadCP(t, w)
	for len(renewed) > 0 {
		<-renewed
	}
	bHost := hostB
	bHost.skew = 5 * time.Minute
	var out, errb bytes.Buffer
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, repair.Operator{Plugin: casskop.Plugin{}})
	o.Clients = &kube.Clients{Kube: w.Kube, Dynamic: w.Dyn, Discovery: w.Kube.Discovery(), Namespace: w.NS}
	o.Execer = w
	o.Identity = func() record.Holder {
		return record.Holder{User: "bob", Host: "cassandra-tools", PID: 1, Machine: bHost.machine, Session: "bob-session", LeaseSeconds: 60}
	}
	o.Alive = func(int) bool { return true }
	now, after := jumpingClock(func() time.Time { return time.Now().Add(bHost.skew) })
	o.Now = now
	o.After = func(d time.Duration) <-chan time.Time {
		<-renewed // A, alive, renews its lease while B waits
		return after(d)
	}
	code := o.Execute(context.Background(), append(resume, "--poll-interval", "1ms"))
	if code != operation.ExitRefused || !strings.Contains(errb.String(), "is alive") || !strings.Contains(errb.String(), "waiting 1s for the lease") {
		t.Fatalf("B: exit %d, want 3 (holder alive) after a lease wait\n%s", code, errb.String())
	}
	if cp := loadCP(t, w); cp.Holder.User != "alice" || len(cp.Takeovers) != len(before.Takeovers) {
		t.Fatalf("B took the checkpoint: holder %s, takeovers %+v", cp.Holder, cp.Takeovers)
	}
	close(ga.released)
	if ra := <-a; ra.code != 0 {
		t.Fatalf("A: exit %d\n%s", ra.code, ra.stderr)
	}
	w.AssertConverged(1, "skewed clocks")
	if h := historyOf(w); h != (history{stsWrites: 1, pvcDeletes: 1, decommissions: 1}) {
		t.Fatalf("history %+v, want one node removed once", h)
	}
}
