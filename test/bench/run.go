package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// Config is one `make bench`.
type Config struct {
	PluginBin string
	Out       string // results JSON
	Sizes     []int  // racks scaled to 1 node in-process (default 2, 10, 100)
	// MemorySize is the rack the plugin binary scales to 1 node as a child process, for
	// its peak RSS (0: no memory run).
	MemorySize         int
	Decommission       time.Duration // simulated decommission time
	MemoryDecommission time.Duration // for the memory run (its RSS does not depend on it)
	Poll               time.Duration
	KwokNodes          int
	ColdStartRuns      int
	ColdStartWarmup    int
	// Repeats is how many times each in-process size but the largest is run: its
	// overhead is judged on the median (one 2→1 run is one sample of a noisy machine).
	Repeats        int
	MicroCount     int
	MicroBenchtime string
	SkipMicro      bool
	// SkipStream skips the streaming figures (streaming.go).
	SkipStream bool
	// DrivenNodes is the size of the driven row's datacenters (driven.go; 0: no driven
	// row), DrivenDecommission their simulated decommission time, DrivenPoll the plugin's
	// --poll-interval there; OnlyDriven measures the driven row alone.
	DrivenNodes                    int
	DrivenDecommission, DrivenPoll time.Duration
	OnlyDriven                     bool

	Keep     bool
	Stdout   io.Writer // the table and the raw micro-benchmark output
	Progress io.Writer // logs
}

// Targets of the issue.
const (
	TargetOverheadS     = 0.3
	TargetLatencyP50MS  = 100
	TargetLatencyP99MS  = 1000
	TargetRequests      = 12
	TargetColdStart     = 1.0
	TargetRSSBytes      = 60e6
	nsName              = "bench-%d"
	memoryNamespace     = "bench-mem-%d"
	cassandraSimVersion = "4.1"
)

