package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cli"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// safetyScenarios are the safety checks: a stand-in operator fighting the plugin, the
// documented RBAC, dry-run, events, concurrent runs, API faults and abort.
func safetyScenarios() []scenario {
	return []scenario{
		{name: "safety-operator-standin", run: testSafetyOperatorStandin},
		{name: "safety-rbac", run: testSafetyRBAC},
		{name: "safety-dry-run", run: testSafetyDryRun},
		{name: "safety-events", run: testSafetyEvents},
		{name: "safety-concurrent", run: testSafetyConcurrent},
		{name: "safety-api-faults-http", run: testSafetyAPIFaultsHTTP},
		{name: "safety-abort", run: testSafetyAbort},
	}
}

// casskopDeployment is a CassKop-looking operator Deployment named casskop (app=casskop)
// watching its own namespace; kwok runs its pod.
func casskopDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "casskop"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "casskop", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "casskop", Image: "ghcr.io/cscetbon/casskop:2.3.4",
					Env: []corev1.EnvVar{
						{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
						{Name: "OPERATOR_NAME", Value: "casskop"},
					},
				}}},
			},
		},
	}
}

func startCassKopDeployment(t *testing.T, ns string) *appsv1.Deployment {
	t.Helper()
	deps := suite.clients.Kube.AppsV1().Deployments(ns)
	d, err := deps.Create(context.Background(), casskopDeployment(), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, "casskop deployment available", time.Minute, func(ctx context.Context) (bool, error) {
		got, err := deps.Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.AvailableReplicas == 1, fmt.Errorf("available %d", got.Status.AvailableReplicas)
	})
	return d
}

// standin is a stand-in CassKop reconcile loop: while its Deployment has replicas > 0, it
// sets every rack StatefulSet's replicas to the CR's nodesPerRacks, every interval.
type standin struct {
	cl         *fixture.Cluster
	deployment string
	mu         sync.Mutex
	reconciles int      // reconciles run while the Deployment was up
	changes    []string // every replicas change it made
	increases  []string // the changes that grew a StatefulSet
	errs       []string
}

func startStandin(t *testing.T, cl *fixture.Cluster, deployment string, interval time.Duration) *standin {
	s := &standin{cl: cl, deployment: deployment}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			s.reconcile(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

func (s *standin) reconcile(ctx context.Context) {
	kc := suite.clients.Kube
	ns := s.cl.Namespace
	d, err := kc.AppsV1().Deployments(ns).Get(ctx, s.deployment, metav1.GetOptions{})
	if err != nil {
		s.fail(err)
		return
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas == 0 {
		return // the operator is stopped
	}
	cr, err := s.cl.Get(ctx)
	if err != nil {
		s.fail(err)
		return
	}
	for _, dc := range s.cl.Opts.DCs {
		want, err := fixture.NodesPerRacks(cr, dc.Name)
		if err != nil {
			s.fail(err)
			return
		}
		for _, rack := range dc.Racks {
			name := fixture.StatefulSetName(s.cl.Name, dc.Name, rack)
			sts, err := kc.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				s.fail(err)
				return
			}
			have := *sts.Spec.Replicas
			if int64(have) == want {
				continue
			}
			sts.Spec.Replicas = ptr.To(int32(want))
			if _, err := kc.AppsV1().StatefulSets(ns).Update(ctx, sts, metav1.UpdateOptions{}); err != nil {
				s.fail(err)
				continue
			}
			msg := fmt.Sprintf("%s: %d -> %d at %s", name, have, want, time.Now().Format("15:04:05.000"))
			s.mu.Lock()
			s.changes = append(s.changes, msg)
			if int64(have) < want {
				s.increases = append(s.increases, msg)
			}
			s.mu.Unlock()
		}
	}
	s.mu.Lock()
	s.reconciles++
	s.mu.Unlock()
}

func (s *standin) fail(err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err.Error())
}

func (s *standin) state() (reconciles int, changes, increases []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reconciles, append([]string(nil), s.changes...), append([]string(nil), s.increases...)
}

// checkpointPaused: the checkpoint says the operator is paused (pause-operator done,
// resume-operator not done yet).
func checkpointPaused(cp *Checkpoint) bool {
	paused, resumed := false, false
	for _, s := range cp.Steps {
		if s.Kind == "pause-operator" && s.State == "done" {
			paused = true
		}
		if s.Kind == "resume-operator" && s.State == "done" {
			resumed = true
		}
	}
	return paused && !resumed
}

// testSafetyOperatorStandin: a stand-in operator reconciles the StatefulSet to the CR's
// nodesPerRacks every second while its Deployment is up; a 4->1 scale-down pauses it, so
// it never grows the StatefulSet back, and restores it, after which it has nothing to do.
func testSafetyOperatorStandin(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(4)})
	d := startCassKopDeployment(t, ns)
	si := startStandin(t, cl, d.Name, time.Second)
	waitFor(t, "the stand-in to reconcile twice", 30*time.Second, func(context.Context) (bool, error) {
		n, _, _ := si.state()
		return n >= 2, fmt.Errorf("%d reconciles", n)
	})
	_, ch, _ := si.state()
	require.Empty(t, ch, "the stand-in changed nothing before the scale-down")
	g := newPVCGuard(t, ns)

	// While the checkpoint says the operator is paused, status must say PAUSED.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pausedSeen := make(chan struct{})
	go func() {
		_ = watchCR(ctx, cl, opTimeout, func(cr *unstructured.Unstructured) bool {
			cp, ok, _ := parseCheckpoint(cr)
			if ok && checkpointPaused(cp) {
				close(pausedSeen)
				return true
			}
			return false
		})
	}()

	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	statusChecked := false
	select {
	case <-pausedSeen:
		st := cassandra(t, ns, time.Minute, "status", cl.Name)
		cp, ok := readCheckpoint(t, cl)
		if ok && checkpointPaused(cp) {
			statusChecked = true
			assert.Contains(t, st.Stdout, "PAUSED", "status while the operator is paused:\n%s", st)
			assert.Contains(t, st.Stdout, ns+"/"+d.Name, "status names the paused Deployment:\n%s", st)
		} else {
			t.Logf("the operator was restored before status returned; PAUSED line not checked")
		}
	case <-p.Done():
	case <-time.After(opTimeout):
		t.Fatal("never saw the checkpoint with the operator paused")
	}
	r := p.Wait(t, opTimeout)
	require.Equal(t, exitOK, r.Code, "%s", r)
	assert.True(t, statusChecked, "status was run while the operator was paused")
	endReconciles, _, inc := si.state()
	assert.Empty(t, inc, "the stand-in never grew a StatefulSet back during the run")

	assertConvergedSettled(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 4, to: 1})
	assertOperatorRestored(t, ns, d.Name)
	// Restarted, the stand-in finds nothing to change.
	waitFor(t, "3 reconciles of the restarted stand-in", 30*time.Second, func(context.Context) (bool, error) {
		n, _, _ := si.state()
		return n >= endReconciles+3, fmt.Errorf("%d reconciles, want %d", n, endReconciles+3)
	})
	n, changes, inc := si.state()
	assert.Empty(t, changes, "the stand-in changed nothing (CR nodesPerRacks == replicas) over %d reconciles", n)
	assert.Empty(t, inc, "no StatefulSet grew back")
	si.mu.Lock()
	assert.Empty(t, si.errs, "stand-in errors")
	si.mu.Unlock()
	cr, err := cl.Get(context.Background())
	require.NoError(t, err)
	npr, err := fixture.NodesPerRacks(cr, "dc1")
	require.NoError(t, err)
	sts, err := suite.clients.Kube.AppsV1().StatefulSets(ns).Get(context.Background(), fixture.StatefulSetName(cl.Name, "dc1", "rack1"), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, npr, int64(*sts.Spec.Replicas), "CR nodesPerRacks == StatefulSet replicas")
	summary.markConverged(t)
}

