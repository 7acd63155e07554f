package cassoperator

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The CassandraTask controller (internal/controllers/control/cassandratask_controller.go,
// jobs.go), for the commands restart, cleanup, replacenode (tasks_replace.go) and
// rebuild (tasks_rebuild.go). It runs when Config.RunTasks is set,
// in the same process as the datacenter's reconcile: Step asks it for a write only when
// the datacenter's pass has none (the real one runs beside it).

// Task actions.
const (
	// ActTaskStart: label control.k8ssandra.io/status=active (and the DC's labels), then
	// status.startTime and active=1 (two writes in the real one; one action here).
	ActTaskStart Action = "task-start"
	// ActTaskRunning: condition Running=True (every command but restart: restart leaves
	// the job loop before it is set).
	ActTaskRunning Action = "task-running"
	// ActTaskRestartStatefulSet: the rack's StatefulSet template gets
	// control.k8ssandra.io/restartedAt = the task's start time; the StatefulSet
	// controller's rolling update then re-creates its pods.
	ActTaskRestartStatefulSet Action = "task-restart-statefulset"
	// ActTaskPodStatuses: the status patch of one processRack: pods finished and the
	// pod started (podStatuses RUNNING/COMPLETED/ERROR/WAITING).
	ActTaskPodStatuses Action = "task-pod-statuses"
	// ActTaskComplete: label status=completed, then status.completionTime, conditions
	// Complete=True, Running=False (Failed=True when a pod failed), succeeded/failed.
	ActTaskComplete Action = "task-complete"
)

// Names of the task controller (cassandratask_controller.go, cassandratask_types.go).
const (
	TaskStatusLabel      = "control.k8ssandra.io/status"
	TaskActive           = "active"
	TaskCompleted        = "completed"
	RestartedAtAnnotaton = "control.k8ssandra.io/restartedAt"
)

// Cleaner is a simulated Cassandra that can run a cleanup on a node (the management
// API's keyspace cleanup). A Cassandra without it has every cleanup succeed at once.
type Cleaner interface {
	Cleanup(pod string) error
}

// taskView is what one pass reads of a task.
type taskView struct {
	u       *unstructured.Unstructured
	name    string
	dc      string
	command string
	rack    string
	podName string // args.pod_name
	srcDC   string // args.source_datacenter (rebuild)
	forbid  bool
	active  bool
	done    bool
	start   string
	conds   map[string]string
	pods    map[string]map[string]any
}

func readTask(u *unstructured.Unstructured) taskView {
	t := taskView{u: u, name: u.GetName(), conds: map[string]string{}, pods: map[string]map[string]any{}}
	t.dc, _, _ = unstructured.NestedString(u.Object, "spec", "datacenter", "name")
	if jobs, _, _ := unstructured.NestedSlice(u.Object, "spec", "jobs"); len(jobs) > 0 {
		if m, ok := jobs[0].(map[string]any); ok {
			t.command, _, _ = unstructured.NestedString(m, "command")
			t.rack, _, _ = unstructured.NestedString(m, "args", "rack")
			t.podName, _, _ = unstructured.NestedString(m, "args", "pod_name")
			t.srcDC, _, _ = unstructured.NestedString(m, "args", "source_datacenter")
		}
	}
	// setDefaults: concurrencyPolicy "" is Forbid.
	p, _, _ := unstructured.NestedString(u.Object, "spec", "concurrencyPolicy")
	t.forbid = p == "" || p == "Forbid"
	t.active = u.GetLabels()[TaskStatusLabel] == TaskActive
	c, _, _ := unstructured.NestedString(u.Object, "status", "completionTime")
	t.done = c != ""
	t.start, _, _ = unstructured.NestedString(u.Object, "status", "startTime")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, ci := range conds {
		if m, ok := ci.(map[string]any); ok {
			ty, _ := m["type"].(string)
			st, _ := m["status"].(string)
			t.conds[ty] = st
		}
	}
	if ps, ok, _ := unstructured.NestedMap(u.Object, "status", "podStatuses"); ok {
		for k, v := range ps {
			if m, ok := v.(map[string]any); ok {
				t.pods[k] = m
			}
		}
	}
	return t
}

// accepts is genericPodFilter (jobs.go), the pod filter of every job but replacenode
// and restart: args.rack, when set, must be the pod's rack label, and args.pod_name,
// when set, its name.
func (t taskView) accepts(p *corev1.Pod) bool {
	return (t.rack == "" || p.Labels[LabelRack] == t.rack) && (t.podName == "" || p.Name == t.podName)
}

// reconcileTasks is one pass of the task controller over the datacenter's tasks, in
// name order: the writes of the first task that has any, or none and what it waits for.
func (o *Operator) reconcileTasks(ctx context.Context) ([]op, string, error) {
	w, err := o.read(ctx)
	if apierrors.IsNotFound(err) {
		// The datacenter was deleted: its tasks have nothing to run on (not modelled
		// further: the real controller fails each task's reconcile on its Get).
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	l, err := o.cfg.Dyn.Resource(TaskGVR).Namespace(o.cfg.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	var tasks []taskView
	for i := range l.Items {
		if t := readTask(&l.Items[i]); t.dc == w.dcName {
			tasks = append(tasks, t)
		}
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].name < tasks[j].name })
	wait := ""
	for _, t := range tasks {
		if t.done {
			continue // the TTL deletion is not modelled
		}
		ops, why := o.taskPass(w, t, tasks)
		if len(ops) > 0 {
			return ops, "", nil
		}
		if wait == "" {
			wait = why
		}
	}
	return nil, wait, nil
}

// taskPass is Reconcile for one unfinished task t.
func (o *Operator) taskPass(w *world, t taskView, all []taskView) ([]op, string) {
	if !t.active {
		// activeTasks: the DC's tasks labelled active, this one aside.
		for _, other := range all {
			if other.name != t.name && other.active && !other.done && (t.forbid || other.forbid) {
				return nil, "task " + t.name + " waits for task " + other.name + " (concurrencyPolicy Forbid)"
			}
		}
		return []op{o.taskStartOp(w, t)}, ""
	}
	switch t.command {
	case "restart":
		return o.restartPass(w, t)
	case "cleanup":
		return o.cleanupPass(w, t)
	case "replacenode":
		return o.replacePass(w, t)
	case "rebuild":
		return o.rebuildPass(w, t)
	}
	return nil, "task " + t.name + ": command " + t.command + " is not modelled"
}

func (o *Operator) taskStartOp(w *world, t taskView) op {
	name, cluster, dc := t.name, w.cluster, w.dcName
	return op{ActTaskStart, func(ctx context.Context) error {
		return o.updateTask(ctx, name, func(u *unstructured.Unstructured) {
			lbl := u.GetLabels()
			if lbl == nil {
				lbl = map[string]string{}
			}
			lbl[LabelCluster], lbl[LabelDatacenter], lbl[TaskStatusLabel] = cluster, dc, TaskActive
			u.SetLabels(lbl)
		}, func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, o.cfg.Now().UTC().Format(time.RFC3339), "status", "startTime")
			_ = unstructured.SetNestedField(u.Object, int64(1), "status", "active")
		})
	}}
}

