package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/status"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

var reANSI = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

func stripANSI(s string) string { return reANSI.ReplaceAllString(s, "") }

// colourEnv makes "auto" depend on the writer alone: with this environment a terminal
// would get colour, so a buffer getting none proves the terminal check.
func colourEnv(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm-256color")
}

// markedWorld is an operation in flight ([!!]) with one pod not Ready ([XX]), one pod
// terminating ([!!] terminating) and idle CassKop ([OK]): every marker status prints.
func markedWorld(t *testing.T) *world.World {
	t.Helper()
	w := world.New(t, world.Opts{Nodes: 4})
	crashScale(t, w)
	readyStatefulSets(t, w)
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	edit := func(name string, f func(p *corev1.Pod)) {
		obj, err := w.Kube.Tracker().Get(gvr, w.NS, name)
		if err != nil {
			t.Fatal(err)
		}
		p := obj.(*corev1.Pod).DeepCopy()
		f(p)
		if err := w.Kube.Tracker().Update(gvr, p, w.NS); err != nil {
			t.Fatal(err)
		}
	}
	edit("demo-dc1-rack1-0", func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse })
	edit("demo-dc1-rack1-1", func(p *corev1.Pod) {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	})
	return w
}

// TestStatusColourAlways: --color=always colours even into a pipe, and the markers stay
// in the text, so the meaning never depends on colour.
func TestStatusColourAlways(t *testing.T) {
	colourEnv(t)
	w := markedWorld(t)
	always, stderr, code, _ := run(w, 0, "status", "demo", "-n", "cassandra", "--color=always")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	never, _, _, _ := run(w, 0, "status", "demo", "-n", "cassandra", "--color=never")
	if !strings.Contains(always, "\x1b[") {
		t.Fatalf("--color=always printed no ANSI colour:\n%s", always)
	}
	if strings.Contains(never, "\x1b") {
		t.Fatalf("--color=never printed ANSI bytes:\n%q", never)
	}
	for _, m := range []string{"\x1b[32m[OK]\x1b[0m", "\x1b[33m[!!]\x1b[0m", "\x1b[31m[XX]\x1b[0m", "\x1b[33m[!!] terminating\x1b[0m"} {
		if !strings.Contains(always, m) {
			t.Errorf("--color=always lacks the coloured marker %q", m)
		}
	}
	for _, m := range []string{"[OK]", "[!!]", "[XX]", "[!!] terminating"} {
		if !strings.Contains(never, m) {
			t.Errorf("--color=never lacks the marker %q", m)
		}
	}
	// Same words, same lines: colour only adds escapes (spacing aside, see below).
	squash := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if squash(stripANSI(always)) != squash(never) {
		t.Errorf("without its escapes, the coloured status says something else:\n%s\nvs\n%s", stripANSI(always), never)
	}
	t.Run("aligned", func(t *testing.T) {
		if stripANSI(always) != never {
			t.Errorf("columns move under colour:\n%s\nvs\n%s", stripANSI(always), never)
		}
	})
}

// TestNoANSIToBuffers: with the default --color=auto, output to a buffer (a pipe, a file,
// CI logs) carries no escape byte at all, on stdout or stderr, for every command and
// its errors — even where progress lines and prompts are printed.
func TestNoANSIToBuffers(t *testing.T) {
	colourEnv(t)
	ns := []string{"-n", "cassandra"}
	cmd := func(a ...string) []string { return append(a, ns...) }
	cases := []struct {
		name  string
		opts  world.Opts
		setup func(t *testing.T, w *world.World)
		mk    func(t *testing.T) *world.World // instead of opts and setup
		args  []string
	}{
		{name: "help", args: []string{"--help"}},
		{name: "scale help", args: []string{"scale", "--help"}},
		{name: "status", args: cmd("status", "demo")},
		{name: "status json", args: cmd("status", "demo", "-o", "json")},
		{name: "status yaml", args: cmd("status", "demo", "-o", "yaml")},
		{name: "status marked", mk: markedWorld, args: cmd("status", "demo")},
		{name: "dry run", args: cmd("scale", "demo", "--rack", "rack1", "--nodes", "2", "--dry-run")},
		{name: "scale", args: cmd("scale", "demo", "--rack", "rack1", "--nodes", "2", "--yes")},
		{name: "scale json", args: cmd("scale", "demo", "--rack", "rack1", "--nodes", "2", "--yes", "-o", "json")},
		{name: "scale with operator paused", opts: world.Opts{Nodes: 3, Operator: true}, args: cmd("scale", "demo", "--rack", "rack1", "--nodes", "2", "--yes")},
		{name: "resume after crash", setup: crashScale, args: cmd("resume", "demo", "--yes")},
		{name: "resume nothing", args: cmd("resume", "demo", "--yes")},
		{name: "abort nothing", args: cmd("abort", "demo", "--yes")},
		{name: "version", args: []string{"version"}},
		{name: "completion bash", args: []string{"completion", "bash"}},
		{name: "completion zsh", args: []string{"completion", "zsh"}},
		{name: "completion fish", args: []string{"completion", "fish"}},
		{name: "completion powershell", args: []string{"completion", "powershell"}},
		{name: "complete", args: []string{"__complete", "scale", "demo", "--rack", ""}},
		{name: "usage error", args: cmd("scale", "demo", "--bogus")},
		{name: "no tty without --yes", args: cmd("scale", "demo", "--rack", "rack1", "--nodes", "2")},
		{name: "refused", opts: world.Opts{Nodes: 4, Operator: true}, args: cmd("scale", "demo", "--rack", "rack1", "--nodes", "2", "--yes", "--pause-operator=false")},
		{name: "unknown cluster", args: cmd("status", "nope")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if opts.Nodes == 0 {
				opts.Nodes = 4
			}
			var w *world.World
			if tc.mk != nil {
				w = tc.mk(t)
			} else {
				w = world.New(t, opts)
				if tc.setup != nil {
					tc.setup(t, w)
				}
			}
			stdout, stderr, _, crashed := run(w, 0, tc.args...)
			if crashed {
				t.Fatal("crashed")
			}
			if stdout == "" && stderr == "" {
				t.Fatal("no output at all: the case proves nothing")
			}
			if strings.Contains(stdout, "\x1b") || strings.Contains(stderr, "\x1b") {
				t.Fatalf("escape bytes with --color=auto to a buffer:\nstdout %q\nstderr %q", stdout, stderr)
			}
		})
	}
}

