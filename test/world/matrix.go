package world

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// This file is the changing world: things other parties do while a run is under way
// (a node going down, someone else's decommission, a pod evicted, the operator scaled
// up, the cluster resource edited, another run taking the lock over, Cassandra refusing
// a decommission), made at a step boundary the way crash points are (right after side
// effect k, OnSideEffect), and the safety checks that judge what the run did next. The
// matrix is internal/cli/changing_test.go.

var (
	stsGVR    = appsv1.SchemeGroupVersion.WithResource("statefulsets")
	deployGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
)

// changeState is what the changing-world checks keep. Guarded by World.mu.
type changeState struct {
	// actor is the session of the run acting now ("" = unknown: no lock check), and
	// held every session that ever held the checkpoint.
	actor string
	held  map[string]bool
	// paused is the operator Deployment the plugin scaled to 0 and has not restored.
	paused string
	// recreated and restarted count the pods the world re-created and the JVM starts
	// it caused (a node brought back up), so end-state checks can tell them from the
	// plugin's own.
	recreated map[string]int
	restarted map[string]int
	// made is what the armed change did (nil until it was made), undo puts it back.
	made []string
	undo func()
	name string
	// ev counts the lock events (a run's proof, a run's action, a takeover); proofAt and
	// actAt are each session's last proof (a checkpoint write it made) and last action,
	// takeoverAt the takeover's event, inflight the sessions whose one in-flight action
	// was let through (lockcheck.go).
	ev         int
	proofAt    map[string]int
	actAt      map[string]int
	takeoverAt int
	inflight   map[string]bool
	// replacing are the pods whose dead node a replace-node discards (ExpectReplace).
	replacing map[string]bool
}

// ExpectReplace says that the node of pod is being replaced: its claims may go while
// it is still in the ring, as long as it is down (never while its JVM runs).
func (w *World) ExpectReplace(pod string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.chg.replacing == nil {
		w.chg.replacing = map[string]bool{}
	}
	w.chg.replacing[pod] = true
}

// Acting names the session of the run that acts from now on (the lock check: a session
// that held the checkpoint and lost it must never act again). "" turns the check off.
func (w *World) Acting(session string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.chg.actor = session
}

// actionSnap is what beforeAction saw of the world before a write.
type actionSnap struct {
	holder   *record.Holder // the stored checkpoint's holder, nil when none
	replicas int32          // a StatefulSet's or Deployment's replicas before the write
}

// kinds are the operation kinds the checkpoint is read with. A run that acts (Acting:
// the changing-world matrix, internal/cli/changing_test.go) must have set them: without
// them every checkpoint would read as unknown and the lock's history would silently
// stay empty. Other tests never read the checkpoint here (the lock check is off).
func (w *World) kinds() checkpoint.Schemas {
	if w.Kinds == nil && w.chg.actor != "" {
		panic("test/world: set World.Kinds (the plugin's Options.Kinds.Schemas()) before an acting run")
	}
	return w.Kinds
}

// storedHolder is the holder of the checkpoint on the cluster resource, nil when none.
func (w *World) storedHolder() *record.Holder {
	obj, err := w.Dyn.Tracker().Get(w.crGVR(), w.NS, w.crName())
	if err != nil {
		return nil
	}
	u := obj.(*unstructured.Unstructured)
	v, ok := u.GetAnnotations()[checkpoint.Annotation]
	if !ok {
		return nil
	}
	cp, err := checkpoint.Decode(v, string(u.GetUID()), w.kinds())
	if err != nil {
		return &record.Holder{Host: "(unreadable checkpoint)"}
	}
	return &cp.Holder
}

// replicasOf is the replicas of a StatefulSet or Deployment (-1 when it does not exist).
func (w *World) replicasOf(gvr schema.GroupVersionResource, name string) int32 {
	obj, err := w.Kube.Tracker().Get(gvr, w.NS, name)
	if err != nil {
		return -1
	}
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		return *o.Spec.Replicas
	case *appsv1.Deployment:
		return *o.Spec.Replicas
	}
	return -1
}

