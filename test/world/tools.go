package world

import (
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilexec "k8s.io/client-go/util/exec"
)

// nodetoolGlobal are nodetool's global options that take a value: skipped to find the
// command word.
var nodetoolGlobal = map[string]bool{"-h": true, "--host": true, "-p": true, "--port": true, "-u": true, "--username": true, "-pw": true, "--password": true, "-pwf": true, "--password-file": true}

// nodetoolCommand is the command word of nodetool's arguments ("" when none).
func nodetoolCommand(args []string) string {
	for i := 0; i < len(args); i++ {
		if nodetoolGlobal[args[i]] {
			i++
			continue
		}
		if !strings.HasPrefix(args[i], "-") {
			return args[i]
		}
	}
	return ""
}

// Stream is Exec with standard input (the JMX password file, or the cqlshrc, the plugin
// feeds) and the output copied to stdout and stderr; a non-zero exit is client-go's
// CodeExitError, as the real pod exec returns it. Every argv it was given is kept
// (StreamArgv) so tests can check what a command line carried. A decommission, drain,
// cleanup, rebuild or cqlsh ALTER KEYSPACE is a side effect, as in Exec.
func (w *World) Stream(ctx context.Context, pod string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	w.mu.Lock()
	w.streamArgv = append(w.streamArgv, append([]string(nil), argv...))
	w.mu.Unlock()
	if _, err := w.Kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), w.NS, pod); err != nil {
		return fmt.Errorf("exec in %s: %w", pod, err)
	}
	tool, args := toolArgs(argv)
	if tool == "" {
		return fmt.Errorf("not a nodetool or cqlsh command: %v", argv)
	}
	var code int
	if tool == "cqlsh" {
		if stdin == nil {
			stdin = strings.NewReader("") // never this test process's own stdin
		}
		w.checkAlter(pod, args)
		code = w.Cass.RunCQL(ctx, pod, args, stdin, stdout, stderr)
	} else {
		code = w.Cass.RunInput(ctx, pod, args, stdin, stdout, stderr)
	}
	var err error
	if code != 0 {
		err = utilexec.CodeExitError{Err: fmt.Errorf("command terminated with non-zero exit code: %d", code), Code: code}
	}
	entry := ""
	if cmd := nodetoolCommand(args); tool == "nodetool" && (cmd == "decommission" || cmd == "drain" || cmd == "cleanup" || cmd == "rebuild" || (cmd == "removenode" && !strings.Contains(" "+strings.Join(args, " ")+" ", " status "))) {
		entry = pod + " " + strings.Join(args, " ")
	}
	if stmt := cqlStatement(args); tool == "cqlsh" && altersSchema(stmt) {
		entry = pod + " cqlsh " + stmt
	}
	if entry != "" {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.execLog = append(w.execLog, entry)
		w.sideEffects++
		if w.OnSideEffect != nil {
			w.OnSideEffect(w.sideEffects)
		}
		if w.crashAt > 0 && w.sideEffects == w.crashAt {
			panic(Crash{Point: w.sideEffects})
		}
	}
	return err
}

// toolArgs finds the tool an exec argv runs (its first word "nodetool" or "cqlsh",
// after any wrapper such as "env" or a shell) and the arguments after it.
func toolArgs(argv []string) (string, []string) {
	for i, a := range argv {
		if a == "nodetool" || a == "cqlsh" {
			return a, argv[i+1:]
		}
	}
	return "", nil
}

// cqlStatement is the statement a cqlsh command line runs (-e/--execute), "" if none.
func cqlStatement(args []string) string {
	for i, a := range args {
		switch {
		case (a == "-e" || a == "--execute") && i+1 < len(args):
			return strings.TrimSpace(args[i+1])
		case strings.HasPrefix(a, "--execute="):
			return strings.TrimSpace(strings.TrimPrefix(a, "--execute="))
		}
	}
	return ""
}

// checkAlter: an ALTER KEYSPACE acts on the cluster, so the run must hold the lock (as
// for a decommission, checkExec).
func (w *World) checkAlter(pod string, args []string) {
	stmt := cqlStatement(args)
	if !altersSchema(stmt) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkLock("cqlsh "+stmt+" on "+pod, w.storedHolder())
}

// altersSchema says whether a CQL statement changes the schema (ALTER KEYSPACE): a side
// effect, unlike the reads (SELECT, DESCRIBE).
func altersSchema(stmt string) bool {
	f := strings.Fields(strings.ToUpper(stmt))
	return len(f) >= 2 && f[0] == "ALTER" && f[1] == "KEYSPACE"
}

// StreamArgv is every command line Stream was given, in order.
func (w *World) StreamArgv() [][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][]string(nil), w.streamArgv...)
}
