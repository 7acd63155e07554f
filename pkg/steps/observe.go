package steps

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
)

// observations are the reads of the world this run made since time last passed: one
// step's Done, Safe and Do, and the next step's Done right after, ask the same
// questions within milliseconds, and one answer serves them all. Forget drops them
// whenever the run waits (a poll sleep, a watch, a long nodetool call) or a step acted
// in a way the cache does not follow, so no decision rests on a read older than the
// moment the run last paused. Errors are never kept: unknown stays unknown.
type observations struct {
	pods     map[string]*corev1.Pod // nil: not found
	sts      map[string]*appsv1.StatefulSet
	pvcs     map[string]*corev1.PersistentVolumeClaim // nil: not found
	netstats map[string]nodetool.Netstats
	ring     *ringRead
}

type ringRead struct {
	r      nodetool.Ring
	reader string
}

// Forget drops every kept observation (the engine calls it after its sleeps and after
// the action of a step that does not keep them up to date itself).
func (w *World) Forget() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.obs = observations{}
	w.gen++
}

// sleep waits d, then forgets: the world may have changed meanwhile.
func (w *World) sleep(ctx context.Context, d time.Duration) error {
	defer w.Forget()
	return sleep(ctx, d)
}

// getPod reads a pod; (nil, nil) when it does not exist.
func (w *World) getPod(ctx context.Context, name string) (*corev1.Pod, error) {
	w.mu.Lock()
	p, ok := w.obs.pods[name]
	ok = ok && !w.uncached
	w.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := w.Kube.CoreV1().Pods(w.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		p, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read pod %s: %w", name, err)
	}
	w.keepPod(name, p)
	return p, nil
}

// keepPod records what a read, a watch event or a write showed of a pod (nil: gone).
func (w *World) keepPod(name string, p *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.obs.pods == nil {
		w.obs.pods = map[string]*corev1.Pod{}
	}
	w.obs.pods[name] = p
}

// dropPod forgets a pod (a write made its kept state stale).
func (w *World) dropPod(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.obs.pods, name)
}

// getSTS reads a StatefulSet.
func (w *World) getSTS(ctx context.Context, name string) (*appsv1.StatefulSet, error) {
	w.mu.Lock()
	s, ok := w.obs.sts[name]
	ok = ok && !w.uncached
	w.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := w.Kube.AppsV1().StatefulSets(w.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot read StatefulSet %s: %w", name, err)
	}
	w.keepSTS(s)
	return s, nil
}

// keepSTS records a StatefulSet as read or as a write returned it.
func (w *World) keepSTS(s *appsv1.StatefulSet) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.obs.sts == nil {
		w.obs.sts = map[string]*appsv1.StatefulSet{}
	}
	w.obs.sts[s.Name] = s
}

// getPVC reads a claim; (nil, nil) when it does not exist.
func (w *World) getPVC(ctx context.Context, name string) (*corev1.PersistentVolumeClaim, error) {
	w.mu.Lock()
	c, ok := w.obs.pvcs[name]
	ok = ok && !w.uncached
	w.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err := w.Kube.CoreV1().PersistentVolumeClaims(w.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		c, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read PVC %s: %w", name, err)
	}
	w.keepPVC(name, c)
	return c, nil
}

// keepPVC records what a read or a write showed of a claim (nil: gone).
func (w *World) keepPVC(name string, c *corev1.PersistentVolumeClaim) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.obs.pvcs == nil {
		w.obs.pvcs = map[string]*corev1.PersistentVolumeClaim{}
	}
	w.obs.pvcs[name] = c
}

// dropPVC forgets a claim (it was just deleted).
func (w *World) dropPVC(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.obs.pvcs, name)
}

// netstats asks the node on pod for its mode.
func (w *World) netstats(ctx context.Context, pod string) (nodetool.Netstats, error) {
	w.mu.Lock()
	ns, ok := w.obs.netstats[pod]
	ok = ok && !w.uncached
	w.mu.Unlock()
	if ok {
		return ns, nil
	}
	ns, err := w.Nodetool.Netstats(ctx, pod)
	if err != nil {
		return ns, err
	}
	w.mu.Lock()
	if w.obs.netstats == nil {
		w.obs.netstats = map[string]nodetool.Netstats{}
	}
	w.obs.netstats[pod] = ns
	w.mu.Unlock()
	return ns, nil
}
