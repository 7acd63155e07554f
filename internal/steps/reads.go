package steps

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/observation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// The kinds of reads the run keeps until it next waits (World.obs).
const (
	podKind      observation.Kind[*corev1.Pod]                   = "pod" // nil: not found
	stsKind      observation.Kind[*appsv1.StatefulSet]           = "sts"
	pvcKind      observation.Kind[*corev1.PersistentVolumeClaim] = "pvc" // nil: not found
	netstatsKind observation.Kind[nodetool.Netstats]             = "netstats"
	ringKind     observation.Kind[ringRead]                      = "ring" // one entry, key ""
	// recheckKind is a fresh ring read started after the checkpoint's write, for one
	// step's recheck to take up (recheckAhead); keyed by the step's ID, so that no other
	// step's check takes it up.
	recheckKind observation.Kind[ringRead] = "recheck-ring"
)

// ringRead is one read of the ring and the pod that answered it.
type ringRead struct {
	r      pubnodetool.Ring
	reader string
}

// Forget drops every kept read (the engine calls it after its sleeps and after the
// action of a step that does not keep them up to date itself).
func (w *World) Forget() { w.obs.Forget() }

// sleep waits d, then forgets: the world may have changed meanwhile.
func (w *World) sleep(ctx context.Context, d time.Duration) error {
	defer w.Forget()
	return sleep(ctx, d)
}

// getPod reads a pod; (nil, nil) when it does not exist.
func (w *World) getPod(ctx context.Context, name string) (*corev1.Pod, error) {
	return observation.Get(ctx, &w.obs, podKind, name, w.readPod(name))
}

// readPod is the read behind getPod, and behind the same read started ahead.
func (w *World) readPod(name string) func(context.Context) (*corev1.Pod, error) {
	return func(ctx context.Context) (*corev1.Pod, error) {
		return getOrNil(ctx, w.Kube.CoreV1().Pods(w.Namespace).Get, "pod", name)
	}
}

// getOrNil reads the object name with get; (nil, nil) when it does not exist.
func getOrNil[T any](ctx context.Context, get func(context.Context, string, metav1.GetOptions) (*T, error), what, name string) (*T, error) {
	o, err := get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s %s: %w", what, name, err)
	}
	return o, nil
}

// keptPod is this pause's read of a pod, if there is one ((nil, true): gone).
func (w *World) keptPod(name string) (*corev1.Pod, bool) {
	return observation.Kept(&w.obs, podKind, name)
}

// errNoWatchList: the API server cannot stream a watch's initial state (before 1.32, or
// 1.33 where the WatchList gate is off by default).
var errNoWatchList = errors.New("the API server does not send a watch's initial events")

// initialEventsWait bounds the wait for the end of a watch's initial state: a server
// (or proxy) that accepts the request but never marks the end is treated as one that
// cannot stream it.
const initialEventsWait = 5 * time.Second

// watchPod opens a watch of one pod that starts with its current state (sendInitialEvents)
// and returns that state (nil: no such pod) with the watch, positioned after it: one
// request where a GET and a watch from its resourceVersion would be two.
func (w *World) watchPod(ctx context.Context, name string) (*corev1.Pod, watch.Interface, error) {
	w.mu.Lock()
	no := w.noWatchList
	w.mu.Unlock()
	if no {
		return nil, nil, errNoWatchList
	}
	unsupported := func() error {
		w.mu.Lock()
		w.noWatchList = true
		w.mu.Unlock()
		return errNoWatchList
	}
	send := true
	wi, err := w.Kube.CoreV1().Pods(w.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector:        fields.OneTermEqualSelector("metadata.name", name).String(),
		SendInitialEvents:    &send,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	if err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || isUnprocessable(err) {
			return nil, nil, unsupported()
		}
		return nil, nil, fmt.Errorf("cannot watch pod %s: %w", name, err)
	}
	deadline := time.NewTimer(initialEventsWait)
	defer deadline.Stop()
	var p *corev1.Pod
	for {
		select {
		case <-ctx.Done():
			wi.Stop()
			return nil, nil, ctx.Err()
		case <-deadline.C:
			wi.Stop()
			return nil, nil, unsupported()
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return nil, nil, fmt.Errorf("the watch of pod %s ended before it gave the pod's state", name)
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				if o, ok := ev.Object.(*corev1.Pod); ok && o.Name == name {
					p = o
				}
			case watch.Deleted:
				if o, ok := ev.Object.(*corev1.Pod); ok && o.Name == name {
					p = nil
				}
			case watch.Bookmark:
				if m, err := meta.Accessor(ev.Object); err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
					return p, wi, nil
				}
			case watch.Error:
				wi.Stop()
				return nil, nil, fmt.Errorf("cannot watch pod %s: %w", name, apierrors.FromObject(ev.Object))
			}
		}
	}
}

// keepPod records what a read, a watch event or a write showed of a pod (nil: gone).
func (w *World) keepPod(name string, p *corev1.Pod) { observation.Keep(&w.obs, podKind, name, p) }

// dropPod forgets a pod (a write made its kept state stale).
func (w *World) dropPod(name string) { observation.Drop(&w.obs, podKind, name) }

