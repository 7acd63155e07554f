package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"
)

const modulePath = "github.com/kubectl-cassandra/kubectl-cassandra"

// allPlatforms are the release targets: .goreleaser.yaml goos × goarch.
var allPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// repoRoot is the directory holding go.mod, found in TestMain.
var repoRoot string

// scratch holds what is shared between tests of one run (the snapshot archives);
// TestMain removes it.
var scratch string

func TestMain(m *testing.M) {
	flag.Parse()
	root, err := findRepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release tests:", err)
		os.Exit(1)
	}
	repoRoot = root
	scratch, err = os.MkdirTemp("", "kcass-release-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "release tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(scratch)
	os.Exit(code)
}

// findRepoRoot walks up from the test's directory to our go.mod (not any go.mod: the
// tests must not run against another module by accident).
func findRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod of " + modulePath + " not found above the working directory")
		}
		dir = parent
	}
}

func repoPath(parts ...string) string { return filepath.Join(append([]string{repoRoot}, parts...)...) }

// run runs name with args in dir, with env added to the test's environment, and returns
// combined stdout+stderr. The error includes the output, so t.Fatal(err) is self-explaining.
func run(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String(), err
}

// envWith returns os.Environ() with the keys of set replaced (exec.Cmd takes the last
// duplicate on Unix, but a clean list makes failures readable).
func envWith(set map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

var (
	toolMu    sync.Mutex
	toolPaths = map[string]string{}
	toolErrs  = map[string]error{}
)

// tool returns the path of a release tool built by hack/release/tool.sh (cached across
// runs). When it cannot be built (no module proxy), the test is skipped, unless
// KCASS_REQUIRE_TOOLS=1, where that is a failure.
func tool(t *testing.T, name string) string {
	t.Helper()
	toolMu.Lock()
	defer toolMu.Unlock()
	if _, done := toolPaths[name]; !done && toolErrs[name] == nil {
		cmd := exec.Command(repoPath("hack", "release", "tool.sh"), name)
		cmd.Dir = repoRoot
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			toolErrs[name] = fmt.Errorf("hack/release/tool.sh %s: %w\n%s", name, err, stderr.String())
		} else {
			toolPaths[name] = strings.TrimSpace(string(out))
		}
	}
	if err := toolErrs[name]; err != nil {
		if os.Getenv("KCASS_REQUIRE_TOOLS") == "1" {
			t.Fatalf("cannot build %s (KCASS_REQUIRE_TOOLS=1): %v", name, err)
		}
		t.Skipf("SKIP: cannot build %s from the Go module proxy, so this check cannot run here: %v", name, err)
	}
	return toolPaths[name]
}

// snapshotResult is one run of hack/release/snapshot.sh, shared by the tests of a run.
type snapshotResult struct {
	dist      string
	platforms []string
	err       error
}

var (
	snapOnce sync.Once
	snap     snapshotResult
)

// snapshotPlatforms is what the tests build: every release platform, or with -short only
// the host's (enough to install and run it; the others only add cross-compile time).
func snapshotPlatforms() []string {
	if testing.Short() {
		return []string{runtime.GOOS + "/" + runtime.GOARCH}
	}
	return allPlatforms
}

// snapshot runs hack/release/snapshot.sh once per test binary into a scratch directory
// (not dist/, which a developer may be using) and returns the result. A failure, such as
// README.md still missing, fails every test that needs the archives.
func snapshot(t *testing.T) snapshotResult {
	t.Helper()
	snapOnce.Do(func() {
		// The archives of a real goreleaser run can be checked instead:
		// KCASS_RELEASE_DIST=dist go test ./test/release/ after `goreleaser release --skip=publish`.
		if d := os.Getenv("KCASS_RELEASE_DIST"); d != "" {
			if !filepath.IsAbs(d) {
				d = filepath.Join(repoRoot, d) // relative to the repo, as `make` users think
			}
			snap.platforms = allPlatforms
			snap.dist = d
			return
		}
		snap.platforms = snapshotPlatforms()
		snap.dist = filepath.Join(scratch, "dist")
		_, snap.err = run(repoRoot, []string{
			"DIST=" + snap.dist,
			"PLATFORMS=" + strings.Join(snap.platforms, " "),
			"RELEASE_VERSION=", // the default: spec.version of krew-manifest.yaml
		}, repoPath("hack", "release", "snapshot.sh"))
	})
	if snap.err != nil {
		t.Fatalf("hack/release/snapshot.sh failed: %v", snap.err)
	}
	return snap
}

