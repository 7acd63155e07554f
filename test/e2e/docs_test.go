package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/hack/docs/examples"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// The documentation's examples (README.md, docs/runbooks, the generated docs/reference;
// hack/docs/examples finds them) run through the real kubectl against fixture worlds
// named as the pages name them: the CassandraCluster cassandra-demo (dc1, rack1, pods
// cassandra-demo-dc1-rack1-N) and the CassandraDatacenter dc1, each in its own namespace
// (an example's "-n cassandra" is replaced by it). Each world is as the page assumes:
// healthy, with no operation in flight, except for replace-node and scale --remove-dead,
// which run where cassandra-demo-dc1-rack1-2 is dead. A command that changes the cluster
// runs with --dry-run added: its flags, the world reading, the preflight and the plan are
// checked, and the worlds stay as the next example expects them. The exit code must be the
// one the page documents (# exit N, else 0). Lines marked "# needs a real cluster" or
// "# runs until Ctrl-C" are only parsed (hack/docs's unit test).

// docsWorld is where an example runs.
type docsWorld int

const (
	docsCassKop docsWorld = iota
	docsDeadNode
	docsCassOperator
)

// docsExample is an example ready to run: its world and the shell line to run there.
type docsExample struct {
	examples.Example
	world  docsWorld
	dryRun bool // --dry-run added
}

func docsScenarios() []scenario {
	return []scenario{{name: "docs-examples", run: testDocsExamples}}
}

// docExamples reads and sorts every example of the documentation.
func docExamples(t *testing.T) []docsExample {
	t.Helper()
	all, err := examples.All(suite.root)
	require.NoError(t, err)
	var out []docsExample
	for _, ex := range all {
		cmd, pos, err := examples.Check(ex)
		require.NoError(t, err, "%s (hack/docs's TestExamplesParse says the same)", ex)
		d := docsExample{Example: ex}
		switch {
		case cmd.Name() == "replace-node" || slices.Contains(ex.Args, "--remove-dead"):
			d.world = docsDeadNode
		case len(pos) > 0 && pos[0] == "dc1":
			d.world = docsCassOperator
		}
		if cmd.Flags().Lookup("dry-run") != nil && !slices.Contains(ex.Args, "--dry-run") {
			d.dryRun = true
		}
		out = append(out, d)
	}
	return out
}

// testDocsExamples runs the CassKop examples (once: on the first CRD variant only).
func testDocsExamples(t *testing.T, crd *fixture.CRDInfo) {
	if crd.Variant.Name != suite.crds[0].Name {
		t.Skipf("the documentation's examples run on the first CRD (%s) only", suite.crds[0].Name)
	}
	all := docExamples(t)
	t.Run("healthy", func(t *testing.T) {
		t.Parallel()
		ns := newNamespace(t)
		newCassKopCluster(t, ns, crd, fixture.ClusterOptions{Name: "cassandra-demo", DCs: oneRack(3)})
		createJMXSecret(t, ns)
		runDocsExamples(t, ns, all, docsCassKop)
	})
	t.Run("dead-node", func(t *testing.T) {
		t.Parallel()
		ns := newNamespace(t)
		cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{Name: "cassandra-demo", DCs: oneRack(3), Sim: fixture.SimOptions{RF: 2}})
		require.NoError(t, cl.KillNode(context.Background(), "cassandra-demo-dc1-rack1-2"))
		runDocsExamples(t, ns, all, docsDeadNode)
	})
}

// testCassOpDocsExamples runs the examples on the CassandraDatacenter dc1.
func testCassOpDocsExamples(t *testing.T) {
	ns := newNamespace(t)
	newCassOpDC(t, ns, fixture.DatacenterOptions{Name: "dc1", Size: 3})
	runDocsExamples(t, ns, docExamples(t), docsCassOperator)
}

// createJMXSecret is the Secret the nodetool examples name (--jmx-secret cassandra-jmx).
func createJMXSecret(t *testing.T, ns string) {
	t.Helper()
	_, err := suite.clients.Kube.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cassandra-jmx"},
		StringData: map[string]string{"username": "cassandra", "password": "cassandra"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

var docsNamespaceFlag = regexp.MustCompile(`\s(-n|--namespace)[ =]cassandra\b`)

// runDocsExamples runs, in ns, each distinct example of world, in the pages' order.
func runDocsExamples(t *testing.T, ns string, all []docsExample, world docsWorld) {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".local", "bin"), 0o755))
	seen := map[string]bool{}
	ran := 0
	for _, ex := range all {
		if ex.world != world {
			continue
		}
		if ex.Skip != "" {
			t.Logf("not run (# %s): %s", ex.Skip, ex)
			continue
		}
		line := docsNamespaceFlag.ReplaceAllString(ex.Shell, "")
		line = "kubectl cassandra -n " + ns + strings.TrimPrefix(line, "kubectl cassandra")
		if ex.dryRun {
			line += " --dry-run"
		}
		if seen[line] {
			continue
		}
		seen[line] = true
		ran++
		code, out := runShell(t, home, line)
		if code != ex.Exit {
			t.Errorf("%s\nran: %s\nexit %d, the page documents %d\n%s", ex, line, code, ex.Exit, out)
		}
	}
	t.Logf("%d examples run", ran)
}

// runShell runs line with bash (the examples may redirect their output) in home.
func runShell(t *testing.T, home, line string) (int, string) {
	t.Helper()
	requirePlugin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case ctx.Err() != nil:
		t.Fatalf("%s: timed out\n%s", line, out.String())
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	}
	t.Fatalf("%s: %v", line, err)
	return 0, ""
}
