package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaledown"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// access is one kind of API request: what an RBAC rule grants.
type access struct {
	group, resource, verb string
	// clusterWide: a request across all namespaces (a namespaced resource listed with
	// namespace ""), which only a ClusterRole can allow.
	clusterWide bool
}

func (a access) String() string {
	g := a.group
	if g == "" {
		g = "core"
	}
	s := fmt.Sprintf("%s %s/%s", a.verb, g, a.resource)
	if a.clusterWide {
		s += " (all namespaces)"
	}
	return s
}

// discoveryResources are what client-go's fake discovery records its calls as; the real
// ones are non-resource URLs (/api, /apis/...) that the default ClusterRole
// system:discovery grants to every authenticated user, so docs/rbac.yaml has no rule
// for them.
var discoveryResources = map[string]bool{"resource": true, "group": true, "version": true}

// defaultGranted are requests every authenticated user may make through Kubernetes'
// default ClusterRoles, so docs/rbac.yaml has no rule for them (it says so).
var defaultGranted = map[access]bool{
	{group: "authorization.k8s.io", resource: "selfsubjectaccessreviews", verb: "create", clusterWide: true}: true, // system:basic-user
	{group: "authorization.k8s.io", resource: "selfsubjectrulesreviews", verb: "create", clusterWide: true}:  true, // system:basic-user
}

// recorded turns the fake clientsets' action logs into the accesses the plugin used.
func recorded(t *testing.T, w *world.World) map[access]bool {
	t.Helper()
	used := map[access]bool{}
	var actions []k8stesting.Action
	actions = append(actions, w.Kube.Actions()...)
	actions = append(actions, w.Dyn.Actions()...)
	for _, a := range actions {
		gvr := a.GetResource()
		if gvr.Group == "" && discoveryResources[gvr.Resource] {
			continue
		}
		res := gvr.Resource
		if sub := a.GetSubresource(); sub != "" {
			res += "/" + sub
		}
		used[access{group: gvr.Group, resource: res, verb: a.GetVerb(), clusterWide: a.GetNamespace() == ""}] = true
	}
	return used
}

// rbacDocs reads docs/rbac.yaml: the Role, and the optional ClusterRole for cluster-wide
// reads, with their bindings.
type rbacDocs struct {
	role               rbacv1.Role
	clusterRole        rbacv1.ClusterRole
	binding            rbacv1.RoleBinding
	clusterRoleBinding rbacv1.ClusterRoleBinding
}

func readRBAC(t *testing.T) rbacDocs {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d rbacDocs
	kinds := map[string]int{}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("docs/rbac.yaml: %v", err)
		}
		if head.Kind == "" {
			continue // comments only
		}
		if head.APIVersion != "rbac.authorization.k8s.io/v1" {
			t.Errorf("%s has apiVersion %q", head.Kind, head.APIVersion)
		}
		kinds[head.Kind]++
		var target any
		switch head.Kind {
		case "Role":
			target = &d.role
		case "ClusterRole":
			target = &d.clusterRole
		case "RoleBinding":
			target = &d.binding
		case "ClusterRoleBinding":
			target = &d.clusterRoleBinding
		default:
			t.Fatalf("docs/rbac.yaml: unexpected kind %q", head.Kind)
		}
		// Strict: a misspelt field (verb: instead of verbs:) would grant nothing silently.
		if err := yaml.UnmarshalStrict([]byte(doc), target); err != nil {
			t.Fatalf("docs/rbac.yaml %s: %v", head.Kind, err)
		}
	}
	for _, k := range []string{"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"} {
		if kinds[k] != 1 {
			t.Fatalf("docs/rbac.yaml has %d %s, want exactly 1", kinds[k], k)
		}
	}
	return d
}

// allows applies RBAC's matching rules (no wildcards: they are refused separately).
func allows(rules []rbacv1.PolicyRule, a access) bool {
	has := func(list []string, v string) bool {
		for _, x := range list {
			if x == v {
				return true
			}
		}
		return false
	}
	for _, r := range rules {
		if len(r.ResourceNames) == 0 && has(r.APIGroups, a.group) && has(r.Resources, a.resource) && has(r.Verbs, a.verb) {
			return true
		}
	}
	return false
}

func granted(rules []rbacv1.PolicyRule, clusterWide bool) []access {
	var out []access
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, access{group: g, resource: res, verb: v, clusterWide: clusterWide})
				}
			}
		}
	}
	return out
}

