package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// suite is the state shared by every test of one run; set up once by TestMain.
var suite struct {
	root      string
	runDir    string
	env       *fixture.Env
	clients   *fixture.Clients
	pluginDir string // holds kubectl-cassandra; first on PATH
	pluginErr error  // the plugin did not build: tests that need it fail with this
	simErr    error  // the nodetool simulator did not build
	crds      []fixture.CRDVariant
	startTime time.Duration // how long the control plane took to come up
}

const skipMsg = "e2e test: needs a local Kubernetes control plane; run `make e2e` " +
	"(or KCASS_E2E=1 go test -count=1 -timeout 60m -v ./test/e2e/...)"

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Getenv("KCASS_E2E") != "1" {
		return m.Run() // every test skips itself (requireE2E)
	}
	logf("setting up the e2e environment")
	stop, err := setup()
	if err != nil {
		logf("SETUP FAILED: %v", err)
		stop()
		return 1
	}
	// SIGINT/SIGTERM (Ctrl-C on `make e2e`): stop the plugins we started and the control
	// plane, then exit. A SIGKILL or a test timeout is covered by up.sh's watchdog instead.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var once sync.Once
	go func() {
		s := <-sigs
		once.Do(func() {
			logf("got %v: tearing down", s)
			stop()
		})
		os.Exit(130)
	}()
	code := m.Run()
	signal.Stop(sigs)
	once.Do(stop)
	summary.print(os.Stderr)
	return code
}

// setup builds and starts everything; the returned func undoes what was done, always.
func setup() (func(), error) {
	var undo []func()
	stop := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	ctx := context.Background()
	root, err := fixture.RepoRoot()
	if err != nil {
		return stop, err
	}
	suite.root = root
	var only []string
	if v := os.Getenv("KCASS_E2E_CRDS"); v != "" {
		only = strings.Split(v, ",")
	}
	suite.crds = fixture.CRDVariants(root, only...)
	if len(suite.crds) == 0 {
		return stop, fmt.Errorf("KCASS_E2E_CRDS=%s matches no CRD (orange-v2.1, cscetbon-v2.3, fixture)", os.Getenv("KCASS_E2E_CRDS"))
	}
	logf("CassandraCluster CRDs under test: %v", crdNames(suite.crds))

	binDir, cached, err := fixture.BinDir(ctx, root)
	if err != nil {
		return stop, err
	}
	if !cached {
		logf("control-plane binaries missing in %s: building them now (first build takes ~20 min on 2 cores; later runs use the cache)", binDir)
	}
	t0 := time.Now()
	if binDir, err = fixture.BuildControlPlane(ctx, root, prefixWriter("[build] ")); err != nil {
		return stop, err
	}
	if !cached {
		logf("control plane built in %s", time.Since(t0).Round(time.Second))
	}

	runDir, err := os.MkdirTemp("", "kcass-e2e-")
	if err != nil {
		return stop, err
	}
	suite.runDir = runDir
	keep := os.Getenv("KCASS_E2E_KEEP") == "1"
	undo = append(undo, func() {
		if keep {
			logf("kept %s (KCASS_E2E_KEEP=1)", runDir)
			return
		}
		_ = os.RemoveAll(runDir)
	})
	suite.pluginDir = filepath.Join(runDir, "bin")
	execBin := filepath.Join(runDir, "exec-bin")
	for _, d := range []string{suite.pluginDir, execBin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return stop, err
		}
	}

	// Build the plugin and the simulator while the control plane starts: both take a few
	// seconds each on 2 cores.
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.Now()
		suite.pluginErr = fixture.GoBuild(ctx, root, "./cmd/kubectl-cassandra", filepath.Join(suite.pluginDir, "kubectl-cassandra"))
		logf("plugin build: %s (err=%v)", time.Since(t).Round(time.Millisecond), suite.pluginErr)
	})
	wg.Go(func() {
		t := time.Now()
		suite.simErr = buildSim(ctx, root, execBin)
		logf("nodetool-sim build: %s (err=%v)", time.Since(t).Round(time.Millisecond), suite.simErr)
	})

	t0 = time.Now()
	env, err := fixture.StartEnv(ctx, fixture.EnvOptions{
		Root: root, BinDir: binDir, Dir: filepath.Join(runDir, "kte"), ExecPath: execBin,
		Progress: prefixWriter("[testenv] "), Keep: keep,
	})
	suite.startTime = time.Since(t0)
	// The builds hold the repo's Go caches; let them end before returning either way.
	wg.Wait()
	if env != nil {
		undo = append(undo, func() {
			// Plugins still running would keep exec sessions into a dying kwok.
			procs.killAll()
			if err := env.Stop(); err != nil {
				logf("teardown: %v", err)
			}
		})
	}
	if err != nil {
		return stop, err
	}
	suite.env = env
	logf("control plane up in %s (API on 127.0.0.1:%d, state in %s)", suite.startTime.Round(100*time.Millisecond), env.APIPort, env.Dir)

	if suite.clients, err = fixture.NewClients(env.Kubeconfig); err != nil {
		return stop, err
	}
	// Everything this process starts (kubectl, the plugin through kubectl) talks to the
	// test cluster and finds the freshly built plugin first on PATH.
	os.Setenv("KUBECONFIG", env.Kubeconfig)
	os.Setenv("PATH", suite.pluginDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	// The plugin must not read a developer's kubectl config for colours/prompts.
	os.Setenv("NO_COLOR", "1")
	return stop, nil
}

