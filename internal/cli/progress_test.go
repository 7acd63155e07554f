package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// compareGoldenFile is compareGolden for files outside testdata/golden (whose leftover
// check knows only TestGolden's cases); the same -update flag rewrites them.
func compareGoldenFile(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./internal/cli -run %s -update)", err, t.Name())
	}
	if string(b) != got {
		t.Errorf("%s differs (if the change is intended: go test ./internal/cli -run %s -update, and review the diff)\n%s", path, t.Name(), lineDiff(string(b), got))
	}
}

// TestProgressLinesPerVersion: a 96 GiB node's decommission on each simulated version,
// read with `nodetool netstats` every 10 s of a fake clock: the sim prints that
// version's Unbootstrap session lines (3.11 without percentages, 4.0+ with), the parser
// sums them, the meter measures the rate over a minute, and the plain reporter prints a
// line every 30 s. Every version must give the same figures.
func TestProgressLinesPerVersion(t *testing.T) {
	for _, v := range []string{sim.V311, sim.V40, sim.V41, sim.V50} {
		t.Run(v, func(t *testing.T) {
			clock := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
			now := func() time.Time { return clock }
			nodes := []sim.NodeSpec{}
			for i, addr := range []string{"10.244.0.11", "10.244.0.12", "10.244.0.13", "10.244.0.14"} {
				nodes = append(nodes, sim.NodeSpec{Pod: "demo-dc1-rack1-" + string(rune('0'+i)), Address: addr, Load: "96 GiB"})
			}
			// 60 min in all: 20 min before streaming, 20 min streaming (82 MB/s), 20 min announcing.
			st := sim.NewMemory(sim.Options{Version: v, RF: 1, DecommissionTime: time.Hour}, nodes, now)
			leaving := "demo-dc1-rack1-3"
			// A killed exec: the call starts the decommission, which keeps running
			// server-side, and returns at once.
			st.Run(&killedAfterStart{Context: context.Background()}, leaving, []string{"decommission"}, io.Discard, io.Discard)
			if n, err := st.Node(leaving); err != nil || n.Mode != sim.ModeLeaving {
				t.Fatalf("%s did not start leaving: %+v %v", leaving, n, err)
			}

			var out bytes.Buffer
			rep := &output.Progress{W: &out, Now: now, Mode: output.ProgressPlain, PlainEvery: 30 * time.Second}
			var meter steps.StreamMeter
			var raw string
			for step := 0; step <= 6*45; step++ {
				clock = time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC).Add(time.Duration(step) * 10 * time.Second)
				var b strings.Builder
				st.Run(context.Background(), leaving, []string{"netstats"}, &b, io.Discard)
				ns, err := nodetool.ParseNetstats(b.String())
				if err != nil {
					t.Fatalf("netstats at %s: %v\n%s", clock, err, b.String())
				}
				if step == 6*30 {
					raw = b.String()
				}
				if p, ok := meter.Sample(clock, ns, "decommission", leaving, nodetool.PlanUnbootstrap, nodetool.DirSending); ok {
					rep.Progress("decommission/"+leaving, p)
				}
			}
			if !strings.Contains(raw, "Unbootstrap ") {
				t.Fatalf("no stream plan in netstats:\n%s", raw)
			}
			compareGoldenFile(t, filepath.Join("testdata", "progress", "decommission-"+v+".golden"), out.String())
			// The figures do not depend on the version's format.
			if v != sim.V41 {
				ref, err := os.ReadFile(filepath.Join("testdata", "progress", "decommission-"+sim.V41+".golden"))
				if err == nil && string(ref) != out.String() && !*update {
					t.Errorf("version %s reports other figures than 4.1:\n%s", v, lineDiff(string(ref), out.String()))
				}
			}
		})
	}
}

// killedAfterStart is the context of an exec killed right after it started: alive for
// the first check, done for every wait after it.
type killedAfterStart struct {
	context.Context
	checked bool
}

func (c *killedAfterStart) Err() error {
	if !c.checked {
		c.checked = true
		return nil
	}
	return context.Canceled
}

func (c *killedAfterStart) Done() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

// TestBootstrapProgressPerVersion: a node added to the simulated cluster streams its
// ranges in a Bootstrap plan on every version (4.0+ receiver names "app/events-<n>";
// 3.11 one overwritten "app/events" entry, whose done bytes undercount); the parser
// reads it and the figures only grow.
func TestBootstrapProgressPerVersion(t *testing.T) {
	for _, v := range []string{sim.V311, sim.V40, sim.V41, sim.V50} {
		t.Run(v, func(t *testing.T) {
			start := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
			clock := start
			st := sim.NewMemory(sim.Options{Version: v, RF: 1, JoinTime: 10 * time.Minute}, []sim.NodeSpec{
				{Pod: "demo-dc1-rack1-0", Address: "10.244.0.11"}, {Pod: "demo-dc1-rack1-1", Address: "10.244.0.12"},
			}, func() time.Time { return clock })
			if err := st.AddNode(sim.NodeSpec{Pod: "demo-dc1-rack1-2", Address: "10.244.0.13", Load: "8 GiB"}); err != nil {
				t.Fatal(err)
			}
			var last int64 = -1
			for m := 1; m < 10; m++ {
				clock = start.Add(time.Duration(m) * time.Minute)
				var b strings.Builder
				st.Run(context.Background(), "demo-dc1-rack1-2", []string{"netstats"}, &b, io.Discard)
				ns, err := nodetool.ParseNetstats(b.String())
				if err != nil {
					t.Fatal(err)
				}
				p, ok := ns.StreamProgress(nodetool.PlanBootstrap, nodetool.DirReceiving)
				if !ok || p.TotalBytes != 8<<30 || p.Peers != 1 {
					t.Fatalf("minute %d: %+v %v\n%s", m, p, ok, b.String())
				}
				if v != sim.V311 && p.DoneBytes <= last {
					t.Fatalf("minute %d: done %d after %d", m, p.DoneBytes, last)
				}
				last = p.DoneBytes
				want := "app/events-0 "
				if v == sim.V311 {
					want = "app/events "
				}
				if !strings.Contains(b.String(), want) {
					t.Fatalf("no receiver file name %q:\n%s", want, b.String())
				}
			}
		})
	}
}