// exercise runs what an SRE does over a scale-down's life, in two worlds with a running
// CassKop (so the pause/restore path runs): status, dry run, a scale that dies midway,
// status, resume to the end, then the idle commands and completion; and a scale that
// dies before any node leaves, then abort.
func exercise(t *testing.T) map[access]bool {
	t.Helper()
	must := func(w *world.World, code int, args ...string) string {
		t.Helper()
		stdout, stderr, got, crashed := run(w, 0, args...)
		if crashed || got != code {
			t.Fatalf("%v: exit %d (crashed %v), want %d\n%s", args, got, crashed, code, stderr)
		}
		return stdout
	}
	ns := []string{"demo", "-n", "cassandra"}
	cmd := func(a ...string) []string { return append(append(a[:1:1], ns...), a[1:]...) }

	w := world.New(t, world.Opts{Nodes: 4, Operator: true})
	status := must(w, 0, cmd("status", "-o", "json")...)
	must(w, 0, cmd("status")...)
	must(w, 0, cmd("scale", "--rack", "rack1", "--nodes", "2", "--dry-run")...)
	if _, stderr, _, crashed := run(w, 8, cmd("scale", "--rack", "rack1", "--nodes", "2", "--yes")...); !crashed {
		t.Fatalf("the scale did not reach its 8th side effect:\n%s", stderr)
	}
	must(w, 0, cmd("status")...)
	must(w, 0, cmd("resume", "--yes")...)
	w.AssertConverged(2, "after resume")
	must(w, 0, cmd("status", "-o", "json")...)
	must(w, 0, cmd("resume", "--yes")...)
	must(w, 0, cmd("abort", "--yes")...)
	must(w, 0, "nodetool", "-n", "cassandra", "demo-dc1-rack1-0", "status")
	boundClaim(t, w, "data-demo-dc1-rack1-0")
	must(w, 0, cmd("report", "-f", filepath.Join(t.TempDir(), "r.tar.gz"))...)
	must(w, 0, "version")
	must(w, 0, "__complete", "scale", "demo", "--rack", "")
	must(w, 0, "__complete", "status", "")
	used := recorded(t, w)
	// The fake pod exec (the world itself) is not an API client, so pod exec is recorded
	// from its evidence: node states read by nodetool, and nodes decommissioned.
	var st struct {
		Datacenters []struct {
			Racks []struct {
				Pods []struct{ NodeState string } `json:"pods"`
			} `json:"racks"`
		} `json:"datacenters"`
	}
	if err := json.Unmarshal([]byte(status), &st); err != nil {
		t.Fatal(err)
	}
	if st.Datacenters[0].Racks[0].Pods[0].NodeState != "UN" {
		t.Fatalf("status read no node state: the exec evidence is missing\n%s", status)
	}
	if n, err := w.Cass.Node("demo-dc1-rack1-3"); err != nil || n.DecommissionsStarted != 1 {
		t.Fatalf("no decommission ran (%v)", err)
	}
	used[access{resource: "pods/exec", verb: "create"}] = true

	w2 := world.New(t, world.Opts{Nodes: 3, Operator: true})
	if _, stderr, _, crashed := run(w2, 2, cmd("scale", "--rack", "rack1", "--nodes", "2", "--yes")...); !crashed {
		t.Fatalf("the scale did not reach its 2nd side effect:\n%s", stderr)
	}
	must(w2, 0, cmd("abort", "--yes")...)
	if got := w2.DeploymentReplicas("casskop"); got != 1 {
		t.Fatalf("abort left the operator at %d replicas", got)
	}
	// The cluster deleted: resume finds nothing to resume and reaps what an operation
	// of the gone cluster may have left (the ConfigMaps listed for its replace blocks).
	if err := w2.Dyn.Tracker().Delete(world.CCGVR, "cassandra", "demo"); err != nil {
		t.Fatal(err)
	}
	must(w2, exit.Usage, cmd("resume", "--yes")...)
	for a := range recorded(t, w2) {
		used[a] = true
	}

	// A user without the optional ClusterRole: the cluster-wide Deployment list is
	// Forbidden, and the operator check falls back to the namespace's own list.
	wf := world.New(t, world.Opts{Nodes: 2, Operator: true})
	wf.Kube.PrependReactor("list", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() == "" {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", errors.New("no ClusterRole"))
		}
		return false, nil, nil
	})
	must(wf, 0, cmd("status")...)
	uf := recorded(t, wf)
	if !uf[access{group: "apps", resource: "deployments", verb: "list"}] {
		t.Fatalf("with the cluster-wide list forbidden, the namespace's Deployments were not listed: %v", uf)
	}
	for a := range uf {
		used[a] = true
	}

	// The fake StatefulSet controller removes a pod the instant its StatefulSet shrinks,
	// so the wait for the pod to go never has to watch. Here the pod lingers until the
	// plugin watches it, as with a real controller and a terminating pod.
	w3 := world.New(t, world.Opts{Nodes: 2})
	lingeringPod(t, w3, "demo-dc1-rack1-1")
	must(w3, 0, cmd("scale", "--rack", "rack1", "--nodes", "1", "--yes")...)
	w3.AssertConverged(1, "lingering pod")
	for a := range recorded(t, w3) {
		used[a] = true
	}
	if !used[access{resource: "pods", verb: "watch"}] {
		t.Fatal("the plugin did not watch the lingering pod: the watch path was not exercised")
	}

	// --stream-throughput marks each source's pod with its owner (pods patch).
	wt := world.New(t, world.Opts{Nodes: 2, Version: "4.1"})
	must(wt, 0, cmd("scale", "--rack", "rack1", "--nodes", "3", "--stream-throughput", "200MiB/s", "--yes")...)
	for a := range recorded(t, wt) {
		used[a] = true
	}

	// The other operations: a rolling restart, a scale-up with cleanup, and the repair of
	// CassKop's status after an interrupted decommission, with and without the /status
	// subresource (the 2026 and the 2022 CRD).
	more := []*world.World{}
	w4 := world.New(t, world.Opts{Nodes: 2})
	must(w4, 0, cmd("restart", "--rack", "rack1", "--yes")...)
	w5 := world.New(t, world.Opts{Nodes: 2})
	must(w5, 0, cmd("scale", "--rack", "rack1", "--nodes", "3", "--cleanup", "--yes")...)
	// replace-node: the ConfigMap's start script written and cleaned, the dead node's
	// claims and pod deleted.
	w7 := world.New(t, world.Opts{Nodes: 3, RF: 3, JoinTime: 20 * time.Millisecond})
	w7.KillNode("demo-dc1-rack1-2")
	w7.ExpectReplace("demo-dc1-rack1-2")
	must(w7, 0, cmd("replace-node", "--pod", "demo-dc1-rack1-2", "--yes")...)
	// remove-dc: the keyspaces through cqlsh, every node of dc2 removed, dc2 out of the
	// topology, CassKop's deletion of its StatefulSets and Services verified.
	w8 := twoDCs(t)
	must(w8, 0, "remove-dc", "demo", "-n", "cassandra", "--dc", "dc2", "--alter-keyspaces", "--yes")
	// add-dc: dc2 into the topology, the keyspaces through cqlsh, each node rebuilt
	// through exec, the source's stream throughput set and put back.
	w9 := oneDC(t)
	must(w9, 0, addDC("--alter-keyspaces", "--stream-throughput", "100MiB/s")...)
	more = append(more, w4, w5, w7, w8, w9)
	for _, sub := range []bool{true, false} {
		w6 := stuckWorld(t, "finalizing-not-shrunk", sub)
		must(w6, 0, repairArgs...)
		more = append(more, w6)
	}
	for _, x := range more {
		for a := range recorded(t, x) {
			used[a] = true
		}
	}
	return used
}