// rbacDocs reads docs/rbac.yaml's Role and RoleBinding.
func rbacDocs(t *testing.T) (*rbacv1.Role, *rbacv1.RoleBinding) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(suite.root, "docs", "rbac.yaml"))
	require.NoError(t, err)
	var role *rbacv1.Role
	var rb *rbacv1.RoleBinding
	for _, doc := range strings.Split(string(raw), "\n---") {
		var meta metav1.TypeMeta
		require.NoError(t, yaml.Unmarshal([]byte(doc), &meta))
		switch meta.Kind {
		case "Role":
			role = &rbacv1.Role{}
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), role))
		case "RoleBinding":
			rb = &rbacv1.RoleBinding{}
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), rb))
		}
	}
	require.NotNil(t, role, "docs/rbac.yaml has a Role")
	require.NotNil(t, rb, "docs/rbac.yaml has a RoleBinding")
	return role, rb
}

// bindSA creates the ServiceAccount sa, the Role (renamed after sa) and a RoleBinding of
// the Role to sa, all in ns, and returns a kubeconfig file authenticating as sa.
func bindSA(t *testing.T, ns, sa string, role *rbacv1.Role, rb *rbacv1.RoleBinding) string {
	t.Helper()
	ctx := context.Background()
	kc := suite.clients.Kube
	_, err := kc.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	require.NoError(t, err)
	role = role.DeepCopy()
	role.Namespace, role.Name, role.ResourceVersion = ns, sa, ""
	_, err = kc.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{})
	require.NoError(t, err)
	rb = rb.DeepCopy()
	rb.Namespace, rb.Name = ns, sa
	rb.RoleRef.Name = role.Name
	rb.Subjects = []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}}
	_, err = kc.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{})
	require.NoError(t, err)

	tok := kubectl(t, time.Minute, "create", "token", sa, "-n", ns, "--duration", "1h")
	require.Equal(t, 0, tok.Code, "%s", tok)
	base, err := clientcmd.LoadFromFile(suite.env.Kubeconfig)
	require.NoError(t, err)
	ctxName := base.CurrentContext
	cluster := base.Clusters[base.Contexts[ctxName].Cluster]
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = cluster
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: strings.TrimSpace(tok.Stdout)}
	cfg.Contexts[sa] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: sa, Namespace: ns}
	cfg.CurrentContext = sa
	path := filepath.Join(t.TempDir(), sa+".kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	// Role bindings take effect through the authorizer's informer: wait until sa may get
	// the CR.
	waitFor(t, "RBAC of "+sa+" in effect", 30*time.Second, func(context.Context) (bool, error) {
		r := kubectl(t, 30*time.Second, "--kubeconfig", path, "auth", "can-i", "patch", "cassandraclusters.db.orange.com", "-n", ns)
		return r.Code == 0 && strings.TrimSpace(r.Stdout) == "yes", fmt.Errorf("can-i: %s %s", r.Stdout, r.Stderr)
	})
	return path
}

