package sim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fixtureEpoch makes a fresh cluster's nodes report Generation No 1718000000 and
// Uptime 86400, the values of docs/how-it-works/nodetool.md's info fixtures.
var fixtureEpoch = time.Unix(1718086400, 0)

// fakeClock is an injectable, goroutine-safe clock that only moves when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: fixtureEpoch} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Pods of the fixture clusters, by the address the fixtures show.
const (
	podA = "cassandra-dc1-r1-sts-0" // 10.244.1.12
	podB = "cassandra-dc1-r2-sts-0" // 10.244.2.17
	podC = "cassandra-dc1-r3-sts-0" // 10.244.3.9
	podD = "cassandra-dc1-r1-sts-1" // 10.244.1.13
	podE = "cassandra-dc1-r2-sts-1" // 10.244.2.18
	podF = "cassandra-dc1-r3-sts-1" // 10.244.3.10, the one that decommissions
)

// sixNodes is docs/how-it-works/nodetool.md's cluster: one DC, 3 racks × 2 nodes.
func sixNodes() []NodeSpec {
	return []NodeSpec{
		{Pod: podA, Address: "10.244.1.12", HostID: "2f1b8c5e-6a0e-4b0e-9c57-0d3b1f6a7e11", DC: "dc1", Rack: "r1", Load: "1.2 GiB"},
		{Pod: podB, Address: "10.244.2.17", HostID: "9a4d2c71-3b8e-4f2a-a1d0-5e6f7a8b9c02", DC: "dc1", Rack: "r2", Load: "1.16 GiB"},
		{Pod: podC, Address: "10.244.3.9", HostID: "c3e5f7a9-1b2d-4e6f-8a0b-1c2d3e4f5a63", DC: "dc1", Rack: "r3", Load: "1.24 GiB"},
		{Pod: podD, Address: "10.244.1.13", HostID: "4b6d8f0a-2c4e-4a6b-9c8d-0e1f2a3b4c74", DC: "dc1", Rack: "r1", Load: "1.22 GiB"},
		{Pod: podE, Address: "10.244.2.18", HostID: "e7f9a1b3-5c7d-4e9f-8a1b-2c3d4e5f6a85", DC: "dc1", Rack: "r2", Load: "1.18 GiB"},
		{Pod: podF, Address: "10.244.3.10", HostID: "0d2f4a6c-8e0a-4c2e-b4d6-3f5a7b9c1d96", DC: "dc1", Rack: "r3", Load: "1.21 GiB", UncompressedLoad: "2.37 GiB"},
	}
}

// twoDCs is docs/how-it-works/nodetool.md's two-datacenter cluster.
func twoDCs() []NodeSpec {
	return []NodeSpec{
		{Pod: "dc1-r1-0", Address: "10.244.1.12", HostID: "2f1b8c5e-6a0e-4b0e-9c57-0d3b1f6a7e11", DC: "dc1", Rack: "r1", Load: "1.2 GiB"},
		{Pod: "dc1-r2-0", Address: "10.244.2.17", HostID: "9a4d2c71-3b8e-4f2a-a1d0-5e6f7a8b9c02", DC: "dc1", Rack: "r2", Load: "1.16 GiB"},
		{Pod: "dc1-r3-0", Address: "10.244.3.9", HostID: "c3e5f7a9-1b2d-4e6f-8a0b-1c2d3e4f5a63", DC: "dc1", Rack: "r3", Load: "1.24 GiB"},
		{Pod: "dc2-r1-0", Address: "10.245.1.20", HostID: "4b6d8f0a-2c4e-4a6b-9c8d-0e1f2a3b4c74", DC: "dc2", Rack: "r1", Load: "103.25 KiB"},
		{Pod: "dc2-r2-0", Address: "10.245.2.21", HostID: "e7f9a1b3-5c7d-4e9f-8a1b-2c3d4e5f6a85", DC: "dc2", Rack: "r2", Load: "104.23 KiB"},
		{Pod: "dc2-r3-0", Address: "10.245.3.22", HostID: "0d2f4a6c-8e0a-4c2e-b4d6-3f5a7b9c1d96", DC: "dc2", Rack: "r3", Load: "105.21 KiB"},
	}
}

// threeNodes is a one-node-per-rack cluster: N = RF = 3, so 4.0+ refuses (E1).
func threeNodes() []NodeSpec { return sixNodes()[:3] }

var allVersions = []string{V311, V40, V41, V50}

type result struct {
	stdout, stderr string
	code           int
}

func runCtx(ctx context.Context, s *Store, pod string, args ...string) result {
	var out, errb bytes.Buffer
	code := s.Run(ctx, pod, args, &out, &errb)
	return result{out.String(), errb.String(), code}
}

func run(s *Store, pod string, args ...string) result {
	return runCtx(context.Background(), s, pod, args...)
}

// goRun runs a (blocking) command in the background.
func goRun(ctx context.Context, s *Store, pod string, args ...string) <-chan result {
	ch := make(chan result, 1)
	go func() { ch <- runCtx(ctx, s, pod, args...) }()
	return ch
}

// waitFor polls cond until it holds or the deadline passes; conditions, not sleeps.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// receive waits for a background command to finish.
func receive(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("command did not return")
		return result{}
	}
}

// notYet asserts a background command is still blocked, by checking its channel is
// empty after the store has answered another, later command (no sleeping).
func notYet(t *testing.T, ch <-chan result) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("command returned early: %+v", r)
	default:
	}
}

func view(t *testing.T, s *Store, pod string) NodeView {
	t.Helper()
	v, err := s.Node(pod)
	require.NoError(t, err)
	return v
}

// startDecommission launches `decommission` and waits until the simulator recorded the
// call, so the caller can move the clock knowing the attempt exists.
func startDecommission(t *testing.T, ctx context.Context, s *Store, pod string, args ...string) <-chan result {
	t.Helper()
	before := view(t, s, pod).DecommissionCalls
	ch := goRun(ctx, s, pod, append([]string{"decommission"}, args...)...)
	waitFor(t, "decommission call recorded", func() bool { return view(t, s, pod).DecommissionCalls > before })
	return ch
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// requireSameText compares byte for byte and, on failure, shows the lines with visible
// trailing spaces.
func requireSameText(t *testing.T, want, got string) {
	t.Helper()
	if want == got {
		return
	}
	// Make trailing spaces and tabs visible: they are part of the format.
	trailing := regexp.MustCompile(`(?m) +$`)
	show := func(s string) string {
		s = trailing.ReplaceAllStringFunc(s, func(sp string) string { return strings.Repeat("·", len(sp)) })
		return strings.ReplaceAll(s, "\t", "→")
	}
	t.Fatalf("output differs from fixture\n--- want\n%s\n--- got\n%s", show(want), show(got))
}