// boundClaim gives a PVC a volumeName, as a bound claim has, so that report reads its PV.
func boundClaim(t *testing.T, w *world.World, name string) {
	t.Helper()
	gvr := corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	obj, err := w.Kube.Tracker().Get(gvr, w.NS, name)
	if err != nil {
		t.Fatal(err)
	}
	c := obj.(*corev1.PersistentVolumeClaim).DeepCopy()
	c.Spec.VolumeName = "pv-" + name
	if err := w.Kube.Tracker().Update(gvr, c, w.NS); err != nil {
		t.Fatal(err)
	}
}

// lingeringPod keeps pod visible after its StatefulSet shrinks until someone watches it;
// the watch then reports its deletion.
func lingeringPod(t *testing.T, w *world.World, pod string) {
	t.Helper()
	obj, err := w.Kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), w.NS, pod)
	if err != nil {
		t.Fatal(err)
	}
	saved := obj.(*corev1.Pod).DeepCopy()
	var mu sync.Mutex
	lingering := false
	w.Kube.PrependReactor("patch", "statefulsets", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		lingering = true
		mu.Unlock()
		return false, nil, nil // the world applies the patch and removes the pod
	})
	w.Kube.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if lingering && a.(k8stesting.GetAction).GetName() == pod {
			return true, saved.DeepCopy(), nil
		}
		return false, nil, nil
	})
	w.Kube.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if !lingering {
			return false, nil, nil
		}
		lingering = false
		fw := watch.NewFakeWithChanSize(1, false)
		fw.Delete(saved.DeepCopy())
		return true, fw, nil
	})
}

