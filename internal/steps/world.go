package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/observation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Nodetool is what the steps ask Cassandra.
type Nodetool interface {
	nodetool.StatusReader
	Netstats(ctx context.Context, pod string) (nodetool.Netstats, error)
	Decommission(ctx context.Context, pod string, force bool) (nodetool.Outcome, string)
}

// World is what the steps share: clients, the plan, and how to wait.
type World struct {
	Kube      kubernetes.Interface
	Nodetool  Nodetool
	Spec      operator.DCSpec
	Namespace string
	// ClusterSelector selects every pod of the cluster (to find ring readers).
	ClusterSelector string
	// Racks are every rack of the target DC, each of which must be at its wanted count
	// (checkpoint.Target.Wanted) before the spec is updated.
	Racks []topology.Rack
	// CountWords names the spec's count in messages ("nodesPerRacks"; operator.Counts),
	// ResourceKind the cluster resource ("CassandraCluster"; operator.Resource).
	// Container is the Cassandra container of the pods (operator.Pods).
	CountWords, ResourceKind, Container string
	CP                                  *record.Checkpoint
	Reporter                            engine.Reporter
	Poll                                time.Duration
	// StallAfter: a node LEAVING with no stream for this long is probed by issuing the
	// decommission again (4.0+ only, where a second call answers "still decommissioning"
	// if one runs; 3.11 would start a duplicate).
	StallAfter time.Duration
	// ServerVersion is Cassandra's version from the cluster spec ("" if unknown).
	ServerVersion string
	Now           func() time.Time
	// Operator reads and repairs the operator's per-rack status (repair-operator-state).
	Operator operator.OperatorState
	// Amend changes the checkpoint in memory, serialized with its writes (the engine's
	// Amend); the next write carries the change. Nil: changed directly (tests).
	Amend func(change func())
	// Judge tells which operations holding the operator paused are gone (nil: every
	// holder stands); IsOperator recognises the operator's Deployment by what it is
	// (operator.Controllers.ControllerOf), for one re-created under the same name.
	Judge      PauseJudge
	IsOperator func(d *appsv1.Deployment) bool
	// Deleting reports whether the cluster resource was last seen being deleted (the
	// checkpoint writes return it); nil: never.
	Deleting func() bool
	// NoteProgress, when set, keeps the last streaming progress for the checkpoint
	// (engine.Engine.NoteProgress); SampleEvery and SampleMax are the shortest and
	// longest intervals between two progress reads while a decommission call runs
	// (default 5 s and 3 min, node.go).
	NoteProgress           func(id string, p record.Progress)
	SampleEvery, SampleMax time.Duration
	// Scaler is the operator when it scales the datacenter itself (operator.Scaler):
	// the driven steps ask it and read its progress (driven.go); nil otherwise.
	// Operators lists its controllers that manage the namespace, running or not (nil:
	// not checked): nothing is asked of it while none runs, and a wait names it.
	Scaler    operator.Scaler
	Operators func(ctx context.Context) ([]operator.Controller, error)
	// Tasks is the operator when it runs datacenter-wide jobs as tasks of its own
	// (operator.Tasks): the task steps create and read the operation's task (tasks.go);
	// nil otherwise.
	Tasks operator.Tasks
	// HoldForTasks: nothing is asked of the operator (a size, a task) while another of
	// its tasks on the datacenter has not finished (otherTaskRuns: a resize during a
	// cleanup breaks it, cass-operator #902). Off by default: cass-operator creates a
	// cleanup task after each node it adds, so a world whose operator never runs its
	// tasks would wait for ever.
	HoldForTasks bool
	// Watches follows the operator's evidence as it changes (operator.Watches; nil: the
	// driven waits poll): the run's EvidenceFeed (evidence.go). Settler says when the
	// operator is done with the datacenter (operator.Settler; nil: not waited for): a
	// driven operation ends only then (settled.go).
	Watches operator.Watches
	Settler operator.Settler
	// Exec runs a command in a pod with stdin (cqlsh: internal/cql; nil: the pod exec
	// cannot feed one). Datacenters is the operator when it can remove a datacenter
	// (operator.DatacenterRemover; nil otherwise).
	Exec        cql.Streamer
	Datacenters operator.DatacenterRemover
	// Adder is the operator's adapter when it can add a datacenter (add-dc).
	Adder operator.DatacenterAdder

	// mu guards readers, noWatchList and feed; the maps below guard themselves (guarded).
	mu     sync.Mutex
	failed guarded[string, string] // pod -> last failure seen by this process's own decommission call
	// left remembers, for this run only, the nodes confirmed out of the ring, so the
	// guards of later steps need not ask nodetool again (a new run asks again).
	left guarded[string, bool]
	// underway are the nodes whose decommission this run saw under way (leaving,
	// streaming); advice is what this run told about removed nodes whose decommission
	// resumed after a restart, by pod (resumed.go).
	underway guarded[string, bool]
	advice   guarded[string, string]
	// readers caches the Ready pods outside the plan that can read the ring.
	readers []string
	// obs are this run's reads since it last waited (reads.go).
	obs observation.Cache
	// variant is how the kind's steps differ (Build sets it).
	variant Variant
	// lastSeenSTS survives Forget: the last StatefulSets read or written (lastSTS).
	lastSeenSTS guarded[string, *appsv1.StatefulSet]
	// noWatchList: the API server refused (or did not finish) a watch's initial events
	// once; pods are then read with a GET before watching.
	noWatchList bool
	// feed is the run's EvidenceFeed (nil: none).
	feed *EvidenceFeed
	// adopted are the pods that replaced a planned pod with the same node (safenow.go).
	adopted guarded[string, string]
	// recheckFailed are the steps whose ring check right before acting failed in this
	// run: their Safe reads the ring and waits (safenow.go).
	recheckFailed guarded[string, bool]
	// said are the notes and warnings this run gave once (throughput.go).
	said guarded[string, bool]
}

