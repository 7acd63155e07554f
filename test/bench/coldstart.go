package bench

import (
	"context"
	"fmt"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cli"
)

// ColdStart compares `kubectl cassandra status` (with and without its nodetool call) with
// `kubectl get cassandraclusters -o yaml` on the same cluster, and times the nodetool part
// alone (`kubectl exec <pod> -c cassandra -- nodetool status`).
//
// A plugin run through kubectl pays kubectl's own start before its first instruction:
// kubectl execs the plugin only after building its whole command tree. So beside the
// runs through kubectl, the plugin binary is also run directly (the process kubectl
// execs), and yardsticks are run: a plugin that exits at once (kubectl's dispatch alone),
// the bare client-go binary listing the CRs, and the same lister taking kubectl's
// flags from cli-runtime as the plugin does (both ways each).
type ColdStart struct {
	Runs     int       `json:"runs"`
	Warmup   int       `json:"warmup"`
	Kubectl  string    `json:"kubectl"`
	StatusMS []float64 `json:"statusMs"`
	// StatusK8sMS: `kubectl cassandra status --nodetool=false`, the Kubernetes part alone.
	StatusK8sMS []float64 `json:"statusK8sMs"`
	// StatusK8sDirectMS: the same, the plugin binary run directly.
	StatusK8sDirectMS []float64 `json:"statusK8sDirectMs"`
	GetMS             []float64 `json:"getMs"`
	ExecMS            []float64 `json:"execMs"`
	// NoopMS: `kubectl kcassnoop`, a plugin that exits at once.
	NoopMS []float64 `json:"noopMs"`
	// BareMS, BareDirectMS: the bare client-go lister through kubectl and directly.
	BareMS       []float64 `json:"bareMs"`
	BareDirectMS []float64 `json:"bareDirectMs"`
	// ClirtMS, ClirtDirectMS: the lister with cli-runtime's flags, through kubectl and directly.
	ClirtMS       []float64 `json:"cliRuntimeListerMs"`
	ClirtDirectMS []float64 `json:"cliRuntimeListerDirectMs"`
	Failures      []string  `json:"failures,omitempty"`
	// Profiles are `status` runs in-process, every request recorded and every nodetool
	// call timed (after the kubectl runs, same cluster).
	Profiles []*StatusProfile `json:"statusProfiles,omitempty"`
}

// StatusProfile is what one `status` does.
type StatusProfile struct {
	WallMS    float64   `json:"wallMs"`
	Requests  int       `json:"requests"`
	RequestMS float64   `json:"requestMs"` // sum of request times (to the response headers), execs excluded
	Discovery int       `json:"discovery"`
	Execs     []string  `json:"execs"`
	ExecMS    float64   `json:"execMs"` // sum of nodetool call times
	Breakdown []KeyStat `json:"breakdown"`
}

