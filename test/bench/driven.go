package bench

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cli"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	cassop "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
	cassrepair "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator/repair"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// The driven row (issue 36): the plugin through the stand-in cass-operator
// (test/standin/cassoperator on the real API server, fixture.NewCassOperatorDatacenter)
// removes nodes one at a time; the same change is made by the stand-in alone (spec.size
// lowered by hand) in an identical datacenter of the same control plane. Per removed
// node, the plugin's wall time is compared with the stand-in's own; and each piece of
// the operator's evidence the plugin waits for (the pod's node-state label, the pod
// terminating and gone, its claim going, the status letting go of it) is timed, from
// the bench's own watches, to the plugin's next API request.

// Targets of the driven row.
const (
	TargetDrivenRatio       = 1.1
	TargetDrivenReactionP50 = 100 // ms
)

// DrivenResult is the driven row.
type DrivenResult struct {
	Nodes        int    `json:"nodes"`
	Decommission string `json:"decommission"`
	Poll         string `json:"pollInterval"`
	// OperatorS and PluginS are the seconds each removed node took (size N -> N-1), the
	// stand-in alone and through the plugin; Ratio is PluginS/OperatorS summed over nodes.
	OperatorS []float64 `json:"operatorS"`
	PluginS   []float64 `json:"pluginS"`
	Ratio     float64   `json:"ratio"`
	// Reaction: from a piece of evidence to the plugin's next request, in ms.
	Reactions     int      `json:"reactions"`
	ReactionP50MS float64  `json:"reactionP50ms"`
	ReactionP99MS float64  `json:"reactionP99ms"`
	Evidence      []string `json:"evidence,omitempty"`
	// Where each plugin run's time went (s): BeforeRequestS from the run's start to its
	// size request (the plan's reads and ring read, the lock's write, the step's checks
	// and its fresh ring read), AfterSettledS from the operator's last status change
	// (settled) to the run's end (the plugin's own settle read, the checkpoint cleared).
	BeforeRequestS []float64 `json:"beforeRequestS,omitempty"`
	AfterSettledS  []float64 `json:"afterSettledS,omitempty"`
	// Timeline is, per plugin run, each request (its kind, name, start after the run
	// began and duration) and each piece of evidence, in time order: where a run's time goes.
	Timeline [][]string `json:"timeline,omitempty"`
	// OperatorTimeline is, per run of the stand-in alone, its evidence from the size
	// patch on: what the plugin's run is compared with, step by step.
	OperatorTimeline [][]string `json:"operatorTimeline,omitempty"`
}

// RunDriven measures the driven row: two datacenters of nodes nodes, each removed down
// to one node, by the stand-in alone and through the plugin, one node of each in turn.
func RunDriven(ctx context.Context, env *Env, nodes int, decomm, poll time.Duration, logf func(string, ...any)) (*DrivenResult, error) {
	res := &DrivenResult{Nodes: nodes, Decommission: decomm.String(), Poll: poll.String()}
	if err := env.Clients.InstallCassOperatorCRDs(ctx, env.Root); err != nil {
		return res, err
	}
	dcs := map[string]*fixture.Datacenter{}
	for _, ns := range []string{"bench-driven-operator", "bench-driven-plugin"} {
		if err := env.Clients.CreateNamespace(ctx, ns); err != nil {
			return res, err
		}
		// No JMX authentication: the harness's exec cannot pass a password on stdin.
		dc, err := env.Clients.NewCassOperatorDatacenter(ctx, ns, fixture.DatacenterOptions{Size: nodes, NoJMX: true,
			Sim: fixture.SimOptions{DecommissionTime: decomm, RF: 1}, StateDir: filepath.Join(env.KTE.Dir, "sim", ns)})
		if err != nil {
			return res, fmt.Errorf("datacenter %s: %w", ns, err)
		}
		defer dc.Stop()
		dcs[ns] = dc
	}
	// Both datacenters' evidence is timed on the bench's own watches. One node is
	// removed by the stand-in alone, then one through the plugin, and so on: each pair
	// is measured on the machine in the same state (run all alone first, and whatever
	// the machine did meanwhile weighed on one side only).
	op, pl := dcs["bench-driven-operator"], dcs["bench-driven-plugin"]
	opEv, ev := &evidenceClock{}, &evidenceClock{}
	stopOp, err := opEv.start(ctx, env, op)
	if err != nil {
		return res, err
	}
	defer stopOp()
	stop, err := ev.start(ctx, env, pl)
	if err != nil {
		return res, err
	}
	defer stop()
	var calls []*Call
	for size := nodes - 1; size >= 1; size-- {
		alone := func() error { return removeAlone(ctx, env, op, opEv, size, res, logf) }
		plugin := func() error {
			got, err := removeThroughPlugin(ctx, env, pl, ev, size, poll, res, logf)
			calls = append(calls, got...)
			return err
		}
		// Who goes first alternates: neither side always follows the other's work.
		first, second := alone, plugin
		if size%2 == 0 {
			first, second = plugin, alone
		}
		if err := first(); err != nil {
			return res, err
		}
		if err := second(); err != nil {
			return res, err
		}
	}
	stopOp()
	stop()
	var opSum, plSum float64
	for i := range res.OperatorS {
		opSum += res.OperatorS[i]
		plSum += res.PluginS[i]
	}
	if opSum > 0 {
		res.Ratio = round3(plSum / opSum)
	}
	lat, words := ev.reactions(calls)
	res.Reactions, res.Evidence = len(lat), words
	res.ReactionP50MS, res.ReactionP99MS = percentileMS(lat, 0.50), percentileMS(lat, 0.99)
	return res, nil
}

