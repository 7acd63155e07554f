// Package operator is the public API an operator adapter is written against: what the
// plugin asks of a Kubernetes operator of Cassandra, every fact its custom resource
// dictates (resource names, labels, container, how the operator says it is busy, which
// controller to pause, how a datacenter's count is kept in the spec), and who acts:
// the plugin with the operator paused, or the operator itself (Scaler). The engine, the
// steps, the checkpoint and the operations know only this interface, the neutral model
// of pkg/topology and the records of pkg/record; one adapter package per operator
// implements it (plugins/casskop, plugins/cassoperator), importing only pkg/ and
// client-go, and cmd/kubectl-cassandra/main.go hands the adapters to the CLI.
package operator

import (
	"context"
	"errors"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// ErrNoResource is matched (errors.Is) by an adapter's error when the API server serves
// no resource of its operator (its CRD is not installed).
var ErrNoResource = errors.New("the operator's custom resource is not served")

// Clients are the API clients an adapter is built with.
type Clients struct {
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	Kube      kubernetes.Interface
}

// Operator is one supported operator: its name (as checkpoints record it) and how to
// connect an adapter to a cluster's API.
type Operator interface {
	// Name is the operator's name in checkpoints and messages ("casskop").
	Name() string
	// Words name the operator's things in help texts, before any cluster is read.
	Words() Words
	// Connect returns an adapter using c; its API version is not resolved yet.
	Connect(c Clients) Adapter
}

// Words name an operator's things in help texts: Title the operator ("CassKop"), Kind
// its cluster resource ("CassandraCluster"), Count the spec's count ("nodesPerRacks").
// The adapter says the same once connected (Title, Kind, CountWords).
type Words struct {
	Title, Kind, Count string
}

// Adapter reads and writes one operator's cluster resources.
type Adapter interface {
	Resource
	Pods
	Controllers
	Counts
	// Name is the operator's name, as Operator.Name; Title is how messages name it
	// ("CassKop").
	Name() string
	Title() string
}

// Resource is the cluster resource itself: discovery, reads, and the checkpoint carrier.
type Resource interface {
	// Kind is the resource's kind ("CassandraCluster").
	Kind() string
	// GroupResource names it for RBAC checks and kubectl commands.
	GroupResource() schema.GroupResource
	// GVR is the resource with its resolved version (Resolve or Assume first).
	GVR() schema.GroupVersionResource
	// Resolve finds the served API version by discovery (errors.Is ErrNoResource when
	// none is served).
	Resolve(ctx context.Context) (string, error)
	// Assume uses the preferred version without asking discovery first; reads fall back
	// to discovery when the server answers NotFound.
	Assume()
	// Get reads one cluster as the neutral model, with the object read.
	Get(ctx context.Context, ns, name string) (topology.Cluster, *unstructured.Unstructured, error)
	// List lists the clusters of a namespace ("" = every namespace), sorted by name.
	List(ctx context.Context, ns string) ([]topology.Cluster, error)
	// FromObject maps an object of the resource (from a watch) onto the neutral model.
	FromObject(u *unstructured.Unstructured) (topology.Cluster, error)
	// Object is the checkpoint carrier of one cluster: its annotations.
	Object(ns, name string) record.Object
	// JMXSecretName is the Secret holding the JMX credentials the cluster's Cassandra
	// containers use ("" when none).
	JMXSecretName(u *unstructured.Unstructured) string
}

// Pods is how the operator names and labels the pods of a cluster.
type Pods interface {
	// Container is the Cassandra container of its pods.
	Container() string
	// ClusterSelector selects every Cassandra pod of cluster (every pod of every
	// cluster when cluster is "").
	ClusterSelector(cluster string) string
	// PodCluster is the cluster a pod with labels belongs to, if it is a Cassandra pod
	// of this operator.
	PodCluster(labels map[string]string) (string, bool)
	// BusyPods lists the pods of cluster carrying a queued or running operation of the
	// operator (empty when it has none).
	BusyPods(ctx context.Context, ns, cluster string) ([]string, error)
}

// Controller is an operator Deployment that may act on a namespace.
type Controller struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Replicas  int32  `json:"replicas"`
	// Watch is the namespace it manages ("" = every namespace).
	Watch string `json:"watch"`
	// PausedBy lists the operations holding it paused (record.PausedByAnnotation).
	PausedBy []record.PauseHolder `json:"pausedBy,omitempty"`
	// IsRunning: replicas > 0, or pods still there.
	IsRunning bool `json:"-"`
	// NotReady: it is asked to run (replicas > 0) and its Deployment, as its controller
	// last saw it, has no ready replica (crash-looping, not scheduled): it cannot act.
	NotReady bool `json:"-"`
}