// TestRBACMatchesCode: docs/rbac.yaml allows every request the plugin makes (a missing
// verb is a Forbidden error in the middle of an operation) and grants nothing it does
// not use (least privilege), apart from the documented pods/exec get.
func TestRBACMatchesCode(t *testing.T) {
	d := readRBAC(t)
	for _, r := range append(append([]rbacv1.PolicyRule{}, d.role.Rules...), d.clusterRole.Rules...) {
		for _, list := range [][]string{r.APIGroups, r.Resources, r.Verbs} {
			for _, v := range list {
				if v == "*" {
					t.Errorf("wildcard in rule %+v", r)
				}
			}
		}
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("rule %+v: resourceNames/nonResourceURLs are not expected", r)
		}
	}
	used := exercise(t)
	var list []string
	for a := range used {
		list = append(list, a.String())
	}
	sort.Strings(list)
	t.Logf("requests made: %s", strings.Join(list, ", "))

	for a := range used {
		ok := false
		if defaultGranted[a] {
			continue
		}
		if a.clusterWide {
			// Only the cluster-wide Deployment and CassandraCluster lists may happen
			// across namespaces, and the code tolerates them being Forbidden: they are
			// the optional ClusterRole.
			ok = allows(d.clusterRole.Rules, a)
		} else {
			ok = allows(d.role.Rules, a)
		}
		if !ok {
			t.Errorf("docs/rbac.yaml does not allow %s, which the plugin uses", a)
		}
	}
	// pods/exec get: WebSocket exec (the plugin's first choice) is an HTTP GET upgrade,
	// authorized as get; the fake exec cannot show it.
	unusedOK := map[access]bool{{resource: "pods/exec", verb: "get"}: true}
	for _, a := range granted(d.role.Rules, false) {
		if !used[a] && !unusedOK[a] {
			t.Errorf("the Role grants %s, which the plugin never used", a)
		}
	}
	for _, a := range granted(d.clusterRole.Rules, true) {
		if !used[a] {
			t.Errorf("the optional ClusterRole grants %s, which the plugin never used", a)
		}
	}
}

// TestRBACCoversPreflight: what the plugin checks with SelfSubjectAccessReviews before a
// scale-down must be granted by the Role, or the documented RBAC would be refused by the
// plugin's own preflight.
func TestRBACCoversPreflight(t *testing.T) {
	d := readRBAC(t)
	pause := &record.PausedOperator{Namespace: d.role.Namespace, Name: "casskop", Replicas: 1}
	for _, n := range scaledown.NeededAccess(d.role.Namespace, schema.GroupResource{Group: "db.orange.com", Resource: "cassandraclusters"}, "nodesPerRacks", pause) {
		res := n.Resource
		if n.Subresource != "" {
			res += "/" + n.Subresource
		}
		a := access{group: n.Group, resource: res, verb: n.Verb}
		if n.Namespace != d.role.Namespace || !allows(d.role.Rules, a) {
			t.Errorf("the preflight checks %s, which the Role does not grant", n)
		}
	}
}

// TestRBACBindings: the bindings point at the roles defined next to them, in the same
// namespace, and bind the documented ServiceAccount.
func TestRBACBindings(t *testing.T) {
	d := readRBAC(t)
	if d.role.Namespace == "" || d.binding.Namespace != d.role.Namespace {
		t.Errorf("Role in %q, RoleBinding in %q: both must be namespaced, in the same namespace", d.role.Namespace, d.binding.Namespace)
	}
	if ref := d.binding.RoleRef; ref.Kind != "Role" || ref.Name != d.role.Name || ref.APIGroup != rbacv1.GroupName {
		t.Errorf("RoleBinding refers to %+v, not the Role %s", ref, d.role.Name)
	}
	if d.clusterRole.Namespace != "" || d.clusterRoleBinding.Namespace != "" {
		t.Error("cluster-scoped objects must have no namespace")
	}
	if ref := d.clusterRoleBinding.RoleRef; ref.Kind != "ClusterRole" || ref.Name != d.clusterRole.Name || ref.APIGroup != rbacv1.GroupName {
		t.Errorf("ClusterRoleBinding refers to %+v, not the ClusterRole %s", ref, d.clusterRole.Name)
	}
	for _, subjects := range [][]rbacv1.Subject{d.binding.Subjects, d.clusterRoleBinding.Subjects} {
		if len(subjects) != 1 || subjects[0].Kind != "ServiceAccount" || subjects[0].Name != "cassandra-operator-sre" || subjects[0].Namespace != d.role.Namespace {
			t.Errorf("subjects %+v, want the ServiceAccount cassandra-operator-sre of %s", subjects, d.role.Namespace)
		}
	}
}