// removeAlone lowers op's size to size by hand and times the stand-in until it is done
// removing the node, into res.
func removeAlone(ctx context.Context, env *Env, op *fixture.Datacenter, ev *evidenceClock, size int, res *DrivenResult, logf func(string, ...any)) error {
	pod := op.PodName("rack1", size)
	t0 := time.Now()
	if err := setSize(ctx, env, op, size); err != nil {
		return err
	}
	if err := waitRemoved(ctx, env, op, pod); err != nil {
		return err
	}
	res.OperatorS = append(res.OperatorS, time.Since(t0).Seconds())
	res.OperatorTimeline = append(res.OperatorTimeline, ev.timeline(t0, time.Now(), nil, nil, nil))
	logf("driven: the stand-in alone removed %s in %.2f s", pod, time.Since(t0).Seconds())
	return nil
}

// removeThroughPlugin runs `scale --nodes size` on pl in this process, its requests
// recorded and the evidence timed, into res; it returns the run's requests.
func removeThroughPlugin(ctx context.Context, env *Env, pl *fixture.Datacenter, ev *evidenceClock, size int, poll time.Duration, res *DrivenResult, logf func(string, ...any)) ([]*Call, error) {
	pod := pl.PodName("rack1", size)
	rec := &Recorder{}
	ex, err := newTimingExecer(env.KTE.Kubeconfig, pl.Namespace, rec)
	if err != nil {
		return nil, err
	}
	var stdout, stderr syncBuffer
	out := &stampedWriter{w: &stdout}
	o := cli.NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &stampedWriter{w: &stderr, into: out}},
		repair.Operator{Plugin: casskop.Plugin{}}, cassrepair.Operator{Plugin: cassop.Plugin{}})
	o.WrapTransport = rec.Wrap
	o.Execer = ex
	args := []string{"scale", "--kubeconfig", env.KTE.Kubeconfig, "-n", pl.Namespace, pl.Name, "--dc", pl.Name,
		"--nodes", strconv.Itoa(size), "--yes", "--poll-interval", poll.String(), "--color", "never"}
	t0 := time.Now()
	code := o.Execute(ctx, args)
	took := time.Since(t0)
	if code != 0 {
		return nil, fmt.Errorf("scale %s --nodes %d exited %d:\n%s", pl.Namespace, size, code, tail(stderr.String(), 30))
	}
	res.PluginS = append(res.PluginS, took.Seconds())
	res.Timeline = append(res.Timeline, ev.timeline(t0, t0.Add(took), rec.Calls(), ex.timings(), out.lines()))
	before, after := ev.split(t0, t0.Add(took), rec.Calls())
	res.BeforeRequestS, res.AfterSettledS = append(res.BeforeRequestS, round3(before.Seconds())), append(res.AfterSettledS, round3(after.Seconds()))
	logf("driven: the plugin removed %s in %.2f s", pod, took.Seconds())
	return rec.Calls(), nil
}

