package cassoperator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// Cassandra is what the stand-in uses of the simulated Cassandra (a *sim.Store): the
// ring as the management API's /api/v0/metadata/endpoints reports it (Nodes; Endpoints
// adds the nodes no pod runs any more, which gossip still knows), the asynchronous
// decommission (StartDecommission), and the lifecycle start of a node (AddNode for a
// pod whose node never ran, Restart for one whose JVM is down; with a replace_ip,
// StartFresh on a fresh data dir or RestartWith on the one the pod has: replace.go).
type Cassandra interface {
	Nodes() ([]sim.NodeView, error)
	Endpoints() ([]sim.NodeView, error)
	StartDecommission(pod string, force bool) (code int, jobID, out string, err error)
	AddNode(spec sim.NodeSpec) error
	Restart(pod string) error
	StartFresh(spec sim.NodeSpec, f sim.Fault, opts sim.StartOptions) error
	RestartWith(pod string, opts sim.StartOptions) error
}

var _ Cassandra = (*sim.Store)(nil)

// Config says which datacenter the stand-in reconciles and through what.
type Config struct {
	Kube kubernetes.Interface
	Dyn  dynamic.Interface
	Cass Cassandra
	// Namespace and Name of the CassandraDatacenter (its metadata.name is the DC name).
	Namespace, Name string
	// OperatorNamespace/OperatorDeployment name the operator's Deployment: with 0
	// replicas (or when it does not exist) the stand-in is down and does nothing. Empty
	// OperatorDeployment: no such check.
	OperatorNamespace, OperatorDeployment string
	// DecommissionedStaysReady: a decommissioned node still passes its readiness probe
	// (FACTS §8, the last sentence of "Stuck state A": the operator then re-sends the
	// decommission and finishes). Default: it fails it, as FACTS §8 assumes.
	DecommissionedStaysReady bool
	// Now is the clock (task names, lastTransitionTime); nil = time.Now.
	Now func() time.Time
	// RunTasks runs the CassandraTask controller too (tasks.go: restart, cleanup,
	// replacenode and rebuild, the last when Cass is a Rebuilder);
	// without it tasks are created, never run.
	RunTasks bool
	// LabelStartedAfter makes the stand-in label a pod Started only on its
	// LabelStartedAfter-th pass that finds the pod ready (0: the first): the real
	// operator labels it on a later reconcile, seconds after the pod is Ready (issue 33
	// item 7 measured 14 s after a task's restart). Passes that wait do nothing else.
	LabelStartedAfter int
}

// Action names one reconcile write the stand-in made ("" = idle: nothing to do, or
// waiting for the world).
type Action string

// The actions. Conditions are "set-condition <Type>=<Status>", progress
// "set-progress <value>" (see CondAction, ProgressAction).
const (
	ActUpdateNodeStatuses    Action = "update-node-statuses"
	ActDecommission          Action = "decommission"
	ActLabelDecommissioning  Action = "label-decommissioning"
	ActShrinkStatefulSet     Action = "shrink-statefulset"
	ActDeletePVCs            Action = "delete-pvcs"
	ActRemoveNodeStatus      Action = "remove-node-status"
	ActGrowStatefulSet       Action = "grow-statefulset"
	ActStartNode             Action = "start-node"
	ActLabelStarted          Action = "label-started"
	ActLabelStartedNotReady  Action = "label-started-not-ready"
	ActCreateCleanupTask     Action = "create-cleanup-task"
	ActSetObservedGeneration Action = "set-observed-generation"
	ActDeleteStuckPod        Action = "delete-stuck-pod"
)

// CondAction is the action that sets condition typ to status ("True"/"False").
func CondAction(typ, status string) Action { return Action("set-condition " + typ + "=" + status) }

// ProgressAction is the action that sets status.cassandraOperatorProgress.
func ProgressAction(p string) Action { return Action("set-progress " + p) }

// ErrKilled is returned by Step once the stand-in was killed (KillAfter): as after a
// SIGKILL, it does nothing more. Start a new one (New) to model the restart.
var ErrKilled = errors.New("cass-operator stand-in killed")

// op is one write of a reconcile pass.
type op struct {
	action Action
	do     func(ctx context.Context) error
}

// Operator is one process of the stand-in. Between passes it remembers nothing: a pass
// reads the world and yields the writes the real operator would make in that
// reconcile, in order; Step makes one of them per call, so each is a crash point.
// The writes still pending from the current pass are the only in-memory state, and a
// kill (or the Deployment scaled to 0) loses them, as the real process would.
type Operator struct {
	cfg Config

	mu      sync.Mutex
	pending []op
	lastErr error
	killed  bool
	// down and dropPending are set without mu (SetDown): a world that makes the operator
	// go down from inside an API request the operator may be waiting on (a crash loop
	// made at a side effect) must not wait for the pass in progress.
	down, dropPending atomic.Bool
	killAfter         map[Action]bool
	killAtN           int
	actions           []Action
	waiting           string
	holdAfter         map[Action]*hold
	holding           *hold
	// readySeen counts, by pod, the passes that found it ready but not labelled Started
	// (LabelStartedAfter); a process's own memory, lost with it.
	readySeen map[string]int
}

