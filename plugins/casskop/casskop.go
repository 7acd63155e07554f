// Package casskop maps the CassKop operator's CassandraCluster resource
// (cassandraclusters.db.orange.com) onto the plugin's model: names, labels, topology,
// how its spec is kept in line with the StatefulSets, when the operator is busy, and
// whether an operator Deployment would fight a scale-down.
package casskop

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
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
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	Kube      kubernetes.Interface
	// Version is the API version to use; Resolve sets it.
	Version string
	// assumed: Version was set by Assume, not by discovery.
	assumed bool
}

// Assume uses the preferred version without asking discovery first: kubectl pays a
// discovery round trip before its first read, a plugin that knows its resource need
// not. Get and List fall back to discovery when the server answers NotFound (it may
// serve only an older version, or no CassandraCluster at all: ErrNoCRD).
func (a *Adapter) Assume() {
	if a.Version == "" {
		a.Version, a.assumed = Versions[0], true
	}
}

// rediscover handles err of a read made with an assumed version: on NotFound it asks
// discovery, and reports whether the read should be made again with another version.
func (a *Adapter) rediscover(ctx context.Context, err error) (retry bool, _ error) {
	if !a.assumed || !apierrors.IsNotFound(err) {
		return false, err
	}
	was := a.Version
	a.Version, a.assumed = "", false
	if _, rerr := a.Resolve(ctx); rerr != nil {
		return false, rerr
	}
	return a.Version != was, err
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
	if a.Version != "" {
		return a.Version, nil
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
				a.Version = v
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
	return schema.GroupVersionResource{Group: Group, Version: a.Version, Resource: Resource}
}

func (a *Adapter) client(ns string) (dynamic.ResourceInterface, error) {
	if a.Version == "" {
		return nil, fmt.Errorf("casskop adapter: API version not resolved")
	}
	return a.Dynamic.Resource(a.GVR()).Namespace(ns), nil
}

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
	a.assumed = false // the server serves it
	cl, err := a.FromObject(u)
	return cl, u, err
}

// List lists the clusters of a namespace.
func (a *Adapter) List(ctx context.Context, ns string) ([]topology.Cluster, error) {
	c, err := a.client(ns)
	if err != nil {
		return nil, err
	}
	l, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		retry, err := a.rediscover(ctx, err)
		if retry {
			return a.List(ctx, ns)
		}
		return nil, err
	}
	a.assumed = false
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

// Busy lists why CassKop is not idle (docs/how-it-works/casskop.md §4.3), from the CR status. A cluster
// without any status was never reconciled by CassKop: nothing to be busy with.
func Busy(u *unstructured.Unstructured) []string {
	st, ok := u.Object["status"].(map[string]any)
	if !ok || len(st) == 0 {
		return nil
	}
	var why []string
	str := func(m map[string]any, k string) string { v, _ := m[k].(string); return v }
	if p := str(st, "phase"); p != "" && p != "Running" {
		why = append(why, fmt.Sprintf("status.phase is %s (want Running)", p))
	}
	if s := str(st, "lastClusterActionStatus"); s != "" && s != "Done" {
		why = append(why, fmt.Sprintf("status.lastClusterAction %s is %s", str(st, "lastClusterAction"), s))
	}
	racks, _ := st["cassandraRackStatus"].(map[string]any)
	names := make([]string, 0, len(racks))
	for k := range racks {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		rs, _ := racks[name].(map[string]any)
		if la, ok := rs["cassandraLastAction"].(map[string]any); ok {
			if s := str(la, "status"); s != "" && s != "Done" {
				why = append(why, fmt.Sprintf("rack %s: cassandraLastAction %s is %s", name, str(la, "name"), s))
			}
		}
		if po, ok := rs["podLastOperation"].(map[string]any); ok {
			if s := str(po, "status"); s != "" && s != "Done" {
				why = append(why, fmt.Sprintf("rack %s: podLastOperation %s is %s", name, str(po, "name"), s))
			}
		}
	}
	return why
}

// BusyPods lists pods of the cluster carrying a queued or running CassKop pod operation.
func (a *Adapter) BusyPods(ctx context.Context, ns, cluster string) ([]string, error) {
	pods, err := a.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
		LabelSelector: LabelCluster + "=" + cluster + "," + LabelOperationStatus + " in (ToDo,Ongoing)",
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, fmt.Sprintf("pod %s: operation %s is %s", p.Name, p.Labels["operation-name"], p.Labels[LabelOperationStatus]))
	}
	return out, nil
}