func crdNames(vs []fixture.CRDVariant) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

// buildSim installs the simulated nodetool as `nodetool` in the dir on kwok's PATH, and
// the same binary as `cqlsh` (it answers as the name it is run by).
func buildSim(ctx context.Context, root, execBin string) error {
	if _, err := os.Stat(filepath.Join(root, "test/nodetool-sim")); err != nil {
		return fmt.Errorf("test/nodetool-sim is not there yet: %w", err)
	}
	nodetool := filepath.Join(execBin, "nodetool")
	if err := fixture.GoBuild(ctx, root, "./test/nodetool-sim", nodetool); err != nil {
		return err
	}
	b, err := os.ReadFile(nodetool)
	if err != nil {
		return err
	}
	// A new file renamed into place: a cqlsh still running keeps its own.
	tmp := filepath.Join(execBin, ".cqlsh.tmp")
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(execBin, "cqlsh"))
}

// requireE2E skips the test unless the control plane is up.
func requireE2E(t *testing.T) {
	t.Helper()
	if suite.env == nil {
		t.Skip(skipMsg)
	}
}

// requirePlugin fails the test if the plugin did not build.
func requirePlugin(t *testing.T) {
	t.Helper()
	requireE2E(t)
	if suite.pluginErr != nil {
		t.Fatalf("kubectl-cassandra did not build: %v", suite.pluginErr)
	}
}

// requireSim fails the test if the nodetool simulator did not build.
func requireSim(t *testing.T) {
	t.Helper()
	requireE2E(t)
	if suite.simErr != nil {
		t.Fatalf("nodetool simulator: %v", suite.simErr)
	}
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "[e2e %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// prefixWriter forwards whole lines to stderr with a prefix (progress of build/up/down).
func prefixWriter(prefix string) io.Writer {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 0, 4096)
		chunk := make([]byte, 4096)
		for {
			n, err := pr.Read(chunk)
			buf = append(buf, chunk[:n]...)
			for {
				i := strings.IndexByte(string(buf), '\n')
				if i < 0 {
					break
				}
				fmt.Fprintf(os.Stderr, "%s%s\n", prefix, buf[:i])
				buf = buf[i+1:]
			}
			if err != nil {
				return
			}
		}
	}()
	return pw
}

// summary collects what the run did, printed after all tests.
var summary = &runSummary{}

type runSummary struct {
	mu        sync.Mutex
	converged map[string]bool // test name -> reached the expected end state
	scenarios []scenarioResult
	crashes   map[string]int // by the step kind (or "random") that was running when killed
	resumes   int
}

type scenarioResult struct {
	name      string
	dur       time.Duration
	converged bool
	failed    bool
	skipped   bool
}

func (s *runSummary) crash(at string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.crashes == nil {
		s.crashes = map[string]int{}
	}
	s.crashes[at]++
}

func (s *runSummary) resumed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resumes++
}

// track records the test's outcome when it ends.
func (s *runSummary) track(t *testing.T) {
	start := time.Now()
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.scenarios = append(s.scenarios, scenarioResult{
			name: t.Name(), dur: time.Since(start), converged: s.converged[t.Name()] && !t.Failed(), failed: t.Failed(), skipped: t.Skipped(),
		})
	})
}

// markConverged notes that a scenario's cluster reached the expected end state.
func (s *runSummary) markConverged(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.converged == nil {
		s.converged = map[string]bool{}
	}
	s.converged[t.Name()] = true
}

func (s *runSummary) print(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(w, "\n==== e2e summary ====\n")
	if suite.env != nil {
		fmt.Fprintf(w, "control plane start: %s\n", suite.startTime.Round(100*time.Millisecond))
	}
	sort.Slice(s.scenarios, func(i, j int) bool { return s.scenarios[i].name < s.scenarios[j].name })
	ok, failed, skipped, converged := 0, 0, 0, 0
	for _, r := range s.scenarios {
		state := "ok  "
		switch {
		case r.skipped:
			state, skipped = "skip", skipped+1
		case r.failed:
			state, failed = "FAIL", failed+1
		default:
			ok++
		}
		conv := ""
		if r.converged {
			conv, converged = " converged", converged+1
		}
		fmt.Fprintf(w, "  %s %-70s %7s%s\n", state, r.name, r.dur.Round(100*time.Millisecond), conv)
	}
	total := 0
	var kinds []string
	for k, n := range s.crashes {
		total += n
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(kinds)
	fmt.Fprintf(w, "scenarios: %d run, %d passed, %d failed, %d skipped; %d converged\n", len(s.scenarios), ok, failed, skipped, converged)
	fmt.Fprintf(w, "crashes injected: %d (%s); resumes run: %d\n", total, strings.Join(kinds, " "), s.resumes)
	if failed == 0 && ok > 0 {
		fmt.Fprintf(w, "all scenarios that ran passed\n")
	}
}
