package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// update rewrites the golden files from the current output:
//
//	go test ./internal/cli -run Golden -update
//
// then review the diff of internal/cli/testdata/golden like code.
var update = flag.Bool("update", false, "rewrite internal/cli/testdata/golden/*.golden from the current output")

const goldenDir = "testdata/golden"

// The normaliser masks only what changes from run to run on the same code, so that a
// golden file changes exactly when what a user sees changes:
//
//	2026-12-02T15:01:06Z, …+01:00, .123Z  -> <TIME>       (RFC 3339 timestamps: wall clock)
//	scale-20261202-150106-pdw7q          -> <OPID>       (operation IDs: wall clock + random)
//	runtime.Version(), GOOS/GOARCH       -> <GOVERSION>, <PLATFORM> (the toolchain running the tests)
//	kubectl's default --cache-dir        -> $HOME/.kube/cache (the home directory of whoever runs them)
//
// Holder identities are not masked: the test helper injects a fixed one ("test-host",
// world PIDs). Durations are not masked: no golden output prints one.
var (
	reTimestamp = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	reOpID      = regexp.MustCompile(`\bscale-\d{8}-\d{6}-[a-z0-9]{5}\b`)
)

func normalise(s string) string {
	s = reTimestamp.ReplaceAllString(s, "<TIME>")
	s = reOpID.ReplaceAllString(s, "<OPID>")
	s = strings.ReplaceAll(s, runtime.Version(), "<GOVERSION>")
	s = strings.ReplaceAll(s, runtime.GOOS+"/"+runtime.GOARCH, "<PLATFORM>")
	if dir := *genericclioptions.NewConfigFlags(true).CacheDir; dir != "" {
		s = strings.ReplaceAll(s, dir, "$HOME/.kube/cache")
	}
	return s
}

func TestNormalise(t *testing.T) {
	in := "op scale-20261202-150106-pdw7q at 2026-12-02T15:01:06Z, 2026-12-02T16:01:06.123456+01:00; " +
		runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + " scale-demo stays"
	want := "op <OPID> at <TIME>, <TIME>; <GOVERSION> <PLATFORM> scale-demo stays"
	if got := normalise(in); got != want {
		t.Fatalf("normalise:\n got %q\nwant %q", got, want)
	}
	if normalise(want) != want {
		t.Fatal("normalise is not idempotent")
	}
}

// goldenCase is one command whose stdout is compared byte for byte (after normalise).
type goldenCase struct {
	name  string // testdata/golden/<name>.golden
	opts  world.Opts
	setup func(t *testing.T, w *world.World)
	args  []string
	code  int
	// fields, when set, says stdout is JSON and lists the top-level fields it must have
	// (the documented schema); "next" must then name a runnable command.
	fields []string
	// progress: the command works, so stderr carries progress (not compared).
	progress bool
}

var (
	statusFields = []string{"cluster", "datacenters", "operation", "lastOperation", "operatorBusy", "warnings", "next"}
	planFields   = []string{"kind", "namespace", "cluster", "dc", "racks", "from", "to", "force", "dryRun", "nodes", "steps", "next"}
	resumeFields = []string{"result", "message", "lastOperation", "next"}
	resultFields = []string{"result", "operationID", "summary", "startedAt", "finishedAt", "next"}
)

// crashScale leaves an operation in flight: the scale dies right after its 4th side effect.
func crashScale(t *testing.T, w *world.World) {
	t.Helper()
	_, stderr, _, crashed := run(w, 3, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--yes")
	if !crashed {
		t.Fatalf("the scale did not reach its 3rd side effect (the decommission call):\n%s", stderr)
	}
}

// liveHolder leaves an operation in flight held by a live process on this machine (a
// run busy with it), with a user name.
func liveHolder(t *testing.T, w *world.World) {
	t.Helper()
	crashScale(t, w)
	pid := w.StartProcess() // never ended: it runs for the whole test
	editCheckpoint(t, w, func(cp *record.Checkpoint) {
		cp.Holder.User, cp.Holder.PID, cp.Holder.Session = "alice", pid, fmt.Sprintf("s%d", pid)
	})
}

// finishScale runs a whole scale-down, so that a last-operation record exists.
func finishScale(t *testing.T, w *world.World) {
	t.Helper()
	_, stderr, code, crashed := run(w, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "3", "--yes")
	if code != 0 || crashed {
		t.Fatalf("scale: exit %d crashed %v\n%s", code, crashed, stderr)
	}
}

// readyStatefulSets plays the StatefulSet controller's status update: readyReplicas and
// replicas equal to spec.replicas (the fake world keeps no status, which status would
// show as a rack with 0 ready pods).
func readyStatefulSets(t *testing.T, w *world.World) {
	t.Helper()
	gvr := appsv1.SchemeGroupVersion.WithResource("statefulsets")
	l, err := w.Kube.Tracker().List(gvr, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), w.NS)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range l.(*appsv1.StatefulSetList).Items {
		st := st.DeepCopy()
		st.Status.Replicas, st.Status.ReadyReplicas = *st.Spec.Replicas, *st.Spec.Replicas
		if err := w.Kube.Tracker().Update(gvr, st, w.NS); err != nil {
			t.Fatal(err)
		}
	}
}