// SetNodesPerRack brings the CR's count for dc in line with its StatefulSets. It writes
// only that field, with a JSON patch whose test guards the array index.
func (a *Adapter) SetNodesPerRack(ctx context.Context, ns, name, dc string, n int) error {
	return a.patchNodesPerRack(ctx, ns, name, dc, n, "")
}

// patchNodesPerRack reads the CR and writes dc's count with a JSON patch; with rv set,
// only if the CR is still at that resourceVersion (the patch tests it first, so a
// change in between fails it with 422 and nothing is written).
func (a *Adapter) patchNodesPerRack(ctx context.Context, ns, name, dc string, n int, rv string) error {
	c, err := a.client(ns)
	if err != nil {
		return err
	}
	u, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if rv != "" && u.GetResourceVersion() != rv {
		return fmt.Errorf("cluster %s changed since it was read (resourceVersion %s, read at %s)", name, u.GetResourceVersion(), rv)
	}
	ops, err := nodesPerRackPatch(u, name, dc, n)
	if err != nil {
		return err
	}
	if rv != "" {
		ops = append([]map[string]any{{"op": "test", "path": "/metadata/resourceVersion", "value": rv}}, ops...)
	}
	body, _ := json.Marshal(ops)
	_, err = c.Patch(ctx, name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: "kubectl-cassandra"})
	return err
}

// Object returns the checkpoint carrier for a cluster: its annotations (the 2022 CRD
// has no status subresource: only a patch of the annotations leaves the status alone).
func (a *Adapter) Object(ns, name string) record.Object {
	return &record.Annotations{Client: func() (dynamic.ResourceInterface, error) { return a.client(ns) }, Name: name, FieldManager: "kubectl-cassandra"}
}

// Operator is a CassKop operator Deployment that may act on a namespace.
type Operator = operator.Controller

// RunningOperators finds CassKop Deployments with replicas > 0 that manage ns: in ns
// itself (the chart's default, WATCH_NAMESPACE = its own namespace) and, when the user
// may list Deployments cluster-wide, elsewhere with WATCH_NAMESPACE = ns or empty (all).
func (a *Adapter) RunningOperators(ctx context.Context, ns string) ([]Operator, error) {
	all, err := a.Operators(ctx, ns)
	if err != nil {
		return nil, err
	}
	var out []Operator
	for _, op := range all {
		if op.Running() {
			out = append(out, op)
		}
	}
	return out, nil
}

// Operators finds every CassKop Deployment that manages ns, running or not.
func (a *Adapter) Operators(ctx context.Context, ns string) ([]Operator, error) {
	// One cluster-wide list covers ns too; a user who may only read ns gets Forbidden
	// and then ns alone is asked (an operator elsewhere cannot be seen then).
	list, err := a.Kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		list, err = a.Kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("cannot list Deployments in %s to look for a running CassKop: %w", ns, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("cannot list Deployments to look for a running CassKop: %w", err)
	}
	var out []Operator
	for _, d := range list.Items {
		op, ok := OperatorOf(&d)
		if !ok || (op.Watch != "" && op.Watch != ns) {
			continue
		}
		out = append(out, op)
	}
	return out, nil
}

// OperatorOf describes d if it is a CassKop Deployment (IsCassKop).
func OperatorOf(d *appsv1.Deployment) (Operator, bool) {
	if !IsCassKop(d) {
		return Operator{}, false
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	op := Operator{Namespace: d.Namespace, Name: d.Name, Replicas: replicas, Watch: watchNamespace(d),
		IsRunning: replicas > 0 || d.Status.Replicas > 0}
	op.PausedBy = record.Holders(d.Annotations)
	return op, true
}

// IsCassKop recognises a CassKop operator Deployment by what is CassKop's own: a
// container whose image repository is casskop (orangeopensource/casskop,
// ghcr.io/cscetbon/casskop, or a mirror of it) or whose command is casskop (both Helm
// charts run it so), or the labels the cscetbon chart gives it (app=casskop,
// name=casskop). Generic labels (operator=cassandra, app=cassandra-operator, which
// other Cassandra operators' charts use too) are not enough. The charts:
// Orange-OpenSource/casskop helm/cassandra-operator/templates/deployment.yaml and
// cscetbon/casskop charts/casskop/templates/deployment.yaml (image
// orangeopensource/casskop resp. ghcr.io/cscetbon/casskop, command [casskop]).
func IsCassKop(d *appsv1.Deployment) bool {
	if d.Labels["app"] == "casskop" || d.Labels["name"] == "casskop" {
		return true
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if imageRepo(c.Image) == "casskop" {
			return true
		}
		if len(c.Command) > 0 && path.Base(c.Command[0]) == "casskop" {
			return true
		}
	}
	return false
}

// imageRepo is the last path element of an image reference, without tag or digest:
// "ghcr.io/cscetbon/casskop:2.3.4" -> "casskop".
func imageRepo(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, "/"); i >= 0 {
		image = image[i+1:]
	}
	if i := strings.Index(image, ":"); i >= 0 {
		image = image[:i]
	}
	return strings.ToLower(image)
}

