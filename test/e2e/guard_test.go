package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// pvcGuard records, with watches started before the plugin runs, every pod and PVC change
// in a namespace, to prove afterwards that no PVC was deleted while its pod existed, even
// across crashes whose timing no test controls.
//
// Ordering: the control plane has a single etcd, so every resourceVersion is an etcd
// revision from one global counter; comparing the revision at which a PVC got its
// deletionTimestamp with the revision at which its pod was deleted orders the two events
// exactly. (Kubernetes clients must not compare resourceVersions in general; here the
// setup guarantees what that needs.)
type pvcGuard struct {
	mu      sync.Mutex
	pods    map[string][]podEvent // pod name -> events in revision order
	deletes []pvcDelete           // PVC deletions, in revision order
	seenDel map[string]bool       // PVC uid -> deletion recorded
	errs    []error
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

type podEvent struct {
	rev    uint64
	exists bool // false: DELETED
}

type pvcDelete struct {
	pvc string
	rev uint64
	at  time.Time
}

// newPVCGuard starts watching pods and PVCs of ns; the watches stop when the test ends.
func newPVCGuard(t *testing.T, ns string) *pvcGuard {
	t.Helper()
	g := &pvcGuard{pods: map[string][]podEvent{}, seenDel: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	core := suite.clients.Kube.CoreV1()

	start := func(what string, list func(ctx context.Context) (runtime.Object, string, error), watchFn func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error), handle func(watch.Event)) {
		_, rv, err := list(ctx)
		if err != nil {
			t.Fatalf("pvc guard: listing %s: %v", what, err)
		}
		g.wg.Go(func() {
			// Watch from the list's version; when the server ends the watch (its timeout),
			// go on from the last version seen, so that no event is lost in between.
			for ctx.Err() == nil {
				w, err := watchFn(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
				if err != nil {
					if ctx.Err() == nil {
						g.fail(fmt.Errorf("pvc guard: watching %s: %w", what, err))
					}
					return
				}
				for ev := range w.ResultChan() {
					if ev.Type == watch.Error {
						// 410 Gone: events were compacted away; the record would have a hole.
						g.fail(fmt.Errorf("pvc guard: %s watch error: %v", what, ev.Object))
						w.Stop()
						return
					}
					if m, err := meta.Accessor(ev.Object); err == nil {
						rv = m.GetResourceVersion()
					}
					if ev.Type != watch.Bookmark {
						handle(ev)
					}
				}
				w.Stop()
			}
		})
	}

	start("pods", func(ctx context.Context) (runtime.Object, string, error) {
		l, err := core.Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, "", err
		}
		g.mu.Lock()
		for _, p := range l.Items {
			g.pods[p.Name] = append(g.pods[p.Name], podEvent{rev: rev(p.ResourceVersion), exists: true})
		}
		g.mu.Unlock()
		return l, l.ResourceVersion, nil
	}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return core.Pods(ns).Watch(ctx, o)
	}, func(ev watch.Event) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			g.fail(fmt.Errorf("pod watch: unexpected %s event %T", ev.Type, ev.Object))
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.pods[p.Name] = append(g.pods[p.Name], podEvent{rev: rev(p.ResourceVersion), exists: ev.Type != watch.Deleted})
	})

	start("pvcs", func(ctx context.Context) (runtime.Object, string, error) {
		l, err := core.PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, "", err
		}
		for i := range l.Items {
			g.pvc(watch.Added, &l.Items[i])
		}
		return l, l.ResourceVersion, nil
	}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return core.PersistentVolumeClaims(ns).Watch(ctx, o)
	}, func(ev watch.Event) {
		p, ok := ev.Object.(*corev1.PersistentVolumeClaim)
		if !ok {
			g.fail(fmt.Errorf("pvc watch: unexpected %s event %T", ev.Type, ev.Object))
			return
		}
		g.pvc(ev.Type, p)
	})
	t.Cleanup(g.stop)
	return g
}

// pvc records the first sign of a PVC's deletion: its deletionTimestamp (pvc-protection
// keeps a deleted PVC around while a pod uses it), or the DELETED event if no update
// with a deletionTimestamp was seen.
func (g *pvcGuard) pvc(typ watch.EventType, p *corev1.PersistentVolumeClaim) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seenDel[string(p.UID)] {
		return
	}
	if p.DeletionTimestamp == nil && typ != watch.Deleted {
		return
	}
	g.seenDel[string(p.UID)] = true
	g.deletes = append(g.deletes, pvcDelete{pvc: p.Name, rev: rev(p.ResourceVersion), at: time.Now()})
}

func (g *pvcGuard) fail(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.errs = append(g.errs, err)
}

func (g *pvcGuard) stop() {
	g.cancel()
	g.wg.Wait()
}

// Deleted returns the names of the PVCs seen being deleted, in order.
func (g *pvcGuard) Deleted() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, d := range g.deletes {
		out = append(out, d.pvc)
	}
	return out
}

// Check fails the test for every PVC of a fixture pod that was deleted while the pod
// existed (see violations).
func (g *pvcGuard) Check(t *testing.T, cl *fixture.Cluster) {
	t.Helper()
	for _, v := range g.violations(t, cl) {
		t.Error(v)
	}
}

// violations lists the PVC deletions that broke the rule. It first waits (bounded) until
// the watches have caught up with the present, so that no deletion is missed.
func (g *pvcGuard) violations(t *testing.T, cl *fixture.Cluster) []string {
	t.Helper()
	l, err := suite.clients.Kube.CoreV1().PersistentVolumeClaims(cl.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Items {
		if p.DeletionTimestamp != nil {
			waitFor(t, "pvc guard to see the deletion of "+p.Name, 10*time.Second, func(context.Context) (bool, error) {
				g.mu.Lock()
				defer g.mu.Unlock()
				return g.seenDel[string(p.UID)], nil
			})
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, err := range g.errs {
		out = append(out, err.Error())
	}
	owner := map[string]string{} // pvc name -> pod name
	for _, p := range cl.Pods {
		for _, c := range p.PVCs {
			owner[c] = p.Name
		}
	}
	for _, d := range g.deletes {
		pod, ok := owner[d.pvc]
		if !ok {
			// Not a PVC of this cluster's pods: the plugin has no business deleting it.
			out = append(out, fmt.Sprintf("PVC %s (not a PVC of this cluster's pods) was deleted at %s", d.pvc, d.at.Format("15:04:05.000")))
			continue
		}
		alive := false
		for _, e := range g.pods[pod] {
			if e.rev < d.rev {
				alive = e.exists
			}
		}
		if alive {
			out = append(out, fmt.Sprintf("PVC %s was deleted (revision %d, %s) while its pod %s existed", d.pvc, d.rev, d.at.Format("15:04:05.000"), pod))
		}
	}
	return out
}

func rev(rv string) uint64 {
	n, err := strconv.ParseUint(strings.TrimSpace(rv), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
