package cassoperator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Adding a datacenter to a cass-operator cluster is creating a second
// CassandraDatacenter of the same spec.clusterName in the namespace (FACTS §9): the
// operator builds its StatefulSets and starts its nodes one at a time, seeded by the
// cluster's seed service (all datacenters' seeds: the cluster label), and they join
// owning no replica, since no keyspace replicates to the new datacenter yet. The plugin
// creates the resource from the user's manifest, marked with its operation.

// AddDCMarkAnnotation names, on a CassandraDatacenter add-dc created, the operation
// that created it (its value is an AddDCMark): a resource of that name without it is
// the user's, never taken for the addition asked.
const AddDCMarkAnnotation = "kubectl-cassandra.io/add-dc"

// AddDCMark is the value of AddDCMarkAnnotation (as RemoveDCMark).
type AddDCMark struct {
	OperationID string `json:"operationID"`
}

var _ operator.DatacenterAdder = (*Adapter)(nil)

// addMarkOf is u's add-dc mark (ok false: none); a mark that does not parse is an
// error: whose it is is unknown.
func addMarkOf(u *unstructured.Unstructured) (AddDCMark, bool, error) {
	v, ok := u.GetAnnotations()[AddDCMarkAnnotation]
	if !ok {
		return AddDCMark{}, false, nil
	}
	var m AddDCMark
	if err := json.Unmarshal([]byte(v), &m); err != nil || m.OperationID == "" {
		return m, false, fmt.Errorf("%s %s/%s: annotation %s is not a mark of an operation (%q)", Kind, u.GetNamespace(), u.GetName(), AddDCMarkAnnotation, v)
	}
	return m, true, nil
}

// parseManifest reads the user's CassandraDatacenter (YAML or JSON) for namespace ns:
// its kind and group must be cass-operator's, its namespace ns or none, and it must
// have a name. The object returned is the manifest in ns, without what the server
// owns (status, UID, resourceVersion).
func parseManifest(b []byte, ns string) (*unstructured.Unstructured, error) {
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil, fmt.Errorf("the datacenter's manifest is empty: give a %s with -f FILE", Kind)
	}
	// As the API server decodes it: integers as int64 (k8s.io/apimachinery util/json).
	j, err := k8syaml.ToJSON(b)
	var m map[string]any
	if err == nil {
		err = utiljson.Unmarshal(j, &m)
	}
	if err != nil || m == nil {
		return nil, fmt.Errorf("cannot read the datacenter's manifest as YAML or JSON (one object): %v", err)
	}
	u := &unstructured.Unstructured{Object: m}
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil || gv.Group != Group || u.GetKind() != Kind {
		return nil, fmt.Errorf("the manifest is a %s of %q, not a %s of %s: add-dc creates a %s", u.GetKind(), u.GetAPIVersion(), Kind, Group, Kind)
	}
	if u.GetName() == "" {
		return nil, fmt.Errorf("the manifest's %s has no metadata.name", Kind)
	}
	if n := u.GetNamespace(); n != "" && n != ns {
		return nil, fmt.Errorf("the manifest's %s %s is in namespace %s, not %s: a datacenter joins the cluster of its namespace (cass-operator seeds it through the cluster's seed service there); run add-dc in %s or change the manifest", Kind, u.GetName(), n, ns, n)
	}
	u.SetNamespace(ns)
	if gv.Version == "" {
		u.SetAPIVersion(Group + "/" + Version)
	}
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "deletionTimestamp", "selfLink"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	delete(u.Object, "status")
	return u, nil
}

