package cassoperator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// createReplaceTask creates a replacenode CassandraTask as the plugin writes it
// (plugins/cassoperator CreateTask): one job with args.pod_name, Forbid.
func (e *env) createReplaceTask(name, pod string) {
	e.t.Helper()
	job := map[string]any{"name": name, "command": "replacenode"}
	if pod != "" {
		job["args"] = map[string]any{"pod_name": pod}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": TaskGVR.GroupVersion().String(), "kind": "CassandraTask",
		"metadata": map[string]any{"name": name, "namespace": testNS},
		"spec": map[string]any{"datacenter": map[string]any{"name": testDC, "namespace": testNS},
			"concurrencyPolicy": "Forbid", "jobs": []any{job}},
	}}
	if _, err := e.dyn.Resource(TaskGVR).Namespace(testNS).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// deletes lists the kube client's deletes of resource ("pods", "persistentvolumeclaims")
// by name, in order.
func (e *env) deletes(resource string) []string {
	var out []string
	for _, a := range e.kube.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok && a.GetResource().Resource == resource {
			out = append(out, d.GetName())
		}
	}
	return out
}

func (e *env) taskCondMessage(name, typ string) string {
	u, err := e.dyn.Resource(TaskGVR).Namespace(testNS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == typ {
			s, _ := m["message"].(string)
			return s
		}
	}
	return ""
}

// TestReplaceNodeTask: a replacenode task on a dead node's pod deletes its claim and
// the pod once each; the new pod is started with replace_ip = the dead node's address
// (a fresh node, new host ID), UJ then UN with the dead node's tokens, and the old host
// ID leaves gossip. The task is Complete before the replacement is done (#748); the DC
// lists the pod in nodeReplacements with ReplacingNodes=True until the pod is Started
// again, then not, with its new host ID in nodeStatuses and a FinishedReplaceNode event.
func TestReplaceNodeTask(t *testing.T) {
	// JoinTime 12 s: RING_DELAY 2 s, a 4 s liveness wait, 6 s of streaming.
	e := newEnvWith(t, []string{"r1"}, 3, sim.Options{Version: sim.V41, RF: 3, JoinTime: 12 * time.Second})
	e.protectPVCs = true
	cfg := e.cfg()
	cfg.RunTasks = true
	op := New(cfg)
	pod := PodName(testCluster, testDC, "r1", 1)
	dead, err := e.node(pod)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.cass.UpdateFault(pod, func(f *sim.Fault) { f.Down = true }); err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(10 * time.Second) // the node has been down a while (R8)
	e.createReplaceTask("op-replace", pod)

	var codes []string
	var replacing string
	taskDoneWhile := ""
	var acts []Action
	for i := 0; i < 200; i++ {
		a, err := op.Step(context.Background())
		if err != nil {
			t.Fatalf("step %d: %v (actions %q)", i, err, acts)
		}
		if a != "" {
			acts = append(acts, a)
		}
		e.controller()
		if v, err := e.node(pod); err == nil && v.HostID != dead.HostID && (len(codes) == 0 || codes[len(codes)-1] != v.PeerCode) {
			codes = append(codes, v.PeerCode)
			if v.Replacing != "" {
				replacing = v.Replacing
			}
		}
		if taskDoneWhile == "" && e.task("op-replace").done {
			v, _ := e.node(pod)
			taskDoneWhile = v.PeerCode + "/" + v.Mode
			if !slices.Contains(e.replacements(), pod) || e.cond(CondReplacingNodes) != "True" {
				t.Fatalf("task done but nodeReplacements %v, ReplacingNodes %s", e.replacements(), e.cond(CondReplacingNodes))
			}
		}
		if a == "" && e.cond(CondReplacingNodes) == "False" && e.task("op-replace").done {
			break
		}
		e.now = e.now.Add(time.Second)
	}
	if got := e.deletes("persistentvolumeclaims"); !slices.Equal(got, []string{DataPVCName(pod)}) {
		t.Errorf("PVC deletes %q, want one of %s", got, DataPVCName(pod))
	}
	if got := e.deletes("pods"); !slices.Equal(got, []string{pod}) {
		t.Errorf("pod deletes %q, want one of %s", got, pod)
	}
	if replacing != dead.Address {
		t.Errorf("replacement started with replace address %q, want the dead node's %s", replacing, dead.Address)
	}
	// Unlisted during its liveness wait (§4.4: peers list it once it gossips BOOT_REPLACE).
	if !slices.Equal(codes, []string{"", "UJ", "UN"}) {
		t.Errorf("the replacement was %q as peers see it, want unlisted, UJ, UN (actions %q)", codes, acts)
	}
	if taskDoneWhile != "UJ/"+sim.ModeJoining && taskDoneWhile != "/"+sim.ModeJoining {
		t.Errorf("task completed while the replacement was %q, want before it finished (#748)", taskDoneWhile)
	}
	v, err := e.node(pod)
	if err != nil {
		t.Fatal(err)
	}
	if v.HostID == dead.HostID || v.Tokens != dead.Tokens || v.Mode != sim.ModeNormal || v.PeerCode != "UN" {
		t.Errorf("replacement %s: host %s tokens %d mode %s %s; dead node host %s tokens %d", pod, v.HostID, v.Tokens, v.Mode, v.PeerCode, dead.HostID, dead.Tokens)
	}
	eps, _ := e.cass.Endpoints()
	for _, n := range eps {
		if n.HostID == dead.HostID {
			t.Errorf("old host ID %s still in gossip: %+v", dead.HostID, n)
		}
	}
	tk := e.task("op-replace")
	if tk.conds["Complete"] != "True" || tk.conds["Running"] != "False" || tk.conds["Failed"] != "" {
		t.Errorf("task conditions %v, want Complete True, Running False, no Failed", tk.conds)
	}
	if s, _ := tk.pods[pod]["status"].(string); s != "COMPLETED" {
		t.Errorf("podStatuses %v, want %s COMPLETED", tk.pods, pod)
	}
	if n, _, _ := unstructured.NestedInt64(tk.u.Object, "status", "succeeded"); n != 1 {
		t.Errorf("succeeded %d, want 1", n)
	}
	if r := e.replacements(); len(r) != 0 {
		t.Errorf("nodeReplacements %v at the end", r)
	}
	if id, _ := e.nodeStatuses()[pod].(map[string]any)["hostID"].(string); id != v.HostID {
		t.Errorf("nodeStatuses[%s].hostID %q, want the new %s", pod, id, v.HostID)
	}
	if e.progress() != ProgressReady || e.cond(CondReady) != "True" {
		t.Errorf("progress %s, Ready %s", e.progress(), e.cond(CondReady))
	}
	evs, _ := e.kube.EventsV1().Events(testNS).List(context.Background(), metav1.ListOptions{})
	found := false
	for _, ev := range evs.Items {
		found = found || (ev.Action == "FinishedReplaceNode" && ev.Reason == "Finished replacing pod "+pod)
	}
	if !found {
		t.Errorf("no FinishedReplaceNode event: %+v", evs.Items)
	}
}