// resourceVersions maps kind/name -> resourceVersion of every object the plugin could
// touch in ns (CR, StatefulSets, pods, PVCs, Deployments).
func resourceVersions(t *testing.T, cl *fixture.Cluster) map[string]string {
	t.Helper()
	ctx := context.Background()
	kc := suite.clients.Kube
	ns := cl.Namespace
	out := map[string]string{}
	cr, err := cl.Get(ctx)
	require.NoError(t, err)
	out["cassandracluster/"+cr.GetName()] = cr.GetResourceVersion()
	stss, err := kc.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, o := range stss.Items {
		out["statefulset/"+o.Name] = o.ResourceVersion
	}
	pods, err := kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, o := range pods.Items {
		out["pod/"+o.Name] = o.ResourceVersion
	}
	pvcs, err := kc.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, o := range pvcs.Items {
		out["pvc/"+o.Name] = o.ResourceVersion
	}
	deps, err := kc.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, o := range deps.Items {
		out["deployment/"+o.Name] = o.ResourceVersion
	}
	return out
}

// testSafetyRBAC: a ServiceAccount bound to docs/rbac.yaml's Role scales 2->1 through
// kubectl; one whose Role lacks `delete persistentvolumeclaims` is refused (exit 3) with
// the missing verb named and nothing changed.
func testSafetyRBAC(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	role, rb := rbacDocs(t)

	// A Role without delete on PVCs, refused before anything is written.
	ns2 := newNamespace(t)
	cl2 := newCassKopCluster(t, ns2, crd, fixture.ClusterOptions{DCs: oneRack(2)})
	weak := role.DeepCopy()
	removed := false
	for i, r := range weak.Rules {
		for _, res := range r.Resources {
			if res == "persistentvolumeclaims" {
				var verbs []string
				for _, v := range r.Verbs {
					if v != "delete" {
						verbs = append(verbs, v)
					} else {
						removed = true
					}
				}
				weak.Rules[i].Verbs = verbs
			}
		}
	}
	require.True(t, removed, "docs/rbac.yaml grants delete on persistentvolumeclaims")
	weakCfg := bindSA(t, ns2, "kcass-no-pvc-delete", weak, rb)
	before := resourceVersions(t, cl2)
	r := cassandra(t, ns2, opTimeout, append([]string{"--kubeconfig", weakCfg}, scaleArgs(cl2, "dc1", "rack1", 1)...)...)
	assert.Equal(t, exitRefused, r.Code, "without delete on PVCs: %s", r)
	assert.Contains(t, r.Stderr, "delete", "the refusal names the verb:\n%s", r)
	assert.Contains(t, r.Stderr, "persistentvolumeclaims", "the refusal names the resource:\n%s", r)
	assert.Equal(t, before, resourceVersions(t, cl2), "nothing changed (resourceVersions of CR, StatefulSets, pods, PVCs)")
	for _, p := range cl2.Pods {
		v, err := cl2.Sim.Node(p.Name)
		require.NoError(t, err)
		assert.Equal(t, 0, v.DecommissionsStarted, "no decommission on %s", p.Name)
	}

	// The documented Role: the scale-down succeeds as the ServiceAccount.
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
	cfg := bindSA(t, ns, "cassandra-operator-sre", role, rb)
	g := newPVCGuard(t, ns)
	r = cassandra(t, ns, opTimeout, append([]string{"--kubeconfig", cfg}, scaleArgs(cl, "dc1", "rack1", 1)...)...)
	require.Equal(t, exitOK, r.Code, "as the ServiceAccount bound to docs/rbac.yaml: %s", r)
	assert.NotContains(t, r.Stderr, "cannot record Events", "events allowed by the documented Role:\n%s", r)
	assertConvergedSettled(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 2, to: 1})
	summary.markConverged(t)
}

