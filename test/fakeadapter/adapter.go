// Package fakeadapter is a neutral operator adapter for the core's tests: the minimum
// of the operator.Adapter contract (plus operator.StatusRepair), over a made-up cluster
// resource FakeCassandra of group fake.kubectl-cassandra.test with names and labels of
// its own. It is no operator: it models only what the contract asks of one (a resource
// holding a count per rack, StatefulSets and pods it names and labels, a Deployment to
// pause, a per-rack operation status), so the engine, the steps and the planners are
// tested on the contract alone and cannot lean on CassKop's or cass-operator's
// conventions. Its writes are guarded as the real adapters' are: counts and status by a
// JSON patch that tests the array index (and the resourceVersion when asked), the
// checkpoint by a merge patch carrying the resourceVersion. Like the real adapters it
// imports only pkg/ and client-go; test/fakeadapter/fakeworld is its fake cluster.
package fakeadapter

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// Plugin is the fake operator as a composition root would hand it to the CLI.
type Plugin struct{}

// Name is the fake operator's name in checkpoints.
func (Plugin) Name() string { return OperatorName }

// Words implements operator.Operator.
func (Plugin) Words() operator.Words {
	return operator.Words{Title: Title, Kind: Kind, Count: CountField}
}

// Connect returns an adapter on c; its API version is resolved on first use.
func (Plugin) Connect(c operator.Clients) operator.Adapter {
	return &Adapter{Dynamic: c.Dynamic, Discovery: c.Discovery, Kube: c.Kube}
}

var _ operator.Operator = Plugin{}
var _ operator.Adapter = (*Adapter)(nil)
var _ operator.StatusRepair = (*Adapter)(nil)

// Adapter reads and writes FakeCassandras.
type Adapter struct {
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	Kube      kubernetes.Interface
	// Version is the API version to use; Resolve or Assume sets it.
	Version string
}

// Name is the fake operator's name in checkpoints.
func (a *Adapter) Name() string { return OperatorName }

// Title is how messages name the fake operator.
func (a *Adapter) Title() string { return Title }

// Kind is the cluster resource's kind.
func (a *Adapter) Kind() string { return Kind }

// GroupResource names the cluster resource.
func (a *Adapter) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: Group, Resource: Resource}
}

// GVR is the resource with its version (Resolve or Assume first).
func (a *Adapter) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: a.Version, Resource: Resource}
}

// Resolve asks discovery whether the one version, v1, is served (errors.Is
// operator.ErrNoResource when it is not).
func (a *Adapter) Resolve(ctx context.Context) (string, error) {
	if a.Version != "" {
		return a.Version, nil
	}
	rl, err := a.Discovery.ServerResourcesForGroupVersion(Group + "/" + Version)
	if apierrors.IsNotFound(err) {
		return "", noCRD()
	}
	if err != nil {
		return "", fmt.Errorf("cannot discover %s.%s: %w", Resource, Group, err)
	}
	for _, r := range rl.APIResources {
		if r.Name == Resource {
			a.Version = Version
			return a.Version, nil
		}
	}
	return "", noCRD()
}

// noCRD says the API server serves no FakeCassandra.
func noCRD() error {
	return fmt.Errorf("the API server has no %s.%s resource: %w", Resource, Group, operator.ErrNoResource)
}

// Assume uses v1 without asking discovery: there is no other version to fall back to.
func (a *Adapter) Assume() {
	if a.Version == "" {
		a.Version = Version
	}
}

// client is the resource in namespace ns.
func (a *Adapter) client(ns string) (dynamic.ResourceInterface, error) {
	if a.Version == "" {
		return nil, errors.New("fake adapter: API version not resolved")
	}
	return a.Dynamic.Resource(a.GVR()).Namespace(ns), nil
}
