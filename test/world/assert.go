package world

import (
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
)

// assertFinished checks the operation ended: no checkpoint, a last-operation record, no
// safety violation.
func (w *World) assertFinished(label string) {
	w.t.Helper()
	cr := w.CR()
	if _, ok := cr.GetAnnotations()[checkpoint.Annotation]; ok {
		w.t.Errorf("%s: checkpoint annotation still present", label)
	}
	if _, ok := cr.GetAnnotations()[checkpoint.LastOperationAnnotation]; !ok {
		w.t.Errorf("%s: no last-operation record", label)
	}
	if v := w.Violations(); len(v) > 0 {
		w.t.Errorf("%s: safety violations: %v", label, v)
	}
}

// AssertScaledUp checks the end state of a scale-up to target nodes per rack: every
// rack's StatefulSet at target, pods 0..target-1 Ready with their node UN and no other
// pod, the CR count at target (cass-operator: the rack's share of spec.size), and the
// operation finished. Each new pod was created exactly once.
func (w *World) AssertScaledUp(target int, label string) {
	w.t.Helper()
	for _, r := range w.Racks {
		sts := w.stsName(r)
		if got := w.Replicas(r); got != target {
			w.t.Errorf("%s: StatefulSet %s has %d replicas, want %d", label, sts, got, target)
		}
		for i := 0; i < target; i++ {
			pod := fmt.Sprintf("%s-%d", sts, i)
			if w.PodUID(pod) == "" {
				w.t.Errorf("%s: pod %s missing", label, pod)
				continue
			}
			if n := w.Incarnations("pod", pod); n != 1 {
				w.t.Errorf("%s: pod %s was created %d times, want once", label, pod, n)
			}
			nv, err := w.Cass.Node(pod)
			if err != nil {
				w.t.Errorf("%s: %v", label, err)
				continue
			}
			if nv.PeerCode != "UN" {
				w.t.Errorf("%s: node %s is %q, want UN", label, pod, nv.PeerCode)
			}
		}
		if w.PodUID(fmt.Sprintf("%s-%d", sts, target)) != "" {
			w.t.Errorf("%s: pod %s-%d exists", label, sts, target)
		}
	}
	w.mu.Lock()
	for _, r := range w.Racks {
		if got := w.rackCount(r); got != target {
			w.t.Errorf("%s: the cluster resource gives rack %s %d nodes, want %d", label, r, got, target)
		}
	}
	w.mu.Unlock()
	w.assertFinished(label)
}

// AssertRestarted checks the end state of a rolling restart of pods: each has a new UID
// (created exactly twice: the original and one restart), its node restarted exactly
// once and is UN, and the operation finished.
func (w *World) AssertRestarted(pods []string, before map[string]string, label string) {
	w.t.Helper()
	for _, pod := range pods {
		uid := w.PodUID(pod)
		if uid == "" || uid == before[pod] {
			w.t.Errorf("%s: pod %s has UID %q, was %q: not restarted", label, pod, uid, before[pod])
		}
		if n := w.Incarnations("pod", pod); n != 2 {
			w.t.Errorf("%s: pod %s was created %d times, want 2 (restarted exactly once)", label, pod, n)
		}
		nv, err := w.Cass.Node(pod)
		if err != nil {
			w.t.Errorf("%s: %v", label, err)
			continue
		}
		if nv.Restarts != 1 || nv.PeerCode != "UN" {
			w.t.Errorf("%s: node %s restarted %d times and is %q, want once and UN", label, pod, nv.Restarts, nv.PeerCode)
		}
	}
	w.assertFinished(label)
}