func goldenCases() []goldenCase {
	four := world.Opts{Nodes: 4}
	status := []string{"status", "demo", "-n", "cassandra"}
	dry := []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--dry-run"}
	resume := []string{"resume", "demo", "-n", "cassandra", "--yes"}
	with := func(a []string, more ...string) []string { return append(append([]string{}, a...), more...) }
	return []goldenCase{
		{name: "status", opts: four, args: status},
		{name: "status-json", opts: four, args: with(status, "-o", "json"), fields: statusFields},
		{name: "status-inflight", opts: four, setup: crashScale, args: status},
		{name: "status-inflight-json", opts: four, setup: crashScale, args: with(status, "-o", "json"), fields: statusFields},
		{name: "status-inflight-live", opts: four, setup: liveHolder, args: status},
		{name: "status-inflight-live-json", opts: four, setup: liveHolder, args: with(status, "-o", "json"), fields: statusFields},
		{name: "status-after-scale", opts: four, setup: finishScale, args: status},
		{name: "status-two-dcs", opts: world.Opts{Nodes: 2, DCs: []string{"dc1", "dc2"}, Racks: []string{"r1", "r2"}}, args: status},
		{name: "scale-dry-run", opts: four, args: dry},
		{name: "scale-dry-run-json", opts: four, args: with(dry, "-o", "json"), fields: planFields},
		{name: "scale-dry-run-dc", opts: world.Opts{Nodes: 3, Racks: []string{"r1", "r2"}, Topology: true, ExtraPVC: true},
			args: []string{"scale", "demo", "-n", "cassandra", "--dc", "dc1", "--nodes", "2", "--dry-run"}},
		{name: "scale-nothing-to-do-json", opts: four, args: []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "4", "-o", "json"},
			fields: []string{"result", "message", "next"}},
		{name: "resume-nothing", opts: four, args: resume},
		{name: "resume-nothing-json", opts: four, args: with(resume, "-o", "json"), fields: resumeFields},
		{name: "resume-nothing-after-scale", opts: four, setup: finishScale, args: resume},
		{name: "resume-nothing-after-scale-json", opts: four, setup: finishScale, args: with(resume, "-o", "json"), fields: resumeFields},
		{name: "status-yaml", opts: four, args: with(status, "-o", "yaml")},
		{name: "scale-json", opts: four, args: []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "3", "--yes", "-o", "json"},
			fields: resultFields, progress: true},
		{name: "resume-after-crash-json", opts: four, setup: crashScale, args: with(resume, "-o", "json"), fields: resultFields, progress: true},
		{name: "abort-nothing-json", opts: four, args: []string{"abort", "demo", "-n", "cassandra", "--yes", "-o", "json"}, fields: []string{"result", "message", "next"}},
		{name: "restart-dry-run", opts: world.Opts{Nodes: 2}, args: []string{"restart", "demo", "-n", "cassandra", "--rack", "rack1", "--dry-run"}},
		{name: "restart-dry-run-json", opts: world.Opts{Nodes: 2}, args: []string{"restart", "demo", "-n", "cassandra", "--rack", "rack1", "--dry-run", "-o", "json"}, fields: planFields},
		{name: "scale-up-dry-run", opts: world.Opts{Nodes: 2}, args: []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "3", "--cleanup", "--dry-run"}},
		{name: "repair-nothing-json", opts: world.Opts{Nodes: 2}, args: []string{"repair-operator-state", "demo", "-n", "cassandra", "--dry-run", "-o", "json"}, fields: []string{"next"}},
		{name: "version-client", opts: four, args: []string{"version", "--client"}},
		{name: "version-client-json", opts: four, args: []string{"version", "--client", "-o", "json"}, fields: []string{"plugin"}},
		{name: "version-json", opts: four, args: []string{"version", "-o", "json"}, fields: []string{"plugin", "crd"}},
	}
}

// helpCases is the --help of the root and of every command the root offers, found by
// walking the tree: a new command without a reviewed golden help fails the test.
func helpCases(t *testing.T) []goldenCase {
	t.Helper()
	cases := []goldenCase{{name: "help-root", args: []string{"--help"}}}
	root := NewRootCmd(NewOptions(genericiooptions.NewTestIOStreamsDiscard(), repair.Operator{Plugin: casskop.Plugin{}}))
	seen := map[string]bool{}
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() {
			continue // help, hidden __complete
		}
		seen[c.Name()] = true
		cases = append(cases, goldenCase{name: "help-" + c.Name(), args: []string{c.Name(), "--help"}})
	}
	for _, want := range []string{"scale", "resume", "status", "version", "completion"} {
		if !seen[want] {
			t.Errorf("the root offers no %q command", want)
		}
	}
	return cases
}