// beforeAction snapshots what the checks of a write need. Called with w.mu held.
func (w *World) beforeAction(action k8stesting.Action) actionSnap {
	s := actionSnap{holder: w.storedHolder(), replicas: -1}
	switch action.GetResource().Resource {
	case "statefulsets":
		s.replicas = w.replicasOf(stsGVR, objName(action))
	case "deployments":
		s.replicas = w.replicasOf(deployGVR, objName(action))
	}
	return s
}

// startingNow: pod is there and its Cassandra is starting (created, StartTime not yet
// over). Called with w.mu held.
func (w *World) startingNow(pod string) bool {
	uid, ok := w.starting[pod]
	if !ok {
		return false
	}
	obj, err := w.Kube.Tracker().Get(podsGVR, w.NS, pod)
	return err == nil && obj.(*corev1.Pod).UID == uid
}

// afterAction judges a write that took effect. Called with w.mu held.
func (w *World) afterAction(action k8stesting.Action, s actionSnap) {
	what := action.GetVerb() + " " + action.GetResource().Resource
	if sub := action.GetSubresource(); sub != "" {
		what += "/" + sub
	}
	name := objName(action)
	if d, ok := action.(k8stesting.DeleteAction); ok {
		name = d.GetName()
	}
	what += " " + name
	w.checkLock(what, s.holder)
	if h := w.storedHolder(); h != nil && h.Session != "" && w.chg.actor != "" && h.Session == w.chg.actor {
		if w.chg.held == nil {
			w.chg.held = map[string]bool{}
		}
		w.chg.held[h.Session] = true
		if w.writesCheckpoint(action) {
			w.proved(h.Session)
		}
	}
	switch action.GetResource().Resource {
	case "persistentvolumeclaims":
		if action.GetVerb() == "delete" {
			pod := strings.TrimPrefix(strings.TrimPrefix(name, "data-"), "cassandra-logs-")
			n, err := w.Cass.Node(pod)
			switch {
			case err != nil:
			case w.chg.replacing[pod] && n.Running:
				w.violations = append(w.violations, fmt.Sprintf("PVC %s deleted while the node of %s being replaced runs (%s)", name, pod, n.PeerCode))
			case w.chg.replacing[pod] && w.startingNow(pod):
				w.violations = append(w.violations, fmt.Sprintf("PVC %s deleted while the node of %s being replaced starts on it (its pod was re-created and its Cassandra is starting)", name, pod))
			case w.chg.replacing[pod] && n.PeerCode != "DN" && n.PeerCode != "":
				w.violations = append(w.violations, fmt.Sprintf("PVC %s deleted while the node of %s being replaced is %s, not DN", name, pod, n.PeerCode))
			case !w.chg.replacing[pod] && n.PeerCode != "":
				w.violations = append(w.violations, fmt.Sprintf("PVC %s deleted while node %s is still in the ring (%s)", name, pod, n.PeerCode))
			}
		}
		w.checkOperatorPaused(what)
	case "pods":
		if !streamMarkPatch(action) {
			w.checkOperatorPaused(what)
		}
	case "statefulsets":
		w.checkOperatorPaused(what)
		if after := w.replicasOf(stsGVR, name); s.replicas >= 0 && after > s.replicas {
			obj, err := w.Kube.Tracker().Get(stsGVR, w.NS, name)
			if err == nil {
				dc, _ := w.rackOf(obj.(*appsv1.StatefulSet))
				w.checkRing("grow of StatefulSet "+name, "", dc)
			}
		}
	case "deployments":
		if w.co != nil {
			// cass-operator is never paused: the plugin has no write to make to it.
			w.violations = append(w.violations, what+" by the plugin: cass-operator's Deployment is never paused nor scaled")
			break
		}
		after := w.replicasOf(deployGVR, name)
		switch {
		case after == 0 && s.replicas != 0:
			w.chg.paused = name
		case after > 0 && w.chg.paused == name:
			w.chg.paused = ""
			if msg := w.clusterDisagrees(); msg != "" {
				w.violations = append(w.violations, "operator "+name+" restored while "+msg)
			}
		}
	}
}

