package adddc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

var getOpts = metav1.GetOptions{}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// maxFailures bounds the failed rebuilds of one node in one run: then the run stops,
// and resume tries again (each new attempt fetches only what is missing).
const maxFailures = 3

// rebuilder is the nodetool call of a rebuild (nodetool.Client).
type rebuilder interface {
	Rebuild(ctx context.Context, pod, source string) (nodetool.RebuildOutcome, string)
}

// rebuild rebuilds one new node from the source and verifies it from what Cassandra
// reports: Done when the node is UN, its netstats lists no rebuild stream, and either a
// rebuild of it ended well (this run's nodetool call, or the operator's task) or its
// Load reaches half the source's per-node share (a node rebuilt before a crash).
// Without either, the rebuild runs again: Cassandra then fetches only the ranges it
// does not have (system.available_ranges), nothing when it has them all.
type rebuild struct {
	*run
	id    string
	n     record.Node
	meter steps.StreamMeter
	// ran: a rebuild of the node ended well in this run; failures: the ones that failed.
	ran      bool
	failures int
	lastErr  string
	// streams: the last netstats read showed a rebuild streaming to the node.
	streams bool
}

func newRebuild(r *run, id string, n record.Node) *rebuild { return &rebuild{run: r, id: id, n: n} }

func (s *rebuild) Describe() string {
	if s.w.Tasks != nil {
		return fmt.Sprintf("rebuild %s from %s (a rebuild task naming the pod), verified from its netstats and Load", s.n.Pod, s.e.Source)
	}
	return fmt.Sprintf("rebuild %s from %s (nodetool rebuild -- %s), verified from its netstats and Load", s.n.Pod, s.e.Source, s.e.Source)
}

// Safe: every node of the source is UN (each range streams from one of them) and the
// node itself is UN.
func (s *rebuild) Safe(ctx context.Context) error {
	ring, reader, err := s.m.Ring(ctx)
	if err != nil {
		return err
	}
	if err := sourceUN(ring, s.e.Source, reader.Name); err != nil {
		return err
	}
	row, err := s.row(ctx, ring)
	if err != nil {
		return err
	}
	if row.Code() != "UN" {
		return fmt.Errorf("the node of %s is %s in the ring read from %s: it must be UN to be rebuilt; wait until it is, then resume", s.n.Pod, row.Code(), reader.Name)
	}
	return nil
}

// row is the node's row in ring, by its pod's address.
func (s *rebuild) row(ctx context.Context, ring pubnodetool.Ring) (pubnodetool.Node, error) {
	pod, err := s.w.Kube.CoreV1().Pods(s.w.CP.Namespace).Get(ctx, s.n.Pod, getOpts)
	if err != nil {
		return pubnodetool.Node{}, err
	}
	row, ok := ring.ByAddress(pod.Status.PodIP)
	if !ok || pod.Status.PodIP == "" {
		return pubnodetool.Node{}, fmt.Errorf("the node of %s (%s) is not in the ring", s.n.Pod, pod.Status.PodIP)
	}
	return row, nil
}

// streaming reads the node's netstats: whether a rebuild streams to it, reporting its
// progress when it does.
func (s *rebuild) streaming(ctx context.Context) (bool, error) {
	ns, err := s.w.Nodetool.Netstats(ctx, s.n.Pod)
	if err != nil {
		return false, err
	}
	_, s.streams = ns.StreamProgress(nodetool.PlanRebuild, nodetool.DirReceiving)
	if s.streams {
		s.w.ReportStream(s.id, "rebuild", s.n.Pod, ns, nodetool.PlanRebuild, nodetool.DirReceiving, &s.meter)
	}
	return s.streams, nil
}

func (s *rebuild) Done(ctx context.Context) (bool, error) {
	if on, err := s.streaming(ctx); err != nil || on {
		return false, err
	}
	if s.w.Tasks != nil && !s.ran {
		t, err := s.lastTask(ctx)
		if err != nil {
			return false, err
		}
		s.ran = t != nil && t.Finished && t.Pods[s.n.Pod].Status == operator.TaskPodCompleted
	}
	if s.ran {
		return true, nil
	}
	ring, _, err := s.m.Ring(ctx)
	if err != nil {
		return false, err
	}
	row, err := s.row(ctx, ring)
	if err != nil {
		return false, err
	}
	return loaded(ring, row, s.e.Source, len(s.w.CP.Nodes)), nil
}

// loaded: the node's Load reaches half its share of the source's (the source's total
// over the new datacenter's nodes); an unreadable Load is not.
func loaded(ring pubnodetool.Ring, row pubnodetool.Node, source string, nodes int) bool {
	total, n := operation.TotalLoad(ring, source)
	l, ok := operation.ParseLoad(row.Load)
	if !ok || n == 0 || nodes == 0 {
		return false
	}
	return int64(l)*2 >= total/int64(nodes)
}

func (s *rebuild) Do(ctx context.Context) error {
	if on, err := s.streaming(ctx); err != nil {
		return &pub.Retryable{Err: err}
	} else if on {
		return nil // a rebuild runs already (an earlier run's): the wait follows it
	}
	if s.w.Tasks != nil {
		return s.askTask(ctx)
	}
	rb, ok := s.w.Nodetool.(rebuilder)
	if !ok {
		return fmt.Errorf("this nodetool client cannot run rebuild")
	}
	outcome, line := s.follow(ctx, func() (nodetool.RebuildOutcome, string) { return rb.Rebuild(ctx, s.n.Pod, s.e.Source) })
	switch outcome {
	case nodetool.RebuildReturned:
		s.ran = true
	case nodetool.RebuildFailed, nodetool.RebuildRefused:
		return s.failed(line)
	}
	// Running or unknown: the node says, the wait reads it.
	return nil
}

