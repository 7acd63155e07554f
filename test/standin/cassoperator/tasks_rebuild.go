package cassoperator

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// The rebuild job of the CassandraTask controller (jobs.go rebuild: an asynchronous
// job, callRebuildAsync → the management API's POST /api/v1/ops/node/rebuild?src_dc=
// <args.source_datacenter>; FACTS §9 "Rebuild", §5): per pod, one at a time (maxConcurrentPods
// 1), rack by rack in name order like cleanup, those genericPodFilter accepts
// (args.rack, args.pod_name: a task naming one pod rebuilds that node only). startPodTask calls the endpoint and
// records the job id (podStatuses RUNNING, jobId); checkRackCompletion polls the job:
// COMPLETED → COMPLETED, ERROR → retried once (WAITING, retries 1: podFailedHandling),
// then ERROR with the job's error. A job still WAITING, or one the node does not know
// (its JVM restarted: jobs live in the management API's memory; the real controller
// requeues on the status error), is waited for.

// Rebuilder is a simulated Cassandra whose management API runs rebuild jobs (the sim's
// Store). A Cassandra without it cannot run rebuild tasks.
type Rebuilder interface {
	StartRebuild(pod, srcDC string) (code int, jobID, out string, err error)
	RebuildJob(pod, jobID string) (sim.Job, error)
}

var _ Rebuilder = (*sim.Store)(nil)

// rebuildPass is processJobs + reconcileEveryPodTask for a rebuild.
func (o *Operator) rebuildPass(w *world, t taskView) ([]op, string) {
	rb, ok := o.cfg.Cass.(Rebuilder)
	if !ok {
		return nil, "task " + t.name + ": the simulated Cassandra runs no rebuild"
	}
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
	now := o.cfg.Now().UTC().Format(time.RFC3339)
	completed, failed := 0, 0
	for _, r := range racks {
		pods := byRack[r]
		sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
		change := map[string]any{}
		retry := map[string]int64{}
		busy := ""
		for _, p := range pods {
			entry := t.pods[p.Name]
			switch st, _ := entry["status"].(string); st {
			case "COMPLETED":
				completed++
			case "ERROR":
				failed++
			case "RUNNING":
				id, _ := entry["jobId"].(string)
				retries, _ := entry["retries"].(int64)
				j, err := rb.RebuildJob(p.Name, id)
				switch {
				case err != nil || j.Status == sim.JobWaiting:
					busy = p.Name
				case j.Status == sim.JobCompleted:
					change[p.Name] = map[string]any{"status": "COMPLETED", "jobId": id, "completionTime": now}
					completed++
				case retries < 1:
					change[p.Name] = map[string]any{"status": "WAITING", "retries": retries + 1}
					retry[p.Name] = retries + 1
				default:
					change[p.Name] = map[string]any{"status": "ERROR", "jobId": id, "retries": retries, "error": j.Error, "completionTime": now}
					failed++
				}
			}
		}
		if busy != "" {
			if len(change) == 0 {
				return nil, "task " + t.name + ": the rebuild of " + busy + " runs"
			}
			return []op{o.podStatusesOp(t.name, change)}, ""
		}
		// startPodTask on the first pod neither finished nor running.
		start := ""
		for _, p := range pods {
			st, _ := t.pods[p.Name]["status"].(string)
			if next, ok := change[p.Name].(map[string]any); ok {
				st, _ = next["status"].(string)
			}
			if st == "COMPLETED" || st == "ERROR" {
				continue
			}
			if !mgmtUp(p) {
				if len(change) == 0 {
					return nil, "task " + t.name + ": the management API of " + p.Name + " is down"
				}
				break
			}
			start = p.Name
			break
		}
		if start == "" && len(change) == 0 {
			continue // the rack is done
		}
		name, pod, src := t.name, start, t.srcDC
		retries := retry[start]
		if retries == 0 {
			retries, _ = t.pods[start]["retries"].(int64)
		}
		return []op{{ActTaskPodStatuses, func(ctx context.Context) error {
			if pod != "" {
				code, id, _, err := rb.StartRebuild(pod, src)
				if err != nil {
					return err
				}
				if code == sim.ExitOK {
					entry := map[string]any{"status": "RUNNING", "jobId": id, "startTime": now}
					if retries > 0 {
						entry["retries"] = retries
					}
					change[pod] = entry
				}
				// No job (the API did not answer): the pod stays as it was, retried on a
				// later pass.
			}
			return o.patchPodStatuses(ctx, name, change)
		}}}, ""
	}
	return []op{o.taskCompleteOp(t, completed, failed)}, ""
}

// podStatusesOp writes change into the task's podStatuses.
func (o *Operator) podStatusesOp(name string, change map[string]any) op {
	return op{ActTaskPodStatuses, func(ctx context.Context) error { return o.patchPodStatuses(ctx, name, change) }}
}

func (o *Operator) patchPodStatuses(ctx context.Context, name string, change map[string]any) error {
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
}
