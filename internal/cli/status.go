package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/future"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/lifecycle"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/status"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

const statusExample = `  # Racks, pods, node states, PVCs and the operation in flight
  kubectl cassandra status -n cassandra cassandra-demo

  # For scripts (stable schema; "next" names the command to run next)
  kubectl cassandra status cassandra-demo -o json

  # Kubernetes state only, without exec into a pod (pods/exec forbidden, or Cassandra hung)
  kubectl cassandra status cassandra-demo --nodetool=false`

// statusOptions are status's flags and arguments (Complete / Validate / Run, as every
// command's).
type statusOptions struct {
	clusterArg
	out      string
	nodetool bool
	live     liveFlags
}

// Validate checks -o and the live flags (bad usage, nothing read).
func (f *statusOptions) Validate() error {
	if err := checkOutput(f.out, "text", "json", "yaml"); err != nil {
		return err
	}
	return f.live.validate()
}

func newStatusCmd(o *Options) *cobra.Command {
	f := &statusOptions{nodetool: true}
	cmd := &cobra.Command{
		Use:   "status [CLUSTER]",
		Short: "Show racks, pods, node states, PVCs and the operation in flight",
		Long: `Shows the racks, pods (Ready, restarts), each node's state in the ring (nodetool status,
read once from a Ready pod; --nodetool=false shows them as ?), PVCs, the operator and the
operation in flight with its holder, and the command to run next. Data goes to stdout (-o json
has a "next" field); -w redraws on every change, --wait blocks until the operation ends.

With --wait the exit code says how the operation ended: 0 done, 1 failed (aborted, or stopped
on a step error: fix, then resume), 3 stuck and needs a human (unusable checkpoint, a step that
used all its attempts, a holder that died without releasing), 4 interrupted or --timeout
reached.

` + exit.Help,
		Example:           statusExample,
		GroupID:           groupInspect,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.completeClusters,
		RunE:              o.runE(f),
	}
	addOutputFlag(cmd, &f.out, "text", "json", "yaml")
	cmd.Flags().BoolVar(&f.nodetool, "nodetool", true, "read node states with nodetool status (one exec into a Ready pod); false shows them as ?")
	cmd.Flags().BoolVarP(&f.live.watch, "watch", "w", false, "Redraw on every change (watches of the cluster, StatefulSets, pods and PVCs; without a terminal: the changed lines, timestamped); Ctrl-C ends it")
	cmd.Flags().BoolVar(&f.live.wait, "wait", false, "Block until the operation in flight ends; exit 0 done, 1 failed, 3 stuck (needs a human), 4 interrupted or timed out")
	cmd.Flags().DurationVar(&f.live.timeout, "timeout", 2*time.Hour, "With --wait: how long to wait before giving up (exit 4)")
	cmd.Flags().DurationVar(&f.live.nodetoolInterval, "nodetool-interval", 10*time.Second, "With --watch/--wait: read the ring at most this often")
	return cmd
}

// Run is `status`: one report, or with --watch and --wait a live one.
func (f *statusOptions) Run(ctx context.Context, o *Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var lists *statusLists
	s, err := o.openAssumed(ctx, f.args, func(c *kube.Clients, a operator.Adapter, ns, name string) {
		lists = startStatusLists(ctx, c, a, lifecycle.New(o.lifecycleDeps(c, a)), ns, name)
	})
	if err != nil {
		if lists != nil {
			cancel()
			lists.wg.Wait()
		}
		return err
	}
	// The lists started with the cluster's read are the first status; with --watch and
	// --wait, the watches bring the changes.
	switch {
	case f.live.watch:
		return o.watchStatus(ctx, s, lists, f.nodetool, f.live)
	case f.live.wait:
		return o.waitStatus(ctx, s, lists, f.nodetool, f.live, f.out)
	}
	rep := status.Build(o.readStatus(ctx, s, lists, f.nodetool, o.newHolderWatch()))
	// After the lists (they share the adapter): blocks of gone operations, said only.
	o.lifecycle(s, nil).WarnStaleBlocks(ctx)
	if f.out != "text" {
		return output.Print(o.Out, f.out, rep)
	}
	o.printStatusText(o.Out, rep)
	return nil
}

// printStatusText renders rep as text, coloured when w is a terminal that wants colour.
func (o *Options) printStatusText(w io.Writer, rep status.Report) {
	status.Text(w, rep, o.statusStyle(w))
}

