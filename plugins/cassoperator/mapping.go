package cassoperator

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

// DefaultRack is the one rack of a datacenter whose spec names none
// (apis/cassandra/v1beta1/cassandradatacenter_types.go GetRacks).
const DefaultRack = "default"

// spec is the part of a CassandraDatacenter's spec the plugin reads.
type spec struct {
	ClusterName         string `json:"clusterName"`
	DatacenterName      string `json:"datacenterName"`
	Size                int    `json:"size"`
	Stopped             bool   `json:"stopped"`
	ServerVersion       string `json:"serverVersion"`
	SuperuserSecretName string `json:"superuserSecretName"`
	// Config (cassandra.yaml and JVM settings, an object or its JSON) and ConfigSecret,
	// which overrides it, are where the encryption settings come from.
	Config       json.RawMessage `json:"config"`
	ConfigSecret string          `json:"configSecret"`
	Racks        []struct {
		Name string `json:"name"`
	} `json:"racks"`
}

// condition is one of status.conditions.
type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// status is the part of a CassandraDatacenter's status the plugin reads.
type status struct {
	CassandraOperatorProgress string                    `json:"cassandraOperatorProgress"`
	DatacenterName            *string                   `json:"datacenterName"`
	ObservedGeneration        int64                     `json:"observedGeneration"`
	Conditions                []condition               `json:"conditions"`
	NodeStatuses              map[string]map[string]any `json:"nodeStatuses"`
}

// datacenter is a CassandraDatacenter as the adapter reads it.
type datacenter struct {
	Name   string
	Spec   spec
	Status status
	// HasStatus: the object has a non-empty status (the operator has reconciled it).
	HasStatus  bool
	Generation int64
}

