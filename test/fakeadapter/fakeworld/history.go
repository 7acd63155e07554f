package fakeworld

import (
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stesting "k8s.io/client-go/testing"
)

// Event is one side effect on the world: a write that took effect, or a nodetool
// command with a side effect (decommission, drain, cleanup). Tests count them: each
// side effect exactly as often as planned.
type Event struct {
	// Kind is "write" or "exec".
	Kind string
	// Verb is create/update/patch/delete for a write, the nodetool command for an exec.
	Verb string
	// Resource is the written resource (statefulsets, deployments, fakecassandras,
	// persistentvolumeclaims, pods, ...); "nodetool" for an exec.
	Resource string
	// Name is the object's name, or the pod of an exec.
	Name string
	// Before and After are a StatefulSet's or Deployment's spec.replicas around a write.
	Before, After int32
	// SpecChanged: a write of the FakeCassandra that changed its spec.
	SpecChanged bool
}

func (e Event) String() string {
	if e.Kind == "exec" {
		return fmt.Sprintf("nodetool %s on %s", e.Verb, e.Name)
	}
	return fmt.Sprintf("%s %s/%s replicas %d->%d", e.Verb, e.Resource, e.Name, e.Before, e.After)
}

// snap is what an object looked like around a write.
type snap struct {
	replicas int32
	spec     any
}

// snapshot reads what a write may change, before it is applied.
func snapshot(tracker k8stesting.ObjectTracker, action k8stesting.Action) snap {
	name := objName(action)
	if name == "" {
		return snap{}
	}
	cur, err := tracker.Get(action.GetResource(), action.GetNamespace(), name)
	if err != nil {
		return snap{}
	}
	return snapOf(cur)
}

func snapOf(obj any) snap {
	var s snap
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		if o.Spec.Replicas != nil {
			s.replicas = *o.Spec.Replicas
		}
	case *appsv1.Deployment:
		if o.Spec.Replicas != nil {
			s.replicas = *o.Spec.Replicas
		}
	case *unstructured.Unstructured:
		s.spec = o.Object["spec"]
	}
	return s
}

// record appends a write that took effect. Called with w.mu held.
func (w *World) record(tracker k8stesting.ObjectTracker, action k8stesting.Action, before snap) {
	gvr := action.GetResource()
	e := Event{Kind: "write", Verb: action.GetVerb(), Resource: gvr.Resource, Name: objName(action)}
	if action.GetSubresource() != "" {
		e.Resource += "/" + action.GetSubresource()
	}
	if e.Verb != "delete" && e.Name != "" {
		if cur, err := tracker.Get(gvr, action.GetNamespace(), e.Name); err == nil {
			after := snapOf(cur)
			e.Before, e.After = before.replicas, after.replicas
			e.SpecChanged = isCluster(gvr) && !reflect.DeepEqual(before.spec, after.spec)
		}
	}
	w.events = append(w.events, e)
}

// recordExec appends a nodetool command with a side effect. Called with w.mu held.
func (w *World) recordExec(pod, cmd string) {
	w.events = append(w.events, Event{Kind: "exec", Verb: cmd, Resource: "nodetool", Name: pod})
}

// History is every side effect so far, in order.
func (w *World) History() []Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Event{}, w.events...)
}

// OperatorReplicas is the replica history of Deployment name over the writes, starting
// with its value before the first one.
func (w *World) OperatorReplicas(name string) []int32 {
	var seq []int32
	for _, ev := range w.History() {
		if ev.Kind == "write" && ev.Resource == "deployments" && ev.Name == name && ev.Verb != "delete" {
			if len(seq) == 0 {
				seq = []int32{ev.Before}
			}
			seq = append(seq, ev.After)
		}
	}
	return seq
}

// Deletes lists the objects of resource deleted through the API, in order (one deleted
// twice appears twice).
func (w *World) Deletes(resource string) []string {
	var out []string
	for _, ev := range w.History() {
		if ev.Kind == "write" && ev.Resource == resource && ev.Verb == "delete" {
			out = append(out, ev.Name)
		}
	}
	return out
}

// PVCDeletes lists the claims deleted through the API, in order.
func (w *World) PVCDeletes() []string { return w.Deletes("persistentvolumeclaims") }

// SpecWrites counts the writes that changed the FakeCassandra's spec.
func (w *World) SpecWrites() int {
	n := 0
	for _, ev := range w.History() {
		if ev.SpecChanged {
			n++
		}
	}
	return n
}
