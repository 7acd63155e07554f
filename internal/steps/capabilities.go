package steps

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// The capabilities a kind's own steps ask the World for, each a few methods: a step
// holds only those it uses. *World implements every one, through the same reads and
// checks as the library's steps (most methods here wrap the library's own; RunMaintenance
// and PodRunning, which only the kinds' steps use, are in maintenance.go).

// PodReader reads a planned node's pod.
type PodReader interface {
	// Pod reads pod name; (nil, nil) when it does not exist.
	Pod(ctx context.Context, name string) (*corev1.Pod, error)
	// Replaced reports whether the planned pod (its UID) no longer exists: gone, or
	// re-created under the same name with another UID.
	Replaced(ctx context.Context, n record.Node) (bool, error)
	// PodRunning is "" when n's pod is Running and Ready, else what to wait for.
	// planned: only the planned pod (its UID) will do, and none or another incarnation
	// is an error; otherwise any incarnation will, and none is waited for.
	PodRunning(ctx context.Context, n record.Node, planned bool) (string, error)
}

// PodDeleter deletes a planned pod.
type PodDeleter interface {
	// DeletePodUID deletes pod name only if it still has uid; gone, or already another
	// incarnation, is no error (the step's Done decides). The write is not cut by ctx.
	DeletePodUID(ctx context.Context, name, uid string) error
}

// NodeModes reads a node's operation mode (nodetool netstats) from its own pod.
type NodeModes interface {
	Mode(ctx context.Context, pod string) (pubnodetool.Mode, error)
}

// RingGuard is "safe means safe now" (safenow.go) for a step about to act.
type RingGuard interface {
	// WaitSafe asks c until it says the step (id) may act, or stops the run (exit 4)
	// after StallAfter; a cluster resource being deleted stops it at once.
	WaitSafe(ctx context.Context, id string, c func() (waitFor string, err error)) error
	// RingSafeAt is Safe's ring check for step id: skipped until a recheck of it
	// failed. dc's nodes must be UN and none leaving, joining or moving but self (a
	// Host ID); the ring is read from a pod other than except.
	RingSafeAt(ctx context.Context, id, dc, self, except string) (string, error)
	// RecheckRing is the same check, read fresh right before step id acts; anything
	// not safe sends the step back to Safe's wait.
	RecheckRing(ctx context.Context, id, dc, self, except string) error
}

// Maintenance runs a nodetool maintenance command on a node (drain, cleanup).
type Maintenance interface {
	// RunMaintenance is the Do of a step of kind that runs nodetool cmd on n: unless
	// the cluster resource is being deleted, call runs it and blocks until it returns;
	// a failed or cut call is retried (the step's Done decides what happened).
	RunMaintenance(ctx context.Context, kind string, n record.Node, cmd string, call func(Maintainer) error) error
}

// PodBack is the wait of a step that only waits for its node's pod to come back with
// its node UN (passive.go).
type PodBack interface {
	// ReadBack reads n's pod and asks test about it.
	ReadBack(ctx context.Context, n record.Node, test BackTest) (bool, string, error)
	// NodeUN reads the ring from a pod other than n's and tells whether n's node
	// (found by find) is UN, else why not; absent says it is missing, with %s for the
	// reader.
	NodeUN(ctx context.Context, n record.Node, find func(pubnodetool.Ring) (pubnodetool.Node, bool), absent string) (bool, string, error)
	// CheckHint says what to check when n's pod does not come back, then to resume.
	CheckHint(n record.Node, describe, logs, more string) string
	// WaitBack polls test until n's pod is back with its node UN, reporting what is
	// missing as step id, and warns once, with hint, after StallAfter; when ctx ends it
	// fails with notBack and the last thing missing.
	WaitBack(ctx context.Context, n record.Node, id, notBack, hint string, test BackTest) error
}

// TaskWatch is the operation's task of the operator (tasks.go), for a step that waits
// for a pod while the operator works through the task.
type TaskWatch interface {
	// Task reads the operation's task (nil when it does not exist), and its spec.
	Task(ctx context.Context) (*operator.Task, operator.TaskSpec, error)
	// ForeignTask is the error for a task of the planned name that is not the
	// operation's; FailedTask the one for a task that failed.
	ForeignTask(t *operator.Task) error
	FailedTask(t *operator.Task) error
	// TaskResource names the task resource for kubectl commands in messages.
	TaskResource() string
	// WaitBackWithTask polls test until n's pod is back with its node UN, reading
	// again as soon as the pod or the task changes, and asks stops between rounds
	// (an error ends the wait); when ctx ends it fails saying the pod is not back.
	WaitBackWithTask(ctx context.Context, n record.Node, id, hint string, test BackTest, stops func() error) error
}

// StatefulSets reads and writes a rack's StatefulSet.
type StatefulSets interface {
	// StatefulSetNow reads StatefulSet name from the API server (never a kept answer:
	// a write against its resourceVersion follows), and its replicas.
	StatefulSetNow(ctx context.Context, name string) (*appsv1.StatefulSet, int, error)
	// SetReplicasAt sets sts's replicas, its resourceVersion as precondition (a
	// conflict is retried); doing says the write in that error ("growing").
	SetReplicasAt(ctx context.Context, sts *appsv1.StatefulSet, replicas int, doing string) error
}

// Claims reads a claim.
type Claims interface {
	// ClaimNow reads claim name from the API server; (nil, nil) when it does not exist.
	ClaimNow(ctx context.Context, name string) (*corev1.PersistentVolumeClaim, error)
}