// follow runs the blocking rebuild call and, while it runs, reads the node's netstats
// every poll interval for its progress, rate and ETA. The call runs in the caller's
// goroutine (whatever it panics with stays the caller's); the reader stops before
// follow returns.
func (s *rebuild) follow(ctx context.Context, call func() (nodetool.RebuildOutcome, string)) (nodetool.RebuildOutcome, string) {
	every := s.w.Poll
	if every <= 0 {
		every = time.Second
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				_, _ = s.streaming(ctx) // progress only: the call's answer and the wait decide
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()
	return call()
}

// failed counts a failed rebuild: retried on that node only, until maxFailures.
func (s *rebuild) failed(why string) error {
	s.failures++
	s.lastErr = why
	err := fmt.Errorf("the rebuild of %s from %s failed (%s)", s.n.Pod, s.e.Source, why)
	if s.failures >= maxFailures {
		return &pub.Fatal{Code: 1, Err: fmt.Errorf("%w, %d times in this run: what it streamed is kept; once the source is healthy, resume (kubectl cassandra resume -n %s %s): it fetches only what is missing", err, s.failures, s.w.CP.Namespace, s.w.CP.Cluster)}
	}
	return &pub.Retryable{Err: fmt.Errorf("%w: running it again on that node (it fetches only what is missing)", err)}
}

// Wait follows the rebuild until the node is verified; a rebuild that ended without
// the node verified (it failed, or was cut) is asked again on that node.
func (s *rebuild) Wait(ctx context.Context) error {
	for {
		done, err := s.Done(ctx)
		if err == nil && done {
			return nil
		}
		var fatal *pub.Fatal
		if errors.As(err, &fatal) {
			return err
		}
		// A rebuild still streaming (an earlier run's, which this run's Do left to
		// run) is followed, not asked again.
		if err == nil && !s.streams {
			if again, err := s.again(ctx); err != nil || again {
				if err != nil {
					return err
				}
				return &engine.Redo{StepID: s.id, Reason: fmt.Sprintf("the rebuild of %s ended without the node verified rebuilt", s.n.Pod)}
			}
		}
		t := time.NewTimer(s.w.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// again reports whether the rebuild must be asked again: nothing streams to the node
// and no rebuild of it runs (CassKop: this run's call returned; cass-operator: the last
// task finished, not well).
func (s *rebuild) again(ctx context.Context) (bool, error) {
	if s.w.Tasks == nil {
		return true, nil
	}
	t, err := s.lastTask(ctx)
	if err != nil || t != nil && !t.Finished {
		return false, err
	}
	if t == nil {
		return true, nil // the task is gone (deleted by hand, or by its TTL): ask again
	}
	why := t.Pods[s.n.Pod].Error
	if why == "" {
		why = t.Message
	}
	if err := s.failed("task " + t.Name + ": " + why); err != nil {
		var fatal *pub.Fatal
		if errors.As(err, &fatal) {
			return false, err
		}
	}
	return true, nil
}

// lastTask is the operation's newest rebuild task of the node (nil: none).
func (s *rebuild) lastTask(ctx context.Context) (*operator.Task, error) {
	all, err := s.w.Tasks.ListTasks(ctx, s.w.CP.Namespace, s.taskDC())
	if err != nil {
		return nil, err
	}
	var last *operator.Task
	for _, t := range all {
		if t.OperationID == s.w.CP.OperationID && t.Command == operator.TaskRebuild && t.Pod == s.n.Pod && (last == nil || attemptOf(t.Name) > attemptOf(last.Name)) {
			last = t
		}
	}
	return last, nil
}

// attemptOf is the attempt number a rebuild task's name ends with (askTask), 0 when
// it ends with none.
func attemptOf(name string) int {
	n, _ := strconv.Atoi(name[strings.LastIndex(name, "-")+1:])
	return n
}

// taskDC is the datacenter resource the tasks name: the new one's, whose name is the
// datacenter's (the cass-operator adapter's PlanDatacenter holds them equal).
func (s *rebuild) taskDC() string { return s.dc }

// askTask creates the node's next rebuild task, unless one of the operation's runs.
func (s *rebuild) askTask(ctx context.Context) error {
	all, err := s.w.Tasks.ListTasks(ctx, s.w.CP.Namespace, s.taskDC())
	if err != nil {
		return &pub.Retryable{Err: err}
	}
	attempt := 1
	for _, t := range all {
		if t.OperationID != s.w.CP.OperationID || t.Command != operator.TaskRebuild || t.Pod != s.n.Pod {
			continue
		}
		if !t.Finished {
			return nil // the operator has it: the wait follows it
		}
		attempt++
	}
	// The whole pod name: pods of different racks share their ordinals, and a name
	// taken by another pod's task would leave this pod's never created.
	spec := operator.TaskSpec{Name: operator.TaskName(s.w.CP.OperationID, fmt.Sprintf("rebuild-%s-%d", s.n.Pod, attempt)), DC: s.taskDC(),
		Command: operator.TaskRebuild, Pod: s.n.Pod, SourceDC: s.e.Source, OperationID: s.w.CP.OperationID}
	if err := s.w.Tasks.CreateTask(ctx, s.w.CP.Namespace, spec); err != nil && !errors.Is(err, operator.ErrTaskExists) {
		return &pub.Retryable{Err: err}
	}
	return nil
}