// TestReplaceNodeTaskInvalid: a task naming no pod or a missing pod fails at
// validation as the real one (replaceValidator's error behind "terminal error: "):
// Complete and Failed, failed 1, never Running, nothing replaced or deleted.
func TestReplaceNodeTaskInvalid(t *testing.T) {
	for _, c := range []struct{ pod, msg string }{
		{PodName(testCluster, testDC, "r1", 7), "terminal error: valid pod_name to replace is required"},
		{"", "terminal error: replace requires either rack_name or pod_name to be set as a filtering rule"},
	} {
		e := newEnv(t, []string{"r1"}, 3)
		cfg := e.cfg()
		cfg.RunTasks = true
		e.createReplaceTask("op-replace", c.pod)
		acts := e.run(New(cfg))
		tk := e.task("op-replace")
		if !tk.done || tk.conds["Complete"] != "True" || tk.conds["Failed"] != "True" || tk.conds["Running"] != "False" {
			t.Errorf("%q: task %v done=%v (actions %q)", c.pod, tk.conds, tk.done, acts)
		}
		if got := e.taskCondMessage("op-replace", "Failed"); got != c.msg {
			t.Errorf("%q: Failed message %q, want %q", c.pod, got, c.msg)
		}
		if n, _, _ := unstructured.NestedInt64(tk.u.Object, "status", "failed"); n != 1 {
			t.Errorf("%q: failed %d, want 1", c.pod, n)
		}
		if len(e.replacements()) != 0 || e.cond(CondReplacingNodes) != "False" || len(e.deletes("pods"))+len(e.deletes("persistentvolumeclaims")) > 0 {
			t.Errorf("%q: nodeReplacements %v, ReplacingNodes %s, deletes %v %v", c.pod, e.replacements(), e.cond(CondReplacingNodes),
				e.deletes("pods"), e.deletes("persistentvolumeclaims"))
		}
		if strings.Contains(strings.Join(actionsStrings(acts), " "), string(ActTaskRunning)) {
			t.Errorf("%q: Running set: %q", c.pod, acts)
		}
	}
}

