package release

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKrewInstallArchive does what a user (and the krew-index submission checklist) does
// with a release: `kubectl krew install --manifest=... --archive=<local archive>`, into an
// empty KREW_ROOT and HOME, then runs the plugin through kubectl as `kubectl cassandra`,
// and completes through the shim krew extracted, linked by the commands of the caveats.
//
// krew refuses a plugin name together with --manifest ("must specify either plugin names
// ... or --manifest/--manifest-url; not both"), so none is given.
func TestKrewInstallArchive(t *testing.T) {
	requireKubectl(t)
	s := snapshot(t)
	m := readManifest(t, repoPath("krew-manifest.yaml"))
	version := m.Spec.Version
	archive := hostArchive(t, s, version)
	// --partial: with -short only the host's archive exists; the other platforms keep
	// their sha256, which this install does not read.
	manifest := rewriteManifest(t, s.dist, t.TempDir(), "--partial")

	krewRoot, home := t.TempDir(), t.TempDir()
	// KREW_ROOT/bin first: a kubectl-cassandra elsewhere on PATH (make install) must not
	// be the one that runs.
	path := strings.Join([]string{filepath.Join(krewRoot, "bin"), krewBinDir(t), os.Getenv("PATH")}, string(os.PathListSeparator))
	env := envWith(map[string]string{
		"KREW_ROOT":             krewRoot,
		"HOME":                  home,
		"PATH":                  path,
		"KUBECONFIG":            filepath.Join(home, "no-kubeconfig"), // --client must not need one
		"KREW_NO_UPGRADE_CHECK": "1",                                  // no GitHub API call
	})
	cmd := func(name string, args ...string) string {
		t.Helper()
		c := execIn(home, env, name, args...)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	out := cmd("kubectl", "krew", "install", "--manifest="+manifest, "--archive="+archive)
	if !strings.Contains(out, "Installed plugin: cassandra") {
		t.Errorf("krew install output lacks \"Installed plugin: cassandra\":\n%s", out)
	}
	// The caveats are printed once, at install: they are what tells users about the shim.
	if !strings.Contains(out, shimName) {
		t.Errorf("krew install did not print the caveats (no %s):\n%s", shimName, out)
	}

	store := filepath.Join(krewRoot, "store", "cassandra", version)
	license, err := os.ReadFile(filepath.Join(store, "LICENSE"))
	if err != nil {
		t.Fatalf("LICENSE not extracted into the store (krew-index requires it): %v", err)
	}
	if want, _ := os.ReadFile(repoPath("LICENSE")); !bytes.Equal(license, want) {
		t.Errorf("%s/LICENSE differs from the repository's", store)
	}
	shim := filepath.Join(store, shimName)
	if fi, err := os.Stat(shim); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s not extracted as an executable where the caveats say (%v)", shim, err)
	}
	if _, err := os.Stat(filepath.Join(krewRoot, "receipts", "cassandra.yaml")); err != nil {
		t.Errorf("no krew receipt for cassandra: %v", err)
	}

	out = cmd("kubectl", "cassandra", "version", "--client")
	t.Logf("kubectl cassandra version --client: %s", out)
	if !strings.Contains(out, version) {
		t.Errorf("kubectl cassandra version --client printed %q, want the release version %s", out, version)
	}

	// Completion as the caveats set it up: the shim linked onto PATH. kubectl >= 1.26 runs
	// kubectl_complete-cassandra for `kubectl cassandra <TAB>`; the plugin's cobra completion
	// answers with its commands ("version\t<description>") and a directive line (":<n>").
	// Before the link, kubectl has nothing to ask: this shows the answer comes via the shim.
	if out := cmd("kubectl", "__complete", "cassandra", ""); strings.Contains(out, "version\t") {
		t.Fatalf("kubectl completed plugin commands before the shim was on PATH:\n%s", out)
	}
	// Run the caveats' own commands (the shell lines that set K and link), so that what
	// users copy is what is tested.
	var script []string
	for _, line := range strings.Split(m.Spec.Caveats, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "K=") || strings.HasPrefix(l, "ln ") {
			script = append(script, l)
		}
	}
	if len(script) == 0 {
		t.Fatal("caveats hold no ln command for the completion shim")
	}
	cmd("sh", "-c", strings.Join(script, "\n"))
	if target, err := os.Readlink(filepath.Join(krewRoot, "bin", shimName)); err != nil || target != shim {
		t.Fatalf("the caveats' commands linked %q (%v), want %s", target, err, shim)
	}
	out = cmd("kubectl", "__complete", "cassandra", "")
	t.Logf("kubectl __complete cassandra \"\": %q", out)
	if !strings.Contains(out, "version\t") || !strings.Contains(out, "\n:") {
		t.Errorf("kubectl __complete cassandra \"\" through the shim gave:\n%s\nwant the plugin's commands (version) and a :directive line", out)
	}
}