// TestColourAlwaysProgressAndData: --color=always colours progress on stderr, keeps its
// markers, and never puts escapes into machine output (JSON/YAML), which a parser reads.
func TestColourAlwaysProgressAndData(t *testing.T) {
	colourEnv(t)
	w := world.New(t, world.Opts{Nodes: 3})
	stdout, stderr, code, _ := run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--yes", "--color=always", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if strings.Contains(stdout, "\x1b") {
		t.Errorf("JSON on stdout carries escapes under --color=always:\n%q", stdout)
	}
	if !strings.Contains(stderr, "\x1b[32m[OK]\x1b[0m") {
		t.Errorf("progress on stderr is not coloured under --color=always:\n%q", stderr)
	}
	if !strings.Contains(stripANSI(stderr), "[OK] ") {
		t.Errorf("progress lost its [OK] markers:\n%s", stripANSI(stderr))
	}
	for _, args := range [][]string{
		{"status", "demo", "-n", "cassandra", "--color=always", "-o", "json"},
		{"status", "demo", "-n", "cassandra", "--color=always", "-o", "yaml"},
		{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--dry-run", "--color=always", "-o", "json"},
		{"resume", "demo", "-n", "cassandra", "--color=always", "-o", "json"},
		{"version", "--client", "--color=always", "-o", "json"},
	} {
		stdout, _, code, _ := run(w, 0, args...)
		if code != 0 || stdout == "" || strings.Contains(stdout, "\x1b") {
			t.Errorf("%v: exit %d, machine output with escapes or empty: %q", args, code, stdout)
		}
	}
}

// TestColourNeverAndNoColor: --color=never wins over everything, and NO_COLOR keeps
// auto off; neither may drop a marker.
func TestColourNeverAndNoColor(t *testing.T) {
	w := markedWorld(t)
	t.Setenv("NO_COLOR", "1")
	for _, args := range [][]string{
		{"status", "demo", "-n", "cassandra"},
		{"status", "demo", "-n", "cassandra", "--color=never"},
	} {
		stdout, stderr, _, _ := run(w, 0, args...)
		if strings.Contains(stdout+stderr, "\x1b") || !strings.Contains(stdout, "[XX]") {
			t.Errorf("%v: %q", args, stdout)
		}
	}
	// The flag is an explicit request for this run: it wins over NO_COLOR (no-color.org).
	stdout, _, _, _ := run(w, 0, "status", "demo", "-n", "cassandra", "--color=always")
	if !strings.Contains(stdout, "\x1b[") {
		t.Errorf("--color=always under NO_COLOR printed no colour")
	}
}

// TestColourFlagValidated: a typo in --color must be bad usage, not a silent "auto".
func TestColourFlagValidated(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2})
	_, stderr, code, _ := run(w, 0, "status", "demo", "-n", "cassandra", "--color=allways")
	if code != 2 || !strings.Contains(stderr, "allways") {
		t.Fatalf("--color=allways: exit %d, stderr %q; want exit 2 naming the value", code, stderr)
	}
}

// TestStatusWithoutNodetool: --nodetool=false makes no exec, shows every node state as
// unknown and says why.
func TestStatusWithoutNodetool(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3})
	readyStatefulSets(t, w)
	ex := &countingExec{w: w, n: map[string]int{}}
	out, stderr, code := runWith(w, ex, "status", "demo", "-n", "cassandra", "-o", "json", "--nodetool=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(ex.n) != 0 {
		t.Fatalf("nodetool calls %v, want none", ex.n)
	}
	var rep status.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	pods := 0
	for _, dc := range rep.Datacenters {
		for _, r := range dc.Racks {
			for _, p := range r.Pods {
				pods++
				if p.NodeState != "?" {
					t.Errorf("pod %s: node state %q, want ?", p.Name, p.NodeState)
				}
			}
		}
	}
	if pods != 3 || !strings.Contains(strings.Join(rep.Warnings, "\n"), "node states not read (--nodetool=false)") {
		t.Fatalf("%d pods, warnings %q", pods, rep.Warnings)
	}
	// By default the ring is read: one nodetool status.
	ex.n = map[string]int{}
	if _, stderr, code := runWith(w, ex, "status", "demo", "-n", "cassandra", "-o", "json"); code != 0 || ex.n["exec status"] != 1 {
		t.Fatalf("default status: exit %d (%s), nodetool calls %v, want one status", code, stderr, ex.n)
	}
}