// judgeNewDC checks the new datacenter want (the manifest, in ns) against the source
// src it joins and the namespace's CassandraDatacenters all (src and want's own
// resource, when it exists, included): same clusterName, a size cass-operator accepts,
// a datacenter name no other datacenter of the cluster has. existing is want's own
// resource when it exists: it must be one add-dc created (marked), of the same
// cluster. It returns the datacenter's name and racks as the operator will make them.
func judgeNewDC(src, want *unstructured.Unstructured, all []unstructured.Unstructured) (string, []topology.Rack, error) {
	s, err := read(src)
	if err != nil {
		return "", nil, err
	}
	w, err := read(want)
	if err != nil {
		return "", nil, err
	}
	ref := fmt.Sprintf("%s %s/%s", Kind, want.GetNamespace(), want.GetName())
	if want.GetName() == src.GetName() {
		return "", nil, fmt.Errorf("the manifest's %s is %s itself: the new datacenter needs a resource of its own", Kind, src.GetName())
	}
	if src.GetDeletionTimestamp() != nil {
		return "", nil, fmt.Errorf("%s %s/%s is being deleted: a datacenter cannot be added from it", Kind, src.GetNamespace(), src.GetName())
	}
	// The new datacenter joins the ring of the cluster named by clusterName: its seeds
	// are the cluster's (construct_service.go newAllPodsServiceForCassandraDatacenter,
	// the seed service selects the cluster label) and cassandra.yaml's cluster_name is
	// it (construct_podtemplatespec.go); another name is another cluster.
	if w.Spec.ClusterName != s.Spec.ClusterName {
		return "", nil, fmt.Errorf("the manifest's %s has spec.clusterName %q, but %s is of cluster %q: a datacenter joins the cluster of its clusterName; set spec.clusterName: %s", ref, w.Spec.ClusterName, src.GetName(), s.Spec.ClusterName, s.Spec.ClusterName)
	}
	name := w.DCName()
	// The rebuild tasks name the datacenter by its resource (spec.datacenter.name) and
	// add-dc names it by its datacenter: with a datacenterName override they differ, and
	// the plugin would ask for tasks on the wrong name. So the two are held equal.
	if name != want.GetName() {
		return "", nil, fmt.Errorf("the manifest's %s sets spec.datacenterName %s: add-dc needs the datacenter named as its resource; set metadata.name: %s and remove spec.datacenterName", ref, name, name)
	}
	racks := w.RackNames()
	// cass-operator refuses a size below the rack count (CalculateRackInformation in
	// pkg/reconciliation/reconcile_racks.go) and a stopped datacenter starts no node.
	if w.Spec.Size < len(racks) || w.Spec.Size < 1 {
		return "", nil, fmt.Errorf("the manifest's %s asks for spec.size %d over %d rack(s): cass-operator needs at least one node per rack", ref, w.Spec.Size, len(racks))
	}
	if w.Spec.Stopped {
		return "", nil, fmt.Errorf("the manifest's %s has spec.stopped true: its nodes would never start; remove it", ref)
	}
	var existing *unstructured.Unstructured
	for i := range all {
		o := &all[i]
		if o.GetName() == want.GetName() {
			existing = o
			continue
		}
		od, err := read(o)
		if err != nil {
			return "", nil, err
		}
		if od.Spec.ClusterName == w.Spec.ClusterName && od.DCName() == name {
			return "", nil, fmt.Errorf("datacenter %s exists already in cluster %s (%s %s): choose another spec.datacenterName or metadata.name", name, w.Spec.ClusterName, Kind, o.GetName())
		}
	}
	statusName, err := judgeExisting(existing, w, ref, name)
	if err != nil {
		return "", nil, err
	}
	counts := SplitRacks(w.Spec.Size, len(racks))
	dcPart := DCResourceName(want.GetName(), statusName)
	out := make([]topology.Rack, len(racks))
	for i, r := range racks {
		// As DC() maps a datacenter read: the rack labels select its pods.
		out[i] = topology.Rack{DC: name, Name: r, Nodes: counts[i],
			StatefulSet: StatefulSetName(w.Spec.ClusterName, dcPart, r),
			Labels:      RackLabels(w.Spec.ClusterName, want.GetName(), r)}
	}
	return name, out, nil
}

// newDCState reads what PlanDatacenter and AddDatacenter judge: the manifest, the
// source resource and the namespace's CassandraDatacenters.
func (a *Adapter) newDCState(ctx context.Context, ns, name string, want operator.NewDatacenter) (src, m *unstructured.Unstructured, all []unstructured.Unstructured, err error) {
	m, err = parseManifest(want.Manifest, ns)
	if err != nil {
		return nil, nil, nil, err
	}
	src, err = a.get(ctx, ns, name)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cannot read %s %s/%s: %w", Kind, ns, name, err)
	}
	l, err := operator.ListResources(ctx, a.client, ns)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cannot list the %ss of %s: %w", Kind, ns, err)
	}
	return src, m, l.Items, nil
}

// PlanDatacenter implements operator.DatacenterAdder: want.Manifest is the new
// CassandraDatacenter; the source resource name gives the cluster.
func (a *Adapter) PlanDatacenter(ctx context.Context, ns, name string, want operator.NewDatacenter) (string, []topology.Rack, error) {
	src, m, all, err := a.newDCState(ctx, ns, name, want)
	if err != nil {
		return "", nil, err
	}
	return judgeNewDC(src, m, all)
}