// statusStyle is how status text is worded and coloured for w (colour only on a
// terminal that wants it).
func (o *Options) statusStyle(w io.Writer) status.Style {
	return status.Style{Paint: output.Painter{On: output.ColorEnabled(o.Color, w, os.Getenv)}, Target: o.operationTarget}
}

// readStatus reads what status shows, concurrently: the lists (started with the
// cluster's read), the checkpoint and the last operation from the annotations of the
// cluster just read (no second GET), and (withNodetool) one `nodetool status`. hw
// judges the checkpoint's holder, over the reads it has seen. internal/status builds
// the report from it.
func (o *Options) readStatus(ctx context.Context, s *session, lists *statusLists, withNodetool bool, hw *holderWatch) status.Read {
	early := startRingRead(ctx, s, withNodetool)
	cl := s.cluster
	rd := status.Read{Cluster: cl, Kind: s.adapter.Kind(), OperatorTitle: s.adapter.Title(), Nodetool: withNodetool, Commands: statusCommands(s)}
	_, rd.Acts = s.adapter.(operator.Scaler)
	if ps, ok := s.adapter.(operator.PodStates); ok {
		rd.PodState = ps.PodState
	}
	rd.Checkpoint, rd.CheckpointErr = checkpointOf(cl, o.Kinds.Schemas(), s.adapter.Name())
	if rd.Checkpoint != nil {
		rd.Holder = hw.judge(o, rd.Checkpoint)
	}
	rd.Last, rd.LastErr = lastOperationOf(cl)
	lists.into(&rd)
	if withNodetool {
		rd.Ring, rd.RingErrs = readRing(ctx, s, rd.Pods, early)
	}
	return rd
}

// statusCommands are the commands status may suggest next.
func statusCommands(s *session) status.Commands {
	ns, name := s.cluster.Namespace, s.cluster.Name
	start := fmt.Sprintf("kubectl cassandra scale -n %s %s --rack RACK --nodes N", ns, name)
	if _, ok := s.adapter.(operator.Scaler); ok {
		// The operator splits the datacenter's size over the racks itself.
		start = fmt.Sprintf("kubectl cassandra scale -n %s %s --nodes SIZE", ns, name)
	}
	return status.Commands{
		Resume:  s.resumeHint(),
		Wait:    s.statusHint() + " --wait",
		Start:   start,
		Inspect: fmt.Sprintf("kubectl get %s -n %s %s -o yaml", s.adapter.GroupResource(), ns, name),
	}
}

// holderWatch judges the holder of the operation in flight over the reads of one
// status (one read, or every read of --watch and --wait) by the lock's own rule
// (checkpoint.Judge): a holder on another machine is stopped only once its record has
// stayed unchanged for a whole lease of this machine's clock.
type holderWatch struct {
	self record.Holder
	seen checkpoint.Sighting
}

func (o *Options) newHolderWatch() *holderWatch {
	return &holderWatch{self: o.self()}
}

// judge is what this read of cp says of its holder, with the reads before it.
func (hw *holderWatch) judge(o *Options, cp *record.Checkpoint) checkpoint.Liveness {
	var l checkpoint.Liveness
	l, hw.seen = checkpoint.Judge(cp, hw.self, hw.seen, o.Now(), o.alive)
	return l
}

// checkpointOf decodes the checkpoint the cluster's annotations carry (nil: none).
// A checkpoint planned for another operator is an error here as in resume and abort.
func checkpointOf(cl topology.Cluster, kinds checkpoint.Schemas, operator string) (*record.Checkpoint, error) {
	v, ok := cl.Annotations[checkpoint.Annotation]
	if !ok {
		return nil, nil
	}
	cp, err := checkpoint.Decode(v, cl.UID, kinds)
	if err == nil {
		err = checkpoint.PlannedFor(cp, operator)
	}
	if err != nil {
		return nil, err
	}
	return cp, nil
}

// lastOperationOf decodes the last operation's record the annotations carry (nil: none).
func lastOperationOf(cl topology.Cluster) (*checkpoint.LastOperation, error) {
	v, ok := cl.Annotations[checkpoint.LastOperationAnnotation]
	if !ok {
		return nil, nil
	}
	var lo checkpoint.LastOperation
	if err := json.Unmarshal([]byte(v), &lo); err != nil {
		return nil, err
	}
	return &lo, nil
}

