// Command kcass-bench is `make bench`: it measures, on a private local control plane it
// starts and always stops (hack/testenv), how little time and load kubectl-cassandra adds,
// prints one table and writes it as JSON (bench/results.json).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/bench"
)

func main() { os.Exit(run()) }

func run() int {
	cfg := bench.Config{Stdout: os.Stdout, Progress: os.Stderr}
	var sizes string
	flag.StringVar(&cfg.PluginBin, "plugin", "bin/kubectl-cassandra", "the plugin binary to measure (built by `make build`)")
	flag.StringVar(&cfg.Out, "out", "bench/results.json", "where to write the results as JSON")
	flag.StringVar(&sizes, "sizes", "2,10,100", "rack sizes scaled down to 1 node in-process")
	flag.IntVar(&cfg.MemorySize, "memory-size", 100, "rack size scaled to 1 node by the plugin binary for its peak RSS (0: skip)")
	flag.DurationVar(&cfg.Decommission, "decommission", time.Second, "simulated decommission time")
	flag.DurationVar(&cfg.MemoryDecommission, "memory-decommission", 200*time.Millisecond, "simulated decommission time of the memory run (peak RSS does not depend on it; shorter keeps make bench near 10 min)")
	flag.DurationVar(&cfg.Poll, "poll-interval", 100*time.Millisecond, "the plugin's --poll-interval")
	flag.IntVar(&cfg.KwokNodes, "kwok-nodes", 3, "fake nodes (110 pods each)")
	flag.IntVar(&cfg.ColdStartRuns, "cold-runs", 15, "timed runs of each cold-start command")
	flag.IntVar(&cfg.ColdStartWarmup, "cold-warmup", 2, "untimed runs of each cold-start command first")
	flag.IntVar(&cfg.Repeats, "repeats", 5, "runs of each in-process size but the largest (the overhead is judged on their median)")
	flag.IntVar(&cfg.MicroCount, "micro-count", 6, "go test -count of the micro-benchmarks")
	flag.StringVar(&cfg.MicroBenchtime, "micro-benchtime", "500ms", "go test -benchtime of the micro-benchmarks")
	flag.BoolVar(&cfg.SkipMicro, "skip-micro", false, "do not run the micro-benchmarks")
	flag.BoolVar(&cfg.SkipStream, "skip-stream", false, "do not run the streaming figures (throughput, nodetool calls, overhead at a real exec cost, default flags)")
	flag.IntVar(&cfg.DrivenNodes, "driven-nodes", 5, "size of the driven row's datacenters, scaled to 1 node through the stand-in cass-operator and by it alone, one node of each in turn (0: no driven row)")
	flag.DurationVar(&cfg.DrivenDecommission, "driven-decommission", 3*time.Second, "simulated decommission time of the driven row")
	flag.DurationVar(&cfg.DrivenPoll, "driven-poll-interval", 5*time.Second, "the plugin's --poll-interval in the driven row (the default: the evidence, not the poll, drives it)")
	flag.BoolVar(&cfg.OnlyDriven, "only-driven", false, "measure the driven row alone (no micro-benchmarks, CassKop sizes, streaming or memory run)")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the run dir and control-plane logs")
	flag.Parse()
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 2 {
			fmt.Fprintf(os.Stderr, "kcass-bench: bad -sizes %q (want sizes ≥ 2)\n", sizes)
			return 2
		}
		cfg.Sizes = append(cfg.Sizes, n)
	}
	if cfg.OnlyDriven {
		cfg.Sizes, cfg.MemorySize, cfg.SkipMicro, cfg.SkipStream = nil, 0, true, true
		// The table's header then shows the driven row's settings.
		cfg.Decommission, cfg.Poll = cfg.DrivenDecommission, cfg.DrivenPoll
	}

	// Ctrl-C / SIGTERM: cancel, let Run tear the control plane down (it runs in its own
	// process group, so the terminal's SIGINT does not reach it), then exit. A second
	// signal exits at once (up.sh's watchdog still stops the control plane when this
	// process is gone).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "\n[bench] got %v: stopping and tearing down (again to exit at once)\n", s)
		cancel()
		<-sigs
		os.Exit(130)
	}()

	rep := bench.Run(ctx, cfg)
	rep.PrintTable(os.Stdout)
	if err := rep.WriteJSON(cfg.Out); err != nil {
		fmt.Fprintf(os.Stderr, "kcass-bench: writing %s: %v\n", cfg.Out, err)
		return 1
	}
	fmt.Fprintf(os.Stdout, "\nwritten to %s; whole run %s\n", cfg.Out, time.Duration(rep.RuntimeS*float64(time.Second)).Round(time.Second))
	switch {
	case ctx.Err() != nil:
		return 130
	case len(rep.Errors) > 0:
		return 1
	}
	// Figures that miss their target are findings, reported in the table, not a failure
	// of the benchmark itself.
	return 0
}