// MeasureColdStart runs the commands interleaved (so that drift hits them all alike),
// warmup times each first (not counted: kubectl's discovery cache is warm, as for a
// user), then runs times each; then profiles `status` in-process profiles times.
func MeasureColdStart(ctx context.Context, e *Env, ns, pod string, runs, warmup, profiles int) (*ColdStart, error) {
	cs := &ColdStart{Runs: runs, Warmup: warmup}
	if out, err := exec.CommandContext(ctx, "kubectl", "version", "--client").Output(); err == nil {
		cs.Kubectl = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	bare := filepath.Join(e.PluginDir, "kubectl-"+BarePlugin)
	clirt := filepath.Join(e.PluginDir, "kubectl-"+ClirtPlugin)
	cmds := []struct {
		args []string // argv: kubectl, or a binary run directly
		dst  *[]float64
	}{
		{[]string{"kubectl", "cassandra", "status", "-n", ns, ClusterName}, &cs.StatusMS},
		{[]string{"kubectl", "cassandra", "status", "-n", ns, ClusterName, "--nodetool=false"}, &cs.StatusK8sMS},
		{[]string{e.PluginBin, "status", "-n", ns, ClusterName, "--nodetool=false"}, &cs.StatusK8sDirectMS},
		{[]string{"kubectl", "get", "cassandraclusters", "-n", ns, "-o", "yaml"}, &cs.GetMS},
		{[]string{"kubectl", "exec", "-n", ns, pod, "-c", "cassandra", "--", "nodetool", "status"}, &cs.ExecMS},
		{[]string{"kubectl", NoopPlugin}, &cs.NoopMS},
		{[]string{"kubectl", BarePlugin, "-n", ns}, &cs.BareMS},
		{[]string{bare, "-n", ns}, &cs.BareDirectMS},
		{[]string{"kubectl", ClirtPlugin, "-n", ns}, &cs.ClirtMS},
		{[]string{clirt, "-n", ns}, &cs.ClirtDirectMS},
	}
	for i := 0; i < warmup+runs; i++ {
		for _, c := range cmds {
			d, err := e.timeCmd(ctx, c.args...)
			if err != nil {
				if ctx.Err() != nil {
					return cs, ctx.Err()
				}
				cs.Failures = append(cs.Failures, err.Error())
				if len(cs.Failures) > 5 {
					return cs, fmt.Errorf("cold start: too many failures: %s", strings.Join(cs.Failures, "; "))
				}
				continue
			}
			if i >= warmup {
				*c.dst = append(*c.dst, ms(d))
			}
		}
	}
	for i := 0; i < profiles; i++ {
		p, err := ProfileStatus(ctx, e, ns)
		if err != nil {
			cs.Failures = append(cs.Failures, "in-process status profile: "+err.Error())
			break
		}
		cs.Profiles = append(cs.Profiles, p)
	}
	return cs, nil
}

// timeCmd runs argv in the bench's environment (test cluster, plugin on PATH) and times it.
func (e *Env) timeCmd(ctx context.Context, argv ...string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = e.Cmdenv()
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, tail(errb.String(), 5))
	}
	return d, nil
}

// ProfileStatus runs `status` once in-process with every request recorded.
func ProfileStatus(ctx context.Context, e *Env, ns string) (*StatusProfile, error) {
	rec := &Recorder{}
	ex, err := newTimingExecer(e.KTE.Kubeconfig, ns, rec)
	if err != nil {
		return nil, err
	}
	var stdout, stderr syncBuffer
	o := cli.NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr}, repair.Operator{Plugin: casskop.Plugin{}})
	o.WrapTransport = rec.Wrap
	o.Execer = ex
	start := time.Now()
	code := o.Execute(ctx, []string{"status", "--kubeconfig", e.KTE.Kubeconfig, "-n", ns, ClusterName, "--color", "never"})
	p := &StatusProfile{WallMS: ms(time.Since(start))}
	if code != 0 {
		return p, fmt.Errorf("status exited %d: %s", code, tail(stderr.String(), 5))
	}
	by := map[string]*KeyStat{}
	for _, c := range rec.Calls() {
		p.Requests++
		if c.Verb == "discovery" {
			p.Discovery++
		}
		if c.Class != ClassExec {
			p.RequestMS += ms(c.End.Sub(c.Start))
		}
		k := by[c.Key()]
		if k == nil {
			k = &KeyStat{Key: c.Key()}
			by[c.Key()] = k
		}
		k.Count++
		k.Bytes += c.RespBytes()
		k.MeanMS += ms(c.End.Sub(c.Start))
	}
	for _, k := range by {
		k.MeanMS /= float64(k.Count)
		p.Breakdown = append(p.Breakdown, *k)
	}
	sort.Slice(p.Breakdown, func(i, j int) bool { return p.Breakdown[i].Count > p.Breakdown[j].Count })
	for _, x := range ex.execs {
		p.Execs = append(p.Execs, fmt.Sprintf("%s on %s: %.0f ms", x.Command, x.Pod, ms(x.End.Sub(x.Start))))
		p.ExecMS += ms(x.End.Sub(x.Start))
	}
	return p, nil
}

// InProcess returns the medians of the in-process profiles: wall and nodetool time (ms).
func (cs *ColdStart) InProcess() (wall, nodetool float64, ok bool) {
	var w, n []float64
	for _, p := range cs.Profiles {
		w = append(w, p.WallMS)
		n = append(n, p.ExecMS)
	}
	if len(w) == 0 {
		return 0, 0, false
	}
	return Median(w), Median(n), true
}
