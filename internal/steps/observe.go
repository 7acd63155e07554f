package steps

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
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
	ring     map[string]ringRead // one entry, key ""
}

type ringRead struct {
	r      nodetool.Ring
	reader string
}

// The maps of observations, picked by kind (observations is replaced whole by Forget,
// so the maps are reached through it, under the lock).
func podsOf(o *observations) *map[string]*corev1.Pod                   { return &o.pods }
func stsOf(o *observations) *map[string]*appsv1.StatefulSet            { return &o.sts }
func pvcsOf(o *observations) *map[string]*corev1.PersistentVolumeClaim { return &o.pvcs }
func netstatsOf(o *observations) *map[string]nodetool.Netstats         { return &o.netstats }
func ringsOf(o *observations) *map[string]ringRead                     { return &o.ring }

// observe returns the kept answer for key, or reads it and keeps it. A read of the same
// thing already under way (one started ahead, see readAhead) is waited for instead of
// repeated; its answer is kept only if nothing was forgotten meanwhile, else it is read
// again.
func observe[V any](ctx context.Context, w *World, of func(*observations) *map[string]V, kind, key string, read func() (V, error)) (V, error) {
	fk := kind + "/" + key
	for {
		w.mu.Lock()
		v, ok := (*of(&w.obs))[key]
		if ok && !w.uncached {
			w.mu.Unlock()
			return v, nil
		}
		if ch := w.flights[fk]; ch != nil && !w.uncached {
			w.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				var zero V
				return zero, ctx.Err()
			}
		}
		f := w.beginLocked(fk)
		w.mu.Unlock()
		v, err := read()
		finish(w, of, key, f, v, err)
		return v, err
	}
}

// flight is a read under way, registered so that others asking the same wait for it.
type flight struct {
	fk  string
	ch  chan struct{}
	gen int
}

// beginLocked registers a read of fk as under way (w.mu held).
func (w *World) beginLocked(fk string) flight {
	f := flight{fk: fk, ch: make(chan struct{}), gen: w.gen}
	if w.flights == nil {
		w.flights = map[string]chan struct{}{}
	}
	w.flights[fk] = f.ch
	return f
}

// finish keeps a read's answer unless it failed or something was forgotten since it
// began, and releases whoever waits for it.
func finish[V any](w *World, of func(*observations) *map[string]V, key string, f flight, v V, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil && f.gen == w.gen && !w.uncached {
		m := of(&w.obs)
		if *m == nil {
			*m = map[string]V{}
		}
		(*m)[key] = v
	}
	if w.flights[f.fk] == f.ch {
		delete(w.flights, f.fk)
	}
	close(f.ch)
}

// ahead registers a read of key as under way now, in the caller's goroutine, and returns
// it to be run in the background; nil when an answer is kept or a read is under way
// already. Registered before the caller goes on, it is joined by the step that asks
// next however late its goroutine starts, and it never repeats a read that step made.
func ahead[V any](w *World, of func(*observations) *map[string]V, kind, key string, read func(context.Context) (V, error)) func(context.Context) {
	fk := kind + "/" + key
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := (*of(&w.obs))[key]; ok || w.uncached || w.flights[fk] != nil {
		return nil
	}
	f := w.beginLocked(fk)
	return func(ctx context.Context) {
		v, err := read(ctx)
		finish(w, of, key, f, v, err)
	}
}

// keep records what a read, a watch event or a write showed.
func keep[V any](w *World, of func(*observations) *map[string]V, key string, v V) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := of(&w.obs)
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[key] = v
}

// drop forgets one answer (a write made it stale).
func drop[V any](w *World, of func(*observations) *map[string]V, key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(*of(&w.obs), key)
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
	return observe(ctx, w, podsOf, "pod", name, func() (*corev1.Pod, error) { return w.readPod(ctx, name) })
}

func (w *World) readPod(ctx context.Context, name string) (*corev1.Pod, error) {
	p, err := w.Kube.CoreV1().Pods(w.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read pod %s: %w", name, err)
	}
	return p, nil
}

