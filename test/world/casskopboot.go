package world

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/prerun"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// CassKop's bootstrap init container in the CassKop-shaped world: the ConfigMap named
// by spec.configMapName, whose pre_run.sh runs (really, with bash: test/prerun) on
// every start of every pod before Cassandra, and the JVM options it leaves for the
// version's jvm options files (docs/how-it-works/replace.md §7.2, §7.3).

var configMapsGVR = corev1.SchemeGroupVersion.WithResource("configmaps")

// PreRunKey is the ConfigMap key CassKop's /bootstrap.sh runs (§7.2).
const PreRunKey = "pre_run.sh"

// casskopBoot is what the world keeps of the init containers.
type casskopBoot struct {
	// configMap is spec.configMapName ("" when the CR names none).
	configMap string
	// jvm is the JVM options each node's JVM last started with (absent: none, as the
	// initial cluster's), so that a restart on the same data knows whether they changed.
	jvm map[string]sim.StartOptions
	// failures lists every failed run of the init container, in order.
	failures []InitFailure
}

// InitFailure is prerun.InitFailure: a bootstrap init container that exited non-zero.
type InitFailure = prerun.InitFailure

// nameConfigMap sets the CR's spec.configMapName (none with Opts.NoConfigMap).
func (w *World) nameConfigMap(spec map[string]any, o Opts) {
	w.boot.jvm = map[string]sim.StartOptions{}
	if o.NoConfigMap {
		return
	}
	w.boot.configMap = w.Name + "-config"
	spec["configMapName"] = w.boot.configMap
}

// createConfigMap creates the ConfigMap the CR names, with pre_run.sh when the user has
// one (Opts.PreRun).
func (w *World) createConfigMap(o Opts) {
	if w.boot.configMap == "" {
		return
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.boot.configMap, Namespace: w.NS, UID: types.UID("cm-" + w.boot.configMap), ResourceVersion: "1"},
		Data: map[string]string{}}
	if o.PreRun != "" {
		cm.Data[PreRunKey] = o.PreRun
	}
	w.add(cm)
}

// preRun is the current pre_run.sh ("", false when there is none). Called with w.mu
// held, or from the test.
func (w *World) preRun() (string, bool) {
	if w.boot.configMap == "" {
		return "", false
	}
	obj, err := w.Kube.Tracker().Get(configMapsGVR, w.NS, w.boot.configMap)
	if err != nil {
		return "", false
	}
	s, ok := obj.(*corev1.ConfigMap).Data[PreRunKey]
	return s, ok
}

// ConfigMap is the current pre_run.sh of the ConfigMap spec.configMapName names, and
// whether it has that key.
func (w *World) ConfigMap() (script string, exists bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.preRun()
}

// ConfigMapName is spec.configMapName ("" with Opts.NoConfigMap).
func (w *World) ConfigMapName() string { return w.boot.configMap }

// SetPreRun writes pre_run.sh (a user's edit of the ConfigMap; "" removes the key). It
// skips the test when bash is absent: no script could run.
func (w *World) SetPreRun(script string) {
	w.t.Helper()
	if !prerun.Available() {
		w.t.Skip(prerun.ErrNoBash)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	obj, err := w.Kube.Tracker().Get(configMapsGVR, w.NS, w.boot.configMap)
	if err != nil {
		w.t.Fatalf("ConfigMap %q: %v", w.boot.configMap, err)
	}
	cm := obj.(*corev1.ConfigMap).DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if script == "" {
		delete(cm.Data, PreRunKey)
	} else {
		cm.Data[PreRunKey] = script
	}
	w.rv++
	cm.ResourceVersion = fmt.Sprintf("%d", 100+w.rv)
	if err := w.Kube.Tracker().Update(configMapsGVR, cm, w.NS); err != nil {
		w.t.Fatal(err)
	}
}

// InitFailures lists the failed runs of the bootstrap init container, in order.
func (w *World) InitFailures() []InitFailure {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]InitFailure(nil), w.boot.failures...)
}

// bootstrapInit runs pod's bootstrap init container: the JVM options Cassandra starts
// with, or the failure (recorded as a violation: the pod never becomes Ready, §7.3).
// No pre_run.sh, no script run. Called with w.mu held.
func (w *World) bootstrapInit(pod string) (sim.StartOptions, *InitFailure) {
	script, has := w.preRun()
	if !has {
		return sim.StartOptions{}, nil
	}
	o, err := w.Cass.Options()
	if err == nil {
		var res prerun.Result
		if res, err = prerun.Run(context.Background(), script, pod, o.Version); err == nil {
			if res.Exit == 0 {
				return res.Options, nil
			}
			f := InitFailure{Pod: pod, Exit: res.Exit, Output: res.Output}
			w.boot.failures = append(w.boot.failures, f)
			w.violations = append(w.violations, f.String())
			return sim.StartOptions{}, &f
		}
	}
	// The world cannot run it (no bash): the test cannot say what the pod would do.
	w.violations = append(w.violations, "world: cannot run pre_run.sh of pod "+pod+": "+err.Error())
	return sim.StartOptions{}, &InitFailure{Pod: pod, Exit: 127, Output: err.Error()}
}

// restartNode starts pod's node again on its data with jvm: RestartWith when the
// options differ from its last start's (they stay with the node), else Restart.
// Called with w.mu held.
func (w *World) restartNode(pod string, jvm sim.StartOptions) {
	if reflect.DeepEqual(jvm, w.boot.jvm[pod]) {
		_ = w.Cass.Restart(pod)
		return
	}
	if err := w.Cass.RestartWith(pod, jvm); err != nil {
		w.violations = append(w.violations, "world: cannot restart node "+pod+": "+err.Error())
		return
	}
	w.boot.jvm[pod] = jvm
}

// startFresh starts a new node in pod on a fresh data claim with jvm: a new host ID;
// its former node, if any, stays in gossip as the sim keeps it (a dead node a
// replacement finds). Called with w.mu held.
func (w *World) startFresh(spec sim.NodeSpec, f sim.Fault, jvm sim.StartOptions) {
	spec.HostID = "" // a fresh data dir: a new host ID
	if err := w.Cass.StartFresh(spec, f, jvm); err != nil {
		w.violations = append(w.violations, "world: cannot start node "+spec.Pod+": "+err.Error())
		return
	}
	w.boot.jvm[spec.Pod] = jvm
}

// initFailedStatus is a pod whose bootstrap init container exits code again and again:
// Pending, not Ready, the kubelet backing off (kubelet's Init:CrashLoopBackOff).
func initFailedStatus(ip string, code int) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, PodIP: ip,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotInitialized"}},
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "bootstrap",
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: int32(code), Reason: "Error"}}}}}
}
