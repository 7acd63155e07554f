// Package model holds the Promela model of a scale-down (scaledown.pml) and the tests
// that check it with spin: every property on the model as the code is meant to work,
// and every mutant (a known defect put back into the model) must fail. docs/model.md
// explains the model and how to read a counterexample.
package model

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const modelFile = "scaledown.pml"

// tools returns the paths of spin and a C compiler, or skips the test.
func tools(t *testing.T) (spin, cc string) {
	t.Helper()
	spin, err := exec.LookPath("spin")
	if err != nil {
		t.Skip("spin is not installed (Debian/Ubuntu: apt-get install spin): the model is not checked")
	}
	for _, c := range []string{"gcc", "cc"} {
		if p, err := exec.LookPath(c); err == nil {
			return spin, p
		}
	}
	t.Skip("no C compiler (gcc or cc) to build spin's verifier: the model is not checked")
	return "", ""
}

// mode is what one verifier run checks.
type mode int

const (
	// safety: assertions, invariants (Monitor) and deadlocks (invalid end states).
	safety mode = iota
	// liveness: the LTL property "finishes" under weak fairness.
	liveness
)

// result is what pan reported.
type result struct {
	Errors  int
	States  int64
	Depth   int
	Elapsed time.Duration
	Output  string
	Dir     string // where the trail (scaledown.pml.trail) is, for spin -t -p
}

var (
	reErrors  = regexp.MustCompile(`errors: (\d+)`)
	reDepth   = regexp.MustCompile(`depth reached (\d+)`)
	reStates  = regexp.MustCompile(`(?m)^\s*([0-9.e+]+) states, stored`)
	reElapsed = regexp.MustCompile(`elapsed time ([0-9.e+]+) seconds`)
)

// verify generates the verifier for the model with defines, compiles and runs it.
func verify(t *testing.T, m mode, defines ...string) result {
	t.Helper()
	spin, cc := tools(t)
	dir := t.TempDir()
	src, err := os.ReadFile(modelFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, modelFile), src, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil && !(strings.HasSuffix(name, "pan") && len(out) > 0) {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(spin, append(append([]string{"-a"}, defines...), modelFile)...)
	opt := "-O2" // the full searches are long: a faster verifier
	if len(defines) > 0 && strings.HasPrefix(defines[0], "-DMUT_") {
		opt = "-O0" // a mutant fails within a second: compile fast
	}
	ccArgs := []string{"-w", opt, "-DCOLLAPSE", "-DMEMLIM=2048", "-o", "pan", "pan.c"}
	panArgs := []string{"-m1000000"}
	if m == safety {
		ccArgs = append(ccArgs, "-DSAFETY", "-DNOCLAIM")
	} else {
		ccArgs = append(ccArgs, "-DNFAIR=3")
		panArgs = append(panArgs, "-a", "-f", "-N", "finishes")
	}
	run(cc, ccArgs...)
	out := run(filepath.Join(dir, "pan"), panArgs...)
	r := result{Output: out, Dir: dir, Errors: -1}
	if m := reErrors.FindStringSubmatch(out); m != nil {
		r.Errors, _ = strconv.Atoi(m[1])
	}
	if m := reDepth.FindStringSubmatch(out); m != nil {
		r.Depth, _ = strconv.Atoi(m[1])
	}
	if m := reStates.FindStringSubmatch(out); m != nil {
		f, _ := strconv.ParseFloat(m[1], 64)
		r.States = int64(f)
	}
	if m := reElapsed.FindStringSubmatch(out); m != nil {
		f, _ := strconv.ParseFloat(m[1], 64)
		r.Elapsed = time.Duration(f * float64(time.Second))
	}
	if r.Errors < 0 {
		t.Fatalf("cannot read pan's report:\n%s", out)
	}
	if strings.Contains(out, "max search depth too small") {
		t.Fatalf("pan's search depth was too small: the search was not exhaustive\n%s", out)
	}
	return r
}

// trail replays the counterexample pan wrote, as spin -t -p shows it (the last lines).
func trail(t *testing.T, r result, defines ...string) string {
	spin, _ := tools(t)
	args := append(append([]string{"-t", "-p"}, defines...), modelFile)
	cmd := exec.Command(spin, args...)
	cmd.Dir = r.Dir
	out, _ := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 25 {
		lines = lines[len(lines)-25:]
	}
	return strings.Join(lines, "\n")
}

// nospace drops blanks: pan prints expressions with spaces of its own choosing.
func nospace(s string) string { return strings.ReplaceAll(s, " ", "") }

func summary(r result) string {
	return fmt.Sprintf("%d states stored, depth %d, %s", r.States, r.Depth, r.Elapsed.Round(time.Millisecond))
}

// scenarios: the model is checked exhaustively in each. One run alone meets every
// change of the world (a node DN, a pod re-created mid-decommission, a refusal, a foreign
// write to the cluster resource) and crashes at any point, each followed by a resume;
// two runs meet the lock's hazards: a forced takeover while the first run lives, lease
// renewals that may conflict, a crash and the other engineer's takeover by lease. All
// together do not fit CI's few minutes (docs/model.md).
var scenarios = []struct {
	name    string
	defines []string
}{
	{"world", []string{"-DRUNS=1", "-DCRASHES=2", "-DFORCES=0", "-DDOWNS=1", "-DRECREATES=1", "-DREFUSALS=1", "-DBUMPS=1", "-DRENEWS=0"}},
	{"force-takeover", []string{"-DRUNS=2", "-DCRASHES=0", "-DFORCES=1", "-DDOWNS=0", "-DRECREATES=0", "-DREFUSALS=0", "-DBUMPS=0", "-DRENEWS=1"}},
	{"lease-takeover", []string{"-DRUNS=2", "-DCRASHES=1", "-DFORCES=0", "-DDOWNS=0", "-DRECREATES=0", "-DREFUSALS=0", "-DBUMPS=1", "-DRENEWS=1"}},
}

func scenario(name string) []string {
	for _, s := range scenarios {
		if s.name == name {
			return s.defines
		}
	}
	panic("no scenario " + name)
}

// TestModelSafety: on the model of the design, no assertion (fencing, all-UN before a
// decommission, no PVC of a live pod or ring member, the end state), no invariant
// (never two LEAVING, no live operator while the StatefulSet and the cluster resource
// differ, operator history 1 -> 0 -> 1) and no deadlock, in every interleaving.
func TestModelSafety(t *testing.T) {
	for _, sc := range scenarios {
		sc := sc
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel() // CI's two cores: two searches at once
			r := verify(t, safety, sc.defines...)
			t.Logf("safety, %s: %s", sc.name, summary(r))
			if r.Errors != 0 {
				t.Fatalf("spin found a counterexample:\n%s\ntrail:\n%s", r.Output, trail(t, r, sc.defines...))
			}
		})
	}
}