// AddDatacenter implements operator.DatacenterAdder: it creates the manifest's
// CassandraDatacenter with op's mark, once the source name is still of UID uid and the
// plan's checks hold on what is read now. Its resource there with op's mark: done;
// without it (or another operation's): refused.
func (a *Adapter) AddDatacenter(ctx context.Context, ns, name, uid, op string, want operator.NewDatacenter) error {
	c, err := a.client(ns)
	if err != nil {
		return err
	}
	mname := ""
	for round := 0; round < 2; round++ {
		src, m, all, err := a.newDCState(ctx, ns, name, want)
		if err != nil {
			return err
		}
		mname = m.GetName()
		if string(src.GetUID()) != uid {
			return fmt.Errorf("%s %s/%s was re-created since the plan read it (UID %s, not %s); nothing was created: plan the addition again", Kind, ns, name, src.GetUID(), uid)
		}
		for i := range all {
			if all[i].GetName() != m.GetName() {
				continue
			}
			mk, marked, err := addMarkOf(&all[i])
			switch {
			case err != nil:
				return err
			case marked && mk.OperationID == op:
				return nil
			case marked:
				return fmt.Errorf("%s %s/%s was created by operation %s (annotation %s), not by %s; nothing was touched", Kind, ns, m.GetName(), mk.OperationID, AddDCMarkAnnotation, op)
			}
			return fmt.Errorf("%s %s/%s exists already and add-dc did not create it (no annotation %s): it is not ours; nothing was touched", Kind, ns, m.GetName(), AddDCMarkAnnotation)
		}
		if _, _, err := judgeNewDC(src, m, all); err != nil {
			return err
		}
		mark, _ := json.Marshal(AddDCMark{OperationID: op})
		ann := m.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[AddDCMarkAnnotation] = string(mark)
		m.SetAnnotations(ann)
		_, err = c.Create(ctx, m, metav1.CreateOptions{FieldManager: FieldManager})
		if apierrors.IsAlreadyExists(err) {
			continue // created between the read and the write: judged again
		}
		if err != nil {
			return fmt.Errorf("cannot create %s %s/%s: %w", Kind, ns, m.GetName(), err)
		}
		return nil
	}
	return fmt.Errorf("%s %s/%s appeared while add-dc created it, and is not operation %s's; nothing was touched", Kind, ns, mname, op)
}

// AdditionRequested implements operator.DatacenterAdder: the manifest's
// CassandraDatacenter exists and is not being deleted.
func (a *Adapter) AdditionRequested(ctx context.Context, ns, _ string, want operator.NewDatacenter) (bool, error) {
	m, err := parseManifest(want.Manifest, ns)
	if err != nil {
		return false, err
	}
	u, err := a.getOrGone(ctx, ns, m.GetName())
	if err != nil {
		return false, err
	}
	return u != nil && u.GetDeletionTimestamp() == nil, nil
}

// judgeExisting judges a resource of the manifest's name that exists already (nil:
// none): only add-dc's own, asked already by a run that stopped, as the manifest asks.
// It returns the datacenter's name in its status ("" when it has none).
func judgeExisting(existing *unstructured.Unstructured, w datacenter, ref, name string) (string, error) {
	if existing == nil {
		return "", nil
	}
	statusName := ""
	// Asked already (a run that created it and stopped): only if it is add-dc's.
	if _, marked, err := addMarkOf(existing); err != nil {
		return "", err
	} else if !marked {
		return "", fmt.Errorf("%s exists already and add-dc did not create it (no annotation %s): it is not ours to add; choose another metadata.name, or delete it if it is a leftover", ref, AddDCMarkAnnotation)
	}
	e, err := read(existing)
	if err != nil {
		return "", err
	}
	if e.Spec.ClusterName != w.Spec.ClusterName || e.DCName() != name {
		return "", fmt.Errorf("%s exists already as datacenter %s of cluster %q, not as the manifest asks (datacenter %s of cluster %q)", ref, e.DCName(), e.Spec.ClusterName, name, w.Spec.ClusterName)
	}
	if e.Status.DatacenterName != nil {
		statusName = *e.Status.DatacenterName
	}
	return statusName, nil
}