func (c *Config) logf(format string, a ...any) {
	fmt.Fprintf(c.Progress, "[bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// Run measures everything, always tears down what it started, and returns the report
// (partial when a part failed: that part's figures say ERROR).
func Run(ctx context.Context, cfg Config) *Report {
	t0 := time.Now()
	rep := &Report{Phases: map[string]float64{}}
	own := ""
	watch := func(name string) { rep.Contention = append(rep.Contention, SampleContention(name, own)) }
	phase := func(name string, start time.Time) {
		rep.Phases[name] = math.Round(time.Since(start).Seconds()*10) / 10
		watch(name)
	}
	fail := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		rep.Errors = append(rep.Errors, msg)
		cfg.logf("ERROR: %s", msg)
	}
	rep.Settings = Settings{
		PollInterval: cfg.Poll.String(), DecommissionTime: cfg.Decommission.String(), MemoryDecommission: cfg.MemoryDecommission.String(),
		KwokNodes: cfg.KwokNodes, ColdStartRuns: cfg.ColdStartRuns, MicroCount: cfg.MicroCount, MicroBenchtime: cfg.MicroBenchtime,
		CassandraVersion: cassandraSimVersion,
	}
	if st, err := os.Stat(cfg.PluginBin); err == nil {
		rep.BinaryBytes = st.Size()
	}
	root, err := fixture.RepoRoot()
	if err != nil {
		fail("%v", err)
		return finish(rep, cfg, t0)
	}

	// 1. Micro-benchmarks first, on a quiet machine (no control plane yet).
	if !cfg.SkipMicro {
		start := time.Now()
		watch("micro")
		cfg.logf("micro-benchmarks: go test -bench . -count %d -benchtime %s %s", cfg.MicroCount, cfg.MicroBenchtime, strings.Join(MicroPackages, " "))
		raw, micro, err := RunMicro(ctx, root, cfg.MicroCount, cfg.MicroBenchtime, cfg.Stdout)
		rep.MicroRaw, rep.Micro = raw, micro
		if err != nil {
			fail("micro-benchmarks: %v", err)
		}
		phase("micro", start)
	}
	if ctx.Err() != nil {
		return finish(rep, cfg, t0)
	}

	// 2. The control plane and the clusters.
	start := time.Now()
	env, stop, err := StartEnv(ctx, EnvOptions{PluginBin: cfg.PluginBin, KwokNodes: cfg.KwokNodes, Keep: cfg.Keep, Log: cfg.logf, Progress: cfg.Progress})
	defer stop()
	phase("controlPlaneStart", start)
	if err != nil {
		fail("starting the control plane: %v", err)
		return finish(rep, cfg, t0)
	}
	rep.Settings.CRD = env.CRD.Variant.Name
	own = env.RunDir
	driven := func() {
		if cfg.DrivenNodes < 2 || ctx.Err() != nil {
			return
		}
		start := time.Now()
		watch("driven")
		cfg.logf("driven row: %d→1 through the stand-in cass-operator, a node by the stand-in alone and one through the plugin in turn (decommission %s, --poll-interval %s)", cfg.DrivenNodes, cfg.DrivenDecommission, cfg.DrivenPoll)
		d, err := RunDriven(ctx, env, cfg.DrivenNodes, cfg.DrivenDecommission, cfg.DrivenPoll, cfg.logf)
		rep.Driven = d
		if err != nil {
			fail("driven row: %v", err)
		}
		phase("driven", start)
	}
	if cfg.OnlyDriven {
		driven()
		stopStart := time.Now()
		stop()
		phase("teardown", stopStart)
		return finish(rep, cfg, t0)
	}
	// The small sizes (repeated) are created and measured first, the largest and the
	// memory run's cluster after them: a 2→1 run is not measured while the control plane
	// also keeps 200 pods of later runs.
	largest := cfg.Sizes[len(cfg.Sizes)-1]
	repeats := max(cfg.Repeats, 1)
	var small, large []ClusterSpec
	for _, n := range cfg.Sizes {
		if n == largest {
			large = append(large, ClusterSpec{Namespace: clusterNS(n, 0), Nodes: n, Decommission: cfg.Decommission})
			continue
		}
		for r := 0; r < repeats; r++ {
			small = append(small, ClusterSpec{Namespace: clusterNS(n, r), Nodes: n, Decommission: cfg.Decommission})
		}
	}
	if cfg.MemorySize > 0 {
		large = append(large, ClusterSpec{Namespace: fmt.Sprintf(memoryNamespace, cfg.MemorySize), Nodes: cfg.MemorySize, Decommission: cfg.MemoryDecommission})
	}

	clusters := map[string]*fixture.Cluster{}
	create := func(name string, specs []ClusterSpec) {
		if len(specs) == 0 || ctx.Err() != nil {
			return
		}
		start := time.Now()
		total := 0
		for _, s := range specs {
			total += s.Nodes
		}
		cfg.logf("creating %d clusters (%d pods) concurrently", len(specs), total)
		got, err := env.CreateClusters(ctx, specs)
		for k, v := range got {
			clusters[k] = v
		}
		phase(name, start)
		if err != nil {
			fail("%v", err)
		}
	}
	coldStart := func() {
		cl := clusters[clusterNS(cfg.Sizes[len(cfg.Sizes)/2], 0)]
		if cl == nil || ctx.Err() != nil || rep.ColdStart != nil {
			return
		}
		start := time.Now()
		watch("coldStart")
		cfg.logf("cold start: status (with and without nodetool) vs get -o yaml vs exec nodetool status on %s (%d pods), %d runs each", cl.Namespace, len(cl.Pods), cfg.ColdStartRuns)
		cs, err := MeasureColdStart(ctx, env, cl.Namespace, cl.Pods[0].Name, cfg.ColdStartRuns, cfg.ColdStartWarmup, 5)
		rep.ColdStart = cs
		if err != nil {
			fail("cold start: %v", err)
		}
		phase("coldStart", start)
	}
	// Scale-downs in-process, every request recorded.
	scale := func(n, r int) {
		cl := clusters[clusterNS(n, r)]
		if cl == nil || ctx.Err() != nil {
			return
		}
		start := time.Now()
		ph := fmt.Sprintf("scale%d", n)
		if r > 0 {
			ph += fmt.Sprintf("-%d", r)
		}
		watch(ph)
		cfg.logf("scale %d→1 in-process (--poll-interval %s, decommission %s)%s", n, cfg.Poll, cfg.Decommission, repeatNote(r, repeats, n == largest))
		run, err := RunInProcess(ctx, env, cl, 1, cfg.Decommission, cfg.Poll)
		if err != nil {
			fail("scale %d→1 in-process: %v", n, err)
		}
		if run != nil {
			a := Analyze(run)
			a.Repeat = r
			rep.Scale = append(rep.Scale, a)
			cfg.logf("scale %s: %.1f s, overhead %.3f s/node, %d requests", run.Label, a.WallS, a.OverheadPerNodeS, a.Requests.Total)
		}
		phase(ph, start)
	}

	// 3. The small clusters, the cold start (on the middle size), the small scale-downs.
	create("clusters", small)
	coldStart()
	for _, n := range cfg.Sizes {
		if n == largest {
			continue
		}
		for r := 0; r < repeats; r++ {
			scale(n, r)
		}
	}
	// The streaming figures: their clusters (14 pods) are created once the small runs are
	// measured (the volume provisioner binds one claim at a time), and measured before
	// the 200 pods of the large runs exist.
	if !cfg.SkipStream {
		create("clustersStream", StreamSpecs())
	}
	if !cfg.SkipStream && ctx.Err() == nil {
		start := time.Now()
		watch("streaming")
		st, err := RunStreaming(ctx, env, clusters, cfg.logf)
		rep.Stream = st
		if err != nil {
			fail("%v", err)
		}
		phase("streaming", start)
	}
	driven()
	// 4. The largest size, and the cluster of the memory run.
	create("clustersLarge", large)
	coldStart() // when the middle size is the largest (two sizes); a no-op once measured
	scale(largest, 0)

	// 5. The memory run: the plugin binary as a child process.
	if cl := clusters[fmt.Sprintf(memoryNamespace, cfg.MemorySize)]; cl != nil && ctx.Err() == nil {
		start := time.Now()
		watch("memory")
		cfg.logf("scale %d→1 with the plugin binary as a child process (peak RSS; decommission %s)", cfg.MemorySize, cfg.MemoryDecommission)
		r, err := RunBinary(ctx, env, cl, 1, cfg.MemoryDecommission, cfg.Poll)
		if err != nil {
			fail("scale %d→1 binary: %v", cfg.MemorySize, err)
		}
		if r != nil {
			a := Analyze(r)
			rep.Scale = append(rep.Scale, a)
			cfg.logf("scale %s binary: %.1f s, peak RSS %.1f MiB", r.Label, a.WallS, float64(a.MaxRSS)/(1<<20))
		}
		phase("memory", start)
	}
	if ctx.Err() != nil {
		fail("interrupted: %v", ctx.Err())
	}
	stopStart := time.Now()
	stop()
	phase("teardown", stopStart)
	return finish(rep, cfg, t0)
}

// clusterNS is the namespace of the r-th cluster of n nodes.
func clusterNS(n, r int) string {
	if r == 0 {
		return fmt.Sprintf(nsName, n)
	}
	return fmt.Sprintf(nsName+"-%d", n, r)
}

func repeatNote(r, repeats int, largest bool) string {
	if largest || repeats < 2 {
		return ""
	}
	return fmt.Sprintf(", run %d of %d", r+1, repeats)
}

func finish(rep *Report, cfg Config, t0 time.Time) *Report {
	kubectl := ""
	if rep.ColdStart != nil {
		kubectl = rep.ColdStart.Kubectl
	}
	rep.Machine = DescribeMachine(kubectl)
	rep.Figures = Figures(rep, cfg)
	rep.RuntimeS = math.Round(time.Since(t0).Seconds()*10) / 10
	return rep
}

// Figures turns the measurements into the table's rows, with a "why" for each FAIL.
func Figures(rep *Report, cfg Config) []Figure {
	if cfg.OnlyDriven {
		return drivenFigures(rep.Driven, cfg)
	}
	var figs []Figure
	add := func(f Figure) { figs = append(figs, f) }
	byLabel := func(mode string, from int) *ScaleAnalysis {
		for _, a := range rep.Scale {
			if a.Mode == mode && a.From == from {
				return a
			}
		}
		return nil
	}
	missing := func(name, target string) Figure {
		return Figure{Name: name, Display: "not measured (see the errors below)", Target: target, Result: Error}
	}

	// Overhead per removed node: the median run of each size.
	for _, n := range cfg.Sizes {
		name := fmt.Sprintf("Overhead per removed node, %d→1 (in-process)", n)
		var runs []*ScaleAnalysis
		for _, a := range rep.Scale {
			if a.Mode == ModeInProcess && a.From == n {
				runs = append(runs, a)
			}
		}
		if len(runs) == 0 {
			add(missing(name, "≤ 0.3 s"))
			continue
		}
		sort.SliceStable(runs, func(i, j int) bool { return runs[i].OverheadPerNodeS < runs[j].OverheadPerNodeS })
		a := runs[(len(runs)-1)/2]
		f := Figure{Name: name, Value: a.OverheadPerNodeS, Unit: "s", Target: "≤ 0.3 s",
			Display: fmt.Sprintf("%.3f s (wall %.1f s − decommission %.0f s − pod termination %.1f s, /%d)", a.OverheadPerNodeS, a.WallS, a.DecommissionS, a.TerminationS, a.Removed),
			Result:  passIf(a.OverheadPerNodeS <= TargetOverheadS)}
		if len(runs) > 1 {
			var each []string
			for _, r := range runs {
				each = append(each, fmt.Sprintf("%.3f", r.OverheadPerNodeS))
			}
			f.Name = fmt.Sprintf("Overhead per removed node, %d→1 (in-process, median of %d runs)", n, len(runs))
			f.Display += " [runs: " + strings.Join(each, ", ") + " s]"
		}
		if a.TerminationMissing > 0 {
			f.Display += fmt.Sprintf(" [termination unseen for %d pods]", a.TerminationMissing)
		}
		if f.Result == Fail {
			f.Why = overheadWhy(a)
		}
		add(f)
	}
	if cfg.MemorySize > 0 {
		name := fmt.Sprintf("Overhead per removed node, %d→1 (plugin binary)", cfg.MemorySize)
		if a := byLabel(ModeBinary, cfg.MemorySize); a != nil {
			f := Figure{Name: name, Value: a.OverheadPerNodeS, Unit: "s", Target: "≤ 0.3 s",
				Display: fmt.Sprintf("%.3f s (wall %.1f s, decommission %s each)", a.OverheadPerNodeS, a.WallS, cfg.MemoryDecommission),
				Result:  passIf(a.OverheadPerNodeS <= TargetOverheadS)}
			if f.Result == Fail {
				f.Why = "same steps as the in-process run (no request recording in a child process); see the in-process rows"
			}
			add(f)
		} else {
			add(missing(name, "≤ 0.3 s"))
		}
	}
	// The same in this machine's own time unit: the seconds above scale with how fast the
	// machine answers a request and starts a process, which differs between VMs of the
	// same size by 2× or more; a run of `kubectl get` cancels that out.
	if cs, a := rep.ColdStart, byLabel(ModeInProcess, cfg.Sizes[len(cfg.Sizes)-1]); cs != nil && len(cs.GetMS) > 0 && a != nil {
		get := Median(cs.GetMS)
		add(Figure{Name: fmt.Sprintf("  overhead per removed node, %d→1, in this machine's `kubectl get -o yaml` runs", a.From), Value: a.OverheadPerNodeS * 1000 / get, Unit: "x",
			Display: fmt.Sprintf("%.2f× (%.3f s / %.0f ms)", a.OverheadPerNodeS*1000/get, a.OverheadPerNodeS, get), Result: Info})
	}

	// Reaction latency.
	var all, decomm, gone, recorded []float64
	for _, a := range rep.Scale {
		if a.Mode != ModeInProcess {
			continue
		}
		decomm = append(decomm, a.LatencyDecommissionedMS...)
		gone = append(gone, a.LatencyPodGoneMS...)
		recorded = append(recorded, a.LatencyRecordedMS...)
	}
	all = append(append(all, decomm...), gone...)
	if len(all) == 0 {
		add(missing("Reaction latency p50", "< 100 ms"))
		add(missing("Reaction latency p99", "< 1 s"))
	} else {
		p50, p99 := Percentile(all, 50), Percentile(all, 99)
		f50 := Figure{Name: fmt.Sprintf("Reaction latency p50 (state change → plugin's next write, n=%d)", len(all)), Value: p50, Unit: "ms", Target: "< 100 ms",
			Display: fmt.Sprintf("%.0f ms", p50), Result: passIf(p50 < TargetLatencyP50MS)}
		f99 := Figure{Name: fmt.Sprintf("Reaction latency p99 (n=%d)", len(all)), Value: p99, Unit: "ms", Target: "< 1 s",
			Display: fmt.Sprintf("%.0f ms", p99), Result: passIf(p99 < TargetLatencyP99MS)}
		why := latencyWhy(rep, decomm, gone)
		if f50.Result == Fail {
			f50.Why = why
		}
		if f99.Result == Fail {
			f99.Why = why
		}
		add(f50)
		add(f99)
		add(Figure{Name: fmt.Sprintf("  after node DECOMMISSIONED, p50 / p99 (n=%d)", len(decomm)), Value: Percentile(decomm, 50), Unit: "ms", Target: "—", Result: Info,
			Display: fmt.Sprintf("%.0f / %.0f ms", Percentile(decomm, 50), Percentile(decomm, 99))})
		add(Figure{Name: fmt.Sprintf("  after pod object gone, p50 / p99 (n=%d)", len(gone)), Value: Percentile(gone, 50), Unit: "ms", Target: "—", Result: Info,
			Display: fmt.Sprintf("%.0f / %.0f ms", Percentile(gone, 50), Percentile(gone, 99))})
		add(Figure{Name: "  state change → checkpoint write recording that step done, p50 / p99", Value: Percentile(recorded, 50), Unit: "ms", Target: "—", Result: Info,
			Display: fmt.Sprintf("%.0f / %.0f ms", Percentile(recorded, 50), Percentile(recorded, 99))})
	}

	// API requests per removed node. A run pays a fixed part once (start-up: discovery,
	// RBAC checks, preflight, plan; and in the loop: creating and removing the checkpoint,
	// the cluster update, the last Events), so its all-in count divided by 1 removed node
	// (2→1) judges the fixed part, not the per-node cost. The per-node cost is judged where
	// the fixed part is out of it: the marginal count (largest size vs the one before) and
	// the all-in count of the largest size; each size's loop and all-in counts are shown.
	for i, n := range cfg.Sizes {
		name := fmt.Sprintf("API requests per removed node, %d→1 (all-in; step loop)", n)
		a := byLabel(ModeInProcess, n)
		if a == nil || a.Requests == nil {
			add(missing(name, "≤ 12"))
			continue
		}
		rs := a.Requests
		f := Figure{Name: name, Value: rs.PerNode, Unit: "requests", Target: "—", Result: Info,
			Display: fmt.Sprintf("%.1f; %.1f (reads %.1f, writes %.1f, watches %.1f, execs %.1f; start-up %d)",
				rs.PerNode, rs.LoopPerNode, rs.ReadsPerNode, rs.WritesPerNode, rs.WatchesPerNode, rs.ExecsPerNode, rs.Startup)}
		if i == len(cfg.Sizes)-1 {
			f.Name = fmt.Sprintf("API requests per removed node, %d→1, all-in (start-up included; step loop beside)", n)
			f.Target, f.Result = "≤ 12", passIf(rs.PerNode <= TargetRequests)
			if f.Result == Fail {
				f.Why = requestsWhy(a)
			}
		}
		add(f)
	}
	if len(cfg.Sizes) >= 2 {
		lo, hi := byLabel(ModeInProcess, cfg.Sizes[len(cfg.Sizes)-2]), byLabel(ModeInProcess, cfg.Sizes[len(cfg.Sizes)-1])
		if lo != nil && hi != nil && lo.Requests != nil && hi.Requests != nil && hi.Removed > lo.Removed {
			m := float64(hi.Requests.Total-lo.Requests.Total) / float64(hi.Removed-lo.Removed)
			f := Figure{Name: fmt.Sprintf("API requests per removed node, marginal (%s vs %s: the fixed part cancels out)", hi.Label, lo.Label), Value: m, Unit: "requests", Target: "≤ 12",
				Display: fmt.Sprintf("%.1f", m), Result: passIf(m <= TargetRequests)}
			if f.Result == Fail {
				f.Why = "the per-node loop itself is above target, not the fixed part; " + marginalWhy(lo, hi)
			}
			add(f)
		}
	}
	{
		n := cfg.Sizes[len(cfg.Sizes)-1]
		name := fmt.Sprintf("Pod LISTs in the step loop, per removed node (%d→1)", n)
		a, small := byLabel(ModeInProcess, n), byLabel(ModeInProcess, cfg.Sizes[0])
		if a == nil || a.Requests == nil || small == nil || small.Requests == nil {
			add(missing(name, "none per node"))
		} else {
			rs := a.Requests
			per := float64(rs.PodListsInLoop) / float64(a.Removed)
			var counts []string
			for _, sz := range cfg.Sizes {
				if x := byLabel(ModeInProcess, sz); x != nil && x.Requests != nil {
					counts = append(counts, fmt.Sprintf("%s: %d", x.Label, x.Requests.PodListsInLoop))
				}
			}
			avg := 0.0
			if rs.PodLists > 0 {
				avg = float64(rs.PodListBytes) / float64(rs.PodLists) / 1024
			}
			// In a loop = their number grows with the nodes removed.
			f := Figure{Name: name, Value: per, Unit: "LISTs", Target: "none per node (count flat in N)",
				Display: fmt.Sprintf("%.2f (in the loop %s; %d unselective; %.0f KiB each)", per, strings.Join(counts, ", "), rs.PodListsUnselective, avg),
				Result:  passIf(rs.PodListsInLoop <= small.Requests.PodListsInLoop)}
			if f.Result == Fail {
				f.Why = podListWhy(a)
			}
			add(f)
		}
	}

	// Cold start. The judged ratio is status's Kubernetes part (--nodetool=false) in the
	// process kubectl execs, against `kubectl get`: measured like the yardstick
	// (a bare client-go binary at 0.36× of get, which only a binary run directly can be:
	// kubectl's dispatch alone costs more than that). The same runs through kubectl, the
	// dispatch alone, the yardstick both ways and the nodetool part are shown beside it.
	if cs := rep.ColdStart; cs != nil && len(cs.StatusK8sDirectMS) > 0 && len(cs.GetMS) > 0 {
		get := Median(cs.GetMS)
		direct := Median(cs.StatusK8sDirectMS)
		ratio := direct / get
		f := Figure{Name: fmt.Sprintf("Cold start: `status --nodetool=false`, the plugin process / `kubectl get cassandraclusters -o yaml` (medians of %d)", len(cs.StatusK8sDirectMS)), Value: ratio, Unit: "x", Target: "≤ 1.0×",
			Display: fmt.Sprintf("%.2f× (%.0f ms / %.0f ms)", ratio, direct, get), Result: passIf(ratio <= TargetColdStart)}
		if f.Result == Fail {
			f.Why = coldStartWhy(cs, direct, get, Median(cs.ExecMS))
		}
		add(f)
		info := func(name string, num []float64, what string) {
			if len(num) == 0 {
				return
			}
			m := Median(num)
			add(Figure{Name: "  " + name, Value: m / get, Unit: "x", Target: "—", Result: Info, Display: fmt.Sprintf("%.2f× (%.0f ms%s)", m/get, m, what)})
		}
		info("through kubectl: `kubectl cassandra status --nodetool=false` / get", cs.StatusK8sMS, "")
		info("kubectl's plugin dispatch alone: `kubectl kcassnoop` (exits at once) / get", cs.NoopMS, "")
		if len(cs.NoopMS) > 0 {
			noop := Median(cs.NoopMS)
			add(Figure{Name: "  after the dispatch: status process vs get's own work (get − dispatch)", Value: direct / (get - noop), Unit: "x", Target: "—", Result: Info,
				Display: fmt.Sprintf("%.2f× (%.0f ms / %.0f ms)", direct/(get-noop), direct, get-noop)})
		}
		info("issue's yardstick, bare client-go lister run directly / get", cs.BareDirectMS, "")
		info("  the same through kubectl (`kubectl kcassbare`) / get", cs.BareMS, "")
		info("the lister with cli-runtime's kubectl flags (the plugin's floor) run directly / get", cs.ClirtDirectMS, "")
		info("  the same through kubectl (`kubectl kcassclirt`) / get", cs.ClirtMS, "")
		if len(cs.ExecMS) > 0 {
			ex := Median(cs.ExecMS)
			add(Figure{Name: "  nodetool part alone: `kubectl exec <pod> -c cassandra -- nodetool status` (median)", Value: ex, Unit: "ms", Target: "—", Result: Info, Display: fmt.Sprintf("%.0f ms", ex)})
		}
		info("full `kubectl cassandra status` (with its nodetool call) / get", cs.StatusMS, "")
		if w, nt, ok := cs.InProcess(); ok {
			add(Figure{Name: "  status in-process (no process start; median of 5)", Value: w, Unit: "ms", Target: "—", Result: Info,
				Display: fmt.Sprintf("%.0f ms, of which the nodetool call %.0f ms", w, nt)})
		}
	} else {
		add(missing("Cold start: status --nodetool=false process / get -o yaml", "≤ 1.0×"))
	}

	if cfg.DrivenNodes >= 2 {
		figs = append(figs, drivenFigures(rep.Driven, cfg)...)
	}

	// Streaming: throughput, nodetool calls, overhead at a real exec cost, default flags.
	if !cfg.SkipStream {
		figs = append(figs, streamFigures(rep.Stream)...)
	}

	// Memory.
	if cfg.MemorySize > 0 {
		name := fmt.Sprintf("Peak RSS, %d→1 (plugin binary)", cfg.MemorySize)
		if a := byLabel(ModeBinary, cfg.MemorySize); a != nil && (a.MaxRSS > 0 || a.VmHWM > 0) {
			peak, how := a.MaxRSS, fmt.Sprintf("GNU time; VmHWM last read %.1f MiB", float64(a.VmHWM)/(1<<20))
			if peak == 0 {
				peak, how = a.VmHWM, "VmHWM, last read before exit"
			}
			f := Figure{Name: name, Value: float64(peak), Unit: "bytes", Target: "≤ 60 MB",
				Display: fmt.Sprintf("%.1f MB = %.1f MiB (%s)", float64(peak)/1e6, float64(peak)/(1<<20), how),
				Result:  passIf(float64(peak) <= TargetRSSBytes)}
			if f.Result == Fail {
				f.Why = "peak RSS of the plugin process alone (GNU time's ru_maxrss); no heap breakdown was taken: profile a 100→1 run (GODEBUG=gctrace=1, pprof) to see what holds memory"
			}
			add(f)
		} else {
			add(missing(name, "≤ 60 MB"))
		}
	}
	if rep.BinaryBytes > 0 {
		add(Figure{Name: "Binary size (make build: -trimpath -s -w)", Value: float64(rep.BinaryBytes), Unit: "bytes", Target: "—", Result: Info,
			Display: fmt.Sprintf("%.1f MB (%.1f MiB)", float64(rep.BinaryBytes)/1e6, float64(rep.BinaryBytes)/(1<<20))})
	}

	// Micro-benchmarks.
	for _, m := range rep.Micro {
		add(Figure{Name: m.Name + fmt.Sprintf(" (median of %d)", len(m.NsPerOp)), Value: m.MedianNs, Unit: "ns/op", Target: "—", Result: Info,
			Display: fmt.Sprintf("%s ns/op, %.0f B/op, %.0f allocs/op", fmtNs(m.MedianNs), m.BytesPerOp, m.AllocsPerOp)})
	}
	return figs
}

func passIf(ok bool) string {
	if ok {
		return Pass
	}
	return Fail
}

func fmtNs(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func overheadWhy(a *ScaleAnalysis) string {
	var parts []string
	n := float64(a.Removed)
	if len(a.StepShares) > 0 {
		var s []string
		for _, sh := range a.StepShares {
			if sh.Kind == "update-cluster" || sh.Kind == "pause-operator" || sh.Kind == "resume-operator" {
				continue
			}
			s = append(s, fmt.Sprintf("%s %.2f", sh.Kind, sh.PerNodeS))
		}
		parts = append(parts, fmt.Sprintf("per node the steps took (s) %s, which hold %.2f s of simulated decommission and %.2f s of pod termination; start-up (discovery, RBAC checks, preflight, plan) %.2f s and the end %.2f s once per run",
			strings.Join(s, ", "), a.DecommissionS/n, a.TerminationS/n, a.StartupS, a.FinishS))
	}
	var serial, calls float64
	var cmds []string
	for _, e := range a.Execs {
		if strings.HasPrefix(e.Command, "nodetool decommission") {
			continue
		}
		k := float64(e.Count - e.Concurrent)
		serial += k * e.MeanMS / 1000
		calls += k
		cmds = append(cmds, fmt.Sprintf("%s %.1f×%.0f ms", strings.TrimPrefix(e.Command, "nodetool "), k/n, e.MeanMS))
	}
	if calls > 0 {
		parts = append(parts, fmt.Sprintf("nodetool reads (pod exec) on the critical path %.1f per node = %.2f s/node (%s)", calls/n, serial/n, strings.Join(cmds, ", ")))
	}
	for _, e := range a.Execs {
		if strings.HasPrefix(e.Command, "nodetool decommission") {
			parts = append(parts, fmt.Sprintf("the decommission call lasts %.0f ms, %.0f ms over the simulated time (exec set-up and tear-down)", e.MeanMS, e.MeanMS-1000*a.DecommissionS/n))
		}
	}
	if a.Requests != nil {
		top := append([]KeyStat(nil), a.Requests.Breakdown...)
		sort.Slice(top, func(i, j int) bool { return top[i].TotalPerNodeS > top[j].TotalPerNodeS })
		var t []string
		for _, k := range top {
			if len(t) == 3 {
				break
			}
			if strings.HasPrefix(k.Key, "EXEC ") || strings.HasPrefix(k.Key, "WATCH ") {
				continue
			}
			t = append(t, fmt.Sprintf("%s %.1f×%.0f ms (%.0f KiB answers)", k.Key, k.PerNode, k.MeanMS, float64(k.Bytes)/float64(k.Count)/1024))
		}
		parts = append(parts, fmt.Sprintf("API requests of the step loop kept the plugin waiting %.2f s/node (%.1f requests/node), most of all %s", a.Requests.LoopAPIS/n, a.Requests.LoopPerNode, strings.Join(t, ", ")))
	}
	return strings.Join(parts, "; ")
}

func latencyWhy(rep *Report, decomm, gone []float64) string {
	parts := []string{fmt.Sprintf("after DECOMMISSIONED p50 %.0f ms / p99 %.0f ms, after pod gone p50 %.0f ms / p99 %.0f ms", Percentile(decomm, 50), Percentile(decomm, 99), Percentile(gone, 50), Percentile(gone, 99))}
	var big *ScaleAnalysis
	for _, a := range rep.Scale {
		if a.Mode == ModeInProcess && (big == nil || a.From > big.From) {
			big = a
		}
	}
	if big != nil {
		for _, kind := range []string{"decommissioned", "gone"} {
			var ks []string
			for k, v := range big.LatencyBetween[kind] {
				ks = append(ks, fmt.Sprintf("%s %.1f", k, v))
			}
			sort.Strings(ks)
			next := map[string]int{}
			for _, s := range big.LatencySamples {
				if s.Kind == kind {
					next[s.NextWrite]++
				}
			}
			var ns []string
			for k, v := range next {
				ns = append(ns, fmt.Sprintf("%s ×%d", k, v))
			}
			sort.Strings(ns)
			parts = append(parts, fmt.Sprintf("in %s, between %s and its next write (%s) the plugin sent on average: %s", big.Label, kind, strings.Join(ns, ", "), strings.Join(ks, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}

// byStep formats where requests of one kind came from: "decommission 4.0, shrink-statefulset 2.0".
func byStep(m map[string]float64) string {
	type kv struct {
		k string
		v float64
	}
	var xs []kv
	for k, v := range m {
		xs = append(xs, kv{k, v})
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i].v > xs[j].v })
	var out []string
	for _, x := range xs {
		out = append(out, fmt.Sprintf("%s %.1f", x.k, x.v))
	}
	return strings.Join(out, ", ")
}

func requestsWhy(a *ScaleAnalysis) string {
	rs := a.Requests
	var top []string
	for i, k := range rs.Breakdown {
		if i == 7 {
			break
		}
		top = append(top, fmt.Sprintf("%s %.1f (%s)", k.Key, k.PerNode, byStep(k.ByStep)))
	}
	return fmt.Sprintf("per node, with the step being worked on when they were sent: %s; start-up (discovery, RBAC checks, preflight, plan) %d requests, step loop %.1f per node, %d lease renewals",
		strings.Join(top, "; "), rs.Startup, rs.LoopPerNode, rs.LeaseRenewals)
}

func podListWhy(a *ScaleAnalysis) string {
	rs := a.Requests
	var sels []string
	for _, p := range rs.PodListSelectors {
		if p.InLoop == 0 {
			continue
		}
		var st []string
		for k, v := range p.ByStep {
			st = append(st, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(st)
		sels = append(sels, fmt.Sprintf("%d× labelSelector %s, %.0f KiB each, sent while working on: %s", p.InLoop, p.Selector, p.MeanKiB, strings.Join(st, ", ")))
	}
	return fmt.Sprintf("in the loop of %s: %s. A selector that matches every pod of the cluster returns every pod of the namespace here: each LIST costs O(rack size), so the loop costs O(N²) bytes", a.Label, strings.Join(sels, "; "))
}

func coldStartWhy(cs *ColdStart, st, get, ex float64) string {
	s := fmt.Sprintf("the status --nodetool=false process %.0f ms vs get %.0f ms; `kubectl exec … nodetool status` alone takes %.0f ms", st, get, ex)
	if len(cs.Profiles) > 0 {
		p := cs.Profiles[len(cs.Profiles)-1]
		var top []string
		for _, k := range p.Breakdown {
			top = append(top, fmt.Sprintf("%s ×%d", k.Key, k.Count))
		}
		w, nt, _ := cs.InProcess()
		s += fmt.Sprintf("; in-process status takes %.0f ms (median): one nodetool status exec (%.0f ms) plus %d API requests (%d discovery; %s) whose times sum to %.0f ms, where get makes 1 request on a warm discovery cache",
			w, nt, p.Requests-len(p.Execs), p.Discovery, strings.Join(top, ", "), p.RequestMS)
	}
	return s
}