// TestModelLiveness: once crashes and the environment's changes stop (they are bounded),
// some run finishes the operation, under weak fairness, from every reachable state.
func TestModelLiveness(t *testing.T) {
	for _, sc := range scenarios {
		sc := sc
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			r := verify(t, liveness, sc.defines...)
			t.Logf("liveness (<> finished, weak fairness), %s: %s", sc.name, summary(r))
			if r.Errors != 0 {
				t.Fatalf("spin found a run that never finishes:\n%s\ntrail:\n%s", r.Output, trail(t, r, sc.defines...))
			}
		})
	}
}

// mutants put back a defect each; spin must find a counterexample, and the one named.
var mutants = []struct {
	name     string
	define   string
	mode     mode
	want     string // in pan's report (blanks ignored): the property that bit
	scenario string
}{
	{"pvc-before-pod-gone", "MUT_PVC_EARLY", safety, "assertion violated (!(pod[n])&&(mode[n]==", "world"},
	{"no-fencing", "MUT_NO_FENCE", safety, "assertion violated ((cp_present&&(cp_holder==sess))&&!(deposed[sess]))", "force-takeover"},
	{"no-all-UN-check", "MUT_NO_ALLUN", safety, "assertion violated ((((mode[0]==", "world"},
	{"seq-raised-holder-not-compared", "MUT_SEQ", safety, "assertion violated ((cp_holder==sess)&&!(deposed[sess]))", "force-takeover"},
	{"operator-paused-twice", "MUT_PAUSE_PLAIN", safety, "assertion violated ((pauses<=1)&&(restores<=1))", "world"},
	{"operator-not-paused", "MUT_NO_PAUSE", safety, "assertion violated !(((cp_present&&(opr>0))&&(sts!=crn)))", "world"},
	{"no-redo-after-restart", "MUT_NO_REDO", liveness, "acceptance cycle", "world"},
}

// TestModelMutants: each property bites.
func TestModelMutants(t *testing.T) {
	for _, m := range mutants {
		m := m
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			defs := append([]string{"-D" + m.define}, scenario(m.scenario)...)
			r := verify(t, m.mode, defs...)
			t.Logf("%s (%s): %s", m.define, m.scenario, summary(r))
			if r.Errors == 0 {
				t.Fatalf("mutant %s: spin found no counterexample; the property it breaks is not checked\n%s", m.define, r.Output)
			}
			if !strings.Contains(nospace(r.Output), nospace(m.want)) && !(m.mode == liveness && strings.Contains(r.Output, "invalid end state")) {
				t.Fatalf("mutant %s failed, but not with %q:\n%s\ntrail:\n%s", m.define, m.want, r.Output, trail(t, r, defs...))
			}
			for _, line := range strings.Split(r.Output, "\n") {
				if strings.HasPrefix(line, "pan:1:") {
					t.Logf("%s: counterexample: %s", m.define, line)
				}
			}
		})
	}
}