// restartPass is restartSts (jobs.go): the DC's StatefulSets in name order (only the
// rack's with args.rack); one whose template has restartedAt = the task's start time
// is done when rolled, else waited for; the first one without it gets it. The rolled
// test reads the pods (the fake clientsets keep no StatefulSet status): every pod below
// the replicas carries the annotation and is ready.
func (o *Operator) restartPass(w *world, t taskView) ([]op, string) {
	sts := append(w.sts[:0:0], w.sts...)
	sort.Slice(sts, func(i, j int) bool { return sts[i] != nil && (sts[j] == nil || sts[i].Name < sts[j].Name) })
	restarted := 0
	for _, s := range sts {
		if s == nil || (t.rack != "" && s.Labels[LabelRack] != t.rack) {
			continue
		}
		if s.Spec.Template.Annotations[RestartedAtAnnotaton] == t.start {
			n := 0
			if s.Spec.Replicas != nil {
				n = int(*s.Spec.Replicas)
			}
			updated := 0
			for k := 0; k < n; k++ {
				p := w.podByName[fmt.Sprintf("%s-%d", s.Name, k)]
				if p != nil && p.Annotations[RestartedAtAnnotaton] == t.start && o.ready(w, p) {
					updated++
				}
			}
			restarted += updated
			if updated < n {
				return nil, fmt.Sprintf("task %s: StatefulSet %s is restarting (%d of %d pods)", t.name, s.Name, updated, n)
			}
			continue
		}
		name, start := s.Name, t.start
		return []op{{ActTaskRestartStatefulSet, func(ctx context.Context) error {
			b := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, RestartedAtAnnotaton, start)
			_, err := o.cfg.Kube.AppsV1().StatefulSets(o.cfg.Namespace).Patch(ctx, name, "application/merge-patch+json", []byte(b), metav1.PatchOptions{})
			return err
		}}}, ""
	}
	return []op{o.taskCompleteOp(t, restarted, 0)}, ""
}