// testSafetyDryRun: scale --dry-run -o json writes nothing (every resourceVersion in the
// namespace unchanged, operator included) and prints the nodes and steps.
func testSafetyDryRun(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(4), LogsStorage: true})
	startCassKopDeployment(t, ns)
	before := resourceVersions(t, cl)
	r := cassandra(t, ns, opTimeout, append(scaleArgs(cl, "dc1", "rack1", 1), "--dry-run", "-o", "json")...)
	require.Equal(t, exitOK, r.Code, "%s", r)
	assert.Equal(t, before, resourceVersions(t, cl), "dry-run changed nothing")
	_, hasCP := readCheckpoint(t, cl)
	assert.False(t, hasCP, "no checkpoint after a dry-run")

	var plan struct {
		DryRun bool `json:"dryRun"`
		Nodes  []struct {
			Pod  string   `json:"pod"`
			PVCs []string `json:"pvcs"`
		} `json:"nodes"`
		Steps []struct {
			Kind string `json:"kind"`
			Pod  string `json:"pod"`
		} `json:"steps"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &plan), "plan is JSON:\n%s", r.Stdout)
	assert.True(t, plan.DryRun, "dryRun true")
	var nodes []string
	for _, n := range plan.Nodes {
		nodes = append(nodes, n.Pod)
		assert.Len(t, n.PVCs, 2, "PVCs of %s (data + logs)", n.Pod)
	}
	want := []string{fixture.PodName(cl.Name, "dc1", "rack1", 3), fixture.PodName(cl.Name, "dc1", "rack1", 2), fixture.PodName(cl.Name, "dc1", "rack1", 1)}
	assert.Equal(t, want, nodes, "nodes, highest ordinal first")
	kinds := map[string]int{}
	for _, s := range plan.Steps {
		kinds[s.Kind]++
	}
	for _, k := range fixture.StepKinds {
		assert.NotZero(t, kinds[k], "plan has a %s step: %v", k, kinds)
	}
	assert.Equal(t, 3, kinds["decommission"], "one decommission per node")
	assert.Equal(t, 1, kinds["pause-operator"], "the running operator is paused by the plan")
	assert.Equal(t, 1, kinds["resume-operator"], "and restored")
}

// stepEventPrefix is the start of each step kind's description (the Event message).
func stepEventPrefix(kind, cluster string) string {
	switch kind {
	case "pause-operator":
		return "pause operator Deployment"
	case "resume-operator":
		return "restore operator Deployment"
	case "decommission":
		return "decommission "
	case "verify-left":
		return "verify "
	case "shrink-statefulset":
		return "shrink StatefulSet"
	case "wait-pod-gone":
		return "wait until pod"
	case "delete-pvcs":
		return "delete "
	case "update-cluster":
		return "set " + cluster + " nodesPerRacks"
	}
	return kind
}

// testSafetyEvents: a scale-down leaves StepStarted/StepDone Events on the CR for every
// step kind, listed by kubectl get events and shown by kubectl describe.
func testSafetyEvents(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
	startCassKopDeployment(t, ns)
	r := cassandra(t, ns, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	require.Equal(t, exitOK, r.Code, "%s", r)

	ev := kubectl(t, time.Minute, "get", "events", "-n", ns, "--field-selector", "involvedObject.name="+cl.Name, "-o", "json")
	require.Equal(t, 0, ev.Code, "%s", ev)
	type event struct {
		Reason         string `json:"reason"`
		Message        string `json:"message"`
		InvolvedObject struct {
			Kind string `json:"kind"`
			UID  string `json:"uid"`
		} `json:"involvedObject"`
	}
	var list struct {
		Items []event `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(ev.Stdout), &list))
	for _, it := range list.Items {
		assert.Equal(t, "CassandraCluster", it.InvolvedObject.Kind, "event on the CR: %s %s", it.Reason, it.Message)
	}
	// Transitions close in time share one StepsProgressed Event ("Reason: message | …"):
	// expand them, so each transition is checked as if it had its own Event.
	var expanded []event
	batched := false
	for _, it := range list.Items {
		if it.Reason != "StepsProgressed" {
			expanded = append(expanded, it)
			continue
		}
		batched = true
		for _, part := range strings.Split(it.Message, " | ") {
			reason, msg, ok := strings.Cut(part, ": ")
			require.True(t, ok, "a batched transition is \"Reason: message\": %q", part)
			expanded = append(expanded, event{Reason: reason, Message: msg, InvolvedObject: it.InvolvedObject})
		}
	}
	assert.True(t, batched, "a 2→1 scale-down's transitions come close enough to be batched")
	list.Items = expanded
	kinds := append(append([]string{"pause-operator"}, fixture.StepKinds...), "resume-operator")
	// A step found already done when its turn comes (verify-left after a decommission
	// that waited for the node to leave, wait-pod-gone after the shrink) is reported
	// StepDone "(found already done)" without a StepStarted; the steps that act always
	// have both.
	acting := map[string]bool{"pause-operator": true, "decommission": true, "shrink-statefulset": true, "delete-pvcs": true, "update-cluster": true, "resume-operator": true}
	var missing []string
	for _, k := range kinds {
		prefix := stepEventPrefix(k, cl.Name)
		reasons := []string{"StepDone"}
		if acting[k] {
			reasons = append(reasons, "StepStarted")
		}
		for _, reason := range reasons {
			found := false
			for _, it := range list.Items {
				if it.Reason == reason && strings.HasPrefix(it.Message, prefix) {
					found = true
					break
				}
			}
			if !found {
				missing = append(missing, reason+" "+k)
			}
		}
	}
	// Every StepStarted has its StepDone.
	for _, it := range list.Items {
		if it.Reason != "StepStarted" {
			continue
		}
		desc := strings.TrimSuffix(it.Message, " (attempt 1)")
		found := false
		for _, d := range list.Items {
			if d.Reason == "StepDone" && d.Message == desc {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, "StepDone for "+it.Message)
		}
	}
	for _, it := range list.Items {
		assert.NotEqual(t, "StepFailed", it.Reason, "no step failed: %s", it.Message)
	}
	var seen []string
	for _, it := range list.Items {
		seen = append(seen, it.Reason+": "+it.Message)
	}
	assert.Empty(t, missing, "events for every step kind; events seen:\n%s", strings.Join(seen, "\n"))

	d := kubectl(t, time.Minute, "describe", "cassandracluster", cl.Name, "-n", ns)
	require.Equal(t, 0, d.Code, "%s", d)
	assert.Contains(t, d.Stdout, "StepStarted", "describe shows the events:\n%s", d.Stdout)
	assert.Contains(t, d.Stdout, "StepDone", "describe shows the events:\n%s", d.Stdout)
	assert.Contains(t, d.Stdout, "StepsProgressed", "describe shows the batched events:\n%s", d.Stdout)
	assert.Contains(t, d.Stdout, "decommission "+cl.Pods[1].Name, "describe shows the decommission:\n%s", d.Stdout)
}

