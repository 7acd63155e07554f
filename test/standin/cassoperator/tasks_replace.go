package cassoperator

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// The replacenode job of the CassandraTask controller (internal/controllers/control/
// jobs.go replace, replaceValidator, replacePreProcess, replacePod; the job loop in
// cassandratask_controller.go processJobs, reconcileEveryPodTask, processRack,
// checkRackCompletion, startPodTask). The job only deletes the pod and its claims: the
// replacement itself is the datacenter's start of the new pod (replace.go), and the
// task is Complete as soon as the pod is deleted, before the replacement has even
// started (cass-operator #748).

// Actions of the replacenode job.
const (
	// ActTaskReplacePreProcess: status.nodeReplacements gets the pods, condition
	// ReplacingNodes=True, one merge patch of the DC's /status (replacePreProcess).
	ActTaskReplacePreProcess Action = "task-replace-preprocess"
	// ActTaskDrain: the management API's drain of a pod whose Cassandra is up; a failure
	// is only logged.
	ActTaskDrain Action = "task-drain"
	// ActTaskDeletePVCs: every claim the pod mounts, each read then deleted, without
	// waiting (the pvc-protection finalizer holds them until the pod is gone).
	ActTaskDeletePVCs Action = "task-delete-pvcs"
	// ActTaskDeletePod: the pod, no precondition.
	ActTaskDeletePod Action = "task-delete-pod"
	// ActTaskJobDone: the sync job's own status patch: the pod COMPLETED with its
	// completionTime, or ERROR with the job's error.
	ActTaskJobDone Action = "task-job-done"
)

// Drainer is a simulated Cassandra whose nodes nodetool can reach (a *sim.Store): the
// management API's drain is `nodetool drain` there. Without it nothing is drained.
type Drainer interface {
	Run(ctx context.Context, pod string, args []string, stdout, stderr io.Writer) int
}

// Pod processing states (cassandratask_types.go PodProcessingPhase).
const (
	podRunning   = "RUNNING"
	podCompleted = "COMPLETED"
	podError     = "ERROR"
	podWaiting   = "WAITING"
)

// replaceInvalid is replaceValidator: "" when valid, else its error (the task fails:
// processJobs wraps it in a TerminalError, whose text starts "terminal error: ").
func replaceInvalid(w *world, t taskView) string {
	if t.podName == "" && t.rack == "" {
		return "replace requires either rack_name or pod_name to be set as a filtering rule"
	}
	if t.rack != "" && !slices.Contains(w.racks, t.rack) {
		return t.rack + " is not a valid rack name"
	}
	if t.podName != "" && w.podByName[t.podName] == nil {
		return "valid pod_name to replace is required"
	}
	return ""
}