// getSTS reads a StatefulSet.
func (w *World) getSTS(ctx context.Context, name string) (*appsv1.StatefulSet, error) {
	return observation.Get(ctx, &w.obs, stsKind, name, w.readSTS(name))
}

// readSTS is the read behind getSTS, and behind the same read started ahead.
func (w *World) readSTS(name string) func(context.Context) (*appsv1.StatefulSet, error) {
	return func(ctx context.Context) (*appsv1.StatefulSet, error) {
		s, err := w.Kube.AppsV1().StatefulSets(w.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("cannot read StatefulSet %s: %w", name, err)
		}
		w.seeSTS(s)
		return s, nil
	}
}

// keepSTS records a StatefulSet as read or as a write returned it.
func (w *World) keepSTS(s *appsv1.StatefulSet) {
	observation.Keep(&w.obs, stsKind, s.Name, s)
	w.seeSTS(s)
}

// seeSTS records the last StatefulSet seen (lastSTS).
func (w *World) seeSTS(s *appsv1.StatefulSet) { w.lastSeenSTS.set(s.Name, s) }

// lastSTS is this pause's read of a StatefulSet if there is one, else the last one this
// run saw, however old (Forget keeps it); nil if none, and always while reads are not
// kept. Only a write that tests what it was computed from may rely on an old one
// (shrinkStatefulSet).
func (w *World) lastSTS(name string) *appsv1.StatefulSet {
	if s, ok := observation.Kept(&w.obs, stsKind, name); ok || w.obs.Uncached() {
		return s
	}
	s, _ := w.lastSeenSTS.get(name)
	return s
}

// getPVC reads a claim; (nil, nil) when it does not exist.
func (w *World) getPVC(ctx context.Context, name string) (*corev1.PersistentVolumeClaim, error) {
	return observation.Get(ctx, &w.obs, pvcKind, name, w.readPVC(name))
}

// readPVC is the read behind getPVC, and behind the same read started ahead.
func (w *World) readPVC(name string) func(context.Context) (*corev1.PersistentVolumeClaim, error) {
	return func(ctx context.Context) (*corev1.PersistentVolumeClaim, error) {
		return getOrNil(ctx, w.Kube.CoreV1().PersistentVolumeClaims(w.Namespace).Get, "PVC", name)
	}
}

// keepPVC records what a read or a write showed of a claim (nil: gone).
func (w *World) keepPVC(name string, c *corev1.PersistentVolumeClaim) {
	observation.Keep(&w.obs, pvcKind, name, c)
}

// dropPVC forgets a claim (it was just deleted).
func (w *World) dropPVC(name string) { observation.Drop(&w.obs, pvcKind, name) }

// netstats asks the node on pod for its mode.
func (w *World) netstats(ctx context.Context, pod string) (nodetool.Netstats, error) {
	return observation.Get(ctx, &w.obs, netstatsKind, pod, w.readNetstats(pod))
}

// readNetstats is the call behind netstats, and behind the same call started ahead.
func (w *World) readNetstats(pod string) func(context.Context) (nodetool.Netstats, error) {
	return func(ctx context.Context) (nodetool.Netstats, error) { return w.Nodetool.Netstats(ctx, pod) }
}

// prefetchNext starts reading what the next decommission's first checks ask (the
// node's mode and its pod) while the steps in between run: the nodetool call is the
// slowest read of a node's cycle. It is called right after a pause, so the answers are
// as fresh as any read of this pause; a later Forget drops them like any other.
func (w *World) prefetchNext(ctx context.Context, pod string) {
	next := w.nextDecommission(pod)
	if next == "" {
		return
	}
	observation.ReadAhead(ctx,
		observation.Ahead(&w.obs, netstatsKind, next, w.readNetstats(next)),
		observation.Ahead(&w.obs, podKind, next, w.readPod(next)))
}

// prefetchClaims starts, right after n's pod is seen gone, the reads the claims step
// asks first: each planned claim (Done) and the StatefulSet (Safe's guard), at once
// instead of one after the other. Read after the pod is gone, they are as fresh as reads
// made inside the step.
func (w *World) prefetchClaims(ctx context.Context, n record.Node) {
	var reads []func(context.Context)
	for _, c := range n.PVCs {
		reads = append(reads, observation.Ahead(&w.obs, pvcKind, c.Name, w.readPVC(c.Name)))
	}
	if n.StatefulSet != "" {
		reads = append(reads, observation.Ahead(&w.obs, stsKind, n.StatefulSet, w.readSTS(n.StatefulSet)))
	}
	observation.ReadAhead(ctx, reads...)
}

// nextDecommission is the pod of the first decommission step planned after pod's steps.
func (w *World) nextDecommission(pod string) string {
	if w.CP == nil {
		return ""
	}
	after := false
	for _, st := range w.CP.Steps {
		switch {
		case st.Pod == pod:
			after = true
		case after && st.Kind == record.StepDecommission:
			return st.Pod
		}
	}
	return ""
}

// SleepPoll waits one poll interval (or until ctx ends), forgetting the run's kept
// reads: the wait loops of a kind's own steps (replace-node).
func (w *World) SleepPoll(ctx context.Context) error { return w.sleep(ctx, w.poll()) }