// watchNamespace is the namespace a CassKop Deployment manages: its WATCH_NAMESPACE
// (the charts set it to the pod's own namespace through the downward API); unset or
// empty means every namespace (CassKop's main.go: the manager's cache then watches
// all namespaces).
func watchNamespace(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name != "WATCH_NAMESPACE" {
				continue
			}
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
				return d.Namespace
			}
			return e.Value
		}
	}
	return ""
}

// ManagedClusters lists the CassandraClusters op manages: those of its namespace, or of
// every namespace when it watches all. Listing across namespaces may be forbidden: the
// error says so (apierrors.IsForbidden).
func (a *Adapter) ManagedClusters(ctx context.Context, op Operator) ([]topology.Cluster, error) {
	return a.List(ctx, op.Watch)
}

// DCSpec is the counts of one datacenter in one cluster resource (operator.DCSpec).
type DCSpec struct {
	A            *Adapter
	NS, Name, DC string
}

// RackNodes reads the DC's count as CassKop resolves it, for each of its racks.
func (d DCSpec) RackNodes(ctx context.Context) (map[string]int, error) {
	cl, _, err := d.A.Get(ctx, d.NS, d.Name)
	if err != nil {
		return nil, err
	}
	dc, ok := cl.DC(d.DC)
	if !ok {
		return nil, fmt.Errorf("cluster %s has no datacenter %s", d.Name, d.DC)
	}
	return dc.RackNodes(), nil
}

// SetRackNodes writes the DC's one count, which must be the same for every rack named.
func (d DCSpec) SetRackNodes(ctx context.Context, racks map[string]int) error {
	n, err := oneCount(d.DC, racks)
	if err != nil {
		return err
	}
	return d.A.SetNodesPerRack(ctx, d.NS, d.Name, d.DC, n)
}

// CountField is the spec field CassKop keeps a datacenter's count in.
const CountField = "nodesPerRacks"

// CountWords names CassKop's count in messages and plans.
func (a *Adapter) CountWords() string { return CountField }

// CheckRackNodes refuses racks of one datacenter that differ: CassKop keeps one count.
func (a *Adapter) CheckRackNodes(dc string, racks map[string]int) error {
	_, err := oneCount(dc, racks)
	return err
}

// oneCount is the one nodesPerRacks that gives every rack its count: CassKop keeps a
// count per datacenter, not per rack, so racks that differ cannot be written.
func oneCount(dc string, racks map[string]int) (int, error) {
	n, first := 0, true
	for _, c := range racks {
		if !first && c != n {
			return 0, fmt.Errorf("CassKop keeps one %s per datacenter: the racks of %s cannot have different counts (%s)", CountField, dc, topology.CountsText(racks))
		}
		n, first = c, false
	}
	if first {
		return 0, fmt.Errorf("no rack of datacenter %s to count", dc)
	}
	return n, nil
}

// nodesPerRackPatch is the JSON patch operations that set dc's nodesPerRacks in u: the
// top-level count when the cluster has no topology (only dc1 then), else the DC's own,
// with a test of its name guarding the array index.
func nodesPerRackPatch(u *unstructured.Unstructured, name, dc string, n int) ([]map[string]any, error) {
	dcs, found, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "dc")
	if !found || len(dcs) == 0 {
		if dc != "dc1" {
			return nil, fmt.Errorf("cluster %s has no topology, so no datacenter %s", name, dc)
		}
		return []map[string]any{{"op": "add", "path": "/spec/nodesPerRacks", "value": n}}, nil
	}
	for i, d := range dcs {
		if m, ok := d.(map[string]any); ok && m["name"] == dc {
			p := fmt.Sprintf("/spec/topology/dc/%d", i)
			return []map[string]any{
				{"op": "test", "path": p + "/name", "value": dc},
				{"op": "add", "path": p + "/nodesPerRacks", "value": n},
			}, nil
		}
	}
	return nil, fmt.Errorf("cluster %s has no datacenter %s", name, dc)
}