// replacePass is processJobs for a replacenode job. Not Running yet: validate (an
// invalid task ends at once: Complete, Failed with the terminal error, failed 1, never
// Running), pre-process, Running=True. Then, in the same reconcile, the pods of the
// filter (pod_name, rack; requiredPodFilter) rack by rack in name order, one at a time:
// a pod left RUNNING by a process that died (a sync job has no job id, and no job runs
// between passes here) is retried once then ERROR (podFailedHandling); the next pod
// starts: RUNNING in processRack's patch, then the sync job (startPodTask's goroutine):
// pre-process again, replacePod, its own status patch. All pods done: the task is
// complete, succeeded counting the COMPLETED podStatuses when the deleted pod is gone
// from the list (Reconcile's "one-off error from cache timings" offset).
func (o *Operator) replacePass(w *world, t taskView) ([]op, string) {
	var ops []op
	repl := w.replacements
	replacing := w.cond(CondReplacingNodes) == "True"
	if t.conds["Running"] != "True" {
		if msg := replaceInvalid(w, t); msg != "" {
			return []op{o.taskEndOp(t, 0, 1, "terminal error: "+msg)}, ""
		}
		if op, ok := o.replacePreProcessOp(w, t, repl, replacing); ok {
			ops = append(ops, op)
		}
		// processJobs changed its in-memory DC: the job's pre-process has nothing to add.
		repl, replacing = appendMissing(repl, replacePods(w, t)...), true
		ops = append(ops, o.taskCondOp(t.name, ActTaskRunning, map[string]string{"Running": "True"}))
	}
	byRack := map[string][]*corev1.Pod{}
	for _, p := range w.pods {
		if (t.rack != "" && p.Labels[LabelRack] != t.rack) || (t.podName != "" && p.Name != t.podName) {
			continue
		}
		byRack[p.Labels[LabelRack]] = append(byRack[p.Labels[LabelRack]], p)
	}
	racks := slices.Sorted(maps.Keys(byRack))
	now := o.cfg.Now().UTC().Format(time.RFC3339)
	completed, failed := 0, 0
	for _, r := range racks {
		pods := byRack[r] // w.pods is sorted by name
		change := map[string]map[string]any{}
		status := func(pod string) string {
			if c, ok := change[pod]; ok {
				return c["status"].(string)
			}
			s, _ := t.pods[pod]["status"].(string)
			return s
		}
		done, fails := 0, 0
		for _, p := range pods {
			cur, ok := t.pods[p.Name]
			if !ok {
				continue
			}
			switch cur["status"] {
			case podCompleted:
				done++
			case podError:
				fails++
			case podRunning:
				// checkRackCompletion: no job id and no job running: "Pod or controller
				// crashed during sync task" (podFailedHandling, retries 1 by default).
				next := maps.Clone(cur)
				retries := asInt(cur["retries"])
				if retries < 1 {
					next["status"], next["retries"] = podWaiting, int64(retries+1)
					delete(next, "jobId")
					delete(next, "error")
				} else {
					next["status"], next["error"], next["completionTime"] = podError, "Pod or controller crashed during sync task", now
					fails++
				}
				change[p.Name] = next
			}
		}
		completed += done
		failed += fails
		var start *corev1.Pod
		for _, p := range pods {
			if s := status(p.Name); s != podCompleted && s != podError && s != podRunning {
				start = p
				break
			}
		}
		if start == nil && len(change) == 0 {
			continue // this rack is done
		}
		if start != nil {
			// startPodTask: RUNNING (a WAITING pod keeps its retries), startTime once.
			next := change[start.Name]
			if next == nil {
				next = maps.Clone(t.pods[start.Name])
			}
			if next == nil {
				next = map[string]any{}
			}
			next["status"] = podRunning
			if _, ok := next["startTime"]; !ok {
				next["startTime"] = now
			}
			change[start.Name] = next
		}
		ops = append(ops, o.taskPodStatusesOp(t.name, change))
		if start != nil {
			ops = append(ops, o.replaceJobOps(w, t, start, repl, replacing)...)
		}
		return ops, ""
	}
	succeeded := 0
	for _, s := range t.pods {
		if s["status"] == podCompleted {
			succeeded++
		}
	}
	return append(ops, o.taskCompleteOp(t, max(completed, succeeded), failed)), ""
}

// replacePods are the pods replacePreProcess adds: pod_name, else the rack's pods.
func replacePods(w *world, t taskView) []string {
	if t.podName != "" {
		return []string{t.podName}
	}
	var out []string
	for _, p := range w.pods {
		if t.rack != "" && p.Labels[LabelRack] == t.rack {
			out = append(out, p.Name)
		}
	}
	return out
}