// guarded is a map the steps of a run share with the reads they start ahead (other
// goroutines), behind its own lock. The zero value is ready to use.
type guarded[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

// get is the value of k, and whether there is one.
func (g *guarded[K, V]) get(k K) (V, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.m[k]
	return v, ok
}

// set stores v for k and returns what k had before (in the same locked step, so a
// caller can tell whether it changed anything).
func (g *guarded[K, V]) set(k K, v V) (old V, had bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[K]V{}
	}
	old, had = g.m[k]
	g.m[k] = v
	return old, had
}

// drop forgets k.
func (g *guarded[K, V]) drop(k K) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.m, k)
}

// Clock is the world's time now: Now when set (tests), else the wall clock.
func (w *World) Clock() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *World) poll() time.Duration {
	if w.Poll <= 0 {
		return 2 * time.Second
	}
	return w.Poll
}

// reissueSafe reports whether calling decommission on a node that may already be
// decommissioning is harmless: true on 4.0+, false on 3.11 (no guard, docs/how-it-works/nodetool.md E2”).
func (w *World) reissueSafe() bool {
	v := w.ServerVersion
	return v != "" && !strings.HasPrefix(v, "3.") && !strings.HasPrefix(v, "2.")
}

// setFailed records the failure of pod's decommission call ("": none).
func (w *World) setFailed(pod, msg string) {
	if msg == "" {
		w.failed.drop(pod)
	} else {
		w.failed.set(pod, msg)
	}
}

