package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/lifecycle"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/status"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// liveFlags are status's --watch and --wait.
type liveFlags struct {
	watch, wait      bool
	timeout          time.Duration
	nodetoolInterval time.Duration
}

// validate refuses flags that cannot go together.
func (f liveFlags) validate() error {
	if f.watch && f.wait {
		return exit.Usagef("--watch and --wait cannot be used together")
	}
	if f.nodetoolInterval <= 0 {
		return exit.Usagef("--nodetool-interval must be positive, got %s", f.nodetoolInterval)
	}
	return nil
}

// liveWorld is what the watches keep: the cluster resource, its StatefulSets, pods and
// PVCs, each kept up to date by its watch. A change marks it dirty; the loop rebuilds
// the status from it (no API polling: only the ring is re-read, on a timer).
type liveWorld struct {
	mu   sync.Mutex
	cr   *unstructured.Unstructured
	sts  map[string]appsv1.StatefulSet
	pods map[string]corev1.Pod
	pvcs map[string]corev1.PersistentVolumeClaim

	dirty chan struct{}
}

// events applies a watch's events until it ends or ctx does.
func (lw *liveWorld) events(ctx context.Context, w watch.Interface, apply func(watch.Event)) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if ev.Type == watch.Error || ev.Type == watch.Bookmark {
				continue
			}
			lw.mu.Lock()
			apply(ev)
			lw.mu.Unlock()
			lw.touch()
		}
	}
}

func (lw *liveWorld) touch() {
	select {
	case lw.dirty <- struct{}{}:
	default:
	}
}

func newLiveWorld() *liveWorld {
	return &liveWorld{sts: map[string]appsv1.StatefulSet{}, pods: map[string]corev1.Pod{}, pvcs: map[string]corev1.PersistentVolumeClaim{}, dirty: make(chan struct{}, 1)}
}

// fill starts the world from the lists (one list each, as a plain status makes).
func (lw *liveWorld) fill(l *statusLists) {
	l.wg.Wait()
	lw.mu.Lock()
	defer lw.mu.Unlock()
	putNamed(lw.sts, l.sts)
	putNamed(lw.pods, l.pods)
	putNamed(lw.pvcs, l.pvcs)
}

// snapshot is the world now: the cluster as last seen (cl while no watch event
// brought it) and its lists, with the operator controllers last checked.
func (lw *liveWorld) snapshot(a operator.Adapter, cl topology.Cluster, ops []operator.Controller) (topology.Cluster, *statusLists) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.cr != nil {
		if c, err := a.FromObject(lw.cr); err == nil {
			cl = c
		}
	}
	l := &statusLists{ops: ops, sts: slices.Collect(maps.Values(lw.sts)), pods: slices.Collect(maps.Values(lw.pods)), pvcs: slices.Collect(maps.Values(lw.pvcs))}
	return cl, l
}

// applyCluster keeps the cluster resource named name from a watch's events.
func (lw *liveWorld) applyCluster(name string) func(watch.Event) {
	return func(ev watch.Event) {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || u.GetName() != name {
			return
		}
		if ev.Type == watch.Deleted {
			lw.cr = nil
		} else {
			lw.cr = u
		}
	}
}

// named is a pointer to a Kubernetes object of type T.
type named[T any] interface {
	*T
	GetName() string
}

// applyNamed keeps objects by name from a watch's events.
func applyNamed[T any, P named[T]](m map[string]T) func(watch.Event) {
	return func(ev watch.Event) {
		o, ok := ev.Object.(P)
		if !ok {
			return
		}
		if ev.Type == watch.Deleted {
			delete(m, o.GetName())
		} else {
			m[o.GetName()] = *o
		}
	}
}

// putNamed keeps items by name.
func putNamed[T any, P named[T]](m map[string]T, items []T) {
	for i := range items {
		m[P(&items[i]).GetName()] = items[i]
	}
}