// appendMissing is AppendValuesToStringArrayIfNotPresent.
func appendMissing(list []string, values ...string) []string {
	out := append([]string(nil), list...)
	for _, v := range values {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// replacePreProcessOp is replacePreProcess on the DC as the pass read it (repl,
// replacing): nodeReplacements with the pods appended, ReplacingNodes=True (its
// lastTransitionTime only when it changes, setDatacenterCondition), one merge patch of
// /status whose conditions list is the whole in-memory one. No write when nothing
// changes (the real one sends an empty patch).
func (o *Operator) replacePreProcessOp(w *world, t taskView, repl []string, replacing bool) (op, bool) {
	next := appendMissing(repl, replacePods(w, t)...)
	if len(next) == len(repl) && replacing {
		return op{}, false
	}
	conds, _, _ := unstructured.NestedSlice(w.dc.Object, "status", "conditions")
	conds = slices.Clone(conds)
	if !replacing {
		c := map[string]any{"type": CondReplacingNodes, "status": "True", "reason": "", "message": "",
			"lastTransitionTime": o.cfg.Now().UTC().Format(time.RFC3339)}
		found := false
		for i, ci := range conds {
			if m, ok := ci.(map[string]any); ok && m["type"] == CondReplacingNodes {
				conds[i], found = c, true
			}
		}
		if !found {
			conds = append(conds, c)
		}
	}
	return op{ActTaskReplacePreProcess, func(ctx context.Context) error {
		return o.patchStatus(ctx, map[string]any{"nodeReplacements": next, "conditions": conds})
	}}, true
}

// replaceJobOps is startPodTask's goroutine for replacenode: PreProcessFunc again (a
// write only when the DC lacks the pod, e.g. a retry after the replacement finished),
// then replacePod (drain when Cassandra is up, every claim deleted, the pod deleted),
// then the job's status patch: COMPLETED, or ERROR with the error of the step that
// failed (no retry: "we won't even retry this pod"). A step that fails drops the steps
// after it but the status patch.
func (o *Operator) replaceJobOps(w *world, t taskView, p *corev1.Pod, repl []string, replacing bool) []op {
	var ops []op
	var jobErr error
	pod := p.DeepCopy()
	name := t.name
	done := op{ActTaskJobDone, func(ctx context.Context) error {
		now := o.cfg.Now().UTC().Format(time.RFC3339)
		return o.updateTaskPodStatus(ctx, name, pod.Name, func(st map[string]any) {
			if jobErr != nil {
				st["status"], st["error"] = podError, jobErr.Error()
				return
			}
			st["status"], st["completionTime"] = podCompleted, now
		})
	}}
	// fail ends the job at a failed step: the steps still pending are dropped, the
	// status patch stays (Step holds o.mu while an op runs).
	fail := func(err error) error {
		jobErr = err
		o.pending = []op{done}
		return nil
	}
	if pre, ok := o.replacePreProcessOp(w, t, repl, replacing); ok {
		ops = append(ops, op{pre.action, func(ctx context.Context) error {
			if err := pre.do(ctx); err != nil {
				return fail(err)
			}
			return nil
		}})
	}
	if cassandraUp(pod) {
		if d, ok := o.cfg.Cass.(Drainer); ok {
			ops = append(ops, op{ActTaskDrain, func(ctx context.Context) error {
				// CallDrainEndpoint: a failure is logged, the job goes on.
				d.Run(ctx, pod.Name, []string{"drain"}, io.Discard, io.Discard)
				return nil
			}})
		}
	}
	ops = append(ops, op{ActTaskDeletePVCs, func(ctx context.Context) error {
		pvcs := o.cfg.Kube.CoreV1().PersistentVolumeClaims(o.cfg.Namespace)
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim == nil {
				continue
			}
			c, err := pvcs.Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
			if err != nil {
				return fail(err)
			}
			if err := pvcs.Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil {
				return fail(err)
			}
		}
		return nil
	}})
	ops = append(ops, op{ActTaskDeletePod, func(ctx context.Context) error {
		if err := o.cfg.Kube.CoreV1().Pods(o.cfg.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
			return fail(err)
		}
		return nil
	}})
	return append(ops, done)
}

// cassandraUp is isCassandraUp (jobs.go): the cassandra container is Ready.
func cassandraUp(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == "cassandra" {
			return cs.Ready
		}
	}
	return false
}

// taskPodStatusesOp is processRack's merge patch of the task's podStatuses.
func (o *Operator) taskPodStatusesOp(name string, change map[string]map[string]any) op {
	return op{ActTaskPodStatuses, func(ctx context.Context) error {
		b, err := json.Marshal(map[string]any{"status": map[string]any{"podStatuses": change}})
		if err != nil {
			return err
		}
		_, err = o.cfg.Dyn.Resource(TaskGVR).Namespace(o.cfg.Namespace).Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{}, "status")
		return err
	}}
}

// updateTaskPodStatus is the sync job's status write: the task read again, its pod's
// entry changed, a merge patch of /status.
func (o *Operator) updateTaskPodStatus(ctx context.Context, name, pod string, fn func(st map[string]any)) error {
	u, err := o.cfg.Dyn.Resource(TaskGVR).Namespace(o.cfg.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	st, _, _ := unstructured.NestedMap(u.Object, "status", "podStatuses", pod)
	if st == nil {
		st = map[string]any{}
	}
	fn(st)
	return o.taskPodStatusesOp(name, map[string]map[string]any{pod: st}).do(ctx)
}

func asInt(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}
