package world

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"time"

	cassop "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
)

// What an operation leaves in the world that outlives its run, each carrying the
// operation's ID on the object (issue 33): a pause holder on the operator's Deployment,
// a stream-limit mark on a pod (and the limit it set on the node), a replace block in the
// user's start script, a CassandraTask labelled with the operation. Once no operation is
// in flight, none may be left: MarksLeft lists those that are.

// streamMarkAnnotation is the pod annotation of a stream limit set by an operation
// (internal/steps.ThroughputMarkAnnotation; the world reads the API as any client would).
const streamMarkAnnotation = "kubectl-cassandra.io/stream-throughput"

// replaceBlockBegin is the first line of a replace block in pre_run.sh
// (internal/operation/replacenode/script.go).
var replaceBlockBegin = regexp.MustCompile(`(?m)^# kubectl-cassandra replace-node (\S+): begin$`)

// Limits are the stream limits of every node the simulated Cassandra runs, by pod.
func (w *World) Limits() map[string]sim.Throughputs {
	w.t.Helper()
	nodes, err := w.Cass.Nodes()
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]sim.Throughputs{}
	for _, n := range nodes {
		if !n.Left && !n.Gone {
			out[n.Pod] = n.Throughput
		}
	}
	return out
}

// MarksLeft lists the marks of operations left in the world, and every node of before
// (Limits, read before the operation) still running whose stream limits differ: what a
// consistent end must not hold once no checkpoint is left.
func (w *World) MarksLeft(operatorName string, before map[string]sim.Throughputs) []string {
	w.t.Helper()
	var out []string
	if hs := w.PausedBy(operatorName); len(hs) > 0 {
		out = append(out, fmt.Sprintf("pause holders %v on the operator", hs))
	}
	pods, err := w.Kube.Tracker().List(podsGVR, corev1.SchemeGroupVersion.WithKind("Pod"), w.NS)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, p := range pods.(*corev1.PodList).Items {
		if v, ok := p.Annotations[streamMarkAnnotation]; ok {
			out = append(out, fmt.Sprintf("stream-limit mark on pod %s: %s", p.Name, v))
		}
	}
	now := w.Limits()
	var names []string
	for pod := range before {
		names = append(names, pod)
	}
	sort.Strings(names)
	for _, pod := range names {
		if cur, ok := now[pod]; ok && cur != before[pod] {
			out = append(out, fmt.Sprintf("node %s's stream limits are %+v, were %+v", pod, cur, before[pod]))
		}
	}
	if script, ok := w.ConfigMap(); ok {
		for _, m := range replaceBlockBegin.FindAllStringSubmatch(script, -1) {
			out = append(out, "replace block of operation "+m[1]+" in pre_run.sh")
		}
	}
	for _, task := range w.operationTasks() {
		if !taskFinished(task) {
			out = append(out, fmt.Sprintf("task %s of operation %s not finished", task.GetName(), task.GetLabels()[operator.TaskOperationLabel]))
		}
	}
	return append(out, w.removalMarksLeft()...)
}

// removalMarksLeft lists the CassandraDatacenters, not being deleted, that carry a
// remove-dc's mark (an armed decommission-on-delete): at the end of every state, no
// operation stands to delete them.
func (w *World) removalMarksLeft() []string {
	if w.co == nil {
		return nil
	}
	l, err := w.Dyn.Tracker().List(DCGVR, DCGVR.GroupVersion().WithKind(cassop.Kind), w.NS)
	if err != nil {
		return nil
	}
	var out []string
	for _, u := range l.(*unstructured.UnstructuredList).Items {
		if v, ok := u.GetAnnotations()[cassop.RemoveDCMarkAnnotation]; ok && u.GetDeletionTimestamp() == nil {
			out = append(out, fmt.Sprintf("removal mark on CassandraDatacenter %s: %s", u.GetName(), v))
		}
	}
	return out
}

// RecordLeft reports whether the cluster resource exists and carries a checkpoint.
func (w *World) RecordLeft() bool {
	obj, err := w.Dyn.Tracker().Get(w.crGVR(), w.NS, w.crName())
	if err != nil {
		return false
	}
	_, ok := obj.(*unstructured.Unstructured).GetAnnotations()[checkpoint.Annotation]
	return ok
}

// ClusterExists reports whether the cluster resource exists.
func (w *World) ClusterExists() bool {
	_, err := w.Dyn.Tracker().Get(w.crGVR(), w.NS, w.crName())
	return err == nil
}