// liveWatch is one watch the world is kept by.
type liveWatch struct {
	what  string
	open  func(context.Context) (watch.Interface, error)
	apply func(watch.Event)
}

// watches are the watches of the cluster resource, its StatefulSets, pods and PVCs.
func (lw *liveWorld) watches(s *session) []liveWatch {
	ns, name := s.cluster.Namespace, s.cluster.Name
	sel := metav1.ListOptions{LabelSelector: s.adapter.ClusterSelector(name)}
	crs := s.c.Dynamic.Resource(s.adapter.GVR()).Namespace(ns)
	apps, core := s.c.Kube.AppsV1(), s.c.Kube.CoreV1()
	return []liveWatch{
		{"the " + s.adapter.Kind(), func(ctx context.Context) (watch.Interface, error) {
			return crs.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
		}, lw.applyCluster(name)},
		{"StatefulSets", func(ctx context.Context) (watch.Interface, error) {
			return apps.StatefulSets(ns).Watch(ctx, sel)
		}, applyNamed(lw.sts)},
		{"pods", func(ctx context.Context) (watch.Interface, error) { return core.Pods(ns).Watch(ctx, sel) }, applyNamed(lw.pods)},
		{"PVCs", func(ctx context.Context) (watch.Interface, error) {
			return core.PersistentVolumeClaims(ns).Watch(ctx, metav1.ListOptions{})
		}, applyNamed(lw.pvcs)},
	}
}