// setSize lowers spec.size by a merge patch, as a user would.
func setSize(ctx context.Context, env *Env, dc *fixture.Datacenter, size int) error {
	b := []byte(fmt.Sprintf(`{"spec":{"size":%d}}`, size))
	_, err := env.Clients.Dyn.Resource(fixture.CassandraDatacenterGVR).Namespace(dc.Namespace).Patch(ctx, dc.Name, types.MergePatchType, b, metav1.PatchOptions{})
	return err
}

// waitRemoved waits (reading every 10 ms) until the stand-in is done removing pod: the
// pod and its claim gone, the status letting go of it, progress Ready and no
// ScalingDown, as the plugin's last step of a node judges it.
func waitRemoved(ctx context.Context, env *Env, dc *fixture.Datacenter, pod string) error {
	return fixture.WaitFor(ctx, "stand-in removed "+pod, 5*time.Minute, 10*time.Millisecond, func(ctx context.Context) (bool, error) {
		if _, err := env.Clients.Kube.CoreV1().Pods(dc.Namespace).Get(ctx, pod, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("pod %s still there", pod)
		}
		if _, err := env.Clients.Kube.CoreV1().PersistentVolumeClaims(dc.Namespace).Get(ctx, "server-data-"+pod, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("claim of %s still there", pod)
		}
		u, err := dc.Get(ctx)
		if err != nil {
			return false, err
		}
		return released(u, pod), fmt.Errorf("status still busy with %s", pod)
	})
}

// released: the status does not list pod, its progress is Ready and ScalingDown not True.
func released(u *unstructured.Unstructured, pod string) bool {
	if _, listed, _ := unstructured.NestedMap(u.Object, "status", "nodeStatuses", pod); listed {
		return false
	}
	if p, _, _ := unstructured.NestedString(u.Object, "status", "cassandraOperatorProgress"); p != "Ready" {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "ScalingDown" && m["status"] == "True" {
			return false
		}
	}
	return true
}

// evidenceClock timestamps, on the bench's own watches, each piece of the operator's
// evidence in one namespace: a pod's node-state label changed, a pod terminating or
// gone, a claim terminating or gone, the resource's status changed.
type evidenceClock struct {
	mu   sync.Mutex
	seen []evidence
}

type evidence struct {
	at   time.Time
	what string
}

func (e *evidenceClock) note(what string) {
	e.mu.Lock()
	e.seen = append(e.seen, evidence{time.Now(), what})
	e.mu.Unlock()
}

func (e *evidenceClock) start(ctx context.Context, env *Env, dc *fixture.Datacenter) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	pods, err := env.Clients.Kube.CoreV1().Pods(dc.Namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		return nil, err
	}
	pvcs, err := env.Clients.Kube.CoreV1().PersistentVolumeClaims(dc.Namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		return nil, err
	}
	cr, err := env.Clients.Dyn.Resource(fixture.CassandraDatacenterGVR).Namespace(dc.Namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		return nil, err
	}
	labels, terminating := map[string]string{}, map[string]bool{}
	wg.Go(func() {
		for ev := range pods.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			switch {
			case ev.Type == watch.Deleted:
				e.note("pod " + p.Name + " gone")
			case ev.Type == watch.Added:
				labels[p.Name] = p.Labels[cassop.LabelNodeState]
			case p.DeletionTimestamp != nil && !terminating[p.Name]:
				terminating[p.Name] = true
				e.note("pod " + p.Name + " terminating")
			case p.Labels[cassop.LabelNodeState] != labels[p.Name]:
				labels[p.Name] = p.Labels[cassop.LabelNodeState]
				e.note("pod " + p.Name + " node-state " + labels[p.Name])
			}
		}
	})
	claimsGoing := map[string]bool{}
	wg.Go(func() {
		for ev := range pvcs.ResultChan() {
			c, ok := ev.Object.(*corev1.PersistentVolumeClaim)
			if !ok {
				continue
			}
			switch {
			case ev.Type == watch.Deleted:
				e.note("claim " + c.Name + " gone")
			case c.DeletionTimestamp != nil && !claimsGoing[c.Name]:
				claimsGoing[c.Name] = true
				e.note("claim " + c.Name + " terminating")
			}
		}
	})
	var lastStatus string
	wg.Go(func() {
		for ev := range cr.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Added {
				if ok {
					lastStatus = statusKey(u)
				}
				continue
			}
			if k := statusKey(u); k != lastStatus {
				lastStatus = k
				e.note("status " + k)
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			pods.Stop()
			pvcs.Stop()
			cr.Stop()
			wg.Wait()
		})
	}, nil
}

