package casskop

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Get reads one cluster.
func (a *Adapter) Get(ctx context.Context, ns, name string) (topology.Cluster, *unstructured.Unstructured, error) {
	c, err := a.client(ns)
	if err != nil {
		return topology.Cluster{}, nil, err
	}
	u, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		retry, err := a.rediscover(ctx, err)
		if retry {
			return a.Get(ctx, ns, name)
		}
		return topology.Cluster{}, nil, err
	}
	a.API.Served()
	cl, err := a.FromObject(u)
	return cl, u, err
}

// List lists the clusters of a namespace.
func (a *Adapter) List(ctx context.Context, ns string) ([]topology.Cluster, error) {
	l, err := operator.ListResources(ctx, a.client, ns)
	if err != nil {
		retry, err := a.rediscover(ctx, err)
		if retry {
			return a.List(ctx, ns)
		}
		return nil, err
	}
	a.API.Served()
	out, err := operator.ClustersOf(l.Items, a.FromObject)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// spec is the part of CassKop's spec the plugin reads.
type spec struct {
	NodesPerRacks *int   `json:"nodesPerRacks"`
	ServerVersion string `json:"serverVersion"`
	// Config and ConfigMapName are where cassandra.yaml settings come from (encryption).
	Config        json.RawMessage `json:"config"`
	ConfigMapName string          `json:"configMapName"`
	Topology      struct {
		DC []struct {
			Name          string          `json:"name"`
			NodesPerRacks *int            `json:"nodesPerRacks"`
			Config        json.RawMessage `json:"config"`
			Rack          []struct {
				Name string `json:"name"`
			} `json:"rack"`
		} `json:"dc"`
	} `json:"topology"`
}

// FromObject maps a CassandraCluster onto the plugin's model. Defaults follow CassKop:
// nodesPerRacks 1 when unset, DC "dc1" / rack "rack1" when the topology is empty.
func (a *Adapter) FromObject(u *unstructured.Unstructured) (topology.Cluster, error) {
	var s spec
	if raw, ok := u.Object["spec"]; ok {
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, &s); err != nil {
			return topology.Cluster{}, fmt.Errorf("cannot read the spec of %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
	}
	global := 1
	if s.NodesPerRacks != nil && *s.NodesPerRacks > 0 {
		global = *s.NodesPerRacks
	}
	cl := topology.Cluster{
		Operator:      "casskop",
		APIVersion:    u.GetAPIVersion(),
		Namespace:     u.GetNamespace(),
		Name:          u.GetName(),
		UID:           string(u.GetUID()),
		ServerVersion: s.ServerVersion,
		Annotations:   u.GetAnnotations(),
		Busy:          Busy(u),
		Deleting:      u.GetDeletionTimestamp() != nil,
		Seeds:         SeedPods(u),
	}
	dcs := s.Topology.DC
	if len(dcs) == 0 {
		cl.DCs = []topology.DC{dcOf(u.GetName(), "dc1", global, []string{"rack1"})}
		cl.DCs[0].Encryption = s.encryption(nil)
		return cl, nil
	}
	for _, d := range dcs {
		n := global
		if d.NodesPerRacks != nil {
			n = *d.NodesPerRacks
		}
		racks := []string{"rack1"}
		if len(d.Rack) > 0 {
			racks = racks[:0]
			for _, r := range d.Rack {
				racks = append(racks, r.Name)
			}
		}
		cl.DCs = append(cl.DCs, dcOf(u.GetName(), d.Name, n, racks))
		cl.DCs[len(cl.DCs)-1].Encryption = s.encryption(d.Config)
	}
	return cl, nil
}

// encryption is what the spec says of a datacenter's internode encryption: its
// config over the cluster's, unless cassandra.yaml comes from a ConfigMap.
func (s spec) encryption(dcConfig json.RawMessage) topology.Encryption {
	cluster, ok1 := topology.ConfigOf(s.Config)
	dc, ok2 := topology.ConfigOf(dcConfig)
	e := topology.Encryption{Internode: topology.InternodeOf(cluster, dc)}
	switch {
	case s.ConfigMapName != "":
		e.Unknown = "spec.configMapName " + s.ConfigMapName + " provides cassandra.yaml"
	case !ok1 || !ok2:
		e.Unknown = "a config of the spec cannot be read as JSON"
	}
	return e
}

// StatefulSetName is CassKop's StatefulSet name for a rack: <cluster>-<dc>-<rack>.
func StatefulSetName(cluster, dc, rackName string) string {
	return cluster + "-" + dc + "-" + rackName
}

// RackLabels are the fixed labels CassKop puts on a rack's StatefulSet, pods and PVCs.
// The CR's own labels are merged in by CassKop too, but are not used to select: they
// can change.
func RackLabels(cluster, dc, rackName string) map[string]string {
	return map[string]string{
		LabelApp:     "cassandracluster",
		LabelCluster: cluster,
		LabelDCRack:  dc + "-" + rackName,
		LabelDC:      dc,
		LabelRack:    rackName,
	}
}

// dcOf is a DC whose racks all ask for CassKop's one count of the DC (nodesPerRacks).
func dcOf(cluster, dc string, nodesPerRacks int, racks []string) topology.DC {
	d := topology.DC{Name: dc, Spec: fmt.Sprintf("%s %d", CountField, nodesPerRacks)}
	for _, name := range racks {
		d.Racks = append(d.Racks, topology.Rack{DC: dc, Name: name, Nodes: nodesPerRacks,
			StatefulSet: StatefulSetName(cluster, dc, name), Labels: RackLabels(cluster, dc, name)})
	}
	return d
}