// keep keeps watch w open until ctx ends: one that cannot be opened is tried again
// after retry; one the server ended (its timeout) after a second, never in a tight loop.
// opened is called once, after the first attempt to open it.
func (o *Options) keep(ctx context.Context, lw *liveWorld, w liveWatch, retry time.Duration, opened func()) {
	defer func() {
		if opened != nil { // ctx ended before the first attempt
			opened()
		}
	}()
	for ctx.Err() == nil {
		pause := time.Second
		wi, err := w.open(ctx)
		if opened != nil {
			opened()
			opened = nil
		}
		if err != nil {
			fmt.Fprintf(o.ErrOut, "cannot watch %s: %v\n", w.what, err)
			pause = retry
		} else {
			lw.events(ctx, wi, w.apply)
			wi.Stop()
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
}

// operatorCheck is the last check for running operator controllers: a list of
// Deployments, so made again at the ring's pace only.
type operatorCheck struct {
	ops []operator.Controller
	at  time.Time
}

func (c *operatorCheck) refresh(ctx context.Context, o *Options, s *session, every time.Duration) {
	if o.Now().Sub(c.at) < every {
		return
	}
	if r, err := s.adapter.RunningOperators(ctx, s.cluster.Namespace); err == nil {
		c.ops, c.at = r, o.Now()
	}
}

// follow runs the watches and calls onReport with a fresh status on every change
// (and every nodetoolInterval, for the ring, which no watch shows) until it returns
// done, an error, or ctx ends (nil: Ctrl-C is a normal end of a watch).
func (o *Options) follow(ctx context.Context, s *session, first *statusLists, withNodetool bool, nodetoolInterval time.Duration, onReport func(status.Report, status.Read) (bool, error)) error {
	ctx, cancel := context.WithCancel(ctx)
	lw := newLiveWorld()
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	// The first status is printed once every watch is open (or failed to open), so a
	// change made after it is never missed.
	var opened sync.WaitGroup
	for _, w := range lw.watches(s) {
		opened.Add(1)
		wg.Go(func() { o.keep(ctx, lw, w, nodetoolInterval, opened.Done) })
	}
	opened.Wait()
	// The first status comes from the lists; the watches then bring the changes.
	if first == nil {
		first = startStatusLists(ctx, s.c, s.adapter, lifecycle.New(o.lifecycleDeps(s.c, s.adapter)), s.cluster.Namespace, s.cluster.Name)
	}
	lw.fill(first)
	ops := &operatorCheck{ops: first.ops, at: o.Now()}
	live := *s
	live.nt.Exec = &ringCache{Execer: s.nt.Exec, every: nodetoolInterval, now: o.Now}
	// The holder is judged across the reads: the ticks re-judge a holder whose record
	// stays unchanged, so one that stopped is seen stopped a lease later.
	hw := o.newHolderWatch()
	tick := time.NewTicker(nodetoolInterval)
	defer tick.Stop()
	for {
		var lists *statusLists
		live.cluster, lists = lw.snapshot(s.adapter, live.cluster, ops.ops)
		rd := o.readStatus(ctx, &live, lists, withNodetool, hw)
		if ctx.Err() != nil {
			return nil
		}
		if done, err := onReport(status.Build(rd), rd); done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-lw.dirty:
		case <-tick.C:
			ops.refresh(ctx, o, s, nodetoolInterval)
		}
	}
}

// ringCache answers `nodetool status` from its last answer for every (the ring is
// re-read at most every --nodetool-interval); other commands go through.
type ringCache struct {
	Execer interface {
		Exec(ctx context.Context, pod string, argv []string) (string, string, error)
	}
	every time.Duration
	now   func() time.Time

	mu             sync.Mutex
	at             time.Time
	pod            string
	stdout, stderr string
	err            error
}

func (r *ringCache) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	if len(argv) == 0 || argv[len(argv)-1] != "status" {
		return r.Execer.Exec(ctx, pod, argv)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.at.IsZero() && r.now().Sub(r.at) < r.every && r.err == nil && r.pod == pod {
		return r.stdout, r.stderr, nil
	}
	r.stdout, r.stderr, r.err = r.Execer.Exec(ctx, pod, argv)
	r.at, r.pod = r.now(), pod
	return r.stdout, r.stderr, r.err
}

// watchPrinter prints a status on every change: redrawn in place on a terminal (its
// screen); otherwise only the lines that changed, timestamped (gone ones as "gone: …").
type watchPrinter struct {
	o      *Options
	w      io.Writer
	screen *output.Screen // nil without a terminal
	prev   map[string]string
}

func (wp *watchPrinter) print(rep status.Report) {
	if wp.screen != nil {
		var b bytes.Buffer
		status.Text(&b, rep, wp.o.statusStyle(wp.w)) // coloured as the terminal wants
		_ = wp.screen.Draw(b.String())
		return
	}
	keys, lines := status.Lines(rep)
	ts := wp.o.Now().Format("15:04:05")
	for _, k := range keys {
		if wp.prev[k] != lines[k] {
			fmt.Fprintf(wp.w, "%s %s\n", ts, lines[k])
		}
	}
	var gone []string
	for k, l := range wp.prev {
		if _, ok := lines[k]; !ok {
			gone = append(gone, l)
		}
	}
	sort.Strings(gone)
	for _, l := range gone {
		fmt.Fprintf(wp.w, "%s gone: %s\n", ts, l)
	}
	wp.prev = lines
}

// watchStatus is `status --watch`.
func (o *Options) watchStatus(ctx context.Context, s *session, first *statusLists, withNodetool bool, f liveFlags) error {
	wp := &watchPrinter{o: o, w: o.Out}
	if output.IsTerminal(o.Out) {
		wp.screen = output.NewScreen(o.Out)
	}
	return o.follow(ctx, s, first, withNodetool, f.nodetoolInterval, func(rep status.Report, _ status.Read) (bool, error) {
		wp.print(rep)
		return false, nil
	})
}

// waitOutcome is what `status --wait` ends with.
type waitOutcome struct {
	Result      string `json:"result"` // done, failed, interrupted, timed-out, stuck
	OperationID string `json:"operationID,omitempty"`
	Message     string `json:"message"`
	Next        string `json:"next"`
	code        int
}

// judge decides whether the operation followed (id; "" while none was seen) has ended,
// from the checkpoint (nil: none), what was made of its holder (live, by the lock's
// rule: checkpoint.Judge) and the last-operation record:
//
//   - done (0): no checkpoint and the last operation (the one followed, or the last one
//     when none was in flight) succeeded.
//   - failed (1): the last operation was aborted; or the run released the checkpoint
//     after a step error it may still retry (attempts left): someone must look at the
//     error, then resume.
//   - interrupted (4): the run released the checkpoint with no step error (Ctrl-C,
//     SIGTERM, the API server kept failing). Resume continues.
//   - stuck (3): needs a human and no run will move it: the checkpoint is unusable
//     (corrupt, another cluster's, newer schema); or released with a step that used all
//     its attempts (resume refuses it: "failed N times"); or its holder stopped without
//     releasing it (crashed, killed -9, machine gone): on this machine its process is
//     gone, elsewhere its record stayed unchanged for a whole lease of our clock (its
//     own clock may be off: its timestamps are never compared with ours).
//
// Anything else is in flight: keep waiting.
func judge(rep status.Report, cp *record.Checkpoint, live checkpoint.Liveness, followed string, maxAttempts int) (waitOutcome, bool) {
	if rep.Operation != nil && rep.Operation.Error != "" {
		return waitOutcome{Result: "stuck", Message: "the checkpoint is unusable: " + rep.Operation.Error, code: operation.ExitRefused}, true
	}
	if cp == nil || (followed != "" && cp.OperationID != followed) {
		lo := rep.LastOperation
		switch {
		case lo == nil:
			return waitOutcome{Result: "done", Message: "no operation in flight", code: exit.OK}, true
		case followed != "" && lo.OperationID != followed:
			return waitOutcome{Result: "failed", OperationID: followed, Message: fmt.Sprintf("the checkpoint of %s is gone and the last operation recorded is another one (%s)", followed, lo.OperationID), code: exit.Error}, true
		case lo.Result == "succeeded":
			return waitOutcome{Result: "done", OperationID: lo.OperationID, Message: lo.Summary, code: exit.OK}, true
		default:
			return waitOutcome{Result: "failed", OperationID: lo.OperationID, Message: fmt.Sprintf("%s %s: %s", lo.Kind, lo.Result, lo.Summary), code: exit.Error}, true
		}
	}
	var cur *record.Step
	if i := cp.Current(); i >= 0 {
		cur = &cp.Steps[i]
	}
	if cp.Holder.ReleasedAt != nil {
		switch {
		case cur != nil && cur.LastError != "" && cur.Attempts >= maxAttempts:
			return waitOutcome{Result: "stuck", OperationID: cp.OperationID, Message: fmt.Sprintf("step %s failed %d times (last error: %s); resume refuses it until the cause is fixed", cur.ID, cur.Attempts, cur.LastError), code: operation.ExitRefused}, true
		case cur != nil && cur.LastError != "":
			return waitOutcome{Result: "failed", OperationID: cp.OperationID, Message: fmt.Sprintf("the run stopped at step %s: %s", cur.ID, cur.LastError), code: exit.Error}, true
		default:
			return waitOutcome{Result: "interrupted", OperationID: cp.OperationID, Message: "the run was interrupted (the checkpoint is saved)", code: exit.Interrupted}, true
		}
	}
	if live.Stopped {
		return waitOutcome{Result: "stuck", OperationID: cp.OperationID, Message: fmt.Sprintf("its holder %s stopped without releasing it (%s), and no run took it over", cp.Holder, live.Why), code: operation.ExitRefused}, true
	}
	return waitOutcome{}, false
}

// quietNote is the line --wait prints once a holder elsewhere has left its record
// unchanged for half its lease ("" before, or when already said for this record).
func quietNote(cp *record.Checkpoint, live checkpoint.Liveness, said string) string {
	if cp == nil || live.Stopped || live.Lease <= 0 || live.Quiet < live.Lease/2 || said == cp.Record() {
		return ""
	}
	return fmt.Sprintf("%s has not written its checkpoint for %s of this machine's clock; it is judged stopped after %s",
		cp.Holder, live.Quiet.Round(time.Second), live.Lease.Round(time.Second))
}

// waitStatus is `status --wait`: progress on stderr, the outcome on stdout.
func (o *Options) waitStatus(ctx context.Context, s *session, first *statusLists, withNodetool bool, f liveFlags, format string) error {
	tctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	prog := output.NewProgress(o.ErrOut, o.Color)
	prog.Now = o.Now
	var followed, lastStep string
	var lastAt time.Time
	var out waitOutcome
	ended := false
	var quietSaid string // the record the quiet note was printed for
	err := o.follow(tctx, s, first, withNodetool, f.nodetoolInterval, func(rep status.Report, rd status.Read) (bool, error) {
		cp := rd.Checkpoint
		if followed == "" && cp != nil {
			followed = cp.OperationID
			prog.Info(fmt.Sprintf("waiting for %s %s (started by %s)", cp.Kind, cp.OperationID, cp.StartedBy))
		}
		if op := rep.Operation; op != nil && op.CurrentStep != nil && op.CurrentStep.ID != lastStep {
			lastStep = op.CurrentStep.ID
			prog.Info(fmt.Sprintf("step %s (%s)", op.CurrentStep.ID, op.CurrentStep.State))
		}
		if op := rep.Operation; op != nil && op.Progress != nil && op.Progress.At.After(lastAt) {
			lastAt = op.Progress.At
			prog.Progress("wait", *op.Progress)
		}
		out, ended = judge(rep, cp, rd.Holder, followed, maxStepAttempts)
		if ended && out.Result == "stuck" && rd.Holder.Stopped && cp != nil && cp.Holder.ReleasedAt == nil && !o.stillStored(tctx, s, cp) {
			ended = false // the watch lags behind the holder's last write: it brings it next
		}
		if note := quietNote(cp, rd.Holder, quietSaid); !ended && note != "" {
			quietSaid = cp.Record()
			prog.Info(note)
		}
		return ended, nil
	})
	if err != nil {
		return err
	}
	if !ended {
		if ctx.Err() != nil {
			return exit.Interruptedf("stopped waiting (interrupted); the operation goes on: %s --wait", s.statusHint())
		}
		out = waitOutcome{Result: "timed-out", OperationID: followed, Message: fmt.Sprintf("still running after %s", f.timeout), code: exit.Interrupted}
	}
	switch out.Result {
	case "done":
		out.Next = ""
	case "timed-out":
		out.Next = s.statusHint() + " --wait"
	default:
		out.Next = s.resumeHint()
	}
	if format != "text" {
		if err := output.Print(o.Out, format, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(o.Out, "%s: %s\n", out.Result, out.Message)
		if out.Next != "" {
			fmt.Fprintf(o.Out, "Next: %s\n", out.Next)
		}
	}
	if out.code != exit.OK {
		return exit.WithCode(out.code, fmt.Errorf("operation %s: %s", out.Result, out.Message))
	}
	return nil
}

// stillStored confirms, with a fresh read, that the checkpoint stored is still cp's
// record, before --wait calls its holder stopped: the watches may lag behind its last
// writes (a run that clears the checkpoint at its end exits right after, so its
// process is gone before the watch shows the clearing), or have missed them.
func (o *Options) stillStored(ctx context.Context, s *session, cp *record.Checkpoint) bool {
	fresh, err := s.store.Load(ctx)
	return err == nil && fresh != nil && fresh.Record() == cp.Record()
}

// maxStepAttempts is operation.Runner's MaxAttempts (internal/operation/run.go): a step that
// used them all is refused by resume.
const maxStepAttempts = 10