// statusKey is what of the resource's status the plugin's waits judge: the pods it
// lists, its progress, ScalingDown.
func statusKey(u *unstructured.Unstructured) string {
	ns, _, _ := unstructured.NestedMap(u.Object, "status", "nodeStatuses")
	var pods []string
	for p := range ns {
		pods = append(pods, p)
	}
	sort.Strings(pods)
	p, _, _ := unstructured.NestedString(u.Object, "status", "cassandraOperatorProgress")
	down := "False"
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "ScalingDown" {
			down, _ = m["status"].(string)
		}
	}
	return fmt.Sprintf("nodeStatuses [%s] progress %s ScalingDown %s", strings.Join(pods, " "), p, down)
}

// reactions pairs each piece of evidence seen while a plugin run made requests with the
// plugin's first request (not a watch stream) that left after it: the plugin's
// reaction. Evidence after the plugin's last request of its run is not counted.
func (e *evidenceClock) reactions(calls []*Call) ([]time.Duration, []string) {
	var starts []time.Time
	for _, c := range calls {
		if c.Class != ClassWatch {
			starts = append(starts, c.Start)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []time.Duration
	var words []string
	for _, ev := range e.seen {
		i := sort.Search(len(starts), func(i int) bool { return starts[i].After(ev.at) })
		if i == 0 || i == len(starts) {
			continue // before the first run started, or after the last request
		}
		d := starts[i].Sub(ev.at)
		out = append(out, d)
		words = append(words, fmt.Sprintf("%s: %d ms", ev.what, d.Milliseconds()))
	}
	return out, words
}

// timeline lists one run's requests and the evidence seen while it ran, in time order,
// each as "+<ms since t0> ...".
func (e *evidenceClock) timeline(t0, end time.Time, calls []*Call, execs []ExecTiming, printed []stamped) []string {
	type line struct {
		at   time.Time
		text string
	}
	var ls []line
	for _, c := range calls {
		what := c.Key()
		if c.Name != "" && c.Verb != "exec" {
			what += " " + c.Name
		}
		ls = append(ls, line{c.Start, fmt.Sprintf("%s (%d ms, %d)", what, c.Done().Sub(c.Start).Milliseconds(), c.Status)})
	}
	for _, x := range execs {
		ls = append(ls, line{x.End, fmt.Sprintf("%s returned (%d ms in all)", x.Command, x.End.Sub(x.Start).Milliseconds())})
	}
	for _, p := range printed {
		ls = append(ls, line{p.at, "printed: " + p.text})
	}
	e.mu.Lock()
	for _, ev := range e.seen {
		if !ev.at.Before(t0) && !ev.at.After(end) {
			ls = append(ls, line{ev.at, "evidence: " + ev.what})
		}
	}
	e.mu.Unlock()
	ls = append(ls, line{end, "run ended"})
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].at.Before(ls[j].at) })
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = fmt.Sprintf("+%5d ms %s", l.at.Sub(t0).Milliseconds(), l.text)
	}
	return out
}

