// Package watchlist is the pod watch of the in-memory worlds (test/world,
// test/fakeadapter/fakeworld) as a real API server serves it with the WatchList feature.
package watchlist

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
)

// Pods serves a pod watch with sendInitialEvents as the API server does since 1.32:
// the pods the field selector matches as ADDED, a bookmark marking their end, then the
// live events (refused with 422 when noWatchList, like a server with the gate off).
// Other watches are left to the next reactor.
func Pods(tracker k8stesting.ObjectTracker, noWatchList bool) k8stesting.WatchReactionFunc {
	return func(action k8stesting.Action) (bool, watch.Interface, error) {
		wa, ok := action.(k8stesting.WatchActionImpl)
		if !ok || wa.ListOptions.SendInitialEvents == nil || !*wa.ListOptions.SendInitialEvents {
			return false, nil, nil
		}
		if noWatchList {
			return true, nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Pod").GroupKind(), "", nil)
		}
		gvr, ns := action.GetResource(), action.GetNamespace()
		live, err := tracker.Watch(gvr, ns)
		if err != nil {
			return true, nil, err
		}
		l, err := tracker.List(gvr, corev1.SchemeGroupVersion.WithKind("Pod"), ns)
		if err != nil {
			live.Stop()
			return true, nil, err
		}
		match := func(o runtime.Object) bool {
			p, ok := o.(*corev1.Pod)
			return ok && (wa.WatchRestrictions.Fields == nil || wa.WatchRestrictions.Fields.Matches(fields.Set{"metadata.name": p.Name, "metadata.namespace": p.Namespace}))
		}
		ch := make(chan watch.Event)
		out := watch.NewProxyWatcher(ch)
		go func() {
			defer live.Stop()
			defer close(ch)
			send := func(ev watch.Event) bool {
				select {
				case ch <- ev:
					return true
				case <-out.StopChan():
					return false
				}
			}
			for i := range l.(*corev1.PodList).Items {
				p := &l.(*corev1.PodList).Items[i]
				if match(p) && !send(watch.Event{Type: watch.Added, Object: p}) {
					return
				}
			}
			end := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
			if !send(watch.Event{Type: watch.Bookmark, Object: end}) {
				return
			}
			for {
				select {
				case ev, ok := <-live.ResultChan():
					if !ok {
						return
					}
					if match(ev.Object) && !send(ev) {
						return
					}
				case <-out.StopChan():
					return
				}
			}
		}()
		return true, out, nil
	}
}
