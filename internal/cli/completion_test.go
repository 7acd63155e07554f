package cli

import (
	"bytes"
	"context"
	"errors"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// completed is what the hidden __complete command printed: the candidates, the
// directive number, and stderr.
type completed struct {
	values    []string
	directive string
	stderr    string
	code      int
}

// noFileDirective is cobra's closing stderr line for ShellCompDirectiveNoFileComp (":4"):
// informational, ignored by the shell scripts. Anything else on stderr would be noise
// in the user's terminal while they press TAB.
const noFileDirective = "Completion ended with directive: ShellCompDirectiveNoFileComp\n"

func parseCompletion(t *testing.T, stdout, stderr string, code int) completed {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		t.Fatalf("no directive line in %q", stdout)
	}
	c := completed{directive: last, stderr: stderr, code: code}
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t") // drop descriptions
		c.values = append(c.values, name)
	}
	return c
}

// complete runs `kubectl cassandra __complete args...` against the world, as the shim does.
func complete(t *testing.T, w *world.World, args ...string) completed {
	t.Helper()
	stdout, stderr, code, crashed := run(w, 0, append([]string{"__complete"}, args...)...)
	if crashed {
		t.Fatal("crashed")
	}
	return parseCompletion(t, stdout, stderr, code)
}

// completeWith runs __complete with the given clients (nil: built from the flags, as in
// a real shell).
func completeWith(t *testing.T, c *kube.Clients, args ...string) completed {
	t.Helper()
	var out, errb bytes.Buffer
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, repair.Operator{Plugin: casskop.Plugin{}})
	o.Clients = c
	code := o.Execute(context.Background(), append([]string{"__complete"}, args...))
	return parseCompletion(t, out.String(), errb.String(), code)
}

func sorted(s []string) []string {
	s = append([]string{}, s...)
	sort.Strings(s)
	return s
}

func expectValues(t *testing.T, c completed, want ...string) {
	t.Helper()
	if strings.Join(sorted(c.values), " ") != strings.Join(sorted(want), " ") {
		t.Errorf("candidates %q, want %q", c.values, want)
	}
	if c.directive != ":4" {
		t.Errorf("directive %s, want :4 (no file completion: a file name is never a valid value)", c.directive)
	}
	if c.code != 0 || c.stderr != noFileDirective {
		t.Errorf("exit %d, stderr %q", c.code, c.stderr)
	}
}

// addCluster adds another CassandraCluster to the namespace.
func addCluster(t *testing.T, w *world.World, name string) {
	t.Helper()
	u := w.CR().DeepCopy()
	u.SetName(name)
	u.SetUID(types.UID("uid-" + name))
	u.SetAnnotations(nil)
	if err := w.Dyn.Tracker().Add(u); err != nil {
		t.Fatal(err)
	}
}

// setTopology rewrites the CR's topology: dc name -> rack names. The fake world gives
// every DC the same racks, which could not show that --dc filters --rack.
func setTopology(t *testing.T, w *world.World, dcs [][]string) {
	t.Helper()
	u := w.CR().DeepCopy()
	var list []any
	for _, dc := range dcs {
		var racks []any
		for _, r := range dc[1:] {
			racks = append(racks, map[string]any{"name": r})
		}
		list = append(list, map[string]any{"name": dc[0], "nodesPerRacks": int64(2), "rack": racks})
	}
	if err := unstructured.SetNestedSlice(u.Object, list, "spec", "topology", "dc"); err != nil {
		t.Fatal(err)
	}
	if err := w.Dyn.Tracker().Update(world.CCGVR, u, w.NS); err != nil {
		t.Fatal(err)
	}
}

// clusterCommands are the commands whose positional argument is a CLUSTER, found by
// their usage line, so that a new command is checked too.
func clusterCommands(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, c := range NewRootCmd(NewOptions(genericiooptions.NewTestIOStreamsDiscard(), repair.Operator{Plugin: casskop.Plugin{}})).Commands() {
		if c.IsAvailableCommand() && strings.Contains(c.Use, "[CLUSTER]") {
			names = append(names, c.Name())
		}
	}
	for _, want := range []string{"scale", "resume", "status"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("%s does not take [CLUSTER] (commands: %v)", want, names)
		}
	}
	return names
}

func TestCompleteClusterNames(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2})
	addCluster(t, w, "other")
	for _, cmd := range clusterCommands(t) {
		t.Run(cmd, func(t *testing.T) {
			expectValues(t, complete(t, w, cmd, ""), "demo", "other")
			expectValues(t, complete(t, w, cmd, "-n", "cassandra", "d"), "demo", "other") // the shell filters by prefix
			// One CLUSTER at most: nothing after it.
			expectValues(t, complete(t, w, cmd, "demo", ""))
		})
	}
}