// checkExec judges a decommission, drain or cleanup about to run on pod.
func (w *World) checkExec(pod string, args []string) {
	if setsThroughput(args) {
		// It acts: only while holding the lock.
		w.mu.Lock()
		defer w.mu.Unlock()
		w.checkLock("nodetool "+strings.Join(args, " ")+" on "+pod, w.storedHolder())
		return
	}
	if removes(args) {
		w.checkRemoval(pod, args[1])
		return
	}
	if len(args) > 0 && args[0] == "rebuild" {
		// It streams into the node (add-dc): only while holding the lock. The
		// operator may run: a rebuild changes no topology.
		w.mu.Lock()
		defer w.mu.Unlock()
		w.checkLock("nodetool rebuild on "+pod, w.storedHolder())
		return
	}
	if len(args) == 0 || (args[0] != "decommission" && args[0] != "drain" && args[0] != "cleanup") {
		return
	}
	what := "nodetool " + args[0] + " on " + pod
	dc := "dc1"
	if n, err := w.Cass.Node(pod); err == nil {
		dc = n.DC
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkRing(what, pod, dc)
	w.checkLock(what, w.storedHolder())
	if args[0] != "cleanup" {
		w.checkOperatorPaused(what)
	}
}

// checkRemoval judges a removenode about to run on pod for the node of Host ID id
// ("force": every removal in process): the node must be dead (its JVM down, seen DN or
// DL), every other node UN, the lock held, the operator still paused.
func (w *World) checkRemoval(pod, id string) {
	what := "nodetool removenode " + id + " on " + pod
	target, dc := "", "dc1"
	nodes, _ := w.Cass.Nodes()
	for _, n := range nodes {
		if n.HostID == id {
			target, dc = n.Pod, n.DC
			if n.Running || (n.PeerCode != "DN" && n.PeerCode != "DL") {
				w.mu.Lock()
				w.violations = append(w.violations, fmt.Sprintf("%s while node %s is %s (JVM running %v): only a dead node is removed", what, n.Pod, n.PeerCode, n.Running))
				w.mu.Unlock()
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkRing(what, target, dc)
	w.checkLock(what, w.storedHolder())
	w.checkOperatorPaused(what)
}

// checkRing records a violation when a node of dc other than except is not UN (or a
// node of another DC is leaving or joining). Called with w.mu held.
func (w *World) checkRing(what, except, dc string) {
	var bad []string
	nodes, _ := w.Cass.Nodes()
	for _, n := range nodes {
		if n.Pod == except || n.PeerCode == "" || n.PeerCode == "UN" {
			continue
		}
		if n.DC == dc || n.PeerCode[1] != 'N' {
			bad = append(bad, fmt.Sprintf("%s is %s", n.Pod, n.PeerCode))
		}
	}
	if len(bad) > 0 {
		w.violations = append(w.violations, what+" while "+strings.Join(bad, ", "))
	}
}

// checkOperatorPaused records a violation when the plugin acts while the operator it
// paused runs again (someone scaled it up): CassKop would fight the change. Called with
// w.mu held.
func (w *World) checkOperatorPaused(what string) {
	if w.chg.paused == "" {
		return
	}
	if r := w.replicasOf(deployGVR, w.chg.paused); r > 0 {
		w.violations = append(w.violations, fmt.Sprintf("%s while operator %s, paused by the plan, runs again (%d replicas)", what, w.chg.paused, r))
	}
}

// clusterDisagrees says how the cluster resource's count differs from a rack's
// StatefulSet ("" when they agree); in a cass-operator world, how its size differs
// from the racks and their pods (dcDisagrees). Called with w.mu held.
func (w *World) clusterDisagrees() string {
	if w.co != nil {
		return w.dcDisagrees()
	}
	obj, err := w.Dyn.Tracker().Get(CCGVR, w.NS, w.Name)
	if err != nil {
		return ""
	}
	cl, err := (&casskop.Adapter{API: operator.APIVersion{Version: "v2"}}).FromObject(obj.(*unstructured.Unstructured))
	if err != nil {
		return "the cluster resource is unreadable: " + err.Error()
	}
	for _, dc := range cl.DCs {
		for _, r := range dc.Racks {
			if got := w.replicasOf(stsGVR, r.StatefulSet); got >= 0 && int(got) != r.Nodes {
				return fmt.Sprintf("nodesPerRacks of %s is %d and StatefulSet %s has %d replicas", dc.Name, r.Nodes, r.StatefulSet, got)
			}
		}
	}
	return ""
}

// A Change is something another party does to the world at a step boundary.
type Change struct {
	// Name is the change as the matrix prints it.
	Name string
	// apply makes the change (w.mu held): it returns the words a stop message naming it
	// may use and how to put the world back (nil: nothing to undo), or ok false when
	// the change does not fit the world at that boundary.
	apply func(w *World) (names []string, undo func(), ok bool)
}

// A Picker chooses, at a boundary, the pod a change is about ("" when none fits).
// Called with w.mu held.
type Picker func(w *World) string

func (w *World) rackPod(i int) string {
	return fmt.Sprintf("%s-%d", w.stsName(w.Racks[0]), i)
}

func (w *World) podExists(name string) bool {
	_, err := w.Kube.Tracker().Get(podsGVR, w.NS, name)
	return err == nil
}

// PickPod picks pod i of the first rack, when it exists.
func PickPod(i int) Picker {
	return func(w *World) string {
		if p := w.rackPod(i); w.podExists(p) {
			return p
		}
		return ""
	}
}

// PickOther picks pod 0 of the first rack, or pod 1 when pick chooses pod 0: another
// node than the one the run works on.
func PickOther(pick Picker) Picker {
	return func(w *World) string {
		if pick(w) == w.rackPod(0) {
			return PickPod(1)(w)
		}
		return PickPod(0)(w)
	}
}

// PickHighest picks the highest ordinal pod of the first rack at or above from that
// exists (the pod a scale-down works on, or the newest pod of a scale-up with from 0).
func PickHighest(from int) Picker {
	return func(w *World) string {
		for i := 20; i >= from; i-- {
			if p := w.rackPod(i); w.podExists(p) {
				return p
			}
		}
		return ""
	}
}

// PickNextDecommission picks the highest ordinal pod at or above from whose node is
// NORMAL and never started leaving: the next decommission of a scale-down.
func PickNextDecommission(from int) Picker {
	return func(w *World) string {
		for i := 20; i >= from; i-- {
			p := w.rackPod(i)
			if n, err := w.Cass.Node(p); err == nil && w.podExists(p) && n.Mode == sim.ModeNormal && n.DecommissionsStarted == 0 {
				return p
			}
		}
		return ""
	}
}

// PickNextRestart picks the highest ordinal pod of the first rack not re-created yet:
// the pod a rolling restart works on.
func PickNextRestart() Picker {
	return func(w *World) string {
		for i := 20; i >= 0; i-- {
			if p := w.rackPod(i); w.podExists(p) && w.incarnations["pod/"+p] == 1 {
				return p
			}
		}
		return ""
	}
}

func (w *World) nodeNames(pod string) []string {
	names := []string{pod}
	if n, err := w.Cass.Node(pod); err == nil {
		names = append(names, n.Address, n.HostID)
	}
	return names
}

// NodeDown: the Cassandra JVM of the picked pod stops (peers see it DN); put back, it
// starts again.
func NodeDown(pick Picker) Change {
	return Change{Name: "node-DN", apply: func(w *World) ([]string, func(), bool) {
		pod := pick(w)
		if pod == "" {
			return nil, nil, false
		}
		if err := w.Cass.UpdateFault(pod, func(f *sim.Fault) { f.Down = true }); err != nil {
			return nil, nil, false
		}
		return w.nodeNames(pod), func() {
			_ = w.Cass.UpdateFault(pod, func(f *sim.Fault) { f.Down = false })
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.chg.restarted == nil {
				w.chg.restarted = map[string]int{}
			}
			w.chg.restarted[pod]++
		}, true
	}}
}

// NodeState: the picked node shows code ("UL": someone else's decommission, "UJ": it
// bootstraps again) to its peers; put back, it is UN.
func NodeState(code string, pick Picker) Change {
	return Change{Name: "node-" + code, apply: func(w *World) ([]string, func(), bool) {
		pod := pick(w)
		if pod == "" {
			return nil, nil, false
		}
		if n, err := w.Cass.Node(pod); err != nil || n.PeerCode != "UN" {
			return nil, nil, false
		}
		if err := w.Cass.SetPeerState(pod, code); err != nil {
			return nil, nil, false
		}
		return w.nodeNames(pod), func() { _ = w.Cass.SetPeerState(pod, "UN") }, true
	}}
}

// PodRecreated: the picked pod is deleted (an eviction, a drained Kubernetes node) and
// the StatefulSet controller creates it again: a new UID, the same claims, its node
// back UN with the same Host ID. Nothing to put back.
func PodRecreated(pick Picker) Change {
	return Change{Name: "pod-recreated", apply: func(w *World) ([]string, func(), bool) {
		pod := pick(w)
		if pod == "" {
			return nil, nil, false
		}
		if err := w.Kube.Tracker().Delete(podsGVR, w.NS, pod); err != nil {
			return nil, nil, false
		}
		if w.chg.recreated == nil {
			w.chg.recreated = map[string]int{}
		}
		w.chg.recreated[pod]++
		w.podDeleted(w.NS, pod)
		return []string{pod}, nil, true
	}}
}

// OperatorScaledUp: someone scales the operator Deployment name up by one (back to
// running while the plan holds it paused); put back while the operation is in flight,
// it has the replicas it had before (if nobody changed them since).
func OperatorScaledUp(name string) Change {
	return Change{Name: "operator-scaled-up", apply: func(w *World) ([]string, func(), bool) {
		obj, err := w.Kube.Tracker().Get(deployGVR, w.NS, name)
		if err != nil {
			return nil, nil, false
		}
		d := obj.(*appsv1.Deployment).DeepCopy()
		was := *d.Spec.Replicas
		set := func(from, to int32) {
			obj, err := w.Kube.Tracker().Get(deployGVR, w.NS, name)
			if err != nil {
				return
			}
			d := obj.(*appsv1.Deployment).DeepCopy()
			if *d.Spec.Replicas != from {
				return
			}
			d.Spec.Replicas = &to
			w.rv++
			d.ResourceVersion = fmt.Sprintf("%d", 100+w.rv)
			_ = w.Kube.Tracker().Update(deployGVR, d, w.NS)
			w.deploymentController(w.NS, name)
		}
		set(was, was+1)
		return []string{name, "operator"}, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			// Scaled up from the pause (0 -> 1): undone only while the operation is in
			// flight; once it ended, the restore found it at its count. Scaled up from
			// running (before the pause, after the restore): undone if still so.
			if was > 0 || w.storedHolder() != nil {
				set(was+1, was)
			}
		}, true
	}}
}

// NodesPerRackEdited: someone sets the cluster resource's count of the first DC to
// to(current); put back, it has the count it had before (if nobody changed it since).
func NodesPerRackEdited(to func(cur int) int) Change {
	return Change{Name: "nodesPerRacks-edited", apply: func(w *World) ([]string, func(), bool) {
		cur := w.nodesPerRack()
		if cur < 0 {
			return nil, nil, false
		}
		next := to(cur)
		w.setNodesPerRack(next)
		return []string{"nodesPerRacks", "cluster resource"}, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.nodesPerRack() == next {
				w.setNodesPerRack(cur)
			}
		}, true
	}}
}

func (w *World) nodesPerRack() int {
	obj, err := w.Dyn.Tracker().Get(CCGVR, w.NS, w.Name)
	if err != nil {
		return -1
	}
	cl, err := (&casskop.Adapter{API: operator.APIVersion{Version: "v2"}}).FromObject(obj.(*unstructured.Unstructured))
	if err != nil || len(cl.DCs) == 0 {
		return -1
	}
	return cl.DCs[0].Racks[0].Nodes
}

// setNodesPerRack is SetNodesPerRack with a new resourceVersion, as the API server
// gives every write. Called with w.mu held.
func (w *World) setNodesPerRack(n int) {
	obj, err := w.Dyn.Tracker().Get(CCGVR, w.NS, w.Name)
	if err != nil {
		return
	}
	cr := obj.(*unstructured.Unstructured).DeepCopy()
	if dcs, ok, _ := unstructured.NestedSlice(cr.Object, "spec", "topology", "dc"); ok && len(dcs) > 0 {
		dcs[0].(map[string]any)["nodesPerRacks"] = int64(n)
		_ = unstructured.SetNestedSlice(cr.Object, dcs, "spec", "topology", "dc")
	} else {
		_ = unstructured.SetNestedField(cr.Object, int64(n), "spec", "nodesPerRacks")
	}
	w.rv++
	cr.SetResourceVersion(fmt.Sprintf("%d", 100+w.rv))
	_ = w.Dyn.Tracker().Update(CCGVR, cr, w.NS)
}

// TakeoverHolder is the identity of the run that Takeover makes the holder: another
// machine, whose clock is skew off ours.
func TakeoverHolder(host string, skew time.Duration) record.Holder {
	renewed := time.Now().Add(skew).UTC()
	return record.Holder{User: "bob", Host: host, PID: 4242, Session: "takeover-" + host, LeaseSeconds: 60, RenewedAt: &renewed}
}

// Takeover: another run, on host with its clock skew off ours, takes the checkpoint over
// (its holder and a takeover record written with its clock, seq one up). Nothing to put
// back: that run holds the operation now.
func Takeover(host string, skew time.Duration) Change {
	name := "takeover+5m"
	if skew < 0 {
		name = "takeover-5m"
	}
	return Change{Name: name, apply: func(w *World) ([]string, func(), bool) {
		obj, err := w.Dyn.Tracker().Get(w.crGVR(), w.NS, w.crName())
		if err != nil {
			return nil, nil, false
		}
		cr := obj.(*unstructured.Unstructured).DeepCopy()
		ann := cr.GetAnnotations()
		v, ok := ann[checkpoint.Annotation]
		if !ok {
			return nil, nil, false
		}
		cp, err := checkpoint.Decode(v, string(cr.GetUID()), w.kinds())
		if err != nil {
			return nil, nil, false
		}
		b := TakeoverHolder(host, skew)
		now := *b.RenewedAt
		cp.Takeovers = append(cp.Takeovers, record.Takeover{From: cp.Holder, By: b, At: now, Reason: "lease of " + cp.Holder.String() + " expired"})
		cp.Holder = b
		cp.Seq++
		w.chg.ev++
		w.chg.takeoverAt = w.chg.ev
		cp.UpdatedAt = now
		enc, err := checkpoint.Encode(cp, w.kinds())
		if err != nil {
			return nil, nil, false
		}
		ann[checkpoint.Annotation] = enc
		cr.SetAnnotations(ann)
		w.rv++
		cr.SetResourceVersion(fmt.Sprintf("%d", 100+w.rv))
		if err := w.Dyn.Tracker().Update(w.crGVR(), cr, w.NS); err != nil {
			return nil, nil, false
		}
		return []string{host}, nil, true
	}}
}

// RefuseDecommission: Cassandra refuses the next decommission of the picked node (the
// replication-factor check, E1: the node stays NORMAL); put back, the cause is fixed.
func RefuseDecommission(pick Picker) Change {
	return Change{Name: "decommission-refused", apply: func(w *World) ([]string, func(), bool) {
		pod := pick(w)
		if pod == "" {
			return nil, nil, false
		}
		if err := w.Cass.UpdateFault(pod, func(f *sim.Fault) { f.RefuseRF = true }); err != nil {
			return nil, nil, false
		}
		return []string{"refused"}, func() { _ = w.Cass.UpdateFault(pod, func(f *sim.Fault) { f.RefuseRF = false }) }, true
	}}
}

// ChangeAfter arms c to be made right after side effect k of the next Process: the
// step boundary where a crash point would kill the run.
func (w *World) ChangeAfter(k int, c Change) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.chg.made, w.chg.undo, w.chg.name = nil, nil, c.Name
	w.OnSideEffect = func(n int) {
		if n != k {
			return
		}
		names, undo, ok := c.apply(w)
		if ok {
			w.chg.made = append([]string{c.Name}, names...)
			w.chg.undo = undo
		}
	}
}

// ChangeMade reports whether the armed change was made and, if so, the words a stop
// message naming it may use.
func (w *World) ChangeMade() ([]string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.chg.made == nil {
		return nil, false
	}
	return append([]string{}, w.chg.made[1:]...), true
}

// PutBack disarms the change and undoes what it did (the node up again, the count as it
// was, …).
func (w *World) PutBack() {
	w.mu.Lock()
	undo := w.chg.undo
	w.chg.undo = nil
	w.OnSideEffect = nil
	w.mu.Unlock()
	if undo != nil {
		undo()
	}
}

// RecreatedByWorld is how often the world (not the plugin) re-created pod.
func (w *World) RecreatedByWorld(pod string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.chg.recreated[pod]
}

// RestartedByWorld is how often the world started pod's Cassandra again.
func (w *World) RestartedByWorld(pod string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.chg.restarted[pod]
}

// HasCheckpoint reports whether the cluster resource carries a checkpoint.
func (w *World) HasCheckpoint() bool {
	_, ok := w.CR().GetAnnotations()[checkpoint.Annotation]
	return ok
}

// finishedProblems is assertFinished's list: the checkpoint cleared with a
// last-operation record (violations are the caller's to report).
func (w *World) finishedProblems() []string {
	var p []string
	ann := w.CR().GetAnnotations()
	if _, ok := ann[checkpoint.Annotation]; ok {
		p = append(p, "checkpoint annotation still present")
	}
	if _, ok := ann[checkpoint.LastOperationAnnotation]; !ok {
		p = append(p, "no last-operation record")
	}
	return p
}

// ConsistentProblems lists what is wrong with the state an abort must leave: the
// cluster resource's count equal to every StatefulSet of its DCs, no pod above a
// StatefulSet's count, a data claim for every pod below it, each node decommissioned at
// most once, the checkpoint cleared with a last-operation record.
func (w *World) ConsistentProblems() []string {
	w.mu.Lock()
	msg := w.clusterDisagrees()
	w.mu.Unlock()
	var p []string
	if msg != "" {
		p = append(p, msg)
	}
	pods := " " + strings.Join(w.PodNames(), " ") + " "
	pvcs := " " + strings.Join(w.PVCNames(), " ") + " "
	for _, r := range w.Racks {
		n := w.Replicas(r)
		for i := 0; i < w.Nodes+3; i++ {
			pod := fmt.Sprintf("%s-%d", w.stsName(r), i)
			if in := strings.Contains(pods, " "+pod+" "); in != (i < n) {
				p = append(p, fmt.Sprintf("pod %s present=%v with %d replicas", pod, in, n))
			}
			if i < n && !strings.Contains(pvcs, " "+w.dataClaim(pod)+" ") {
				p = append(p, fmt.Sprintf("pod %s has no data claim", pod))
			}
			if nv, err := w.Cass.Node(pod); err == nil && nv.DecommissionsStarted > 1 {
				p = append(p, fmt.Sprintf("node %s decommissioned %d times", pod, nv.DecommissionsStarted))
			}
		}
	}
	return append(p, w.finishedProblems()...)
}

// ScaledDownProblems is AssertConverged's list (violations aside): every rack at target
// replicas, pods and data claims below it only, each removed node decommissioned once
// and no kept one, the cluster resource's count at target, the checkpoint cleared.
func (w *World) ScaledDownProblems(target int) []string {
	var p []string
	pods := " " + strings.Join(w.PodNames(), " ") + " "
	pvcs := " " + strings.Join(w.PVCNames(), " ") + " "
	for _, r := range w.Racks {
		sts := casskop.StatefulSetName(w.Name, "dc1", r)
		if got := w.Replicas(r); got != target {
			p = append(p, fmt.Sprintf("StatefulSet %s has %d replicas, want %d", sts, got, target))
		}
		for i := 0; i < w.Nodes; i++ {
			pod := fmt.Sprintf("%s-%d", sts, i)
			keep := i < target
			if strings.Contains(pods, " "+pod+" ") != keep {
				p = append(p, fmt.Sprintf("pod %s present=%v, want %v", pod, !keep, keep))
			}
			if strings.Contains(pvcs, " data-"+pod+" ") != keep {
				p = append(p, fmt.Sprintf("PVC data-%s present=%v, want %v", pod, !keep, keep))
			}
			want := 0
			if !keep {
				want = 1
			}
			if nv, err := w.Cass.Node(pod); err != nil {
				p = append(p, err.Error())
			} else if nv.DecommissionsStarted != want {
				p = append(p, fmt.Sprintf("node %s decommissions started = %d, want %d", pod, nv.DecommissionsStarted, want))
			}
		}
	}
	if got := w.nodesPerRackLocked(); got != target {
		p = append(p, fmt.Sprintf("CR nodesPerRacks is %d, want %d", got, target))
	}
	return append(p, w.finishedProblems()...)
}

// ScaledUpProblems is AssertScaledUp's list in a world that re-created some pods itself:
// each new pod was created once by the plan (besides the world's re-creations), every
// node UN, the cluster resource's count at target, the checkpoint cleared.
func (w *World) ScaledUpProblems(target int) []string {
	var p []string
	for _, r := range w.Racks {
		sts := casskop.StatefulSetName(w.Name, "dc1", r)
		if got := w.Replicas(r); got != target {
			p = append(p, fmt.Sprintf("StatefulSet %s has %d replicas, want %d", sts, got, target))
		}
		for i := 0; i < target; i++ {
			pod := fmt.Sprintf("%s-%d", sts, i)
			if w.PodUID(pod) == "" {
				p = append(p, fmt.Sprintf("pod %s missing", pod))
				continue
			}
			if n := w.Incarnations("pod", pod) - w.RecreatedByWorld(pod); n != 1 {
				p = append(p, fmt.Sprintf("pod %s was created %d times by the plan, want once", pod, n))
			}
			if nv, err := w.Cass.Node(pod); err != nil || nv.PeerCode != "UN" {
				p = append(p, fmt.Sprintf("node %s is %q (%v), want UN", pod, nv.PeerCode, err))
			}
		}
		if w.PodUID(fmt.Sprintf("%s-%d", sts, target)) != "" {
			p = append(p, fmt.Sprintf("pod %s-%d exists", sts, target))
		}
	}
	if got := w.nodesPerRackLocked(); got != target {
		p = append(p, fmt.Sprintf("CR nodesPerRacks is %d, want %d", got, target))
	}
	return append(p, w.finishedProblems()...)
}

func (w *World) nodesPerRackLocked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nodesPerRack()
}