// keptPod is this pause's read of a pod, if there is one ((nil, true): gone).
func (w *World) keptPod(name string) (*corev1.Pod, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.obs.pods[name]
	return p, ok && !w.uncached
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
func (w *World) keepPod(name string, p *corev1.Pod) { keep(w, podsOf, name, p) }

// dropPod forgets a pod (a write made its kept state stale).
func (w *World) dropPod(name string) { drop(w, podsOf, name) }

// getSTS reads a StatefulSet.
func (w *World) getSTS(ctx context.Context, name string) (*appsv1.StatefulSet, error) {
	return observe(ctx, w, stsOf, "sts", name, func() (*appsv1.StatefulSet, error) { return w.readSTS(ctx, name) })
}

func (w *World) readSTS(ctx context.Context, name string) (*appsv1.StatefulSet, error) {
	s, err := w.Kube.AppsV1().StatefulSets(w.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot read StatefulSet %s: %w", name, err)
	}
	w.seeSTS(s)
	return s, nil
}

// keepSTS records a StatefulSet as read or as a write returned it.
func (w *World) keepSTS(s *appsv1.StatefulSet) {
	keep(w, stsOf, s.Name, s)
	w.seeSTS(s)
}

// seeSTS records the last StatefulSet seen (lastSTS).
func (w *World) seeSTS(s *appsv1.StatefulSet) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastSeenSTS == nil {
		w.lastSeenSTS = map[string]*appsv1.StatefulSet{}
	}
	w.lastSeenSTS[s.Name] = s
}

// lastSTS is this pause's read of a StatefulSet if there is one, else the last one this
// run saw, however old (Forget keeps it); nil if none. Only a write that tests what it
// was computed from may rely on an old one (ShrinkStatefulSet).
func (w *World) lastSTS(name string) *appsv1.StatefulSet {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.uncached {
		return nil
	}
	if s, ok := w.obs.sts[name]; ok {
		return s
	}
	return w.lastSeenSTS[name]
}

// dropLastSTS forgets the last StatefulSet seen (a write found it changed).
func (w *World) dropLastSTS(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.lastSeenSTS, name)
}

// getPVC reads a claim; (nil, nil) when it does not exist.
func (w *World) getPVC(ctx context.Context, name string) (*corev1.PersistentVolumeClaim, error) {
	return observe(ctx, w, pvcsOf, "pvc", name, func() (*corev1.PersistentVolumeClaim, error) { return w.readPVC(ctx, name) })
}

func (w *World) readPVC(ctx context.Context, name string) (*corev1.PersistentVolumeClaim, error) {
	c, err := w.Kube.CoreV1().PersistentVolumeClaims(w.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read PVC %s: %w", name, err)
	}
	return c, nil
}

// keepPVC records what a read or a write showed of a claim (nil: gone).
func (w *World) keepPVC(name string, c *corev1.PersistentVolumeClaim) { keep(w, pvcsOf, name, c) }

// dropPVC forgets a claim (it was just deleted).
func (w *World) dropPVC(name string) { drop(w, pvcsOf, name) }

// netstats asks the node on pod for its mode.
func (w *World) netstats(ctx context.Context, pod string) (nodetool.Netstats, error) {
	return observe(ctx, w, netstatsOf, "netstats", pod, func() (nodetool.Netstats, error) {
		return w.Nodetool.Netstats(ctx, pod)
	})
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
	w.readAhead(ctx,
		ahead(w, netstatsOf, "netstats", next, func(ctx context.Context) (nodetool.Netstats, error) { return w.Nodetool.Netstats(ctx, next) }),
		ahead(w, podsOf, "pod", next, func(ctx context.Context) (*corev1.Pod, error) { return w.readPod(ctx, next) }))
}

// prefetchClaims starts, right after n's pod is seen gone, the reads the claims step
// asks first: each planned claim (Done) and the StatefulSet (Safe's guard), at once
// instead of one after the other. Read after the pod is gone, they are as fresh as reads
// made inside the step.
func (w *World) prefetchClaims(ctx context.Context, n checkpoint.Node) {
	var reads []func(context.Context)
	for _, c := range n.PVCs {
		reads = append(reads, ahead(w, pvcsOf, "pvc", c.Name, func(ctx context.Context) (*corev1.PersistentVolumeClaim, error) { return w.readPVC(ctx, c.Name) }))
	}
	if n.StatefulSet != "" {
		reads = append(reads, ahead(w, stsOf, "sts", n.StatefulSet, func(ctx context.Context) (*appsv1.StatefulSet, error) { return w.readSTS(ctx, n.StatefulSet) }))
	}
	w.readAhead(ctx, reads...)
}

// readAhead runs reads registered by ahead in the background (nil ones are skipped).
// They are not cut short when the caller's wait ends (its context is cancelled right
// after): the next steps are the ones that need the answers.
func (w *World) readAhead(ctx context.Context, reads ...func(context.Context)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	var wg sync.WaitGroup
	for _, r := range reads {
		if r != nil {
			wg.Go(func() { r(ctx) })
		}
	}
	go func() { wg.Wait(); cancel() }()
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
		case after && st.Kind == checkpoint.StepDecommission:
			return st.Pod
		}
	}
	return ""
}