// ringRead is a `nodetool status` asked of the first pod of the first rack while the
// lists run: nodetool is the slowest read. Its answer is used only if that pod turns
// out Ready.
type ringRead struct {
	pod  string // "" when none was asked
	ring func() (pubnodetool.Ring, error)
}

func startRingRead(ctx context.Context, s *session, withNodetool bool) ringRead {
	cl := s.cluster
	if !withNodetool || len(cl.DCs) == 0 || len(cl.DCs[0].Racks) == 0 {
		return ringRead{}
	}
	pod := cl.DCs[0].Racks[0].StatefulSet + "-0"
	return ringRead{pod: pod, ring: future.Start(func() (pubnodetool.Ring, error) { return s.nt.Status(ctx, pod) })}
}

// readRing reads the ring once, from the first Ready pod that answers, and says which
// pods failed before it.
func readRing(ctx context.Context, s *session, pods []corev1.Pod, early ringRead) (*pubnodetool.Ring, []status.PodError) {
	var failed []status.PodError
	for _, p := range ringReaders(pods, early.pod) {
		if !kube.PodReady(&p) || p.DeletionTimestamp != nil {
			continue
		}
		read := func() (pubnodetool.Ring, error) { return s.nt.Status(ctx, p.Name) }
		if p.Name == early.pod {
			read = early.ring
		}
		r, err := read()
		if err != nil {
			failed = append(failed, status.PodError{Pod: p.Name, Err: err})
			continue
		}
		return &r, failed
	}
	return nil, failed
}

// ringReaders are the pods to ask in turn: the one asked early first (its answer is on
// its way), then the others by name.
func ringReaders(pods []corev1.Pod, early string) []corev1.Pod {
	sorted := slices.Clone(pods)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	readers := make([]corev1.Pod, 0, len(sorted))
	for _, p := range sorted {
		if p.Name == early {
			readers = append([]corev1.Pod{p}, readers...)
		} else {
			readers = append(readers, p)
		}
	}
	return readers
}

// statusLists are status's list reads, made at once.
type statusLists struct {
	wg   sync.WaitGroup
	sts  []appsv1.StatefulSet
	pods []corev1.Pod
	pvcs []corev1.PersistentVolumeClaim
	ops  []operator.Controller
	// stale says which operators are held paused for operations that are gone.
	stale []string

	stsErr, podsErr, pvcsErr, opsErr error
}

// into waits for the lists and puts what they read in rd.
func (l *statusLists) into(rd *status.Read) {
	l.wg.Wait()
	rd.StatefulSets, rd.Pods, rd.PVCs, rd.Operators = l.sts, l.pods, l.pvcs, l.ops
	rd.StatefulSetsErr, rd.PodsErr, rd.PVCsErr, rd.OperatorsErr = l.stsErr, l.podsErr, l.pvcsErr, l.opsErr
	rd.StalePauses = l.stale
}

func startStatusLists(ctx context.Context, c *kube.Clients, a operator.Adapter, lc *lifecycle.Lifecycle, ns, name string) *statusLists {
	l := &statusLists{}
	sel := metav1.ListOptions{LabelSelector: a.ClusterSelector(name)}
	l.wg.Go(func() {
		r, err := c.Kube.AppsV1().StatefulSets(ns).List(ctx, sel)
		if l.stsErr = err; err == nil {
			l.sts = r.Items
		}
	})
	l.wg.Go(func() {
		r, err := c.Kube.CoreV1().Pods(ns).List(ctx, sel)
		if l.podsErr = err; err == nil {
			l.pods = r.Items
		}
	})
	l.wg.Go(func() {
		r, err := c.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if l.pvcsErr = err; err == nil {
			l.pvcs = r.Items
		}
	})
	l.wg.Go(func() {
		all, err := a.Operators(ctx, ns)
		if l.opsErr = err; err != nil {
			return
		}
		for _, op := range all {
			if op.Running() {
				l.ops = append(l.ops, op)
			}
			if stale := lc.StalePauses(ctx, op.PausedBy); stale != "" {
				l.stale = append(l.stale, fmt.Sprintf("%s/%s is held paused for operations that are gone: %s; the next scale, resume or abort on their cluster releases it", op.Namespace, op.Name, stale))
			}
		}
	})
	return l
}
