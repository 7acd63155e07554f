// Command nodetool-sim is a stand-in for Cassandra's nodetool in the e2e tests. Installed
// as a file named `nodetool` on the fake kubelet's PATH, it answers for the pod named by
// POD_NAME from the simulated cluster in the state file NODETOOL_SIM_STATE (see package
// test/sim), with nodetool's exact output, streams and exit codes. Installed (the same
// binary) under the name `cqlsh`, it is the simulated cqlsh (sim.Store.RunCQL), which
// reads a `--cqlshrc /dev/stdin` from its own standard input.
//
// Like the real client, being killed ends only this process: a decommission it started
// keeps going in the simulated node, because its progress is derived from the clock.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// Environment variables read by the binary.
const (
	EnvState = "NODETOOL_SIM_STATE" // path of the state file created by sim.Create
	EnvPod   = "POD_NAME"           // the pod (simulated node) this nodetool runs in
	// EnvExecCost, a Go duration ("1.5s"), is what this invocation costs before it
	// answers, in place of the cluster's Options.ExecCost: a real nodetool starts a JVM.
	EnvExecCost = "NODETOOL_SIM_EXEC_COST"
)

func main() { os.Exit(run()) }

func run() int {
	path, pod := os.Getenv(EnvState), os.Getenv(EnvPod)
	if path == "" || pod == "" {
		fmt.Fprintf(os.Stderr, "nodetool-sim: %s and %s must be set\n", EnvState, EnvPod)
		return 1
	}
	store := sim.Open(path)
	if v := os.Getenv(EnvExecCost); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			fmt.Fprintf(os.Stderr, "nodetool-sim: %s=%q is not a duration >= 0\n", EnvExecCost, v)
			return 1
		}
		store.SetExecCost(d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan int, 1)
	// The tool is the name it was run by: exec looks the name up on PATH and passes it
	// as argv[0].
	tool := store.Run
	if filepath.Base(os.Args[0]) == "cqlsh" {
		tool = func(ctx context.Context, pod string, args []string, stdout, stderr io.Writer) int {
			// nil stdin: a cqlshrc named /dev/stdin is opened, which is this process's.
			return store.RunCQL(ctx, pod, args, nil, stdout, stderr)
		}
	}
	go func() { done <- tool(ctx, pod, os.Args[1:], os.Stdout, os.Stderr) }()
	select {
	case code := <-done:
		return code
	case sig := <-sigs:
		// A JVM killed by a signal exits 128+signo. Cancelling lets Run finish a state
		// write in progress (it is atomic anyway) before the process goes.
		cancel()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
		}
		if sig == syscall.SIGINT {
			return 130
		}
		return 143
	}
}
