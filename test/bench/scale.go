package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cli"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// Run modes of a scale-down.
const (
	ModeInProcess = "in-process" // cli.Options.Execute in this process, every request recorded
	ModeBinary    = "binary"     // the plugin binary as a child process (peak RSS)
)

// ScaleRun is one `kubectl cassandra scale` from From to To nodes and what was seen.
type ScaleRun struct {
	Label        string
	Mode         string
	Namespace    string
	From, To     int
	Decommission time.Duration // the simulated decommission time
	Poll         time.Duration // --poll-interval
	Args         []string
	Start, End   time.Time
	Exit         int
	Stdout       string
	Stderr       string
	Calls        []*Call      // in-process only
	Execs        []ExecTiming // in-process only
	Obs          Observed
	// MaxRSS (bytes) is the plugin's peak RSS from GNU time (binary mode), VmHWM the last
	// VmHWM read from /proc/<pid>/status while it ran.
	MaxRSS int64
	VmHWM  int64
}

// Removed is how many nodes the run removed.
func (r *ScaleRun) Removed() int { return r.From - r.To }

// Wall is the run's wall time.
func (r *ScaleRun) Wall() time.Duration { return r.End.Sub(r.Start) }

func scaleArgs(kubeconfig, ns string, to int, poll time.Duration) []string {
	return []string{
		"scale", "--kubeconfig", kubeconfig, "-n", ns, ClusterName,
		"--dc", "dc1", "--rack", "rack1", "--nodes", strconv.Itoa(to),
		"--yes", "--poll-interval", poll.String(), "--color", "never",
	}
}

// ExecTiming is one nodetool call of the plugin, timed around the plugin's own pod-exec
// code (kube.PodExec, the production implementation).
type ExecTiming struct {
	Pod        string
	Command    string // "nodetool netstats"
	Start, End time.Time
	Err        string
}

// timingExecer wraps kube.PodExec and records each call's duration.
type timingExecer struct {
	inner kube.PodExec
	mu    sync.Mutex
	execs []ExecTiming
}

func (t *timingExecer) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	start := time.Now()
	out, errOut, err := t.inner.Exec(ctx, pod, argv)
	et := ExecTiming{Pod: pod, Command: ExecCommand(map[string][]string{"command": argv}), Start: start, End: time.Now()}
	if err != nil {
		et.Err = err.Error()
	}
	t.mu.Lock()
	t.execs = append(t.execs, et)
	t.mu.Unlock()
	return out, errOut, err
}

// timings returns the calls timed so far.
func (t *timingExecer) timings() []ExecTiming {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]ExecTiming(nil), t.execs...)
}

// newTimingExecer builds the pod exec exactly as the plugin does (internal/cli: kubeconfig,
// user agent, QPS, the WrapTransport hook), around a timer.
func newTimingExecer(kubeconfig, ns string, rec *Recorder) (*timingExecer, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "kubectl-cassandra"
	cfg.Wrap(rec.Wrap)
	cfg.QPS, cfg.Burst = 50, 100
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &timingExecer{inner: kube.PodExec{Config: cfg, Client: kc, Namespace: ns, Container: casskop.Container}}, nil
}

// RunInProcess runs the scale-down in this process through cli.Options.Execute, with
// every API request recorded (WrapTransport) and every nodetool call timed (Execer),
// while an Observer timestamps the state changes on its own connections.
func RunInProcess(ctx context.Context, e *Env, cl *fixture.Cluster, to int, decomm, poll time.Duration) (*ScaleRun, error) {
	return RunInProcessWith(ctx, e, cl, to, decomm, poll, Extras{})
}

// Extras change one in-process run: more plugin flags, and options set on cli.Options
// before it runs.
type Extras struct {
	Args    []string
	Options func(*cli.Options)
}

