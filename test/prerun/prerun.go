// Package prerun plays CassKop's bootstrap init container for the test worlds
// (test/world, test/e2e/fixture): it really runs the pre_run.sh of the cluster's
// ConfigMap with bash, as /bootstrap.sh does on every start of every pod, and reads back
// the JVM options the Cassandra of that version then starts with. The scripts are run,
// never pattern-matched, so a wrong file or a failing test shows as it would in a pod.
//
// Facts: docs/how-it-works/replace.md §7.2 (where pre_run.sh runs), §7.3 (which jvm
// options file each version reads), §4.1 (the replace properties).
package prerun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// Bash is the shell the scripts run with: CassKop's bootstrap image runs pre_run.sh
// from its bash /bootstrap.sh; a script without a `#!` line runs in bash there too.
const Bash = "/bin/bash"

// ConfDir is the path the bootstrap container sees its emptyDir `bootstrap` at, the
// configuration the cassandra container reads (generator.go, §7.2).
const ConfDir = "/etc/cassandra"

// ErrNoBash: the machine has no Bash, so no script can run.
var ErrNoBash = errors.New("prerun: " + Bash + " is absent, pre_run.sh cannot run")

// Available reports whether scripts can run here (Bash exists).
func Available() bool {
	_, err := os.Stat(Bash)
	return err == nil
}

// Result is one run of the init container.
type Result struct {
	// Exit is the script's exit status. /bootstrap.sh runs it under `set -e` in the body
	// of an `if`, so anything but 0 fails the bootstrap init container with that status
	// and Cassandra never starts (§7.2, §7.3).
	Exit int
	// Output is what the script printed (stdout and stderr), trimmed.
	Output string
	// JVMOptions are the option lines of the files the version reads, in order.
	JVMOptions []string
	// Options is what the simulated Cassandra starts with (Exit 0 only).
	Options sim.StartOptions
}

// Files are the jvm options files, under ConfDir, that Cassandra version v reads: 3.11
// `jvm.options` (conf/cassandra-env.sh lines 135–137); 4.0+ `jvm-server.options` and
// the JDK's `jvm<N>-server.options` (4.0 bin/cassandra.in.sh lines 154–159; §7.3), JDK
// 11 here as in the 4.x images. A 5.0 image on JDK 17 reads jvm17-server.options
// instead of jvm11: only jvm-server.options matters for the plugin, which writes there.
func Files(v string) []string {
	if v == sim.V311 {
		return []string{"jvm.options"}
	}
	return []string{"jvm-server.options", "jvm11-server.options"}
}

// allFiles are the files the fresh configuration holds (the image's, copied by
// base-config-builder): empty here, only what the script appends counts.
var allFiles = []string{"jvm.options", "jvm-server.options", "jvm11-server.options"}

// Run runs script as pod's bootstrap init container of a Cassandra of version v (sim
// Options.Version). The script runs with Bash in a fresh temporary directory standing
// for the emptyDir: every literal ConfDir in it is mapped there (the mount), and a
// `hostname` on PATH prints pod. err is for what keeps the script from running at all
// (ErrNoBash, the temporary directory); a script that fails is Result.Exit.
func Run(ctx context.Context, script, pod, v string) (Result, error) {
	if !Available() {
		return Result{}, ErrNoBash
	}
	dir, err := os.MkdirTemp("", "prerun-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	conf := filepath.Join(dir, "etc", "cassandra")
	bin := filepath.Join(dir, "bin")
	cm := filepath.Join(dir, "configmap")
	for _, d := range []string{conf, bin, cm} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Result{}, err
		}
	}
	for _, f := range allFiles {
		if err := os.WriteFile(filepath.Join(conf, f), nil, 0o644); err != nil {
			return Result{}, err
		}
	}
	// Pod names are DNS labels: nothing to quote.
	if err := os.WriteFile(filepath.Join(bin, "hostname"), []byte("#!/bin/sh\necho '"+pod+"'\n"), 0o755); err != nil {
		return Result{}, err
	}
	path := filepath.Join(cm, "pre_run.sh")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(script, ConfDir, conf)), 0o755); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Bash, path)
	cmd.Dir = dir
	// The image's environment: CONFIGMAP (docker/bootstrap/Dockerfile line 25).
	cmd.Env = []string{"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "CONFIGMAP=" + cm, "HOSTNAME=" + pod}
	out, err := cmd.CombinedOutput()
	res := Result{Output: strings.TrimSpace(strings.ReplaceAll(string(out), dir, ""))}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.Exit = ee.ExitCode()
		if res.Exit < 0 {
			res.Exit = 128 + 9 // killed (the timeout): as a shell reports SIGKILL
		}
		return res, nil
	case err != nil:
		return Result{}, fmt.Errorf("prerun: running pre_run.sh of %s: %w", pod, err)
	}
	for _, f := range Files(v) {
		b, err := os.ReadFile(filepath.Join(conf, f))
		if err != nil {
			continue // the script removed it: the version's defaults
		}
		res.JVMOptions = append(res.JVMOptions, optionLines(string(b))...)
	}
	res.Options = StartOptions(res.JVMOptions)
	return res, nil
}

// optionLines are the lines Cassandra's scripts take from a jvm options file: those
// starting with "-" (`grep "^-"`, 3.11 conf/cassandra-env.sh, 4.0 bin/cassandra.in.sh).
func optionLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, " \t\r"); strings.HasPrefix(l, "-") {
			out = append(out, l)
		}
	}
	return out
}

// StartOptions are the simulated JVM's options from option lines (§4.1): the replace
// address, plain replace_address winning over _first_boot when both are set, and
// reset_bootstrap_progress (§4.6). A later line overrides an earlier one, as -D does.
func StartOptions(lines []string) sim.StartOptions {
	var o sim.StartOptions
	var first, plain string
	for _, l := range lines {
		k, v, ok := strings.Cut(strings.TrimPrefix(l, "-D"), "=")
		if !ok || !strings.HasPrefix(l, "-D") {
			continue
		}
		switch k {
		case "cassandra.replace_address_first_boot":
			first = v
		case "cassandra.replace_address":
			plain = v
		case "cassandra.reset_bootstrap_progress":
			b := strings.EqualFold(v, "true") // Boolean.parseBoolean
			o.ResetBootstrapProgress = &b
		}
	}
	switch {
	case plain != "":
		o.ReplaceAddress = plain
	case first != "":
		o.ReplaceAddress, o.FirstBoot = first, true
	}
	return o
}

// InitFailure is a bootstrap init container that exited non-zero: its pod is never
// Ready and its Cassandra never starts (bootstrap.sh runs pre_run.sh under `set -e`).
type InitFailure struct {
	Pod    string
	Exit   int
	Output string
}

func (f InitFailure) String() string {
	return fmt.Sprintf("init container bootstrap of pod %s exited %d: %s", f.Pod, f.Exit, f.Output)
}