// TestGolden compares the exact stdout of help, status, plans, resume and version with
// the files in testdata/golden. Every command must also keep stderr empty (data on
// stdout only) and exit with its code.
func TestGolden(t *testing.T) {
	cases := append(helpCases(t), goldenCases()...)
	want := map[string]bool{}
	for _, tc := range cases {
		want[tc.name+".golden"] = true
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if opts.Nodes == 0 {
				opts.Nodes = 2
			}
			w := world.New(t, opts)
			if tc.setup != nil {
				tc.setup(t, w)
			}
			readyStatefulSets(t, w)
			stdout, stderr, code, crashed := run(w, 0, tc.args...)
			if crashed || code != tc.code {
				t.Fatalf("exit %d (crashed %v), want %d\nstdout:\n%s\nstderr:\n%s", code, crashed, tc.code, stdout, stderr)
			}
			if stderr != "" && !tc.progress {
				t.Errorf("stderr must stay empty (data goes to stdout):\n%s", stderr)
			}
			if tc.fields != nil {
				checkJSON(t, w, stdout, tc.fields)
			}
			compareGolden(t, tc.name, normalise(stdout))
		})
	}
	// A golden file that no case produces is a leftover: it would silently stop being
	// checked.
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*.golden"))
	for _, f := range files {
		if !want[filepath.Base(f)] {
			if *update {
				_ = os.Remove(f)
				continue
			}
			t.Errorf("%s is produced by no test case (remove it, or run with -update)", f)
		}
	}
}

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(goldenDir, name+".golden")
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./internal/cli -run Golden -update)", err)
	}
	if string(b) != got {
		t.Errorf("%s differs (if the change is intended: go test ./internal/cli -run Golden -update, and review the diff)\n%s", path, lineDiff(string(b), got))
	}
}

// lineDiff shows the first differing lines, enough to see what changed.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g || i >= len(wl) || i >= len(gl) {
			fmt.Fprintf(&b, "line %d:\n  golden: %q\n  got:    %q\n", i+1, w, g)
			if shown++; shown == 10 {
				b.WriteString("  ...\n")
				break
			}
		}
	}
	return b.String()
}

// checkJSON parses stdout, checks the documented top-level fields and, when the output
// has one, that "next" is a runnable command.
func checkJSON(t *testing.T, w *world.World, stdout string, fields []string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	var missing []string
	for _, f := range fields {
		if _, ok := m[f]; !ok {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Errorf("JSON lacks documented fields %v (has %v)", missing, keys)
	}
	if next, ok := m["next"]; ok {
		s, _ := next.(string)
		checkNext(t, w, s)
	}
}

// nextPlaceholders are the words a "next" command may leave for the user to fill in
// (status of an idle cluster suggests "scale ... --rack RACK --nodes N"), with a value
// that makes the command valid in the test world. Any other upper-case word is a bug.
var nextPlaceholders = map[string]string{"RACK": "rack1", "N": "1"}

var reUpperWord = regexp.MustCompile(`^[A-Z][A-Z_]*$`)

// checkNext asserts that next is "kubectl cassandra <command> ...", that the command
// exists and its flags and arguments parse; a read-only status is also run and must
// succeed.
func checkNext(t *testing.T, w *world.World, next string) {
	t.Helper()
	const prefix = "kubectl cassandra "
	if !strings.HasPrefix(next, prefix) {
		t.Errorf("next %q does not start with %q", next, prefix)
		return
	}
	if strings.ContainsAny(next, `"'$;|&<>`+"`") {
		t.Errorf("next %q needs shell quoting; it must be plain words", next)
		return
	}
	args := strings.Fields(strings.TrimPrefix(next, prefix))
	for i, a := range args {
		if v, ok := nextPlaceholders[a]; ok {
			args[i] = v
		} else if reUpperWord.MatchString(a) {
			t.Errorf("next %q has an undocumented placeholder %q", next, a)
		}
	}
	root := NewRootCmd(NewOptions(genericiooptions.NewTestIOStreamsDiscard(), repair.Operator{Plugin: casskop.Plugin{}}))
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root || !cmd.IsAvailableCommand() {
		t.Errorf("next %q names no plugin command (%v)", next, err)
		return
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("next %q: %v", next, err)
		return
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		t.Errorf("next %q: %v", next, err)
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		t.Errorf("next %q: %v", next, err)
	}
	// --wait blocks until the operation in flight ends: parsing it is the check.
	if cmd.Name() == "status" && !slices.Contains(args, "--wait") {
		if _, stderr, code, _ := run(w, 0, args...); code != 0 {
			t.Errorf("next %q exited %d:\n%s", next, code, stderr)
		}
	}
}

// TestGoldenFilesClean: golden files hold no unmasked volatile value and no ANSI bytes
// (they are produced with auto colour to a buffer, which must mean no colour).
func TestGoldenFilesClean(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*.golden"))
	if len(files) == 0 {
		t.Fatal("no golden files (run: go test ./internal/cli -run Golden -update)")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("\x1b")) {
			t.Errorf("%s has ANSI escape bytes", f)
		}
		if normalise(string(b)) != string(b) {
			t.Errorf("%s has unmasked volatile values", f)
		}
		if len(b) == 0 || b[len(b)-1] != '\n' {
			t.Errorf("%s does not end with a newline", f)
		}
	}
}
