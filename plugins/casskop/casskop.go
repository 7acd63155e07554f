// Package casskop maps the CassKop operator's CassandraCluster resource
// (cassandraclusters.db.orange.com) onto the plugin's model: names, labels, topology,
// how its spec is kept in line with the StatefulSets, when the operator is busy, and
// whether an operator Deployment would fight a scale-down.
package casskop

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Names fixed by CassKop (docs/how-it-works/casskop.md §1–§2).
const (
	Group     = "db.orange.com"
	Resource  = "cassandraclusters"
	Kind      = "CassandraCluster"
	Container = "cassandra"

	LabelApp     = "app"
	LabelCluster = "cassandracluster"
	LabelDCRack  = "dc-rack"
	LabelDC      = "cassandraclusters.db.orange.com.dc"
	LabelRack    = "cassandraclusters.db.orange.com.rack"

	// LabelOperationStatus is the pod label CassKop uses for queued pod operations.
	LabelOperationStatus = "operation-status"
)

// Versions in order of preference: v2 (2.x, storage), v1alpha1 (1.x, same schema).
var Versions = []string{"v2", "v1alpha1"}

// Adapter reads and writes CassandraClusters.
type Adapter struct {
	operator.Clients
	// API is the API version to use; Resolve or Assume sets it. Status lists pods,
	// StatefulSets and clusters at once, each read may rediscover it.
	API operator.APIVersion
}

// Assume uses the preferred version without asking discovery first: kubectl pays a
// discovery round trip before its first read, a plugin that knows its resource need
// not. Get and List fall back to discovery when the server answers NotFound (it may
// serve only an older version, or no CassandraCluster at all: ErrNoCRD).
func (a *Adapter) Assume() {
	a.API.Assume(Versions[0])
}

// rediscover handles err of a read made with an assumed version: on NotFound it asks
// discovery, and reports whether the read should be made again with another version.
func (a *Adapter) rediscover(ctx context.Context, err error) (retry bool, _ error) {
	was, forgot := a.API.Forget(err)
	if !forgot {
		return false, err
	}
	now, rerr := a.Resolve(ctx)
	if rerr != nil {
		return false, rerr
	}
	return now != was, err
}

// ErrNoCRD means the API server serves no CassandraCluster resource (errors.Is
// operator.ErrNoResource).
var ErrNoCRD error = noCRD{}

type noCRD struct{}

func (noCRD) Error() string {
	return fmt.Sprintf("the API server has no %s.%s resource (is CassKop's CRD installed?)", Resource, Group)
}

func (noCRD) Is(target error) bool { return target == operator.ErrNoResource }

// Resolve finds the served API version by discovery: v2 preferred, v1alpha1 accepted.
// It reads only the group's versions, not the whole discovery tree.
func (a *Adapter) Resolve(ctx context.Context) (string, error) {
	if v := a.API.Get(); v != "" {
		return v, nil
	}
	var lastErr error
	for _, v := range Versions {
		rl, err := a.Discovery.ServerResourcesForGroupVersion(Group + "/" + v)
		if err != nil {
			if !apierrors.IsNotFound(err) {
				lastErr = err
			}
			continue
		}
		for _, r := range rl.APIResources {
			if r.Name == Resource {
				a.API.Found(v)
				return v, nil
			}
		}
	}
	if lastErr != nil {
		return "", fmt.Errorf("cannot discover %s.%s: %w", Resource, Group, lastErr)
	}
	return "", ErrNoCRD
}

// GVR is the resource to use (Resolve first).
func (a *Adapter) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: a.API.Get(), Resource: Resource}
}

func (a *Adapter) client(ns string) (dynamic.ResourceInterface, error) {
	if a.API.Get() == "" {
		return nil, fmt.Errorf("casskop adapter: API version not resolved")
	}
	return a.Dynamic.Resource(a.GVR()).Namespace(ns), nil
}

// Object returns the checkpoint carrier for a cluster: its annotations (the 2022 CRD
// has no status subresource: only a patch of the annotations leaves the status alone).
func (a *Adapter) Object(ns, name string) record.Object {
	return &record.Annotations{Client: func() (dynamic.ResourceInterface, error) { return a.client(ns) }, Name: name, FieldManager: "kubectl-cassandra"}
}