func TestCompleteRacksAndDCs(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2, DCs: []string{"dc1", "dc2"}})
	setTopology(t, w, [][]string{{"dc1", "r1", "r2"}, {"dc2", "r3"}})
	expectValues(t, complete(t, w, "scale", "demo", "--rack", ""), "r1", "r2", "r3")
	expectValues(t, complete(t, w, "scale", "demo", "--dc", "dc1", "--rack", ""), "r1", "r2")
	expectValues(t, complete(t, w, "scale", "demo", "--dc", "dc2", "--rack", ""), "r3")
	expectValues(t, complete(t, w, "scale", "demo", "--dc", "dc9", "--rack", ""))
	expectValues(t, complete(t, w, "scale", "demo", "--dc", ""), "dc1", "dc2")
	expectValues(t, complete(t, w, "scale", "demo", "--rack", "r3", "--dc", ""), "dc1", "dc2")
	// CLUSTER may be left out when the namespace holds one cluster: so may it here.
	expectValues(t, complete(t, w, "scale", "-n", "cassandra", "--dc", "dc2", "--rack", ""), "r3")
	// Every command with --rack/--dc completes them the same way (restart too).
	for _, c := range NewRootCmd(NewOptions(genericiooptions.NewTestIOStreamsDiscard(), repair.Operator{Plugin: casskop.Plugin{}})).Commands() {
		if c.IsAvailableCommand() && c.Flags().Lookup("rack") != nil && c.Name() != "scale" {
			t.Run(c.Name(), func(t *testing.T) {
				expectValues(t, complete(t, w, c.Name(), "demo", "--dc", "dc1", "--rack", ""), "r1", "r2")
				if c.Flags().Lookup("dc") != nil {
					expectValues(t, complete(t, w, c.Name(), "demo", "--dc", ""), "dc1", "dc2")
				}
			})
		}
	}
	// A rack name shared by two DCs is offered once.
	setTopology(t, w, [][]string{{"dc1", "rack1"}, {"dc2", "rack1", "rack2"}})
	expectValues(t, complete(t, w, "scale", "demo", "--rack", ""), "rack1", "rack2")
	// With two clusters and none named, there is no topology to offer (and no error).
	addCluster(t, w, "other")
	expectValues(t, complete(t, w, "scale", "--rack", ""))
}

// TestCompleteOutputValues: -o completes to the formats the flag's help names, on every
// command that has it; --color to its three modes.
func TestCompleteOutputValues(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2})
	for _, cmd := range []string{"scale", "status"} {
		expectValues(t, complete(t, w, cmd, "demo", "-o", ""), "text", "json", "yaml")
		expectValues(t, complete(t, w, cmd, "demo", "--output", ""), "text", "json", "yaml")
	}
	t.Run("every command with -o, and --color", func(t *testing.T) {
		for _, c := range NewRootCmd(NewOptions(genericiooptions.NewTestIOStreamsDiscard(), repair.Operator{Plugin: casskop.Plugin{}})).Commands() {
			f := c.Flags().Lookup("output")
			if !c.IsAvailableCommand() || f == nil {
				continue
			}
			_, formats, ok := strings.Cut(f.Usage, "Output format: ")
			if !ok {
				t.Errorf("%s -o: usage %q does not list the formats", c.Name(), f.Usage)
				continue
			}
			t.Logf("%s -o", c.Name())
			expectValues(t, complete(t, w, c.Name(), "-o", ""), strings.Split(formats, "|")...)
		}
		expectValues(t, complete(t, w, "status", "--color", ""), "auto", "always", "never")
	})
}

func TestCompleteCommandsAndShells(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2})
	c := complete(t, w, "")
	for _, want := range []string{"scale", "resume", "status", "abort", "version", "completion"} {
		found := false
		for _, v := range c.values {
			found = found || v == want
		}
		if !found {
			t.Errorf("command %q not offered: %q", want, c.values)
		}
	}
	for _, v := range c.values {
		if strings.HasPrefix(v, "__") {
			t.Errorf("hidden command %q offered", v)
		}
	}
	expectValues(t, complete(t, w, "completion", ""), "kubectl-shim", "bash", "zsh", "fish", "powershell")
}

// failingDiscovery is an API server that cannot be reached.
type failingDiscovery struct{ discovery.DiscoveryInterface }

func (failingDiscovery) ServerResourcesForGroupVersion(string) (*metav1.APIResourceList, error) {
	return nil, errors.New(`Get "https://10.0.0.1:6443/apis/db.orange.com/v2": dial tcp 10.0.0.1:6443: connect: connection refused`)
}

// unreachable lists every completion that needs the cluster.
var unreachable = [][]string{
	{"scale", ""},
	{"status", ""},
	{"resume", ""},
	{"scale", "demo", "--rack", ""},
	{"scale", "demo", "--dc", ""},
	{"scale", "--dc", "dc1", "--rack", ""},
}