// Seeds is the operator's seed list.
type Seeds interface {
	// NotSeed refuses to create n's pod while the operator lists it as a seed (it
	// would not bootstrap).
	NotSeed(ctx context.Context, n record.Node) error
}

// DeletionGuard stops a step before it acts on a cluster resource being deleted.
type DeletionGuard interface {
	// RefuseDeleting is an error when the cluster resource was last seen being
	// deleted: step id did nothing.
	RefuseDeleting(id string) error
}

// Writer runs a step's writes.
type Writer interface {
	// WriteDetached runs write detached from interruption (a write is never cut in
	// half; the engine stops right after it), bounded in time.
	WriteDetached(ctx context.Context, write func(context.Context) error) error
}

// Records is what the checkpoint records of the run's steps.
type Records interface {
	// RecordDone reports whether the checkpoint records step id as done.
	RecordDone(id string) bool
}

// Progress reports a long call's progress.
type Progress interface {
	// ReportWhile reports step id waiting for what, every few polls, until done is
	// closed or ctx ends.
	ReportWhile(ctx context.Context, done <-chan struct{}, id, what string)
}

// Pod implements PodReader.
func (w *World) Pod(ctx context.Context, name string) (*corev1.Pod, error) {
	return w.getPod(ctx, name)
}

// Replaced implements PodReader.
func (w *World) Replaced(ctx context.Context, n record.Node) (bool, error) {
	p, err := w.getPod(ctx, n.Pod)
	if err != nil {
		return false, err
	}
	return p == nil || string(p.UID) != n.PodUID, nil
}

// DeletePodUID implements PodDeleter.
func (w *World) DeletePodUID(ctx context.Context, name, uid string) error {
	ctx, cancel := writeContext(ctx)
	defer cancel()
	return w.deletePodUID(ctx, name, uid)
}

// Mode implements NodeModes.
func (w *World) Mode(ctx context.Context, pod string) (pubnodetool.Mode, error) {
	ns, err := w.Nodetool.Netstats(ctx, pod)
	return ns.Mode, err
}

// RingSafeAt implements RingGuard.
func (w *World) RingSafeAt(ctx context.Context, id, dc, self, except string) (string, error) {
	return w.ringSafeAt(ctx, id, dc, self, except)
}

// RecheckRing implements RingGuard.
func (w *World) RecheckRing(ctx context.Context, id, dc, self, except string) error {
	return w.recheckRing(ctx, id, dc, self, except)
}

// ReadBack implements PodBack.
func (w *World) ReadBack(ctx context.Context, n record.Node, test BackTest) (bool, string, error) {
	return waiting{node{w, n}}.readBack(ctx, test)
}

// NodeUN implements PodBack.
func (w *World) NodeUN(ctx context.Context, n record.Node, find func(pubnodetool.Ring) (pubnodetool.Node, bool), absent string) (bool, string, error) {
	return waiting{node{w, n}}.nodeUN(ctx, find, absent)
}

// CheckHint implements PodBack.
func (w *World) CheckHint(n record.Node, describe, logs, more string) string {
	return waiting{node{w, n}}.checkHint(describe, logs, more)
}

// WaitBack implements PodBack.
func (w *World) WaitBack(ctx context.Context, n record.Node, id, notBack, hint string, test BackTest) error {
	return waiting{node{w, n}}.waitBack(ctx, id, notBack, hint, test, nil, nil)
}

// Task implements TaskWatch.
func (w *World) Task(ctx context.Context) (*operator.Task, operator.TaskSpec, error) {
	return w.task(ctx)
}

// ForeignTask implements TaskWatch.
func (w *World) ForeignTask(t *operator.Task) error { return w.foreign(t) }

// FailedTask implements TaskWatch.
func (w *World) FailedTask(t *operator.Task) error { return w.failedTask(t) }

// TaskResource implements TaskWatch.
func (w *World) TaskResource() string { return w.taskResource() }

// StatefulSetNow implements StatefulSets.
func (w *World) StatefulSetNow(ctx context.Context, name string) (*appsv1.StatefulSet, int, error) {
	sts, err := w.readSTS(name)(ctx)
	if err != nil {
		return nil, 0, err
	}
	return sts, replicasOf(sts), nil
}

// SetReplicasAt implements StatefulSets.
func (w *World) SetReplicasAt(ctx context.Context, sts *appsv1.StatefulSet, replicas int, doing string) error {
	return w.setReplicasAt(ctx, sts, replicas, doing)
}

// ClaimNow implements Claims.
func (w *World) ClaimNow(ctx context.Context, name string) (*corev1.PersistentVolumeClaim, error) {
	return w.readPVC(name)(ctx)
}

// NotSeed implements Seeds.
func (w *World) NotSeed(ctx context.Context, n record.Node) error { return w.notSeed(ctx, n) }

// RefuseDeleting implements DeletionGuard.
func (w *World) RefuseDeleting(id string) error { return w.refuseDeleting(id) }

// WriteDetached implements Writer.
func (w *World) WriteDetached(ctx context.Context, write func(context.Context) error) error {
	ctx, cancel := writeContext(ctx)
	defer cancel()
	return write(ctx)
}

// RecordDone implements Records.
func (w *World) RecordDone(id string) bool { return w.recordDone(id) }

// ReportWhile implements Progress.
func (w *World) ReportWhile(ctx context.Context, done <-chan struct{}, id, what string) {
	start := w.Clock()
	ticks(ctx, done, progressEvery(w), func() {
		w.Reporter.Waiting(id, what, w.Clock().Sub(start))
	})
}