// hold is one HoldAfter.
type hold struct{ released bool }

// New starts a stand-in process (again: after a kill, New is the restart).
func New(cfg Config) *Operator {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Operator{cfg: cfg, killAfter: map[Action]bool{}, readySeen: map[string]int{}}
}

// KillAfter makes the process die right after its first action a (the action took
// effect; nothing after it does).
func (o *Operator) KillAfter(a Action) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.killAfter[a] = true
}

// HoldAfter makes the process stop right after its next action a (the action took
// effect) and do nothing more until release is called; the writes still pending from
// that pass are kept, unlike a kill or SetDown: a slow operator between two writes of
// one reconcile (e2e tests use it to hold a world between shrink-statefulset and
// delete-pvcs). release is idempotent; called before a, the hold is cancelled.
func (o *Operator) HoldAfter(a Action) (release func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.holdAfter == nil {
		o.holdAfter = map[Action]*hold{}
	}
	h := &hold{}
	o.holdAfter[a] = h
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		h.released = true
		if o.holding == h {
			o.holding = nil
		}
		if o.holdAfter[a] == h {
			delete(o.holdAfter, a)
		}
	}
}

// KillAfterStep makes the process die right after its n-th action (1-based).
func (o *Operator) KillAfterStep(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.killAtN = n
}

// SetDown stops (true) or resumes (false) the process like a Deployment scaled to 0
// and back: while down it does nothing, and going down loses the pending writes.
// The pending writes are dropped by the next pass (a write in flight completes, as if
// the process died right after it).
func (o *Operator) SetDown(down bool) {
	if down {
		o.dropPending.Store(true)
	}
	o.down.Store(down)
}

// Killed reports whether the process was killed.
func (o *Operator) Killed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.killed
}

// Actions lists the actions this process made, in order.
func (o *Operator) Actions() []Action {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Action(nil), o.actions...)
}

// LastError is the last error a Step of Run returned (nil: none).
func (o *Operator) LastError() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lastErr
}

// Waiting says what the last idle Step waited for ("" when it had nothing to wait for).
func (o *Operator) Waiting() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.waiting
}

// Step makes at most one reconcile write and returns it ("" = idle). An error is a
// failed read or write: the rest of the pass is dropped, as a reconcile that returns an
// error is requeued and starts over from the world.
func (o *Operator) Step(ctx context.Context) (Action, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.killed {
		return "", ErrKilled
	}
	if o.dropPending.Swap(false) {
		o.pending = nil
	}
	if o.holding != nil {
		o.waiting = "held"
		return "", nil
	}
	down, err := o.isDown(ctx)
	if err != nil {
		return "", err
	}
	if down {
		o.pending = nil
		o.waiting = "down"
		return "", nil
	}
	if len(o.pending) == 0 {
		ops, wait, err := o.reconcile(ctx)
		if err == nil && len(ops) == 0 && o.cfg.RunTasks {
			// The task controller runs beside the datacenter's reconcile (tasks.go).
			var twait string
			ops, twait, err = o.reconcileTasks(ctx)
			if wait == "" {
				wait = twait
			}
		}
		o.waiting = wait
		if err != nil {
			return "", err
		}
		o.pending = ops
		if len(ops) == 0 {
			return "", nil
		}
	}
	next := o.pending[0]
	o.pending = o.pending[1:]
	if err := next.do(ctx); err != nil {
		o.pending = nil
		return "", fmt.Errorf("cass-operator stand-in: %s: %w", next.action, err)
	}
	o.actions = append(o.actions, next.action)
	o.waiting = ""
	if h := o.holdAfter[next.action]; h != nil {
		o.holding = h
		delete(o.holdAfter, next.action)
	}
	if o.killAfter[next.action] || (o.killAtN > 0 && len(o.actions) == o.killAtN) {
		o.killed = true
		o.pending = nil
		return next.action, ErrKilled
	}
	return next.action, nil
}

// Run calls Step every interval (at once after an action) until ctx is done or the
// process is killed; errors are retried, like a requeue.
func (o *Operator) Run(ctx context.Context, interval time.Duration) error {
	for {
		a, err := o.Step(ctx)
		if errors.Is(err, ErrKilled) {
			return err
		}
		if err != nil {
			// A reconcile error is requeued, as in the real one; kept for the tests.
			o.mu.Lock()
			o.lastErr = err
			o.mu.Unlock()
		}
		if a != "" && err == nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// isDown: the Down flag, or the operator's Deployment at 0 replicas or absent.
func (o *Operator) isDown(ctx context.Context) (bool, error) {
	if o.down.Load() {
		return true, nil
	}
	if o.cfg.OperatorDeployment == "" {
		return false, nil
	}
	d, err := o.cfg.Kube.AppsV1().Deployments(o.cfg.OperatorNamespace).Get(ctx, o.cfg.OperatorDeployment, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return d.Spec.Replicas != nil && *d.Spec.Replicas == 0, nil
}