// operationTasks are the CassandraTasks an operation created (labelled with its ID).
func (w *World) operationTasks() []*unstructured.Unstructured {
	if w.co == nil {
		return nil
	}
	l, err := w.Dyn.Tracker().List(standin.TaskGVR, standin.TaskGVR.GroupVersion().WithKind("CassandraTask"), w.NS)
	if err != nil {
		return nil
	}
	var out []*unstructured.Unstructured
	for i := range l.(*unstructured.UnstructuredList).Items {
		u := &l.(*unstructured.UnstructuredList).Items[i]
		if u.GetLabels()[operator.TaskOperationLabel] != "" {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// taskFinished: the operator set completionTime (cass-operator's CassandraTask status;
// a failed task is complete too, with condition Failed).
func taskFinished(u *unstructured.Unstructured) bool {
	t, _, _ := unstructured.NestedString(u.Object, "status", "completionTime")
	return t != ""
}

// TaskDeleted is the change "the operation's newest CassandraTask is deleted": by
// someone (a `kubectl delete`, a clean-up script) before the operator finished it, or
// by its TTL once finished.
func TaskDeleted() Change {
	return Change{Name: "task-deleted", apply: func(w *World) ([]string, func(), bool) {
		tasks := w.operationTasks()
		for i := len(tasks) - 1; i >= 0; i-- {
			if err := w.Dyn.Tracker().Delete(standin.TaskGVR, w.NS, tasks[i].GetName()); err == nil {
				return []string{"task", tasks[i].GetName()}, nil, true
			}
		}
		return nil, nil, false
	}}
}

// StartScriptReverted is the change "the user's ConfigMap is written back as it was"
// (a GitOps sync, a `kubectl apply` of the user's own copy): the replace block an
// operation added to pre_run.sh is gone.
func StartScriptReverted() Change {
	return Change{Name: "start-script-reverted", apply: func(w *World) ([]string, func(), bool) {
		script, ok := w.preRun()
		if !ok || !replaceBlockBegin.MatchString(script) {
			return nil, nil, false
		}
		obj, err := w.Kube.Tracker().Get(configMapsGVR, w.NS, w.boot.configMap)
		if err != nil {
			return nil, nil, false
		}
		cm := obj.(*corev1.ConfigMap).DeepCopy()
		cm.Data[PreRunKey] = stripReplaceBlocks(script)
		if err := w.Kube.Tracker().Update(configMapsGVR, cm, w.NS); err != nil {
			return nil, nil, false
		}
		return []string{"pre_run.sh", "ConfigMap"}, nil, true
	}}
}

// stripReplaceBlocks is script without its replace blocks (begin to end lines included).
func stripReplaceBlocks(script string) string {
	return regexp.MustCompile(`(?ms)^# kubectl-cassandra replace-node \S+: begin$.*?^# kubectl-cassandra replace-node \S+: end\n?`).ReplaceAllString(script, "")
}

// NodeBack is the change "the dead node of pod comes back" (its host back from a
// reboot, its disk remounted) while an operation replaces it.
func NodeBack(pod string) Change {
	return Change{Name: "node-back", apply: func(w *World) ([]string, func(), bool) {
		if n, err := w.Cass.Node(pod); err != nil || n.PeerCode == "UN" || !w.podExists(pod) {
			return nil, nil, false
		}
		w.mu.Unlock()
		w.ReviveNode(pod)
		w.mu.Lock()
		return []string{pod}, nil, true
	}}
}

// NodeKilled is the change "the picked node's JVM dies" (its host lost, an OOM kill: peers
// see it DN, nodetool on it cannot connect, its pod is not Ready); put back, it comes
// back on its own data.
func NodeKilled(pick Picker) Change {
	return Change{Name: "node-killed", apply: func(w *World) ([]string, func(), bool) {
		pod := pick(w)
		if pod == "" {
			return nil, nil, false
		}
		if n, err := w.Cass.Node(pod); err != nil || n.PeerCode != "UN" {
			return nil, nil, false
		}
		w.mu.Unlock()
		w.KillNode(pod)
		w.mu.Lock()
		return w.nodeNames(pod), func() { w.ReviveNode(pod) }, true
	}}
}

// streamMarkPatch reports whether action is a patch of a pod's stream-limit mark and
// nothing else: an annotation the operator neither reads nor reverts (CassKop reconciles
// a pod's spec and labels through its StatefulSet), written whether the operator runs or
// not, as the limit it records is set and restored by nodetool on the node.
func streamMarkPatch(action k8stesting.Action) bool {
	p, ok := action.(k8stesting.PatchAction)
	if !ok {
		return false
	}
	var patch struct {
		Metadata map[string]map[string]*string `json:"metadata"`
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(p.GetPatch(), &top) != nil || len(top) != 1 || json.Unmarshal(p.GetPatch(), &patch) != nil {
		return false
	}
	meta := patch.Metadata
	if len(meta) != 1 {
		return false
	}
	ann, ok := meta["annotations"]
	if !ok || len(ann) != 1 {
		return false
	}
	_, ok = ann[streamMarkAnnotation]
	return ok
}

// TaskFailed is the change "the operator's job for the operation's newest task fails"
// (its pod's job ended in ERROR after its retry: the operator writes the task complete,
// condition Failed, cassandratask_controller.go): the task ends, what it was to do
// left undone.
func TaskFailed() Change {
	return Change{Name: "task-failed", apply: func(w *World) ([]string, func(), bool) {
		tasks := w.operationTasks()
		for i := len(tasks) - 1; i >= 0; i-- {
			u := tasks[i].DeepCopy()
			if taskFinished(u) {
				continue
			}
			lbl := u.GetLabels()
			lbl[standin.TaskStatusLabel] = standin.TaskCompleted
			u.SetLabels(lbl)
			now := time.Now().UTC().Format(time.RFC3339)
			_ = unstructured.SetNestedField(u.Object, now, "status", "completionTime")
			_ = unstructured.SetNestedField(u.Object, int64(0), "status", "active")
			_ = unstructured.SetNestedField(u.Object, int64(1), "status", "failed")
			_ = unstructured.SetNestedSlice(u.Object, []any{
				map[string]any{"type": "Complete", "status": "True", "lastTransitionTime": now, "reason": "Complete", "message": ""},
				map[string]any{"type": "Running", "status": "False", "lastTransitionTime": now, "reason": "Running", "message": ""},
				map[string]any{"type": "Failed", "status": "True", "lastTransitionTime": now, "reason": "Failed", "message": "1 pods failed during processing"},
			}, "status", "conditions")
			if err := w.Dyn.Tracker().Update(standin.TaskGVR, u, w.NS); err == nil {
				return []string{"task", u.GetName(), "failed"}, nil, true
			}
		}
		return nil, nil, false
	}}
}