// hostArchive returns the snapshot archive for the host platform.
func hostArchive(t *testing.T, s snapshotResult, version string) string {
	t.Helper()
	host := runtime.GOOS + "/" + runtime.GOARCH
	for _, p := range s.platforms {
		if p == host {
			goos, goarch, _ := strings.Cut(p, "/")
			return filepath.Join(s.dist, archiveName(version, goos, goarch))
		}
	}
	t.Skipf("SKIP: the host platform %s is not a release platform; cannot install and run the plugin here", host)
	return ""
}

// archiveName is the release archive's file name, as snapshot.sh and the committed
// manifest write it (the consistency test checks goreleaser's template gives the same).
func archiveName(version, goos, goarch string) string {
	ext := "tar.gz"
	if goos == "windows" {
		ext = "zip"
	}
	return fmt.Sprintf("kubectl-cassandra_%s_%s_%s.%s", version, goos, goarch, ext)
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Manifest is the part of a Krew plugin manifest (krew pkg/index/types.go) the tests read.
type Manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string     `json:"version"`
		Homepage         string     `json:"homepage"`
		ShortDescription string     `json:"shortDescription"`
		Description      string     `json:"description"`
		Caveats          string     `json:"caveats"`
		Platforms        []Platform `json:"platforms"`
	} `json:"spec"`
}

// Platform is one spec.platforms entry.
type Platform struct {
	Selector struct {
		MatchLabels      map[string]string `json:"matchLabels"`
		MatchExpressions []any             `json:"matchExpressions"`
	} `json:"selector"`
	URI    string `json:"uri"`
	Sha256 string `json:"sha256"`
	Bin    string `json:"bin"`
	Files  []any  `json:"files"`
}

func (p Platform) key() string {
	return p.Selector.MatchLabels["os"] + "/" + p.Selector.MatchLabels["arch"]
}

// readManifest parses a Krew manifest strictly: an unknown or misspelt field is an error,
// as krew itself would ignore it silently.
func readManifest(t *testing.T, path string) Manifest {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// rewriteManifest runs hack/release/update-krew-manifest.sh on the committed manifest
// with the archives of dist and writes the result to <dir>/cassandra.yaml (the validator
// takes the plugin name from the file name).
func rewriteManifest(t *testing.T, dist, dir string, extra ...string) string {
	t.Helper()
	out := filepath.Join(dir, "cassandra.yaml")
	args := append([]string{"--dist", dist, "--manifest", repoPath("krew-manifest.yaml"), "-o", out}, extra...)
	if _, err := run(repoRoot, nil, repoPath("hack", "release", "update-krew-manifest.sh"), args...); err != nil {
		t.Fatal(err)
	}
	return out
}

// krewBinDir returns a directory holding kubectl-krew (a link to the krew binary), so
// that `kubectl krew ...` works as for a user, and validate-krew-manifest (which runs
// `kubectl krew install`) finds it on PATH.
func krewBinDir(t *testing.T) string {
	t.Helper()
	krew := tool(t, "krew")
	dir := t.TempDir()
	if err := os.Symlink(krew, filepath.Join(dir, "kubectl-krew")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// requireKubectl skips when kubectl is not installed: krew's install check and the plugin
// run both go through it.
func requireKubectl(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("KCASS_REQUIRE_TOOLS") == "1" {
			t.Fatalf("kubectl not on PATH (KCASS_REQUIRE_TOOLS=1)")
		}
		t.Skip("SKIP: kubectl is not on PATH; krew installs and plugin runs go through it")
	}
	return p
}

// execIn returns a command running name in dir with exactly env.
func execIn(dir string, env []string, name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Dir = dir
	c.Env = env
	return c
}
