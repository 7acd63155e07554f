package world

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Event is one side effect a plugin process had on the world: a write that took effect
// (recorded by the fake clients' reactor, world.go react) or a nodetool command with a
// side effect (Exec). Events outlive processes: a crash matrix reads the whole story of
// one world, reference run excluded (it has its own world).
type Event struct {
	// Proc is the Process the event happened in (1 = the first); Crashed whether that
	// process died (right after its last side effect).
	Proc int
	// Kind is "write" or "exec".
	Kind string
	// Verb is create/update/patch/delete for a write, the nodetool command for an exec.
	Verb string
	// Resource is the written resource (statefulsets, deployments, cassandraclusters,
	// persistentvolumeclaims, pods, ...); "nodetool" for an exec.
	Resource string
	// Name is the object's name, or the pod of an exec.
	Name string
	// Before and After are a StatefulSet's or Deployment's spec.replicas around a write.
	Before, After int32
	// SpecChanged: a cluster resource write that changed its spec; Checkpoint: one that
	// changed the checkpoint annotation (which carries the steps' done marks).
	SpecChanged, Checkpoint bool
}

func (e Event) String() string {
	switch {
	case e.Kind == "exec":
		return fmt.Sprintf("#%d nodetool %s on %s", e.Proc, e.Verb, e.Name)
	case e.Resource == "statefulsets" || e.Resource == "deployments":
		return fmt.Sprintf("#%d %s %s/%s replicas %d->%d", e.Proc, e.Verb, e.Resource, e.Name, e.Before, e.After)
	case e.SpecChanged && e.Before != e.After:
		return fmt.Sprintf("#%d %s %s/%s size %d->%d", e.Proc, e.Verb, e.Resource, e.Name, e.Before, e.After)
	}
	return fmt.Sprintf("#%d %s %s/%s", e.Proc, e.Verb, e.Resource, e.Name)
}

// history is the world's record of events (guarded by World.mu).
type history struct {
	proc    int
	crashed map[int]bool
	events  []Event
	// timeline is the plugin's side effects and the operator's actions (cass-operator
	// world), in the order they happened (Timeline).
	timeline []string
}

// histSnap is what an object looked like before a write.
type histSnap struct {
	replicas    int32
	spec        any
	checkpoint  string
	hasReplicas bool
}

// historyBefore reads what a write may change, before it is applied. Called with w.mu.
func (w *World) historyBefore(tracker k8stesting.ObjectTracker, action k8stesting.Action) histSnap {
	var s histSnap
	name := objName(action)
	if name == "" {
		return s
	}
	cur, err := tracker.Get(action.GetResource(), action.GetNamespace(), name)
	if err != nil {
		return s
	}
	return snapOf(cur)
}

func snapOf(obj any) histSnap {
	var s histSnap
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		if o.Spec.Replicas != nil {
			s.replicas, s.hasReplicas = *o.Spec.Replicas, true
		}
	case *appsv1.Deployment:
		if o.Spec.Replicas != nil {
			s.replicas, s.hasReplicas = *o.Spec.Replicas, true
		}
	case *unstructured.Unstructured:
		s.spec = o.Object["spec"]
		// A CassandraDatacenter's spec.size (0 for a CassandraCluster), kept as replicas.
		if n, ok, _ := unstructured.NestedInt64(o.Object, "spec", "size"); ok {
			s.replicas = int32(n)
		}
		s.checkpoint = o.GetAnnotations()[checkpoint.Annotation]
	}
	return s
}

// recordWrite appends a write that took effect. Called with w.mu.
func (w *World) recordWrite(tracker k8stesting.ObjectTracker, action k8stesting.Action, before histSnap) {
	gvr := action.GetResource()
	e := Event{Proc: w.hist.proc, Kind: "write", Verb: action.GetVerb(), Resource: gvr.Resource}
	if action.GetSubresource() != "" {
		e.Resource += "/" + action.GetSubresource()
	}
	switch a := action.(type) {
	case k8stesting.DeleteAction:
		e.Name = a.GetName()
	case k8stesting.CreateAction:
		if m, err := metaOf(a.GetObject()); err == nil {
			e.Name = m.GetName()
		}
	default:
		e.Name = objName(action)
	}
	if e.Verb != "delete" && e.Name != "" {
		if cur, err := tracker.Get(gvr, action.GetNamespace(), e.Name); err == nil {
			after := snapOf(cur)
			e.Before, e.After = before.replicas, after.replicas
			if gvr.Resource == w.crGVR().Resource {
				e.SpecChanged = !reflect.DeepEqual(before.spec, after.spec)
				e.Checkpoint = before.checkpoint != after.checkpoint
			}
		}
	}
	w.hist.events = append(w.hist.events, e)
	w.hist.timeline = append(w.hist.timeline, "plugin "+e.String())
}