// cleanupPass is processJobs + reconcileEveryPodTask (cassandratask_controller.go) for
// a cleanup: Running=True first; then the DC's pods (genericPodFilter: args.rack, args.pod_name) rack by
// rack in name order, each rack finished before the next, one pod at a time
// (maxConcurrentPods 1): a pass marks the running pod's job COMPLETED (the sim's
// cleanup ran when it started: the job is done at its first poll) and starts the next
// pod, in one status patch (processRack). A pod whose management API is down is waited
// for (startPodTask's FeatureSet fails and the reconcile is requeued). A failed cleanup
// is retried once (RestartPolicy OnFailure, retries 1: podFailedHandling), then ERROR.
func (o *Operator) cleanupPass(w *world, t taskView) ([]op, string) {
	if t.conds["Running"] != "True" {
		return []op{o.taskCondOp(t.name, ActTaskRunning, map[string]string{"Running": "True"})}, ""
	}
	byRack := map[string][]*corev1.Pod{}
	for _, p := range w.pods {
		if t.accepts(p) {
			byRack[p.Labels[LabelRack]] = append(byRack[p.Labels[LabelRack]], p)
		}
	}
	var racks []string
	for r := range byRack {
		racks = append(racks, r)
	}
	sort.Strings(racks)
	completed, failed := 0, 0
	for _, r := range racks {
		pods := byRack[r]
		sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
		change := map[string]any{}
		running, rackDone := "", 0
		for _, p := range pods {
			st, _ := t.pods[p.Name]["status"].(string)
			switch st {
			case "COMPLETED":
				rackDone++
				completed++
			case "ERROR":
				rackDone++
				failed++
			case "RUNNING":
				// checkRackCompletion: the job (sim: already run) is COMPLETED.
				change[p.Name] = map[string]any{"status": "COMPLETED", "jobId": t.pods[p.Name]["jobId"], "completionTime": o.cfg.Now().UTC().Format(time.RFC3339)}
				rackDone++
				completed++
			}
		}
		if rackDone == len(pods) && len(change) == 0 {
			continue
		}
		// startPodTask on the first pod neither finished nor running.
		for _, p := range pods {
			st, _ := t.pods[p.Name]["status"].(string)
			if st == "COMPLETED" || st == "ERROR" || change[p.Name] != nil {
				continue
			}
			if !mgmtUp(p) {
				if len(change) == 0 {
					return nil, "task " + t.name + ": the management API of " + p.Name + " is down"
				}
				break
			}
			running = p.Name
			break
		}
		retries, _ := t.pods[running]["retries"].(int64)
		name, pod := t.name, running
		return []op{{ActTaskPodStatuses, func(ctx context.Context) error {
			if pod != "" {
				entry := map[string]any{"status": "RUNNING", "jobId": "cleanup-" + pod, "startTime": o.cfg.Now().UTC().Format(time.RFC3339)}
				if c, ok := o.cfg.Cass.(Cleaner); ok {
					if err := c.Cleanup(pod); err != nil {
						if retries < 1 {
							entry = map[string]any{"status": "WAITING", "retries": retries + 1}
						} else {
							entry = map[string]any{"status": "ERROR", "retries": retries, "error": err.Error(), "completionTime": o.cfg.Now().UTC().Format(time.RFC3339)}
						}
					}
				}
				change[pod] = entry
			}
			return o.updateTask(ctx, name, nil, func(u *unstructured.Unstructured) {
				ps, _, _ := unstructured.NestedMap(u.Object, "status", "podStatuses")
				if ps == nil {
					ps = map[string]any{}
				}
				for k, v := range change {
					ps[k] = v
				}
				_ = unstructured.SetNestedMap(u.Object, ps, "status", "podStatuses")
			})
		}}}, ""
	}
	return []op{o.taskCompleteOp(t, completed, failed)}, ""
}