// TestCompleteUnreachable: when the cluster cannot be asked, completion offers nothing,
// exits 0 and prints no error: the user is typing, not waiting for a diagnosis.
func TestCompleteUnreachable(t *testing.T) {
	check := func(t *testing.T, c completed) {
		t.Helper()
		if len(c.values) != 0 || c.code != 0 || c.stderr != noFileDirective || c.directive != ":4" {
			t.Errorf("candidates %q, directive %s, exit %d, stderr %q", c.values, c.directive, c.code, c.stderr)
		}
	}
	t.Run("no CRD", func(t *testing.T) {
		w := world.New(t, world.Opts{Nodes: 2})
		w.Kube.Resources = nil
		for _, a := range unreachable {
			check(t, complete(t, w, a...))
		}
	})
	t.Run("discovery fails", func(t *testing.T) {
		w := world.New(t, world.Opts{Nodes: 2})
		c := &kube.Clients{Kube: w.Kube, Dynamic: w.Dyn, Discovery: failingDiscovery{w.Kube.Discovery()}, Namespace: w.NS}
		for _, a := range unreachable {
			check(t, completeWith(t, c, a...))
		}
	})
	t.Run("forbidden", func(t *testing.T) {
		w := world.New(t, world.Opts{Nodes: 2})
		w.Dyn.PrependReactor("*", "cassandraclusters", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, errors.New(`cassandraclusters.db.orange.com is forbidden: User "dev" cannot list resource "cassandraclusters"`)
		})
		for _, a := range unreachable {
			check(t, complete(t, w, a...))
		}
	})
	t.Run("no kubeconfig", func(t *testing.T) {
		// The CNPG #10889 case: no usable kubeconfig at all.
		empty := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(empty, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("KUBECONFIG", empty)
		t.Setenv("KUBERNETES_SERVICE_HOST", "")
		for _, a := range unreachable {
			check(t, completeWith(t, nil, a...))
		}
		check(t, completeWith(t, nil, append([]string{"--kubeconfig", filepath.Join(t.TempDir(), "missing")}, unreachable[0]...)...))
	})
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close() // nothing listens there any more
		t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
		for _, a := range unreachable {
			check(t, completeWith(t, nil, append([]string{"--server", url}, a...)...))
		}
	})
}

// TestCompleteHangingServer: an API server that accepts the connection and never answers
// must not hang the user's shell: completion gives up within its own bound.
func TestCompleteHangingServer(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	done := make(chan completed, 1)
	go func() { done <- completeWith(t, nil, "--server", srv.URL, "scale", "") }()
	// The completion functions bound themselves to 3s; allow generous slack for a loaded
	// CI machine, but not forever.
	select {
	case c := <-done:
		if len(c.values) != 0 || c.code != 0 || c.stderr != noFileDirective {
			t.Errorf("candidates %q, exit %d, stderr %q", c.values, c.code, c.stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("completion still waiting for the API server after 15s")
	}
}

// TestKubectlShim: the printed shim is the file shipped in release archives, and it
// hands kubectl's words to `kubectl cassandra __complete` unchanged (empty last word
// included: it is the word being completed).
func TestKubectlShim(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2})
	shim, stderr, code, _ := run(w, 0, "completion", "kubectl-shim")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.HasPrefix(shim, "#!/usr/bin/env sh\n") {
		t.Errorf("the shim must start with a POSIX sh shebang:\n%s", shim)
	}
	shipped, err := os.ReadFile(filepath.Join("..", "..", "kubectl_complete-cassandra"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		t.Log("kubectl_complete-cassandra is not in the repository yet: comparison skipped")
	case err != nil:
		t.Fatal(err)
	default:
		t.Run("same as the shipped file", func(t *testing.T) {
			if string(shipped) != shim {
				t.Errorf("`completion kubectl-shim` prints\n%s\nbut kubectl_complete-cassandra is\n%s", shim, shipped)
			}
		})
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to run the shim")
	}
	dir := t.TempDir()
	// A fake kubectl that shows each argument it gets, bracketed so an empty one shows.
	fake := "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{"printed": shim}
	if len(shipped) > 0 {
		scripts["shipped"] = string(shipped)
	}
	for name, body := range scripts {
		path := filepath.Join(dir, "kubectl_complete-cassandra-"+name)
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sh, path, "scale", "demo", "--rack", "")
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Errorf("%s shim: exit status of kubectl not passed on: %v", name, err)
		}
		if want := "[cassandra]\n[__complete]\n[scale]\n[demo]\n[--rack]\n[]\n"; string(out) != want {
			t.Errorf("%s shim passed\n%s\nwant\n%s", name, out, want)
		}
	}
}

func TestCompletionBadShell(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2})
	stdout, stderr, code, _ := run(w, 0, "completion")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "accepts 1 arg(s), received 0") {
		t.Errorf("completion without a shell: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		stdout, _, code, _ := run(w, 0, "completion", sh)
		if code != 0 || !strings.Contains(stdout, "kubectl-cassandra") {
			t.Errorf("completion %s: exit %d, %d bytes", sh, code, len(stdout))
		}
	}
	t.Run("unknown shell is bad usage", func(t *testing.T) {
		stdout, stderr, code, _ := run(w, 0, "completion", "tcsh")
		if code != 2 || stdout != "" || !strings.Contains(stderr, `"tcsh"`) {
			t.Errorf("completion tcsh: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
}