// testSafetyConcurrent: 10 scale-downs started at once on one cluster: exactly one runs
// the decommissions, the others exit 0 or 3, and the cluster converges.
func testSafetyConcurrent(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(4)})
	g := newPVCGuard(t, ns)
	const n = 10
	var ps []*Proc
	for range n {
		ps = append(ps, startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...))
	}
	deciders := 0
	codes := map[int]int{}
	for i, p := range ps {
		r := p.Wait(t, opTimeout)
		codes[r.Code]++
		if strings.Contains(r.Stderr, "[..] decommission ") {
			deciders++
			t.Logf("process %d ran decommissions (exit %d)", i, r.Code)
		}
		assert.Contains(t, []int{exitOK, exitRefused}, r.Code, "process %d: %s", i, r)
		if r.Code == exitOK && !strings.Contains(r.Stderr, "[..] decommission ") {
			t.Logf("process %d exited 0 without decommissioning:\n%s", i, r.Stderr)
		}
	}
	t.Logf("exit codes: %v", codes)
	assert.Equal(t, 1, deciders, "exactly one process printed \"[..] decommission\"")
	assertConvergedSettled(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 4, to: 1})
	summary.markConverged(t)
}

// --- API faults ---------------------------------------------------------------------

// faultKinds are the faults injected into the k-th request.
var faultKinds = []string{"409", "429", "500", "503", "timeout"}

// faultState counts one run's non-exec API requests (over every API client) and injects
// one fault into the target-th (1-based; 0: none, the reference run).
type faultState struct {
	target  int64
	kind    string
	count   atomic.Int64
	hit     atomic.Pointer[string]
	mu      sync.Mutex
	watches []int // indexes of the watch requests seen
}

func (f *faultState) wrap(rt http.RoundTripper) http.RoundTripper {
	return &faultTransport{f: f, next: rt}
}