// RestartedProblems is AssertRestarted's list in a world that re-created or restarted
// some pods itself: every pod has a new UID and its node is UN; the plan deleted and
// drained each pod exactly once, or at most once when the world re-created it (a pod
// whose UID changed is not restarted again); the cluster resource's count unchanged;
// the checkpoint cleared.
func (w *World) RestartedProblems(pods []string, before map[string]string) []string {
	var p []string
	deletes := map[string]int{}
	for _, d := range w.PodDeletes() {
		deletes[d]++
	}
	for _, pod := range pods {
		uid := w.PodUID(pod)
		if uid == "" || uid == before[pod] {
			p = append(p, fmt.Sprintf("pod %s has UID %q, was %q: not restarted", pod, uid, before[pod]))
		}
		nv, err := w.Cass.Node(pod)
		if err != nil {
			p = append(p, err.Error())
			continue
		}
		if nv.PeerCode != "UN" {
			p = append(p, fmt.Sprintf("node %s is %q, want UN", pod, nv.PeerCode))
		}
		lo := 1
		if w.RecreatedByWorld(pod) > 0 {
			lo = 0
		}
		if d := deletes[pod]; d < lo || d > 1 {
			p = append(p, fmt.Sprintf("pod %s deleted %d times by the plan, want %d..1", pod, d, lo))
		}
		if nv.Drains < lo || nv.Drains > 1 {
			p = append(p, fmt.Sprintf("node %s drained %d times, want %d..1", pod, nv.Drains, lo))
		}
	}
	if got := w.nodesPerRackLocked(); got != w.Nodes {
		p = append(p, fmt.Sprintf("CR nodesPerRacks is %d, want %d", got, w.Nodes))
	}
	return append(p, w.finishedProblems()...)
}