// read decodes u's spec and status.
func read(u *unstructured.Unstructured) (datacenter, error) {
	d := datacenter{Name: u.GetName(), Generation: u.GetGeneration()}
	if raw, ok := u.Object["spec"]; ok {
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, &d.Spec); err != nil {
			return d, fmt.Errorf("cannot read the spec of %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
	}
	if raw, ok := u.Object["status"].(map[string]any); ok && len(raw) > 0 {
		d.HasStatus = true
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, &d.Status); err != nil {
			return d, fmt.Errorf("cannot read the status of %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
	}
	return d, nil
}

// DCName is the datacenter's name in Cassandra (and in nodetool's ring): the
// spec.datacenterName override when set, else metadata.name
// (apis/cassandra/v1beta1/cassandradatacenter_types.go DatacenterName).
func (d datacenter) DCName() string {
	if d.Spec.DatacenterName != "" {
		return d.Spec.DatacenterName
	}
	return d.Name
}

// RackNames is the racks in spec order, "default" when the spec names none (GetRacks).
func (d datacenter) RackNames() []string {
	if len(d.Spec.Racks) == 0 {
		return []string{DefaultRack}
	}
	out := make([]string, len(d.Spec.Racks))
	for i, r := range d.Spec.Racks {
		out[i] = r.Name
	}
	return out
}

// condition returns the condition of type t.
func (d datacenter) condition(t string) (condition, bool) {
	for _, c := range d.Status.Conditions {
		if c.Type == t {
			return c, true
		}
	}
	return condition{}, false
}

// isTrue reports whether condition t is True.
func (d datacenter) isTrue(t string) bool {
	c, ok := d.condition(t)
	return ok && c.Status == "True"
}

// DC maps the datacenter onto the neutral model: racks in spec order, each asking for
// its part of spec.size as SplitRacks gives it.
func (d datacenter) DC() topology.DC {
	racks := d.RackNames()
	counts := SplitRacks(d.Spec.Size, len(racks))
	statusName := ""
	if d.Status.DatacenterName != nil {
		statusName = *d.Status.DatacenterName
	}
	dcPart := DCResourceName(d.Name, statusName)
	text := fmt.Sprintf("%s %d", CountField, d.Spec.Size)
	if d.Spec.Stopped {
		text += ", stopped"
	}
	out := topology.DC{Name: d.DCName(), Spec: text, Encryption: d.encryption()}
	for i, r := range racks {
		out.Racks = append(out.Racks, topology.Rack{
			DC: out.Name, Name: r, Nodes: counts[i],
			StatefulSet: StatefulSetName(d.Spec.ClusterName, dcPart, r),
			Labels:      RackLabels(d.Spec.ClusterName, d.Name, r),
		})
	}
	return out
}

// FromObject maps a CassandraDatacenter onto the plugin's model: one cluster (named as
// the resource) holding one datacenter.
func (a *Adapter) FromObject(u *unstructured.Unstructured) (topology.Cluster, error) {
	d, err := read(u)
	if err != nil {
		return topology.Cluster{}, err
	}
	dc := d.DC()
	a.remember(dc)
	return topology.Cluster{
		Operator:      Plugin{}.Name(),
		APIVersion:    u.GetAPIVersion(),
		Namespace:     u.GetNamespace(),
		Name:          u.GetName(),
		UID:           string(u.GetUID()),
		ServerVersion: d.Spec.ServerVersion,
		DCs:           []topology.DC{dc},
		Annotations:   u.GetAnnotations(),
		Busy:          busy(d),
		Deleting:      u.GetDeletionTimestamp() != nil,
	}, nil
}

// Get reads one CassandraDatacenter.
func (a *Adapter) Get(ctx context.Context, ns, name string) (topology.Cluster, *unstructured.Unstructured, error) {
	u, err := a.get(ctx, ns, name)
	if err != nil {
		return topology.Cluster{}, nil, err
	}
	cl, err := a.FromObject(u)
	return cl, u, err
}

// get reads the object, asking discovery once when an assumed version is answered
// NotFound.
func (a *Adapter) get(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	c, err := a.client(ns)
	if err != nil {
		return nil, err
	}
	u, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, a.rediscover(ctx, err)
	}
	a.API.Served()
	return u, nil
}

// List lists the CassandraDatacenters of a namespace ("" = every namespace), sorted by
// namespace and name.
func (a *Adapter) List(ctx context.Context, ns string) ([]topology.Cluster, error) {
	l, err := operator.ListResources(ctx, a.client, ns)
	if err != nil {
		return nil, a.rediscover(ctx, err)
	}
	a.API.Served()
	out, err := operator.ClustersOf(l.Items, a.FromObject)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// busyConditions are the conditions cass-operator holds True while it acts on the
// datacenter (apis/cassandra/v1beta1/cassandradatacenter_types.go; set in
// pkg/reconciliation/reconcile_racks.go and decommission_node.go).
var busyConditions = []string{"ScalingUp", "ScalingDown", "Updating", "RollingRestart", "ReplacingNodes",
	"Resuming", "ResizingVolumes", "Decommission"}

// Busy lists why cass-operator is not idle with the datacenter u, from its spec and
// status. A datacenter without any status was never reconciled: nothing to be busy with.
func Busy(u *unstructured.Unstructured) []string {
	d, err := read(u)
	if err != nil {
		return []string{err.Error()}
	}
	return busy(d)
}

func busy(d datacenter) []string {
	var why []string
	// Stopped scales every StatefulSet to 0 (CalculateRackInformation): a shutdown, not
	// an idle datacenter to operate on.
	if d.Spec.Stopped {
		why = append(why, "spec.stopped is true (the datacenter is shut down)")
	}
	if !d.HasStatus {
		return why
	}
	if p := d.Status.CassandraOperatorProgress; p != "" && p != "Ready" {
		why = append(why, fmt.Sprintf("status.cassandraOperatorProgress is %s (want Ready)", p))
	}
	for _, t := range busyConditions {
		if d.isTrue(t) {
			why = append(why, fmt.Sprintf("condition %s is True", t))
		}
	}
	if c, ok := d.condition("Valid"); ok && c.Status == "False" {
		why = append(why, "condition Valid is False: "+conditionText(c))
	}
	// The operator records the generation it finished reconciling at the end of a pass
	// (setDatacenterStatus, pkg/reconciliation/constructor.go): a newer spec is work it
	// has not done yet.
	if d.Status.ObservedGeneration > 0 && d.Generation > d.Status.ObservedGeneration {
		why = append(why, fmt.Sprintf("status.observedGeneration %d is behind metadata.generation %d (a spec change not reconciled yet)", d.Status.ObservedGeneration, d.Generation))
	}
	return why
}

// conditionText is a condition's reason and message: "notEnoughSpaceToScaleDown: …".
func conditionText(c condition) string {
	switch {
	case c.Reason != "" && c.Message != "":
		return c.Reason + ": " + c.Message
	case c.Reason != "":
		return c.Reason
	default:
		return c.Message
	}
}

// encryption is what the spec says of internode encryption: spec.config's
// cassandra-yaml, unless spec.configSecret overrides it.
func (d datacenter) encryption() topology.Encryption {
	if d.Spec.ConfigSecret != "" {
		return topology.Encryption{Unknown: "spec.configSecret " + d.Spec.ConfigSecret + " provides the config"}
	}
	config, ok := topology.ConfigOf(d.Spec.Config)
	if !ok {
		return topology.Encryption{Unknown: "spec.config cannot be read as JSON"}
	}
	return topology.Encryption{Internode: topology.InternodeOf(config)}
}