func (c Controller) String() string { return c.Namespace + "/" + c.Name }

// Running reports whether it may act now (replicas > 0, or pods still there).
func (c Controller) Running() bool { return c.IsRunning }

// Scope says which namespaces it manages, in words.
func (c Controller) Scope() string {
	if c.Watch == "" {
		return "every namespace"
	}
	return "namespace " + c.Watch
}

// Controllers finds the operator's controllers: the Deployments an operation pauses.
type Controllers interface {
	// Operators finds every controller that manages ns, running or not.
	Operators(ctx context.Context, ns string) ([]Controller, error)
	// RunningOperators is Operators, the running ones only.
	RunningOperators(ctx context.Context, ns string) ([]Controller, error)
	// ControllerOf describes d if it is one of the operator's controllers.
	ControllerOf(d *appsv1.Deployment) (Controller, bool)
	// ManagedClusters lists the clusters c manages (apierrors.IsForbidden when listing
	// across namespaces is forbidden).
	ManagedClusters(ctx context.Context, c Controller) ([]topology.Cluster, error)
}

// Counts is how the spec keeps the number of nodes of a datacenter's racks. The neutral
// model is a count per rack (topology.Rack.Nodes); each operator maps it onto its spec:
// CassKop keeps one count per datacenter (nodesPerRacks), so its racks can only be
// written equal; cass-operator keeps a datacenter size that it splits over the racks.
type Counts interface {
	// DCSpec is the counts of one datacenter of one cluster resource, as the steps
	// read and write them.
	DCSpec(ns, name, dc string) DCSpec
	// SetRackNodesAt writes dc's rack counts only if the resource is still at
	// resourceVersion rv (abort).
	SetRackNodesAt(ctx context.Context, ns, name, dc string, racks map[string]int, rv string) error
	// CountWords names the spec's count in messages and plans, e.g. "nodesPerRacks".
	CountWords() string
	// CheckRackNodes says why the spec cannot hold these counts of dc's racks (nil: it
	// can), before any plan is made on them.
	CheckRackNodes(dc string, racks map[string]int) error
}

// DCSpec reads and writes the rack counts of one datacenter in the cluster resource.
type DCSpec interface {
	// RackNodes is the count the resource asks for each rack of the DC, by rack name.
	RackNodes(ctx context.Context) (map[string]int, error)
	// SetRackNodes writes the counts of racks (rack name -> nodes); an operator whose
	// spec cannot express them (CassKop: unequal racks) refuses and writes nothing.
	SetRackNodes(ctx context.Context, racks map[string]int) error
}

// Seeds is offered by an operator that lists its seeds by pod (CassKop's status.seedlist):
// a new pod it lists would start as a seed and skip bootstrap.
type Seeds interface {
	// SeedRefusal says why pod, listed as a seed (entry: its entry in the list, "" when
	// not read), is not created, and how to take it off the list.
	SeedRefusal(ns, cluster, pod, entry string) string
}

// StatusRepair is offered by an operator whose own status can be left stuck by an
// interrupted operation (CassKop: repair-operator-state).
type StatusRepair interface {
	// StatusSubresource reports whether the resource's status is written through /status.
	StatusSubresource(ctx context.Context) (bool, error)
	// OperatorStatus reads and repairs the per-rack operation status of one cluster.
	OperatorStatus(ns, name string, now func() time.Time) OperatorState
}

// OperatorState reads and repairs the operator's per-rack operation status.
type OperatorState interface {
	// OperationDone reports whether the rack's pod operation on pod, and the rack's
	// last action, are recorded as finished.
	OperationDone(ctx context.Context, dc, rack, pod string) (bool, error)
	// StuckOn returns nil while the rack's status still shows an unfinished pod
	// operation on pod, and an error saying what it shows otherwise (the operator moved
	// on since the plan).
	StuckOn(ctx context.Context, dc, rack, pod string) error
	// MarkOperationDone records the rack's pod operation on pod as finished, and its
	// last action as done.
	MarkOperationDone(ctx context.Context, dc, rack, pod string) error
	// MarkText says in a plan what MarkOperationDone writes.
	MarkText(dc, rack, pod string) string
}