// faultTransport is one API client's transport.
type faultTransport struct {
	f    *faultState
	next http.RoundTripper
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "injected client-side timeout (Client.Timeout exceeded)" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var _ net.Error = timeoutErr{}

func (t *faultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	f := t.f
	if strings.Contains(req.URL.Path, "/exec") || strings.Contains(req.URL.Path, "/attach") {
		return t.next.RoundTrip(req)
	}
	k := f.count.Add(1)
	if req.URL.Query().Get("watch") == "true" || strings.Contains(req.URL.Path, "/watch/") {
		f.mu.Lock()
		f.watches = append(f.watches, int(k))
		f.mu.Unlock()
	}
	if k != f.target {
		return t.next.RoundTrip(req)
	}
	isWatch := req.URL.Query().Get("watch") == "true" || strings.Contains(req.URL.Path, "/watch/")
	desc := fmt.Sprintf("#%d %s %s: ", k, req.Method, req.URL.RequestURI())
	kind := f.kind
	if isWatch {
		kind = "drop"
	}
	desc += kind
	f.hit.Store(&desc)
	status := func(code int, reason string, hdr http.Header) (*http.Response, error) {
		body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"injected %d","reason":%q,"code":%d}`, code, reason, code)
		h := http.Header{"Content-Type": []string{"application/json"}}
		for k, v := range hdr {
			h[k] = v
		}
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return &http.Response{StatusCode: code, Status: strconv.Itoa(code) + " " + http.StatusText(code), Header: h,
			Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
	}
	switch kind {
	case "409":
		return status(409, "Conflict", nil)
	case "429":
		return status(429, "TooManyRequests", http.Header{"Retry-After": []string{"1"}})
	case "500":
		return status(500, "InternalError", nil)
	case "503":
		return status(503, "ServiceUnavailable", nil)
	case "timeout":
		// The request reaches the server (a write takes effect) but the answer is lost.
		if resp, err := t.next.RoundTrip(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}
	case "drop":
		resp, err := t.next.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		resp.Body = &droppedBody{rc: resp.Body}
		return resp, nil
	}
	return t.next.RoundTrip(req)
}

// droppedBody is a watch stream whose connection drops before the first event.
type droppedBody struct{ rc io.ReadCloser }

func (d *droppedBody) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
func (d *droppedBody) Close() error             { return d.rc.Close() }

// runInProcess runs the plugin in this process with args (after -n ns --kubeconfig).
func runInProcess(ns string, wrap func(http.RoundTripper) http.RoundTripper, timeout time.Duration, args ...string) Result {
	var out, errb bytes.Buffer
	o := cli.NewOptions(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errb}, repair.Operator{Plugin: casskop.Plugin{}})
	o.WrapTransport = wrap
	// The in-process runs share this test process's PID: a holder that did not release
	// the checkpoint is not alive for the next run.
	o.Alive = func(int) bool { return false }
	full := append([]string{"-n", ns, "--kubeconfig", suite.env.Kubeconfig}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	code := o.Execute(ctx, full)
	return Result{Args: append([]string{"(in-process) kubectl-cassandra"}, full...), Stdout: out.String(), Stderr: errb.String(), Code: code, Duration: time.Since(start)}
}

// testSafetyAPIFaultsHTTP: in-process 2->1 scale-downs with one API fault each (409, 429
// with Retry-After, 500, 503, a client-side timeout, a dropped watch) at every request
// index (at most ~40, spread evenly): each run ends 0, or 1/3/4 with the state either
// untouched or checkpointed, and then converges with one decommission per node.
func testSafetyAPIFaultsHTTP(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
	ref := &faultState{}
	r := runInProcess(ns, ref.wrap, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	require.Equal(t, exitOK, r.Code, "reference run: %s", r)
	total := int(ref.count.Load())
	require.Positive(t, total, "the reference run made API requests through WrapTransport")
	assertConvergedSettled(t, cl, nil, expectation{dc: "dc1", rack: "rack1", from: 2, to: 1})
	points := faultPoints(total, 40)
	// Every watch request of the reference run is a point too (a dropped connection).
	ref.mu.Lock()
	watches := append([]int(nil), ref.watches...)
	ref.mu.Unlock()
	for _, w := range watches {
		if !slices.Contains(points, w) {
			points = append(points, w)
		}
	}
	sort.Ints(points)
	t.Logf("watch requests in the reference run at indexes %v", watches)
	t.Logf("reference run: %d non-exec API requests in %s; injecting at %d points", total, r.Duration.Round(time.Millisecond), len(points))

	var mu sync.Mutex
	covered, outcomes := 0, map[string]int{}
	sem := make(chan struct{}, 3)
	var wg sync.WaitGroup
	for i, k := range points {
		kind := faultKinds[i%len(faultKinds)]
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(fmt.Sprintf("req%03d-%s", k, kind), func(t *testing.T) {
				out := faultRun(t, crd, int64(k), kind)
				mu.Lock()
				defer mu.Unlock()
				if !t.Failed() {
					covered++
				}
				outcomes[out]++
			})
		})
	}
	wg.Wait()
	t.Logf("API fault points covered: %d/%d (of %d requests); outcomes: %v", covered, len(points), total, outcomes)
	fmt.Fprintf(os.Stderr, "[e2e] %s: API fault points covered: %d/%d (reference run: %d requests); outcomes: %v\n", t.Name(), covered, len(points), total, outcomes)
	if !t.Failed() {
		summary.markConverged(t)
	}
}

// faultPoints returns the 1-based request indexes to fault: all of 1..total, or max of
// them spread evenly (first and last included).
func faultPoints(total, maxPoints int) []int {
	if total <= maxPoints {
		out := make([]int, total)
		for i := range out {
			out[i] = i + 1
		}
		return out
	}
	seen := map[int]bool{}
	var out []int
	for i := range maxPoints {
		k := 1 + i*(total-1)/(maxPoints-1)
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Ints(out)
	return out
}

// faultRun is one fault point on a fresh cluster; it returns a short outcome label.
func faultRun(t *testing.T, crd *fixture.CRDInfo, k int64, kind string) string {
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
	g := newPVCGuard(t, ns)
	before := takeSnapshot(t, cl)
	ft := &faultState{target: k, kind: kind}
	r := runInProcess(ns, ft.wrap, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
	hit := "not reached"
	if h := ft.hit.Load(); h != nil {
		hit = *h
	}
	t.Logf("fault %s at request %d (%s): exit %d in %s", kind, k, hit, r.Code, r.Duration.Round(time.Millisecond))
	if !assert.Contains(t, []int{exitOK, exitError, exitRefused, exitInterrupted}, r.Code, "%s", r) {
		return "bad-exit"
	}
	cp, hasCP := readCheckpoint(t, cl)
	outcome := fmt.Sprintf("exit%d", r.Code)
	switch {
	case r.Code == exitOK:
		assert.False(t, hasCP, "exit 0 leaves no checkpoint")
	case hasCP:
		outcome += "+checkpoint"
		assert.Equal(t, string(cl.UID), cp.ClusterUID)
		rr := runInProcess(ns, nil, opTimeout, resumeArgs(cl)...)
		summary.resumed()
		require.Equal(t, exitOK, rr.Code, "resume after fault %s at request %d (%s), first run:\n%s\nresume:\n%s", kind, k, hit, r, rr)
	default:
		// No checkpoint: either nothing changed, or the run finished and only its last
		// answer was lost.
		after := takeSnapshot(t, cl)
		if after.replicas[fixture.StatefulSetName(cl.Name, "dc1", "rack1")] == 2 {
			outcome += "+untouched"
			assert.Equal(t, before.replicas, after.replicas, "nothing changed")
			assert.ElementsMatch(t, before.pods, after.pods, "pods unchanged")
			assert.ElementsMatch(t, before.pvcs, after.pvcs, "PVCs unchanged")
			for _, p := range cl.Pods {
				v, err := cl.Sim.Node(p.Name)
				require.NoError(t, err)
				assert.Equal(t, 0, v.DecommissionsStarted, "exit %d without checkpoint: no decommission on %s\n%s", r.Code, p.Name, r)
			}
			rr := runInProcess(ns, nil, opTimeout, scaleArgs(cl, "dc1", "rack1", 1)...)
			require.Equal(t, exitOK, rr.Code, "scale again after fault %s at request %d (%s), first run:\n%s\nagain:\n%s", kind, k, hit, r, rr)
		} else {
			outcome += "+finished"
			t.Logf("exit %d without checkpoint after the work was done (fault on the last answer): %s", r.Code, hit)
		}
	}
	assertConvergedSettled(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 2, to: 1})
	return outcome
}

// --- abort --------------------------------------------------------------------------

// testSafetyAbort: a scale crashed right after pausing the operator is aborted (operator
// restored, checkpoint gone, last-operation "aborted", nothing removed); a scale crashed
// after a decommission started is aborted by finishing that node's removal (or, when the
// exec never reached the node, refused for a minute with a resume hint, and resume
// converges).
func testSafetyAbort(t *testing.T, crd *fixture.CRDInfo) {
	requireCommand(t, "abort")
	t.Run("after-pause", func(t *testing.T) {
		var tries []string
		for attempt := 1; attempt <= 3; attempt++ {
			ok, why := abortAfterPause(t, crd)
			if ok {
				return
			}
			tries = append(tries, why)
			t.Logf("attempt %d: %s; again on a fresh cluster", attempt, why)
		}
		t.Fatalf("never killed the scale between pause-operator done and the first decommission: %v", tries)
	})
	t.Run("after-decommission-started", func(t *testing.T) {
		ns := newNamespace(t)
		cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2)})
		d := startCassKopDeployment(t, ns)
		g := newPVCGuard(t, ns)
		p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
		killAt(t, p, cl, func(cp *Checkpoint) bool {
			for _, s := range cp.Steps {
				if s.Kind == "decommission" && s.State != "pending" {
					return true
				}
			}
			return false
		})
		summary.crash("decommission")
		r := cassandra(t, ns, opTimeout, "abort", cl.Name, "--yes")
		want := expectation{dc: "dc1", rack: "rack1", from: 2, to: 1}
		if r.Code == exitOK {
			want.result = "aborted"
			// The exec reached the node before the kill: abort finished removing it, then
			// stopped there (the plan's only node, so at the target).
			assert.Contains(t, r.Stderr, "abort first finishes removing it", "abort says it finishes the leaving node:\n%s", r)
			assert.Contains(t, r.Stdout, "aborted after removing 1 of 1 nodes", "%s", r)
		} else {
			// The kill came between the "started" write and the exec: the node shows no sign
			// of it yet, and abort refuses for a minute, naming resume.
			assert.Equal(t, exitRefused, r.Code, "abort after a decommission started: %s", r)
			assert.Contains(t, r.Stderr, "resume", "the refusal says to resume:\n%s", r)
			cp, ok := readCheckpoint(t, cl)
			require.True(t, ok, "the checkpoint is kept by a refused abort")
			assert.NotEmpty(t, cp.OperationID)
			resume(t, cl)
		}
		assertConvergedSettled(t, cl, g, want)
		assertOperatorRestored(t, ns, d.Name)
		summary.markConverged(t)
	})
	t.Run("leaving-node-finished", func(t *testing.T) { testAbortFinishesLeaving(t, crd) })
}

// testAbortFinishesLeaving: a scale 3 -> 1 is SIGKILLed while its first node is LEAVING
// (its decommission held streaming); abort says it finishes that node first, waits
// (the hold released once it said so), takes its pod and claim away, and stops there:
// 2 nodes, nodesPerRacks 2, the operator restored, the second planned node untouched.
func testAbortFinishesLeaving(t *testing.T, crd *fixture.CRDInfo) {
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(3)})
	d := startCassKopDeployment(t, ns)
	g := newPVCGuard(t, ns)
	leaving, kept := cl.Pods[2].Name, cl.Pods[1].Name
	require.NoError(t, cl.Sim.UpdateFault(leaving, func(f *sim.Fault) { f.HoldStreaming = true }))
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	waitFor(t, "node "+leaving+" LEAVING", opTimeout, func(context.Context) (bool, error) {
		v, err := cl.Sim.Node(leaving)
		return err == nil && v.Mode == sim.ModeLeaving, fmt.Errorf("mode %s (%v)", v.Mode, err)
	})
	p.Kill(t)
	summary.crash("decommission")
	a := startCassandra(t, ns, append([]string{"abort", cl.Name}, runFlags...)...)
	if !waitLine(a, regexp.MustCompile(`abort first finishes removing it`)) {
		t.Fatalf("abort did not say it finishes the leaving node:\n%s", a.Wait(t, opTimeout))
	}
	require.NoError(t, cl.Sim.UpdateFault(leaving, func(f *sim.Fault) { f.HoldStreaming = false }))
	r := a.Wait(t, opTimeout)
	require.Equal(t, exitOK, r.Code, "abort:\n%s", r)
	assert.Contains(t, r.Stdout, "aborted after removing 1 of 2 nodes", "%s", r)
	assertConvergedSettled(t, cl, g, expectation{dc: "dc1", rack: "rack1", from: 3, to: 2, result: "aborted"})
	assertOperatorRestored(t, ns, d.Name)
	v, err := cl.Sim.Node(kept)
	require.NoError(t, err)
	assert.Zero(t, v.DecommissionCalls, "the second planned node was never decommissioned")
	summary.markConverged(t)
}

// waitLine reports whether p's stderr matches rx before p ends.
func waitLine(p *Proc, rx *regexp.Regexp) bool {
	for {
		out, grew := p.stderr.changed()
		if rx.MatchString(out) {
			return true
		}
		select {
		case <-grew:
		case <-p.Done():
			return rx.MatchString(p.Stderr())
		}
	}
}

// killAt SIGKILLs p as soon as the checkpoint satisfies cond (watching the CR).
func killAt(t *testing.T, p *Proc, cl *fixture.Cluster, cond func(*Checkpoint) bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-p.Done()
		cancel()
	}()
	err := watchCR(ctx, cl, opTimeout, func(cr *unstructured.Unstructured) bool {
		cp, ok, _ := parseCheckpoint(cr)
		if ok && cond(cp) {
			p.Signal(t, syscall.SIGKILL)
			return true
		}
		return false
	})
	if err != nil {
		r := p.Wait(t, time.Minute)
		t.Fatalf("the crash point was never reached (%v):\n%s", err, r)
	}
	r := p.Wait(t, 30*time.Second)
	require.Equal(t, 128+int(syscall.SIGKILL), r.Code, "killed: %s", r)
}

// abortAfterPause: one try; false when the kill landed after a decommission started.
func abortAfterPause(t *testing.T, crd *fixture.CRDInfo) (bool, string) {
	ns := newNamespace(t)
	cl := newCassKopCluster(t, ns, crd, fixture.ClusterOptions{DCs: oneRack(2), LogsStorage: true})
	d := startCassKopDeployment(t, ns)
	g := newPVCGuard(t, ns)
	p := startCassandra(t, ns, scaleArgs(cl, "dc1", "rack1", 1)...)
	// The engine keeps a step's "done" in memory and writes it with the next step's
	// "started" (or with a lease renewal, every lease/3 = 20 s). The next step checks its
	// node with nodetool before recording the decommission "started": once the pause
	// started, every nodetool answer takes 30 s (the simulator's Slow fault), so the lease
	// renewal writes "pause-operator done" while the decommission is still pending, and
	// the kill lands there.
	slowed := false
	killAt(t, p, cl, func(cp *Checkpoint) bool {
		for _, s := range cp.Steps {
			if s.Kind != "pause-operator" {
				continue
			}
			if s.State != "pending" && !slowed {
				slowed = true
				for _, pod := range cl.Pods {
					require.NoError(t, cl.Sim.UpdateFault(pod.Name, func(f *sim.Fault) { f.Slow = 30 * time.Second }))
				}
			}
			if s.State == "done" {
				return true
			}
		}
		return false
	})
	for _, pod := range cl.Pods {
		require.NoError(t, cl.Sim.UpdateFault(pod.Name, func(f *sim.Fault) { f.Slow = 0 }))
	}
	cp, ok := readCheckpoint(t, cl)
	require.True(t, ok, "checkpoint after the crash")
	for _, s := range cp.Steps {
		if s.Kind == "decommission" && s.State != "pending" {
			return false, fmt.Sprintf("decommission of %s already %s at the kill", s.Pod, s.State)
		}
	}
	summary.crash("pause-operator")
	dep, err := suite.clients.Kube.AppsV1().Deployments(ns).Get(context.Background(), d.Name, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(0), *dep.Spec.Replicas, "the operator is paused at the crash")
	before := cassandraObjects(t, cl)

	r := cassandra(t, ns, time.Minute, "abort", cl.Name, "--yes")
	require.Equal(t, exitOK, r.Code, "abort: %s", r)
	assertOperatorRestored(t, ns, d.Name)
	cr, err := cl.Get(context.Background())
	require.NoError(t, err)
	_, hasCP := cr.GetAnnotations()[annCheckpoint]
	assert.False(t, hasCP, "checkpoint gone after abort")
	lo := lastOperation(t, cr)
	if assert.NotNil(t, lo, "last-operation written by abort") {
		assert.Equal(t, "aborted", lo["result"], "last-operation result")
	}
	assert.Equal(t, before, cassandraObjects(t, cl), "no Cassandra pod, PVC or StatefulSet size changed by abort")
	for _, p := range cl.Pods {
		v, err := cl.Sim.Node(p.Name)
		require.NoError(t, err)
		assert.Equal(t, 0, v.DecommissionsStarted, "no decommission on %s", p.Name)
	}
	assert.Empty(t, g.Deleted(), "no PVC deleted")
	n, err := fixture.NodesPerRacks(cr, "dc1")
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "nodesPerRacks unchanged")
	g.Check(t, cl)
	return true, ""
}

// cassandraObjects names the cluster's pods (with UIDs), PVCs (with UIDs) and
// StatefulSet sizes: what an abort must leave as it was.
func cassandraObjects(t *testing.T, cl *fixture.Cluster) []string {
	t.Helper()
	ctx := context.Background()
	kc := suite.clients.Kube
	sel := metav1.ListOptions{LabelSelector: fixture.LabelCluster + "=" + cl.Name}
	var out []string
	pods, err := kc.CoreV1().Pods(cl.Namespace).List(ctx, sel)
	require.NoError(t, err)
	for _, p := range pods.Items {
		out = append(out, fmt.Sprintf("pod/%s uid=%s deleting=%v", p.Name, p.UID, p.DeletionTimestamp != nil))
	}
	pvcs, err := kc.CoreV1().PersistentVolumeClaims(cl.Namespace).List(ctx, sel)
	require.NoError(t, err)
	for _, p := range pvcs.Items {
		out = append(out, fmt.Sprintf("pvc/%s uid=%s deleting=%v", p.Name, p.UID, p.DeletionTimestamp != nil))
	}
	stss, err := kc.AppsV1().StatefulSets(cl.Namespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, st := range stss.Items {
		out = append(out, fmt.Sprintf("statefulset/%s replicas=%d", st.Name, *st.Spec.Replicas))
	}
	sort.Strings(out)
	return out
}

// assertConvergedSettled is assertConverged (which now waits for the StatefulSet status
// to settle itself).
func assertConvergedSettled(t *testing.T, cl *fixture.Cluster, g *pvcGuard, e expectation) {
	t.Helper()
	assertConverged(t, cl, g, e)
}