// recordExec appends a nodetool command with a side effect. Called with w.mu.
func (w *World) recordExec(pod, cmd string) {
	e := Event{Proc: w.hist.proc, Kind: "exec", Verb: cmd, Resource: "nodetool", Name: pod}
	w.hist.events = append(w.hist.events, e)
	w.hist.timeline = append(w.hist.timeline, "plugin "+e.String())
}

// Timeline is the plugin's side effects ("plugin " + Event.String()) and, in the
// cass-operator world, the stand-in's actions ("operator " + action), in the order they
// happened: whether the plugin ended before or after the operator did something.
func (w *World) Timeline() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.hist.timeline...)
}

// History is every side effect so far, in order.
func (w *World) History() []Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Event{}, w.hist.events...)
}

// Expect is the side effects a plan needs, each exactly as often as listed.
type Expect struct {
	// Execs counts nodetool commands by "<command> <pod>" (e.g. "decommission
	// demo-dc1-rack1-3"); a command on a pod not listed must not happen. Commands
	// not in ExecKinds are not checked.
	Execs     map[string]int
	ExecKinds []string
	// Replicas is each StatefulSet's spec.replicas history over the plugin's writes
	// (first value: before the first write), one write per step: [4 3 2 1] is three
	// writes. StatefulSets not listed must not be written.
	Replicas map[string][]int32
	// PVCDeletes lists the claims deleted, each exactly once (no other claim).
	PVCDeletes []string
	// PodDeletes lists the pods deleted, each exactly once (no other pod).
	PodDeletes []string
	// Operator is the operator Deployments' replica history (e.g. "casskop": [1 0 1]:
	// exactly two writes). Deployments not listed must not be written.
	Operator map[string][]int32
	// SpecWrites is how many writes change the cluster resource's spec (nodesPerRacks
	// once).
	SpecWrites int
	// Rerun, when set, says how many more times a command may legitimately run (a
	// crash the documentation says repeats it); it is called with the history.
	Rerun func(h []Event, key string) int
}

// AssertHistory checks that every side effect happened exactly as often as e says.
func (w *World) AssertHistory(e Expect, label string) {
	w.t.Helper()
	h := w.History()
	var errs []string
	// Nodetool commands.
	kinds := map[string]bool{}
	for _, k := range e.ExecKinds {
		kinds[k] = true
	}
	got := map[string]int{}
	for _, ev := range h {
		if ev.Kind == "exec" && kinds[ev.Verb] {
			got[ev.Verb+" "+ev.Name]++
		}
	}
	for _, key := range unionKeys(got, e.Execs) {
		want := e.Execs[key]
		extra := 0
		if e.Rerun != nil && want > 0 {
			extra = e.Rerun(h, key)
		}
		if got[key] != want+extra {
			errs = append(errs, fmt.Sprintf("nodetool %s ran %d times, want %d (+%d repeated after a crash)", key, got[key], want, extra))
		}
	}
	// StatefulSets and Deployments: the replica history of the plugin's writes.
	check := func(resource string, want map[string][]int32) {
		seq := map[string][]int32{}
		for _, ev := range h {
			if ev.Kind == "write" && ev.Resource == resource && ev.Verb != "delete" {
				if len(seq[ev.Name]) == 0 {
					seq[ev.Name] = []int32{ev.Before}
				}
				seq[ev.Name] = append(seq[ev.Name], ev.After)
			}
		}
		for _, name := range unionKeys(seq, want) {
			if !reflect.DeepEqual(seq[name], want[name]) && (len(seq[name]) > 0 || len(want[name]) > 1) {
				errs = append(errs, fmt.Sprintf("%s %s: replicas went %v over the plugin's writes, want %v", resource, name, seq[name], want[name]))
			}
		}
	}
	check("statefulsets", e.Replicas)
	check("deployments", e.Operator)
	// Deletes, each exactly once.
	deletes := func(resource string, want []string) {
		n := map[string]int{}
		for _, ev := range h {
			if ev.Kind == "write" && ev.Resource == resource && ev.Verb == "delete" {
				n[ev.Name]++
			}
		}
		w := map[string]int{}
		for _, name := range want {
			w[name] = 1
		}
		for _, name := range unionKeys(n, w) {
			if n[name] != w[name] {
				errs = append(errs, fmt.Sprintf("%s %s deleted %d times, want %d", resource, name, n[name], w[name]))
			}
		}
	}
	deletes("persistentvolumeclaims", e.PVCDeletes)
	deletes("pods", e.PodDeletes)
	spec := 0
	for _, ev := range h {
		if ev.SpecChanged {
			spec++
		}
	}
	if spec != e.SpecWrites {
		errs = append(errs, fmt.Sprintf("the cluster resource's spec was changed %d times, want %d", spec, e.SpecWrites))
	}
	if len(errs) > 0 {
		var story []string
		for _, ev := range h {
			if ev.Kind == "exec" || (ev.Resource != w.crGVR().Resource || ev.SpecChanged) {
				story = append(story, ev.String())
			}
		}
		w.t.Errorf("%s: history:\n  %s\nside effects (checkpoint writes left out):\n  %s", label, strings.Join(errs, "\n  "), strings.Join(story, "\n  "))
	}
}