// taskCompleteOp is Reconcile's end of a task (res.RequeueAfter == 0).
func (o *Operator) taskCompleteOp(t taskView, completed, failed int) op {
	return o.taskEndOp(t, completed, failed, "")
}

// taskEndOp is taskCompleteOp with the Failed condition's message: a terminal error's
// text when given (a validation failure), else "<n> pods failed during processing".
func (o *Operator) taskEndOp(t taskView, completed, failed int, terminal string) op {
	name := t.name
	return op{ActTaskComplete, func(ctx context.Context) error {
		return o.updateTask(ctx, name, func(u *unstructured.Unstructured) {
			lbl := u.GetLabels()
			lbl[TaskStatusLabel] = TaskCompleted
			u.SetLabels(lbl)
		}, func(u *unstructured.Unstructured) {
			now := o.cfg.Now().UTC().Format(time.RFC3339)
			_ = unstructured.SetNestedField(u.Object, now, "status", "completionTime")
			_ = unstructured.SetNestedField(u.Object, int64(0), "status", "active")
			_ = unstructured.SetNestedField(u.Object, int64(completed), "status", "succeeded")
			_ = unstructured.SetNestedField(u.Object, int64(failed), "status", "failed")
			set := map[string]string{"Complete": "True", "Running": "False"}
			msg := ""
			if failed > 0 {
				set["Failed"] = "True"
				msg = fmt.Sprintf("%d pods failed during processing", failed)
				if terminal != "" {
					msg = terminal
				}
			}
			setTaskConds(u, set, msg, now)
		})
	}}
}

func (o *Operator) taskCondOp(name string, a Action, set map[string]string) op {
	return op{a, func(ctx context.Context) error {
		return o.updateTask(ctx, name, nil, func(u *unstructured.Unstructured) {
			setTaskConds(u, set, "", o.cfg.Now().UTC().Format(time.RFC3339))
		})
	}}
}

// setTaskConds is SetCondition (cassandratask_controller.go) for each type in set, in
// Reconcile's order (Complete, Running, Failed: a new one is appended); msg goes to the
// Failed condition. Its reason is the condition's type, as there (the CRD's
// metav1.Condition schema refuses an empty reason).
func setTaskConds(u *unstructured.Unstructured, set map[string]string, msg, now string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, ty := range []string{"Complete", "Running", "Failed"} {
		st, ok := set[ty]
		if !ok {
			continue
		}
		m := map[string]any{"type": ty, "status": st, "lastTransitionTime": now, "reason": ty, "message": ""}
		if ty == "Failed" {
			m["message"] = msg
		}
		found := false
		for i, ci := range conds {
			if c, ok := ci.(map[string]any); ok && c["type"] == ty {
				conds[i], found = m, true
			}
		}
		if !found {
			conds = append(conds, m)
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
}

// updateTask reads the task, then Updates it (meta) and its /status (status), each
// when given.
func (o *Operator) updateTask(ctx context.Context, name string, meta, status func(u *unstructured.Unstructured)) error {
	r := o.cfg.Dyn.Resource(TaskGVR).Namespace(o.cfg.Namespace)
	u, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if meta != nil {
		meta(u)
		if u, err = r.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if status != nil {
		status(u)
		_, err = r.UpdateStatus(ctx, u, metav1.UpdateOptions{})
	}
	return err
}