// split is how long one run took before its size request (the second patch of the
// resource: the first writes the checkpoint) and after the operator's last status
// change seen while it ran.
func (e *evidenceClock) split(t0, end time.Time, calls []*Call) (before, after time.Duration) {
	patches := 0
	for _, c := range calls {
		if c.Verb == "patch" && c.Resource == "cassandradatacenters" {
			if patches++; patches == 2 {
				before = c.Start.Sub(t0)
				break
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var last time.Time
	for _, ev := range e.seen {
		if strings.HasPrefix(ev.what, "status ") && ev.at.After(t0) && !ev.at.After(end) {
			last = ev.at
		}
	}
	if !last.IsZero() {
		after = end.Sub(last)
	}
	return before, after
}

// stampedWriter passes what the plugin prints on to w and keeps each write's time (into
// another stampedWriter's list, when into is set: stdout and stderr on one clock).
type stampedWriter struct {
	w    *syncBuffer
	into *stampedWriter
	mu   sync.Mutex
	seen []stamped
}

type stamped struct {
	at   time.Time
	text string
}

func (s *stampedWriter) Write(p []byte) (int, error) {
	t := s
	if s.into != nil {
		t = s.into
	}
	t.mu.Lock()
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		t.seen = append(t.seen, stamped{time.Now(), l})
	}
	t.mu.Unlock()
	return s.w.Write(p)
}

func (s *stampedWriter) lines() []stamped {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]stamped(nil), s.seen...)
}

func percentileMS(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return float64(s[max(i, 0)].Microseconds()) / 1000
}

// drivenFigures are the driven row's lines of the table.
func drivenFigures(d *DrivenResult, cfg Config) []Figure {
	name := fmt.Sprintf("Driven scale-down %d→1 through the stand-in cass-operator: plugin / operator alone, per removed node", cfg.DrivenNodes)
	react := "  reaction from the operator's evidence to the plugin's next request (p50, p99)"
	if d == nil || len(d.PluginS) == 0 || len(d.PluginS) != len(d.OperatorS) {
		return []Figure{
			{Name: name, Display: "not measured (see the errors below)", Target: fmt.Sprintf("≤ %.1f×", TargetDrivenRatio), Result: Error},
			{Name: react, Display: "not measured (see the errors below)", Target: fmt.Sprintf("p50 < %d ms", TargetDrivenReactionP50), Result: Error},
		}
	}
	var per []string
	for i := range d.PluginS {
		per = append(per, fmt.Sprintf("%.2f s / %.2f s", d.PluginS[i], d.OperatorS[i]))
	}
	split := ""
	if len(d.BeforeRequestS) == len(d.PluginS) && len(d.AfterSettledS) == len(d.PluginS) {
		var b, a float64
		for i := range d.PluginS {
			b += d.BeforeRequestS[i]
			a += d.AfterSettledS[i]
		}
		n := float64(len(d.PluginS))
		split = fmt.Sprintf("; the plugin's own: %.2f s before its request, %.2f s after the operator settled", b/n, a/n)
	}
	f := Figure{Name: name, Value: d.Ratio, Unit: "×", Target: fmt.Sprintf("≤ %.1f×", TargetDrivenRatio),
		Display: fmt.Sprintf("%.2f× (%s; decommission %s, --poll-interval %s%s)", d.Ratio, strings.Join(per, ", "), d.Decommission, d.Poll, split),
		Result:  passIf(d.Ratio <= TargetDrivenRatio)}
	if f.Result == Fail {
		f.Why = "the plugin's own work before its request and after the operator settled (JSON: driven.beforeRequestS, afterSettledS; driven.timeline for each request) outweighs a tenth of the operator's time; a late reaction shows in driven.evidence"
	}
	r := Figure{Name: react, Value: d.ReactionP50MS, Unit: "ms", Target: fmt.Sprintf("p50 < %d ms", TargetDrivenReactionP50),
		Display: fmt.Sprintf("p50 %.0f ms, p99 %.0f ms (%d pieces of evidence)", d.ReactionP50MS, d.ReactionP99MS, d.Reactions),
		Result:  passIf(d.Reactions > 0 && d.ReactionP50MS < TargetDrivenReactionP50)}
	if r.Result == Fail {
		r.Why = "the plugin read the world again only after a poll interval: a wait that is not woken by the evidence (JSON: driven.evidence)"
	}
	return []Figure{f, r}
}