// RerunsAfterCrash counts the crashed processes whose last "<command> <pod>" exec was
// not followed by a checkpoint write in that process: its step was still recorded
// "started", so resume runs it again (steps whose effect nodetool cannot show, such as
// cleanup: internal/steps/scaleup.go, cleanup).
func (w *World) RerunsAfterCrash(h []Event, key string) int {
	w.mu.Lock()
	crashed := map[int]bool{}
	for p := range w.hist.crashed {
		crashed[p] = true
	}
	w.mu.Unlock()
	n := 0
	for p := range crashed {
		pending := false
		for _, ev := range h {
			if ev.Proc != p {
				continue
			}
			if ev.Kind == "exec" && ev.Verb+" "+ev.Name == key {
				pending = true
			} else if ev.Checkpoint {
				pending = false
			}
		}
		if pending {
			n++
		}
	}
	return n
}

// OperatorReplicas is the replica history of a Deployment over the plugin's writes,
// starting with its value before the first one.
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

// Down is a replica history from 'from' down to 'to', one step at a time.
func Down(from, to int) []int32 {
	var s []int32
	for i := from; i >= to; i-- {
		s = append(s, int32(i))
	}
	return s
}

// Up is a replica history from 'from' up to 'to', one step at a time.
func Up(from, to int) []int32 {
	var s []int32
	for i := from; i <= to; i++ {
		s = append(s, int32(i))
	}
	return s
}

func unionKeys[V any, W any](a map[string]V, b map[string]W) []string {
	seen := map[string]bool{}
	var out []string
	for k := range a {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for k := range b {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// marshalHolders is the paused-by annotation value for hs (tests that set it up).
func marshalHolders(hs []record.PauseHolder) string {
	b, _ := json.Marshal(hs)
	return string(b)
}

// SetDeploymentAnnotation sets (or, with value "", removes) an annotation of a
// Deployment, as another client would; not a side effect of the plugin.
func (w *World) SetDeploymentAnnotation(name, key, value string) {
	w.t.Helper()
	obj, err := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), w.NS, name)
	if err != nil {
		w.t.Fatal(err)
	}
	d := obj.(*appsv1.Deployment).DeepCopy()
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	if value == "" {
		delete(d.Annotations, key)
	} else {
		d.Annotations[key] = value
	}
	if err := w.Kube.Tracker().Update(appsv1.SchemeGroupVersion.WithResource("deployments"), d, w.NS); err != nil {
		w.t.Fatal(err)
	}
}

// PauseDeployment puts a Deployment at 0 replicas held by the given operations, as
// another run of the plugin (on another cluster) would have; not a side effect.
func (w *World) PauseDeployment(name string, hs []record.PauseHolder) {
	w.t.Helper()
	w.SetDeploymentAnnotation(name, record.PausedByAnnotation, marshalHolders(hs))
	obj, _ := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), w.NS, name)
	d := obj.(*appsv1.Deployment).DeepCopy()
	zero := int32(0)
	d.Spec.Replicas = &zero
	if err := w.Kube.Tracker().Update(appsv1.SchemeGroupVersion.WithResource("deployments"), d, w.NS); err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	w.deploymentController(w.NS, name)
	w.mu.Unlock()
}
