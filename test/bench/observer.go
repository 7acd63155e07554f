package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// Observer timestamps, from outside the plugin and on its own connections, the state
// changes of one namespace that the plugin reacts to or waits for:
//   - a pod object deleted (a pod watch: the DELETED event's arrival),
//   - a StatefulSet's replicas lowered (a StatefulSet watch), which is when the StatefulSet
//     controller's work (pod termination) starts,
//   - a simulated node reaching DECOMMISSIONED (polling the sim's state every SimPoll,
//     only near the end of a decommission of that node: it cannot end before its call
//     started plus the simulated decommission time).
type Observer struct {
	Kube      kubernetes.Interface
	Namespace string
	Sim       *sim.Store
	// SimPoll is the interval between reads of the sim's state (default 2 ms): a state
	// change is timestamped at the first read that shows it, at most SimPoll (plus one
	// read, ~1 ms for 100 nodes) late.
	SimPoll time.Duration

	mu             sync.Mutex
	podGone        map[string]time.Time
	shrunk         map[string]time.Time // pod -> when its StatefulSet's replicas went to <= its ordinal
	decommissioned map[string]time.Time
	polling        map[string]bool
	replicas       map[string]int32
	wg             sync.WaitGroup
	cancel         context.CancelFunc
	ctx            context.Context
	errs           []string
}

// Start lists and opens the watches before returning, so that every change after Start
// is seen.
func (o *Observer) Start(ctx context.Context) error {
	if o.SimPoll == 0 {
		o.SimPoll = 2 * time.Millisecond
	}
	o.podGone = map[string]time.Time{}
	o.shrunk = map[string]time.Time{}
	o.decommissioned = map[string]time.Time{}
	o.polling = map[string]bool{}
	o.replicas = map[string]int32{}
	o.ctx, o.cancel = context.WithCancel(ctx)

	pods := o.Kube.CoreV1().Pods(o.Namespace)
	pl, err := pods.List(o.ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("observer: listing pods: %w", err)
	}
	sets := o.Kube.AppsV1().StatefulSets(o.Namespace)
	sl, err := sets.List(o.ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("observer: listing statefulsets: %w", err)
	}
	for _, s := range sl.Items {
		o.replicas[s.Name] = replicasOf(&s)
	}
	podW := func(rv string) (watch.Interface, error) {
		return pods.Watch(o.ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	}
	stsW := func(rv string) (watch.Interface, error) {
		return sets.Watch(o.ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	}
	pw, err := podW(pl.ResourceVersion)
	if err != nil {
		return fmt.Errorf("observer: watching pods: %w", err)
	}
	sw, err := stsW(sl.ResourceVersion)
	if err != nil {
		pw.Stop()
		return fmt.Errorf("observer: watching statefulsets: %w", err)
	}
	o.wg.Add(2)
	go o.loop(pw, podW, pl.ResourceVersion, o.onPod)
	go o.loop(sw, stsW, sl.ResourceVersion, o.onStatefulSet)
	return nil
}

// Stop ends the watches and pollers.
func (o *Observer) Stop() {
	if o.cancel != nil {
		o.cancel()
	}
	o.wg.Wait()
}

// loop consumes a watch and re-opens it from the last version seen when the server
// closes it.
func (o *Observer) loop(w watch.Interface, open func(rv string) (watch.Interface, error), rv string, handle func(watch.Event, time.Time)) {
	defer o.wg.Done()
	for {
		for ev := range w.ResultChan() {
			t := time.Now()
			if ev.Type == watch.Error {
				o.errorf("watch error: %v", ev.Object)
				break
			}
			if m, ok := ev.Object.(metav1.Object); ok {
				rv = m.GetResourceVersion()
			}
			if ev.Type != watch.Bookmark {
				handle(ev, t)
			}
		}
		w.Stop()
		if o.ctx.Err() != nil {
			return
		}
		var err error
		if w, err = open(rv); err != nil {
			if o.ctx.Err() != nil {
				return
			}
			o.errorf("re-opening a watch: %v", err)
			time.Sleep(100 * time.Millisecond)
			w = watch.NewEmptyWatch()
		}
	}
}

func (o *Observer) onPod(ev watch.Event, t time.Time) {
	p, ok := ev.Object.(*corev1.Pod)
	if !ok || ev.Type != watch.Deleted {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, seen := o.podGone[p.Name]; !seen {
		o.podGone[p.Name] = t
	}
}

func (o *Observer) onStatefulSet(ev watch.Event, t time.Time) {
	s, ok := ev.Object.(*appsv1.StatefulSet)
	if !ok || (ev.Type != watch.Modified && ev.Type != watch.Added) {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	r := replicasOf(s)
	prev, known := o.replicas[s.Name]
	o.replicas[s.Name] = r
	if !known {
		return
	}
	for ord := r; ord < prev; ord++ {
		pod := s.Name + "-" + strconv.Itoa(int(ord))
		if _, seen := o.shrunk[pod]; !seen {
			o.shrunk[pod] = t
		}
	}
}

func replicasOf(s *appsv1.StatefulSet) int32 {
	if s.Spec.Replicas == nil {
		return 1
	}
	return *s.Spec.Replicas
}

// PollDecommission starts reading the simulated node of pod, from the time from on, until
// it reports DECOMMISSIONED (no-op if already polling or seen). Safe to call from a
// Recorder's OnCall.
func (o *Observer) PollDecommission(pod string, from time.Time) {
	if o.Sim == nil {
		return
	}
	o.mu.Lock()
	if o.polling[pod] || !o.decommissioned[pod].IsZero() || o.ctx == nil {
		o.mu.Unlock()
		return
	}
	o.polling[pod] = true
	o.mu.Unlock()
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		select {
		case <-o.ctx.Done():
			return
		case <-time.After(time.Until(from)):
		}
		t := time.NewTicker(o.SimPoll)
		defer t.Stop()
		for {
			v, err := o.Sim.Node(pod)
			now := time.Now()
			if err == nil && v.Mode == sim.ModeDecommissioned {
				o.mu.Lock()
				o.decommissioned[pod] = now
				delete(o.polling, pod)
				o.mu.Unlock()
				return
			}
			select {
			case <-o.ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

func (o *Observer) errorf(format string, a ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.errs = append(o.errs, fmt.Sprintf(format, a...))
}

// Observed is a copy of what the observer saw.
type Observed struct {
	PodGone        map[string]time.Time
	Shrunk         map[string]time.Time
	Decommissioned map[string]time.Time
	Errors         []string
}

// Snapshot returns what was seen so far.
func (o *Observer) Snapshot() Observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	cp := func(m map[string]time.Time) map[string]time.Time {
		out := make(map[string]time.Time, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return Observed{PodGone: cp(o.podGone), Shrunk: cp(o.shrunk), Decommissioned: cp(o.decommissioned), Errors: append([]string(nil), o.errs...)}
}
