// Package cassoperator maps k8ssandra's cass-operator and its CassandraDatacenter
// resource (cassandradatacenters.cassandra.datastax.com/v1beta1) onto the plugin's
// model. One CassandraDatacenter is one datacenter: the plugin's cluster is the resource
// (its metadata.name), holding one DC. cass-operator scales its datacenters itself, so
// the adapter is an operator.Scaler: the plugin asks for one node at a time through
// spec.size and never pauses the operator (a pod restarted while it is down stays down,
// because Cassandra starts only when the operator calls the management API).
//
// Rules are read from k8ssandra/cass-operator (v1.32 and the commits after it); each
// one names the source file it follows.
package cassoperator

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Names fixed by cass-operator (apis/cassandra/v1beta1/cassandradatacenter_types.go,
// pkg/oplabels/labels.go).
const (
	Group     = "cassandra.datastax.com"
	Version   = "v1beta1"
	Resource  = "cassandradatacenters"
	Kind      = "CassandraDatacenter"
	Container = "cassandra"

	LabelCluster    = "cassandra.datastax.com/cluster"
	LabelDatacenter = "cassandra.datastax.com/datacenter"
	LabelRack       = "cassandra.datastax.com/rack"
	// LabelNodeState is the pod label cass-operator keeps its view of the node in
	// (pkg/reconciliation/reconcile_racks.go: Ready-to-Start, Starting, Started,
	// Started-not-Ready, Decommissioning).
	LabelNodeState = "cassandra.datastax.com/node-state"
	// LabelManagedBy=ManagedByValue is on everything cass-operator creates
	// (pkg/oplabels/labels.go AddOperatorLabels).
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "cass-operator"

	// CountField is the spec field cass-operator keeps a datacenter's node count in.
	CountField = "size"
)

// Node states of the node-state label (pkg/reconciliation/reconcile_racks.go).
const (
	StateReadyToStart    = "Ready-to-Start"
	StateStarting        = "Starting"
	StateStarted         = "Started"
	StateStartedNotReady = "Started-not-Ready"
	StateDecommissioning = "Decommissioning"
)

// Plugin is cass-operator as cmd/kubectl-cassandra/main.go hands it to the CLI.
type Plugin struct{}

// Name is cass-operator's name in checkpoints (topology.Cluster.Operator).
func (Plugin) Name() string { return "cass-operator" }

// Words implements operator.Operator.
func (Plugin) Words() operator.Words {
	return operator.Words{Title: "cass-operator", Kind: Kind, Count: CountField}
}

// Connect returns an adapter on c; its API version is resolved on first use.
func (Plugin) Connect(c operator.Clients) operator.Adapter {
	return &Adapter{Clients: c}
}

var (
	_ operator.Operator = Plugin{}
	_ operator.Adapter  = (*Adapter)(nil)
	_ operator.Scaler   = (*Adapter)(nil)
	_ operator.Tasks    = (*Adapter)(nil)
)

// Adapter reads and writes CassandraDatacenters (operator.Adapter and operator.Scaler).
type Adapter struct {
	operator.Clients
	// API is the API version to use; Resolve or Assume sets it. A run's waits read the
	// datacenter from several goroutines (the stall guard beside a wait).
	API operator.APIVersion

	// racks remembers the rack order of every datacenter read (CheckRackNodes is given
	// only a DC name and counts, and cass-operator's split depends on the spec order).
	mu    sync.Mutex
	racks map[string][]string
}

// Name is cass-operator's name in checkpoints.
func (a *Adapter) Name() string { return Plugin{}.Name() }

// Title is how messages name cass-operator.
func (a *Adapter) Title() string { return Plugin{}.Words().Title }

// Kind is the cluster resource's kind.
func (a *Adapter) Kind() string { return Kind }

// GroupResource names the cluster resource.
func (a *Adapter) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: Group, Resource: Resource}
}

// GVR is the resource to use (Resolve or Assume first).
func (a *Adapter) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: a.API.Get(), Resource: Resource}
}

// ErrNoCRD means the API server serves no CassandraDatacenter resource (errors.Is
// operator.ErrNoResource).
var ErrNoCRD error = noCRD{}

type noCRD struct{}

func (noCRD) Error() string {
	return fmt.Sprintf("the API server has no %s.%s/%s resource (is cass-operator's CRD installed?)", Resource, Group, Version)
}

func (noCRD) Is(target error) bool { return target == operator.ErrNoResource }

// Assume uses v1beta1, the only version cass-operator serves, without asking discovery
// first; reads answered NotFound ask discovery then (no CRD: ErrNoCRD).
func (a *Adapter) Assume() {
	a.API.Assume(Version)
}

// Resolve finds the served version by discovery, reading only the group's version.
func (a *Adapter) Resolve(ctx context.Context) (string, error) {
	if v := a.API.Get(); v != "" {
		return v, nil
	}
	if a.Discovery == nil {
		return "", fmt.Errorf("cass-operator adapter: no discovery client")
	}
	rl, err := a.Discovery.ServerResourcesForGroupVersion(Group + "/" + Version)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return "", ErrNoCRD
		}
		return "", fmt.Errorf("cannot discover %s.%s: %w", Resource, Group, err)
	}
	for _, r := range rl.APIResources {
		if r.Name == Resource {
			a.API.Found(Version)
			return Version, nil
		}
	}
	return "", ErrNoCRD
}

// rediscover handles err of a read made with an assumed version: on NotFound it asks
// discovery, and returns ErrNoCRD when the resource is not served (the NotFound was the
// resource's, not the object's, then).
func (a *Adapter) rediscover(ctx context.Context, err error) error {
	if _, forgot := a.API.Forget(err); !forgot {
		return err
	}
	if _, rerr := a.Resolve(ctx); rerr != nil {
		return rerr
	}
	return err
}

func (a *Adapter) client(ns string) (dynamic.ResourceInterface, error) {
	if a.API.Get() == "" {
		return nil, fmt.Errorf("cass-operator adapter: API version not resolved")
	}
	return a.Dynamic.Resource(a.GVR()).Namespace(ns), nil
}

// DCSpec is dc's counts in one CassandraDatacenter.
func (a *Adapter) DCSpec(ns, name, dc string) operator.DCSpec {
	return operator.DCCounts{Resource: Kind + " " + name, DC: dc,
		Read: func(ctx context.Context) (topology.Cluster, error) {
			cl, _, err := a.Get(ctx, ns, name)
			return cl, err
		},
		// cass-operator splits one size over the racks: the write refuses counts it
		// would not split so.
		Write: func(ctx context.Context, racks map[string]int) error {
			return a.setSize(ctx, ns, name, dc, racks, "")
		}}
}
