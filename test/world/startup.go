package world

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// What the kubelet shows of a Cassandra container whose JVM exits on a startup error
// (exit 3, docs/how-it-works/replace.md §4.2): it restarts it in a loop (CrashLoopBackOff),
// the pod is not Ready, and the last termination carries the end of the log as its
// message (terminationMessagePolicy FallbackToLogsOnError, which the operators set).
// A start that succeeds later shows Running, the failed one kept as the last
// termination. CassKop world only.

// cassandraContainer is the Cassandra container of CassKop's pods.
const cassandraContainer = "cassandra"

// syncContainer writes pod's Cassandra container status from its simulated node: set
// only once the node has failed to start (other pods carry none, as before). Called
// with w.mu held.
func (w *World) syncContainer(pod string) {
	n, err := w.Cass.Node(pod)
	if err != nil {
		return
	}
	obj, err := w.Kube.Tracker().Get(podsGVR, w.NS, pod)
	if err != nil {
		return
	}
	p := obj.(*corev1.Pod).DeepCopy()
	crashed := n.ExitCode == 3 && !n.Running
	had := len(p.Status.ContainerStatuses) > 0
	if !crashed && !had {
		return
	}
	cs := corev1.ContainerStatus{Name: cassandraContainer}
	if had {
		cs = p.Status.ContainerStatuses[0]
	}
	if crashed {
		log, _ := w.Cass.Log(pod)
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error", Message: tail(log, 80)}}
		cs.RestartCount++
		cs.Ready = false
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}}
	} else {
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	w.rv++
	p.ResourceVersion = fmt.Sprintf("%d", 100+w.rv)
	_ = w.Kube.Tracker().Update(podsGVR, p, w.NS)
}

// tail is the last n lines of log, as the kubelet's fallback message holds.
func tail(log []string, n int) string {
	if len(log) > n {
		log = log[len(log)-n:]
	}
	return strings.Join(log, "\n")
}
