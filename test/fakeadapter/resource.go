package fakeadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Spec is the part of a FakeCassandra's spec the adapter reads: a count per rack (the
// neutral model itself, so no operator's way of keeping counts leaks into a test).
type Spec struct {
	Version     string   `json:"version"`
	JMXSecret   string   `json:"jmxSecret,omitempty"`
	Datacenters []SpecDC `json:"datacenters"`
}

// SpecDC is one datacenter of the spec.
type SpecDC struct {
	Name  string     `json:"name"`
	Racks []SpecRack `json:"racks"`
}

// SpecRack is one rack of the spec and its count.
type SpecRack struct {
	Name    string `json:"name"`
	Members int    `json:"members"`
}

// Get reads one cluster.
func (a *Adapter) Get(ctx context.Context, ns, name string) (topology.Cluster, *unstructured.Unstructured, error) {
	c, err := a.client(ns)
	if err != nil {
		return topology.Cluster{}, nil, err
	}
	u, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return topology.Cluster{}, nil, err
	}
	cl, err := a.FromObject(u)
	return cl, u, err
}

// List lists the clusters of a namespace ("" = every namespace), sorted by name.
func (a *Adapter) List(ctx context.Context, ns string) ([]topology.Cluster, error) {
	c, err := a.client(ns)
	if err != nil {
		return nil, err
	}
	l, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []topology.Cluster
	for i := range l.Items {
		cl, err := a.FromObject(&l.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, cl)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FromObject maps a FakeCassandra onto the neutral model: every rack its own count,
// status.busy the reasons the operator is not idle.
func (a *Adapter) FromObject(u *unstructured.Unstructured) (topology.Cluster, error) {
	s, err := specOf(u)
	if err != nil {
		return topology.Cluster{}, err
	}
	busy, _, _ := unstructured.NestedStringSlice(u.Object, "status", "busy")
	cl := topology.Cluster{
		Operator:      OperatorName,
		APIVersion:    u.GetAPIVersion(),
		Namespace:     u.GetNamespace(),
		Name:          u.GetName(),
		UID:           string(u.GetUID()),
		ServerVersion: s.Version,
		Annotations:   u.GetAnnotations(),
		Busy:          busy,
		Deleting:      u.GetDeletionTimestamp() != nil,
	}
	for _, d := range s.Datacenters {
		dc := topology.DC{Name: d.Name}
		counts := map[string]int{}
		for _, r := range d.Racks {
			counts[r.Name] = r.Members
			dc.Racks = append(dc.Racks, topology.Rack{DC: d.Name, Name: r.Name, Nodes: r.Members,
				StatefulSet: StatefulSetName(u.GetName(), d.Name, r.Name), Labels: RackLabels(u.GetName(), d.Name, r.Name)})
		}
		dc.Spec = CountField + " " + topology.CountText(counts)
		cl.DCs = append(cl.DCs, dc)
	}
	return cl, nil
}

// specOf decodes u's spec.
func specOf(u *unstructured.Unstructured) (Spec, error) {
	var s Spec
	b, _ := json.Marshal(u.Object["spec"])
	if err := json.Unmarshal(b, &s); err != nil {
		return Spec{}, fmt.Errorf("cannot read the spec of %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return s, nil
}

// JMXSecretName is spec.jmxSecret ("" when none).
func (a *Adapter) JMXSecretName(u *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(u.Object, "spec", "jmxSecret")
	return s
}