func (e *env) replacements() []string {
	r, _, _ := unstructured.NestedStringSlice(e.dc().Object, "status", "nodeReplacements")
	return r
}

func actionsStrings(a []Action) []string {
	out := make([]string, len(a))
	for i, x := range a {
		out[i] = string(x)
	}
	return out
}

// runUntil steps op (the controller after each step, the clock one second on) until
// done holds after an idle step, or op is killed; at most 300 steps.
func (e *env) runUntil(op *Operator, done func() bool) []Action {
	e.t.Helper()
	var acts []Action
	for i := 0; i < 300; i++ {
		a, err := op.Step(context.Background())
		if a != "" {
			acts = append(acts, a)
		}
		e.controller()
		e.now = e.now.Add(time.Second)
		if errors.Is(err, ErrKilled) {
			return acts
		}
		if err != nil {
			e.t.Fatalf("step %d: %v (actions %q)", i, err, acts)
		}
		if a == "" && done() {
			return acts
		}
	}
	e.t.Fatalf("not done after 300 steps: %q", acts)
	return nil
}

// TestReplaceNodeTaskKilled: a process killed between the job's claim delete and its
// pod delete leaves the pod RUNNING with no job id; the next process takes it for a
// crashed sync job (podFailedHandling): WAITING with one retry, then the job runs
// again on the same pod (its claim, terminating under pvc-protection, is deleted
// again), and the replacement goes on.
func TestReplaceNodeTaskKilled(t *testing.T) {
	e := newEnvWith(t, []string{"r1"}, 3, sim.Options{Version: sim.V41, RF: 3, JoinTime: 12 * time.Second})
	e.protectPVCs = true
	cfg := e.cfg()
	cfg.RunTasks = true
	pod := PodName(testCluster, testDC, "r1", 2)
	dead, _ := e.node(pod)
	_ = e.cass.UpdateFault(pod, func(f *sim.Fault) { f.Down = true })
	e.now = e.now.Add(10 * time.Second)
	e.createReplaceTask("op-replace", pod)
	op := New(cfg)
	op.KillAfter(ActTaskDeletePVCs)
	first := e.runUntil(op, func() bool { return false })
	if first[len(first)-1] != ActTaskDeletePVCs || !op.Killed() {
		t.Fatalf("first process: %q", first)
	}
	if p := e.pod(pod); p == nil || string(p.UID) == "" {
		t.Fatalf("pod %s gone after a kill before its delete", pod)
	}
	op = New(cfg)
	acts := e.runUntil(op, func() bool { return e.cond(CondReplacingNodes) == "False" && e.task("op-replace").done })
	if got := e.deletes("persistentvolumeclaims"); !slices.Equal(got, []string{DataPVCName(pod), DataPVCName(pod)}) {
		t.Errorf("PVC deletes %q, want %s twice", got, DataPVCName(pod))
	}
	if got := e.deletes("pods"); !slices.Equal(got, []string{pod}) {
		t.Errorf("pod deletes %q, want %s once (actions %q)", got, pod, acts)
	}
	st := e.task("op-replace").pods[pod]
	if st["status"] != "COMPLETED" || asInt(st["retries"]) != 1 {
		t.Errorf("podStatuses[%s] %v, want COMPLETED after one retry", pod, st)
	}
	if v, _ := e.node(pod); v.PeerCode != "UN" || v.HostID == dead.HostID || v.Tokens != dead.Tokens {
		t.Errorf("replacement %+v", v)
	}
}

// TestFixMissingPVC: a pod Pending without its server-data claim (re-created while the
// replacenode job's claim delete was still terminating) is deleted; the StatefulSet
// controller creates both again and the operator starts the pod.
func TestFixMissingPVC(t *testing.T) {
	e := newEnv(t, []string{"r1"}, 3)
	pod := PodName(testCluster, testDC, "r1", 2)
	p := e.pod(pod)
	p.Status.Phase = corev1.PodPending
	if _, err := e.kube.CoreV1().Pods(testNS).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.kube.CoreV1().PersistentVolumeClaims(testNS).Delete(context.Background(), DataPVCName(pod), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	acts := e.run(New(e.cfg()))
	if len(acts) == 0 || acts[0] != ActDeleteStuckPod {
		t.Fatalf("actions %q, want %s first", acts, ActDeleteStuckPod)
	}
	if p := e.pod(pod); p == nil || p.Status.Phase != corev1.PodRunning || !e.pvcExists(DataPVCName(pod)) {
		t.Fatalf("pod %s not re-created with its claim: %+v", pod, p)
	}
}