// RunInProcessWith is RunInProcess with x's flags and options.
func RunInProcessWith(ctx context.Context, e *Env, cl *fixture.Cluster, to int, decomm, poll time.Duration, x Extras) (*ScaleRun, error) {
	r := &ScaleRun{Mode: ModeInProcess, Namespace: cl.Namespace, From: len(cl.Pods), To: to, Decommission: decomm, Poll: poll}
	r.Label = fmt.Sprintf("%d→%d", r.From, r.To)
	obs := &Observer{Kube: e.Clients.Kube, Namespace: cl.Namespace, Sim: cl.Sim}
	if err := obs.Start(ctx); err != nil {
		return nil, err
	}
	defer obs.Stop()
	rec := &Recorder{OnCall: func(c *Call) {
		if c.Verb == "exec" && strings.HasPrefix(ExecCommand(c.Query), "nodetool decommission") {
			// The node cannot be DECOMMISSIONED before the call started + the simulated
			// time; read the sim from a little before that.
			obs.PollDecommission(c.Name, c.Start.Add(decomm-20*time.Millisecond))
		}
	}}
	ex, err := newTimingExecer(e.KTE.Kubeconfig, cl.Namespace, rec)
	if err != nil {
		return nil, err
	}
	var stdout, stderr syncBuffer
	o := cli.NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr}, repair.Operator{Plugin: casskop.Plugin{}})
	o.WrapTransport = rec.Wrap
	o.Execer = ex
	if x.Options != nil {
		x.Options(o)
	}
	r.Args = append(scaleArgs(e.KTE.Kubeconfig, cl.Namespace, to, poll), x.Args...)
	r.Start = time.Now()
	r.Exit = o.Execute(ctx, r.Args)
	r.End = time.Now()
	// Events the plugin waited for were seen before it ended; give the watches a moment
	// for the last ones anyway.
	time.Sleep(200 * time.Millisecond)
	obs.Stop()
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	r.Calls = rec.Calls()
	ex.mu.Lock()
	r.Execs = append([]ExecTiming(nil), ex.execs...)
	ex.mu.Unlock()
	r.Obs = obs.Snapshot()
	if r.Exit != 0 {
		return r, fmt.Errorf("scale %s exited %d:\n%s", r.Label, r.Exit, tail(r.Stderr, 30))
	}
	return r, nil
}

// TimeBin is GNU time, used to read the plugin's peak RSS when present.
const TimeBin = "/usr/bin/time"

// RunBinary runs the plugin binary as a child process (not through kubectl) and measures
// its peak RSS: with GNU time when present (it forks and execs, so its child's
// ru_maxrss is the plugin's own; Go's os/exec uses vfork, whose child would report this
// process's RSS instead), and by reading VmHWM from /proc/<pid>/status every 10 ms until
// the process exits (the last read is at most 10 ms before exit).
func RunBinary(ctx context.Context, e *Env, cl *fixture.Cluster, to int, decomm, poll time.Duration) (*ScaleRun, error) {
	r := &ScaleRun{Mode: ModeBinary, Namespace: cl.Namespace, From: len(cl.Pods), To: to, Decommission: decomm, Poll: poll}
	r.Label = fmt.Sprintf("%d→%d", r.From, r.To)
	obs := &Observer{Kube: e.Clients.Kube, Namespace: cl.Namespace}
	if err := obs.Start(ctx); err != nil {
		return nil, err
	}
	defer obs.Stop()
	r.Args = scaleArgs(e.KTE.Kubeconfig, cl.Namespace, to, poll)
	argv := append([]string{e.PluginBin}, r.Args...)
	useTime := false
	if st, err := os.Stat(TimeBin); err == nil && st.Mode()&0o111 != 0 {
		useTime = true
		argv = append([]string{TimeBin, "-f", timeMarker + "%M"}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = e.Cmdenv()
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	r.Start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stopPoll := make(chan struct{})
	var pollWG sync.WaitGroup
	pollWG.Go(func() {
		pid := cmd.Process.Pid
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if useTime {
				pid = onlyChild(cmd.Process.Pid)
			}
			if v := vmHWM(pid); v > r.VmHWM {
				r.VmHWM = v
			}
			select {
			case <-stopPoll:
				return
			case <-t.C:
			}
		}
	})
	err := cmd.Wait()
	r.End = time.Now()
	close(stopPoll)
	pollWG.Wait()
	time.Sleep(200 * time.Millisecond)
	obs.Stop()
	r.Obs = obs.Snapshot()
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	if useTime {
		r.Stderr, r.MaxRSS = cutTimeMarker(r.Stderr)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Exit = ee.ExitCode()
	default:
		return r, err
	}
	if r.Exit != 0 {
		return r, fmt.Errorf("scale %s (binary) exited %d:\n%s", r.Label, r.Exit, tail(r.Stderr, 30))
	}
	return r, nil
}

const timeMarker = "KCASS_BENCH_MAXRSS_KB="

// cutTimeMarker removes GNU time's line from stderr and returns the peak RSS in bytes.
func cutTimeMarker(stderr string) (string, int64) {
	var keep []string
	var rss int64
	for _, line := range strings.Split(stderr, "\n") {
		if v, ok := strings.CutPrefix(line, timeMarker); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			rss = kb * 1024
			continue
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n"), rss
}

// onlyChild returns the first child of pid (the plugin under GNU time), or 0.
func onlyChild(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	c, _ := strconv.Atoi(f[0])
	return c
}

// vmHWM reads the peak RSS so far of a running process (bytes; 0 if unreadable).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