// pod reads the planned pod; gone is true when it does not exist or is another
// incarnation (another UID) that does not run the planned node. A pod re-created with
// the planned node (same Host ID at its address: evicted, its Kubernetes node drained)
// is the same node: it is adopted and the checkpoint records its UID.
func (w *World) pod(ctx context.Context, n record.Node) (p *corev1.Pod, gone bool, err error) {
	p, err = w.getPod(ctx, n.Pod)
	if err != nil {
		return nil, false, err
	}
	if p == nil {
		return nil, true, nil
	}
	if string(p.UID) == w.podUID(n) {
		return p, false, nil
	}
	same, err := w.sameNode(ctx, n, p)
	if err != nil {
		return nil, false, err
	}
	if !same {
		return p, true, nil
	}
	w.adopt(n, string(p.UID), "its node is the same (Host ID "+n.HostID+")")
	return p, false, nil
}

// ring reads `nodetool status` from a pod that is not planned for removal, trying each
// Ready candidate in turn. Only a successful, non-empty read is returned: an unreadable
// ring is "unknown", never "the node left" (cass-operator #973).
func (w *World) ring(ctx context.Context) (pubnodetool.Ring, string, error) {
	// One entry: a read started ahead (by the decommission) is joined like any other.
	k, err := observation.Get(ctx, &w.obs, ringKind, "", w.readRing)
	return k.r, k.reader, err
}

// SeedReaders names the pods to ask for the ring first, before any answered this run:
// the plan's readers (operation.Planner.RingReaders). Planned pods are left out, as a
// listing leaves them out; a seed that does not answer is passed over like a cached
// reader, and the pods are then listed.
func (w *World) SeedReaders(pods []string) {
	planned := w.plannedPods()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.readers) > 0 {
		return
	}
	for _, p := range pods {
		if !planned[p] {
			w.readers = append(w.readers, p)
		}
	}
}

// plannedPods are the pods of the plan's nodes: never asked for the ring.
func (w *World) plannedPods() map[string]bool {
	planned := map[string]bool{}
	for _, n := range w.CP.Nodes {
		planned[n.Pod] = true
	}
	return planned
}

// readRing reads the ring from the first of the readers that answered last time, else
// from the first Ready pod outside the plan that answers (then remembered as readers).
func (w *World) readRing(ctx context.Context) (ringRead, error) {
	w.mu.Lock()
	cached := append([]string{}, w.readers...)
	w.mu.Unlock()
	if r, i, _ := nodetool.FirstRing(ctx, w.Nodetool, cached); i >= 0 {
		return ringRead{r: r, reader: cached[i]}, nil
	}
	// No cached reader answered: list the candidates again. From the watch cache: the
	// list only names pods to ask, what is judged is the ring they answer. A list a few
	// milliseconds old can only name a pod that no longer answers (the next is asked)
	// or miss one (the ring is then unknown and read again), never make a ring safe;
	// a consistent list waited up to 100 ms for the cache after the checkpoint's write.
	planned := w.plannedPods()
	pods, err := readyPods(ctx, w.Kube, w.Namespace, w.ClusterSelector, fromCache, func(pod string) bool { return planned[pod] })
	if err != nil {
		return ringRead{}, fmt.Errorf("cannot list the cluster's pods: %w", err)
	}
	if len(pods) == 0 {
		return ringRead{}, errors.New("no Ready pod outside the plan to read the ring from")
	}
	r, i, errs := nodetool.FirstRing(ctx, w.Nodetool, pods)
	if i < 0 {
		return ringRead{}, fmt.Errorf("ring unreadable: %s", strings.Join(errs, "; "))
	}
	w.mu.Lock()
	w.readers = append([]string(nil), pods[i:]...)
	w.mu.Unlock()
	return ringRead{r: r, reader: pods[i]}, nil
}

// inRing reports whether the planned node is still a ring member.
func inRing(r pubnodetool.Ring, n record.Node) (pubnodetool.Node, bool) {
	if n.HostID != "" {
		return r.ByHostID(n.HostID)
	}
	return r.ByAddress(n.Address)
}

// amend changes the checkpoint in memory through Amend (directly without one).
func (w *World) amend(change func()) {
	if w.Amend != nil {
		w.Amend(change)
		return
	}
	change()
}
