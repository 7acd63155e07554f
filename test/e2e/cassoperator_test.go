package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	cassop "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	coop "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
)

// cassOperatorScenarios run against k8ssandra cass-operator's CassandraDatacenter, the
// operator played by the stand-in (test/standin/cassoperator) in the test process.
func cassOperatorScenarios() []scenario {
	return []scenario{
		{name: "status-one-rack", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpStatus(t, []string{"rack1"}) }},
		{name: "docs-examples", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpDocsExamples(t) }},
		{name: "status-three-racks", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpStatus(t, []string{"r1", "r2", "r3"}) }},
		{name: "scale-3-2-1-3-sigkill-each-driven-kind", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpScaleKills(t) }},
		{name: "refuse-operator-down", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpRefuseOperatorDown(t) }},
		{name: "size-policy", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpSizePolicy(t) }},
		{name: "scale-three-racks-6-3-5", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpThreeRacks(t) }},
		{name: "operator-killed-at-decommission", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpStateA(t) }},
		{name: "operator-killed-after-shrink", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpStateCD(t) }},
		{name: "restart-through-task-sigkill", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpRestartTask(t) }},
		{name: "scale-up-cleanup-task", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpCleanupTask(t) }},
		{name: "replacenode-task-dead-node", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpReplaceTask(t) }},
		{name: "replace-node-sigkill", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpReplaceNode(t) }},
		{name: "delete-dc-without-decommission", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpDeleteDC(t) }},
		{name: "remove-dc-two-datacenters", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpRemoveDC(t) }},
		{name: "add-dc-alter-keyspaces", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpAddDC(t) }},
		{name: "add-dc-stop-for-keyspaces-resume", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpAddDCStopResume(t) }},
		{name: "add-dc-sigkill-in-rebuild-resume", run: func(t *testing.T, _ *fixture.CRDInfo) { testCassOpAddDCKillResume(t) }},
	}
}

// TestCassOperator installs cass-operator's CRDs once (they do not clash with the
// CassandraCluster variants of TestCassKop) and runs its scenarios in parallel, each in
// its own namespace. Run alone: -run 'TestCassOperator(/NAME)?'.
func TestCassOperator(t *testing.T) {
	requireE2E(t)
	t0 := time.Now()
	if err := suite.clients.InstallCassOperatorCRDs(context.Background(), suite.root); err != nil {
		t.Fatal(err)
	}
	t.Logf("cass-operator CRDs installed in %s", time.Since(t0).Round(time.Millisecond))
	for _, sc := range cassOperatorScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			if !sc.group {
				summary.track(t)
			}
			sc.run(t, nil)
		})
	}
}

// newCassOpDC creates a Ready CassandraDatacenter in ns with the stand-in operator
// running (fixture.NewCassOperatorDatacenter), stopped when the test ends.
func newCassOpDC(t *testing.T, ns string, o fixture.DatacenterOptions) *fixture.Datacenter {
	t.Helper()
	requireSim(t)
	t0 := time.Now()
	if o.StateDir == "" {
		o.StateDir = filepath.Join(suite.env.Dir, "sim", ns)
	}
	dc, err := suite.clients.NewCassOperatorDatacenter(context.Background(), ns, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dc.Stop)
	t.Logf("datacenter %s/%s ready in %s: %d pods", ns, dc.Name, time.Since(t0).Round(time.Millisecond), len(dc.Pods))
	return dc
}

// cassOpScaleArgs: the plugin asks for --dc (or --rack) even on a CassandraDatacenter,
// which holds one datacenter (operation.RequireRack runs before the cluster is read).
func cassOpScaleArgs(dc *fixture.Datacenter, nodes int) []string {
	return append([]string{"scale", dc.Name, "--dc", dc.Name, "--nodes", strconv.Itoa(nodes)}, runFlags...)
}

func cassOpResumeArgs(dc *fixture.Datacenter) []string {
	return append([]string{"resume", dc.Name}, runFlags...)
}

// testCassOpStatus: `kubectl cassandra status` on a Ready datacenter shows its racks,
// pods and nodes.
func testCassOpStatus(t *testing.T, racks []string) {
	ns := newNamespace(t)
	dc := newCassOpDC(t, ns, fixture.DatacenterOptions{Racks: racks, Size: 3})
	r := cassandra(t, ns, time.Minute, "status", dc.Name)
	require.Equal(t, exitOK, r.Code, "%s", r)
	for _, rack := range racks {
		assert.Contains(t, r.Stdout, rack, "rack %s shown:\n%s", rack, r)
	}
	for _, p := range dc.Pods {
		assert.Contains(t, r.Stdout, p.Name, "pod shown:\n%s", r)
		assert.Contains(t, r.Stdout, p.IP, "node address shown:\n%s", r)
	}
	assert.Contains(t, r.Stdout, "UN", "nodes Up/Normal:\n%s", r)
	// The nodes require JMX credentials: nodetool got the superuser's, never on an argv
	// nor in the output.
	nt := cassandra(t, ns, time.Minute, "nodetool", dc.Pods[0].Name, "--", "status")
	require.Equal(t, exitOK, nt.Code, "nodetool with the superuser's credentials:\n%s", nt)
	assert.Contains(t, nt.Stdout, "UN", "%s", nt)
	for _, out := range []string{r.Stdout, r.Stderr, nt.Stdout, nt.Stderr} {
		assert.NotContains(t, out, fixture.SuperuserPassword, "the password is never shown")
	}
	assert.NoError(t, dc.RunErr())
	assert.Empty(t, dc.Operator.Actions(), "the stand-in finds nothing to do on the fixture")
	summary.markConverged(t)
}

// drivenLine matches the progress line the plugin prints when it starts a step of a
// driven scale-down of pod ("[..] <the step's description>").
func drivenLine(kind, pod string) *regexp.Regexp {
	q := regexp.QuoteMeta(pod)
	var re string
	switch kind {
	case record.StepRequestRemoval:
		re = `ask the operator to remove ` + q + ` `
	case record.StepWaitLeaving:
		re = `wait until the operator's decommission of ` + q + ` is under way`
	case "verify-left":
		re = `verify ` + q + ` left the ring`
	case "wait-pod-gone":
		re = `wait until pod ` + q + ` is gone`
	case record.StepWaitClaimsGone:
		re = `wait until the operator deleted the PVCs of ` + q
	case record.StepWaitReleased:
		re = `wait until the operator's status lets go of ` + q
	default:
		panic("no progress line known for " + kind)
	}
	// The start of the step, or its "already done" line: under load the operator may have
	// got there first (a decommission under way before the resume looks), and the run is
	// then killed right after that step instead of during it.
	return regexp.MustCompile(`\[(\.\.|OK)\] ` + re)
}

// killAtLine SIGKILLs p as soon as its progress output matches rx; false if p ended
// first (without printing it).
func killAtLine(t *testing.T, p *Proc, rx *regexp.Regexp) bool {
	t.Helper()
	deadline := time.After(opTimeout)
	for {
		out, grew := p.stderr.changed()
		if rx.MatchString(out) {
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			r := p.Wait(t, 30*time.Second)
			return r.Code == 128+int(syscall.SIGKILL)
		}
		select {
		case <-grew:
		case <-p.Done():
			return false
		case <-deadline:
			t.Fatalf("no line %q within %s; plugin stderr so far:\n%s", rx, opTimeout, p.Stderr())
			return false
		}
	}
}

// killStage is one SIGKILL of a driven scale-down: prepare (optional) runs before the
// run (the scale, then each resume) that is killed when it starts kind.
type killStage struct {
	kind    string
	prepare func()
}

// scaleKillingAt runs `scale --nodes to`, SIGKILLs it when it starts stages[0].kind on
// pod, then resumes, killing the resume at stages[1].kind, and so on; then runs last
// (optional) and a last resume to the end. Every stage's kind must be hit.
func scaleKillingAt(t *testing.T, dc *fixture.Datacenter, to int, pod string, stages []killStage, last func()) {
	t.Helper()
	args := cassOpScaleArgs(dc, to)
	for _, st := range stages {
		if st.prepare != nil {
			st.prepare()
		}
		p := startCassandra(t, dc.Namespace, args...)
		if !killAtLine(t, p, drivenLine(st.kind, pod)) {
			r := p.Wait(t, opTimeout)
			t.Fatalf("the run ended before %s of %s:\n%s", st.kind, pod, r)
		}
		summary.crash("cass-operator/" + st.kind)
		t.Logf("SIGKILL at %s of %s", st.kind, pod)
		summary.resumed()
		args = cassOpResumeArgs(dc)
	}
	if last != nil {
		last()
	}
	r := cassandra(t, dc.Namespace, opTimeout, args...)
	require.Equal(t, exitOK, r.Code, "the last resume:\n%s", r)
}

// assertDCAt waits until the datacenter is settled at n nodes: spec.size, each rack's
// StatefulSet at its SplitRacks share, pods 0..n-1 Started, exactly their server-data claims, the ring's n
// nodes UN, nodeStatuses, progress Ready, ScalingDown/Up False, no checkpoint.
func assertDCAt(t *testing.T, dc *fixture.Datacenter, n int) {
	t.Helper()
	kc := suite.clients.Kube
	ns := dc.Namespace
	var want []string
	split := cassop.SplitRacks(n, len(dc.Opts.Racks))
	for r, rack := range dc.Opts.Racks {
		for i := range split[r] {
			want = append(want, dc.PodName(rack, i))
		}
	}
	sort.Strings(want)
	waitFor(t, fmt.Sprintf("datacenter settled at %d nodes", n), time.Minute, func(ctx context.Context) (bool, error) {
		u, err := dc.Get(ctx)
		if err != nil {
			return false, err
		}
		if size, _, _ := unstructured.NestedInt64(u.Object, "spec", "size"); int(size) != n {
			return false, fmt.Errorf("spec.size %d", size)
		}
		if _, ok := u.GetAnnotations()[annCheckpoint]; ok {
			return false, fmt.Errorf("checkpoint still there")
		}
		if p, _, _ := unstructured.NestedString(u.Object, "status", "cassandraOperatorProgress"); p != "Ready" {
			return false, fmt.Errorf("progress %q", p)
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, ci := range conds {
			m, _ := ci.(map[string]any)
			if (m["type"] == "ScalingDown" || m["type"] == "ScalingUp") && m["status"] != "False" {
				return false, fmt.Errorf("condition %v %v", m["type"], m["status"])
			}
		}
		nst, _, _ := unstructured.NestedMap(u.Object, "status", "nodeStatuses")
		var keys []string
		for k := range nst {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !slices.Equal(keys, want) {
			return false, fmt.Errorf("nodeStatuses %v", keys)
		}
		for r, rack := range dc.Opts.Racks {
			sts, err := kc.AppsV1().StatefulSets(ns).Get(ctx, dc.StatefulSetName(rack), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if *sts.Spec.Replicas != int32(split[r]) || sts.Status.ReadyReplicas != int32(split[r]) {
				return false, fmt.Errorf("statefulset %s: %d replicas, %d ready, want %d", sts.Name, *sts.Spec.Replicas, sts.Status.ReadyReplicas, split[r])
			}
		}
		pods, err := kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: dc.Selector()})
		if err != nil {
			return false, err
		}
		var names []string
		for _, p := range pods.Items {
			names = append(names, p.Name)
			if p.Labels[cassop.LabelNodeState] != cassop.StateStarted || p.DeletionTimestamp != nil {
				return false, fmt.Errorf("pod %s %s", p.Name, p.Labels[cassop.LabelNodeState])
			}
		}
		sort.Strings(names)
		if !slices.Equal(names, want) {
			return false, fmt.Errorf("pods %v", names)
		}
		pvcs, err := kc.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: dc.Selector()})
		if err != nil {
			return false, err
		}
		var claims []string
		for _, c := range pvcs.Items {
			if c.DeletionTimestamp == nil {
				claims = append(claims, c.Name)
			}
		}
		if len(claims) != len(pvcs.Items) {
			return false, fmt.Errorf("claims being deleted: %d of %d", len(pvcs.Items)-len(claims), len(pvcs.Items))
		}
		sort.Strings(claims)
		var wantClaims []string
		for _, p := range want {
			wantClaims = append(wantClaims, coop.DataPVCName(p))
		}
		if !slices.Equal(claims, wantClaims) {
			return false, fmt.Errorf("claims %v", claims)
		}
		nodes, err := dc.Sim.Nodes()
		if err != nil {
			return false, err
		}
		var ring []string
		for _, v := range nodes {
			if v.PeerCode == "" {
				continue
			}
			if v.PeerCode != "UN" {
				return false, fmt.Errorf("node %s %s", v.Pod, v.PeerCode)
			}
			ring = append(ring, v.Pod)
		}
		sort.Strings(ring)
		if !slices.Equal(ring, want) {
			return false, fmt.Errorf("ring %v", ring)
		}
		return true, nil
	})
}

// countActions counts the stand-in's actions of kind a.
func countActions(op *coop.Operator, a coop.Action) int {
	n := 0
	for _, x := range op.Actions() {
		if x == a {
			n++
		}
	}
	return n
}

// assertNoPluginStatefulSetWrite: no field of a StatefulSet is managed by the plugin
// (its writes carry field manager kubectl-cassandra); the stand-in's have another.
func assertNoPluginStatefulSetWrite(t *testing.T, dc *fixture.Datacenter) {
	t.Helper()
	for _, rack := range dc.Opts.Racks {
		sts, err := suite.clients.Kube.AppsV1().StatefulSets(dc.Namespace).Get(context.Background(), dc.StatefulSetName(rack), metav1.GetOptions{})
		require.NoError(t, err)
		for _, mf := range sts.ManagedFields {
			assert.NotContains(t, mf.Manager, cassop.FieldManager, "the plugin wrote StatefulSet %s (%s %s)", sts.Name, mf.Operation, mf.Subresource)
		}
	}
}

// testCassOpScaleKills: 3 -> 2 -> 1 -> 3 through kubectl on one rack, the operator (the
// stand-in) doing the work. The scale-downs are SIGKILLed at each driven step kind in
// turn (3 -> 2 at request-removal, wait-leaving, verify-left; 2 -> 1 at wait-pod-gone,
// wait-pvcs-gone, wait-operator-released), each followed by `kubectl cassandra resume`.
// Each scale converges; each removed node was decommissioned exactly once, by the
// operator; the operator shrank the StatefulSet and deleted the claims, never the plugin.
func testCassOpScaleKills(t *testing.T) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	dc := newCassOpDC(t, ns, fixture.DatacenterOptions{Size: 3})
	rack := dc.Opts.Racks[0]
	pod1, pod2 := dc.PodName(rack, 1), dc.PodName(rack, 2)

	op := dc.Operator
	t0 := time.Now()
	// The decommission is held streaming from the second stage on, so that the node is
	// still leaving when the resume reaches verify-left (else it may be "already done",
	// its line never printed); released before the last resume.
	hold := func(on bool) {
		require.NoError(t, dc.Sim.UpdateFault(pod2, func(f *sim.Fault) { f.HoldStreaming = on }))
	}
	scaleKillingAt(t, dc, 2, pod2, []killStage{{kind: record.StepRequestRemoval}, {kind: record.StepWaitLeaving, prepare: func() { hold(true) }}, {kind: "verify-left"}},
		func() { hold(false) })
	assertDCAt(t, dc, 2)
	t.Logf("3 -> 2 converged in %s", time.Since(t0).Round(time.Millisecond))

	// The operator removes a pod, shrinks, deletes claims and lets go within
	// milliseconds: the world is held at each wait so that the plugin is in it when
	// killed. The pod is held Terminating by a finalizer (wait-pod-gone); the operator is
	// held right after its shrink (wait-pvcs-gone), then right after its claim delete
	// (wait-operator-released), keeping the rest of its pass.
	t0 = time.Now()
	var releasePod, releaseShrink, releaseDelete func()
	scaleKillingAt(t, dc, 1, pod1, []killStage{
		{kind: "wait-pod-gone", prepare: func() {
			releasePod = holdPod(t, ns, pod1)
			releaseShrink = op.HoldAfter(coop.ActShrinkStatefulSet)
		}},
		{kind: record.StepWaitClaimsGone, prepare: func() { releasePod() }},
		{kind: record.StepWaitReleased, prepare: func() {
			releaseDelete = op.HoldAfter(coop.ActDeletePVCs)
			releaseShrink()
		}},
	}, func() { releaseDelete() })
	assertDCAt(t, dc, 1)
	t.Logf("2 -> 1 converged in %s", time.Since(t0).Round(time.Millisecond))

	forgotten := dc.Forgotten()
	for _, p := range []string{pod1, pod2} {
		if assert.Len(t, forgotten[p], 1, "the node of %s left and its data went once", p) {
			assert.Equal(t, 1, forgotten[p][0].DecommissionCalls, "decommissions of %s", p)
		}
	}
	v0, err := dc.Sim.Node(dc.PodName(rack, 0))
	require.NoError(t, err)
	assert.Zero(t, v0.DecommissionCalls, "the kept node was never decommissioned")
	assert.Equal(t, 2, countActions(op, coop.ActShrinkStatefulSet), "the operator shrank the StatefulSet for each node: %q", op.Actions())
	// At least once per node: a pass that meets a claim still terminating (its pod held by
	// the test's finalizer) deletes it again, as the real operator does (cass-operator
	// #117). That no one else deleted them is the unit tests' history (no PVC delete by
	// the plugin in a driven plan).
	assert.GreaterOrEqual(t, countActions(op, coop.ActDeletePVCs), 2, "the operator deleted the claims of each node: %q", op.Actions())
	assert.Equal(t, 2, countActions(op, coop.ActDecommission), "one decommission call per node: %q", op.Actions())

	t0 = time.Now()
	r := cassandra(t, ns, opTimeout, cassOpScaleArgs(dc, 3)...)
	require.Equal(t, exitOK, r.Code, "scale up 1 -> 3:\n%s", r)
	assertDCAt(t, dc, 3)
	t.Logf("1 -> 3 converged in %s", time.Since(t0).Round(time.Millisecond))
	if r.Duration > 10*time.Second {
		t.Logf("a slow scale-up (machine load?); its progress:\n%s", r.Stderr)
	}
	assert.Equal(t, 2, countActions(op, coop.ActStartNode), "the operator started the two new nodes: %q", op.Actions())
	assert.Equal(t, 2, countActions(op, coop.ActShrinkStatefulSet), "no shrink during the scale-up")
	assertNoPluginStatefulSetWrite(t, dc)
	require.NoError(t, dc.RunErr())
	summary.markConverged(t)
}

// testCassOpRefuseOperatorDown: with the cass-operator Deployment scaled to 0, a scale
// is refused (exit 3) and nothing changes.
func testCassOpRefuseOperatorDown(t *testing.T) {
	requireCommand(t, "scale")
	ctx := context.Background()
	ns := newNamespace(t)
	dc := newCassOpDC(t, ns, fixture.DatacenterOptions{Size: 3})
	deps := suite.clients.Kube.AppsV1().Deployments(ns)
	_, err := deps.Patch(ctx, dc.Deployment, types.MergePatchType, []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	waitFor(t, "cass-operator scaled to 0", time.Minute, func(ctx context.Context) (bool, error) {
		d, err := deps.Get(ctx, dc.Deployment, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.Replicas == 0, fmt.Errorf("%d replicas", d.Status.Replicas)
	})
	before, err := dc.Get(ctx)
	require.NoError(t, err)
	stsBefore := stsVersions(t, dc)
	r := cassandra(t, ns, time.Minute, cassOpScaleArgs(dc, 2)...)
	require.Equal(t, exitRefused, r.Code, "%s", r)
	assert.Contains(t, r.Stderr, "no running cass-operator", "%s", r)
	assert.Contains(t, r.Stderr, "nothing changed", "%s", r)
	after, err := dc.Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, before.GetResourceVersion(), after.GetResourceVersion(), "the CassandraDatacenter is untouched")
	assert.Equal(t, stsBefore, stsVersions(t, dc), "the StatefulSets are untouched")
	assert.Equal(t, "down", dc.Operator.Waiting(), "the stand-in was down")
	assertDCAt(t, dc, 3)
	summary.markConverged(t)
}

func stsVersions(t *testing.T, dc *fixture.Datacenter) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, rack := range dc.Opts.Racks {
		s, err := suite.clients.Kube.AppsV1().StatefulSets(dc.Namespace).Get(context.Background(), dc.StatefulSetName(rack), metav1.GetOptions{})
		require.NoError(t, err)
		out[s.Name] = s.ResourceVersion
	}
	pods, err := suite.clients.Kube.CoreV1().Pods(dc.Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: dc.Selector()})
	require.NoError(t, err)
	for _, p := range pods.Items {
		out["pod/"+p.Name] = string(p.UID)
	}
	return out
}

// applySizePolicy creates the stand-in's ValidatingAdmissionPolicy imitating
// cass-operator's webhook size rule (coop.SizeChangePolicy), named after ns and bound to
// ns only (policies are cluster-wide; the other scenarios run beside this one).
func applySizePolicy(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	policy, binding := coop.SizeChangePolicy()
	policy.Name = coop.SizeChangePolicyName + "-" + ns
	binding.Name = policy.Name
	binding.Spec.PolicyName = policy.Name
	binding.Spec.MatchResources = &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}}
	ar := suite.clients.Kube.AdmissionregistrationV1()
	_, err := ar.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{})
	require.NoError(t, err, "the policy is accepted by a real API server")
	t.Cleanup(func() {
		_ = ar.ValidatingAdmissionPolicyBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
		_ = ar.ValidatingAdmissionPolicies().Delete(context.Background(), policy.Name, metav1.DeleteOptions{})
	})
	_, err = ar.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{})
	require.NoError(t, err, "the binding is accepted by a real API server")
	waitFor(t, "policy type-checked", 30*time.Second, func(ctx context.Context) (bool, error) {
		p, err := ar.ValidatingAdmissionPolicies().Get(ctx, policy.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.TypeChecking == nil {
			return false, fmt.Errorf("not type-checked yet")
		}
		for _, w := range p.Status.TypeChecking.ExpressionWarnings {
			t.Logf("policy warning at %s: %s", w.FieldRef, w.Warning)
		}
		return true, nil
	})
}

// setScalingDown sets condition ScalingDown through /status (a JSON patch testing the
// condition's type at its index).
func setScalingDown(t *testing.T, dc *fixture.Datacenter, status string) {
	t.Helper()
	ctx := context.Background()
	u, err := dc.Get(ctx)
	require.NoError(t, err)
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	i := slices.IndexFunc(conds, func(c any) bool { m, _ := c.(map[string]any); return m["type"] == "ScalingDown" })
	require.GreaterOrEqual(t, i, 0, "the fixture has a ScalingDown condition")
	body := fmt.Sprintf(`[{"op":"test","path":"/status/conditions/%d/type","value":"ScalingDown"},{"op":"replace","path":"/status/conditions/%d/status","value":%q}]`, i, i, status)
	_, err = suite.clients.Dyn.Resource(fixture.CassandraDatacenterGVR).Namespace(dc.Namespace).Patch(ctx, dc.Name, types.JSONPatchType, []byte(body), metav1.PatchOptions{}, "status")
	require.NoError(t, err)
}

// patchSize patches spec.size (dry run or not) and returns the error.
func patchSize(dc *fixture.Datacenter, n int, dryRun bool) error {
	o := metav1.PatchOptions{}
	if dryRun {
		o.DryRun = []string{metav1.DryRunAll}
	}
	_, err := suite.clients.Dyn.Resource(fixture.CassandraDatacenterGVR).Namespace(dc.Namespace).Patch(context.Background(), dc.Name, types.MergePatchType,
		fmt.Appendf(nil, `{"spec":{"size":%d}}`, n), o)
	return err
}

// testCassOpSizePolicy: the stand-in's SizeChangePolicy on the real API server refuses
// a size change while ScalingDown is True, with the webhook's text (which the adapter
// reads as "not yet"), lets it through otherwise; and a scale 3 -> 1 -> 2 through
// kubectl converges with the policy in place.
func testCassOpSizePolicy(t *testing.T) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	dc := newCassOpDC(t, ns, fixture.DatacenterOptions{Size: 3})
	applySizePolicy(t, ns)

	// The operator is held (it would set the condition back at once).
	dc.Operator.SetDown(true)
	setScalingDown(t, dc, "True")
	var refusal error
	waitFor(t, "the policy refuses a size change while scaling down", 30*time.Second, func(context.Context) (bool, error) {
		refusal = patchSize(dc, 2, true)
		return refusal != nil, fmt.Errorf("dry-run size change accepted")
	})
	t.Logf("refusal: %v", refusal)
	assert.True(t, apierrors.IsForbidden(refusal), "403: %v", refusal)
	assert.Contains(t, refusal.Error(), coop.MsgSizeWhileScalingDown)
	assert.Contains(t, refusal.Error(), cassop.WebhookScaling, "the adapter classifies it as not yet")
	require.Error(t, patchSize(dc, 2, false), "refused for real too")
	n, err := dc.Size(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, n)
	setScalingDown(t, dc, "False")
	require.NoError(t, patchSize(dc, 3, true), "no size change refused when not scaling")
	require.NoError(t, patchSize(dc, 2, true), "a size change is let through when not scaling")
	dc.Operator.SetDown(false)

	t0 := time.Now()
	r := cassandra(t, ns, opTimeout, cassOpScaleArgs(dc, 1)...)
	require.Equal(t, exitOK, r.Code, "scale 3 -> 1 with the policy:\n%s", r)
	assertDCAt(t, dc, 1)
	t.Logf("3 -> 1 converged in %s", time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	r = cassandra(t, ns, opTimeout, cassOpScaleArgs(dc, 2)...)
	require.Equal(t, exitOK, r.Code, "scale 1 -> 2 with the policy:\n%s", r)
	assertDCAt(t, dc, 2)
	t.Logf("1 -> 2 converged in %s", time.Since(t0).Round(time.Millisecond))
	require.NoError(t, dc.RunErr())
	summary.markConverged(t)
}

// testCassOpThreeRacks: on three racks the operator removes from the first rack in spec
// order above its SplitRacks share (6 -> 3: r3, r2, r1 lose their sts-1) and grows the
// first racks first (3 -> 5: r1, r2); the plugin's plan must name the pod the operator
// picks at each step (request-removal refuses otherwise), through kubectl.
func testCassOpThreeRacks(t *testing.T) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	dc := newCassOpDC(t, ns, fixture.DatacenterOptions{Racks: []string{"r1", "r2", "r3"}, Size: 6})
	t0 := time.Now()
	r := cassandra(t, ns, opTimeout, cassOpScaleArgs(dc, 3)...)
	require.Equal(t, exitOK, r.Code, "scale 6 -> 3:\n%s", r)
	assertDCAt(t, dc, 3)
	t.Logf("6 -> 3 converged in %s", time.Since(t0).Round(time.Millisecond))
	forgotten := dc.Forgotten()
	for _, rack := range dc.Opts.Racks {
		p := dc.PodName(rack, 1)
		if assert.Len(t, forgotten[p], 1, "the node of %s left once", p) {
			assert.Equal(t, 1, forgotten[p][0].DecommissionCalls, "decommissions of %s", p)
		}
	}
	t0 = time.Now()
	r = cassandra(t, ns, opTimeout, cassOpScaleArgs(dc, 5)...)
	require.Equal(t, exitOK, r.Code, "scale 3 -> 5:\n%s", r)
	assertDCAt(t, dc, 5)
	t.Logf("3 -> 5 converged in %s", time.Since(t0).Round(time.Millisecond))
	assertNoPluginStatefulSetWrite(t, dc)
	require.NoError(t, dc.RunErr())
	summary.markConverged(t)
}

// testCassOpStateA: cass-operator killed right after its decommission call and
// restarted (FACTS §8 stuck state A): the node left, the pod was never labelled
// Decommissioning, and the restarted operator waits on it for ever. The plugin's
// wait-pod-gone says so (exit 1) and names repair-operator-state, whose dry run shows
// the verified finding and changes nothing; the repair labels the pod, sets ScalingDown
// (the un-sticking verified on the real operator), the operator finishes by itself, and
// the repair carries the scale on to its end: one decommission, nothing left to resume.
func testCassOpStateA(t *testing.T) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	dc := newCassOpDC(t, ns, fixture.DatacenterOptions{Size: 3})
	rack := dc.Opts.Racks[0]
	pod2 := dc.PodName(rack, 2)
	dc.Operator.KillAfter(coop.ActDecommission)
	p := startCassandra(t, ns, cassOpScaleArgs(dc, 2)...)
	waitFor(t, "the operator killed after its decommission call", opTimeout, func(context.Context) (bool, error) {
		return dc.Operator.Killed(), fmt.Errorf("actions %q", dc.Operator.Actions())
	})
	// Down long enough for the node to finish leaving (FACTS §8: down 20 s), then the
	// restart.
	waitFor(t, pod2+" left the ring", opTimeout, func(context.Context) (bool, error) {
		v, err := dc.Sim.Node(pod2)
		return err == nil && v.Left, err
	})
	op := dc.StartOperator()
	r := p.Wait(t, opTimeout)
	t.Logf("the run in state A:\n%s", r)
	require.Equal(t, exitError, r.Code, "%s", r)
	assert.Contains(t, r.Stderr, "the operator stopped removing "+pod2, "%s", r)
	assert.Contains(t, r.Stderr, "kubectl cassandra repair-operator-state -n "+ns+" "+dc.Name, "the way out is named, %s", r)
	t.Logf("stand-in waits: %s; actions after restart: %q", op.Waiting(), op.Actions())

	dry := cassandra(t, ns, time.Minute, "repair-operator-state", dc.Name, "--dry-run")
	require.Equal(t, exitOK, dry.Code, "repair dry run:\n%s", dry)
	assert.Contains(t, dry.Stdout, "was never labelled Decommissioning", "the finding, %s", dry)
	assert.Equal(t, cassop.StateStartedNotReady, podLabel(t, ns, pod2, cassop.LabelNodeState), "the dry run changed nothing")

	rr := cassandra(t, ns, opTimeout, "repair-operator-state", dc.Name, "--yes", "--poll-interval", "200ms")
	require.Equal(t, exitOK, rr.Code, "repair-operator-state:\n%s", rr)
	assertDCAt(t, dc, 2)
	if f := dc.Forgotten()[pod2]; assert.Len(t, f, 1) {
		assert.Equal(t, 1, f[0].DecommissionCalls, "one decommission")
	}
	rs := cassandra(t, ns, time.Minute, cassOpResumeArgs(dc)...)
	assert.Contains(t, rs.Stdout+rs.Stderr, "No operation in flight", "the repair carried the scale to its end: %s", rs)
	// Every nodetool call of the run used the superuser's credentials: the password is
	// in no output, no annotation of the datacenter (checkpoint, last operation), no event.
	u, err := dc.Get(context.Background())
	require.NoError(t, err)
	raw, _ := json.Marshal(u.GetAnnotations())
	evs, err := suite.clients.Kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	evRaw, _ := json.Marshal(evs.Items)
	for what, text := range map[string]string{"scale output": r.Stdout + r.Stderr, "repair output": dry.Stdout + dry.Stderr + rr.Stdout + rr.Stderr,
		"annotations": string(raw), "events": string(evRaw)} {
		assert.NotContains(t, text, fixture.SuperuserPassword, "the JMX password in the %s", what)
	}
	require.NoError(t, dc.RunErr())
	summary.markConverged(t)
}

// podLabel reads one label of a pod.
func podLabel(t *testing.T, ns, pod, key string) string {
	t.Helper()
	p, err := suite.clients.Kube.CoreV1().Pods(ns).Get(context.Background(), pod, metav1.GetOptions{})
	require.NoError(t, err)
	return p.Labels[key]
}

// testCassOpStateCD: cass-operator killed between its StatefulSet shrink and its claim
// delete (FACTS §8 stuck state C/D), restarted: the datacenter is Ready with the
// removed pod's server-data claim orphaned and its nodeStatuses entry stale. The
// plugin's wait-pvcs-gone says so and names repair-operator-state; the repair (the node
// verified out of the ring, no pod of that name) deletes the claim and the entry and
// carries the scale on; a later scale-up starts a fresh node on a new claim.
func testCassOpStateCD(t *testing.T) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	dc := newCassOpDC(t, ns, fixture.DatacenterOptions{Size: 3})
	pod2 := dc.PodName(dc.Opts.Racks[0], 2)
	claim := "server-data-" + pod2
	dc.Operator.KillAfter(coop.ActShrinkStatefulSet)
	p := startCassandra(t, ns, cassOpScaleArgs(dc, 2)...)
	waitFor(t, "the operator killed after its StatefulSet shrink", opTimeout, func(context.Context) (bool, error) {
		return dc.Operator.Killed(), fmt.Errorf("actions %q", dc.Operator.Actions())
	})
	kc := suite.clients.Kube
	waitFor(t, pod2+" gone", opTimeout, func(ctx context.Context) (bool, error) {
		_, err := kc.CoreV1().Pods(ns).Get(ctx, pod2, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
	dc.StartOperator()
	r := p.Wait(t, opTimeout)
	t.Logf("the run in state C/D:\n%s", r)
	require.Equal(t, exitError, r.Code, "%s", r)
	assert.Contains(t, r.Stderr, "left the PVCs of "+pod2, "%s", r)
	assert.Contains(t, r.Stderr, "kubectl cassandra repair-operator-state -n "+ns+" "+dc.Name, "the way out is named, %s", r)
	_, err := kc.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), claim, metav1.GetOptions{})
	require.NoError(t, err, "the orphaned claim is there")

	rr := cassandra(t, ns, opTimeout, "repair-operator-state", dc.Name, "--yes", "--poll-interval", "200ms")
	require.Equal(t, exitOK, rr.Code, "repair-operator-state:\n%s", rr)
	assert.Contains(t, rr.Stdout+rr.Stderr, "is left over", "the finding, %s", rr)
	assertDCAt(t, dc, 2)
	u, err := dc.Get(context.Background())
	require.NoError(t, err)
	entries, _, _ := unstructured.NestedMap(u.Object, "status", "nodeStatuses")
	assert.NotContains(t, entries, pod2, "the stale entry is removed")

	r = cassandra(t, ns, opTimeout, cassOpScaleArgs(dc, 3)...)
	require.Equal(t, exitOK, r.Code, "scale-up after the repair:\n%s", r)
	assertDCAt(t, dc, 3)
	require.NoError(t, dc.RunErr())
	summary.markConverged(t)
}

// pluginTasks lists the CassandraTasks the plugin created in ns (its operation label).
func pluginTasks(t *testing.T, ns string) []unstructured.Unstructured {
	t.Helper()
	l, err := suite.clients.Dyn.Resource(cassop.TaskGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: operator.TaskOperationLabel})
	require.NoError(t, err)
	return l.Items
}

// testCassOpRestartTask: `restart` on a CassandraDatacenter runs through a CassandraTask
// (command restart) the plan names; the run is SIGKILLed once the task exists and a pod
// is being waited for, and resume finds the task by name: exactly one task, every pod
// re-created once (a new UID) and its node UN, the task Complete.
func testCassOpRestartTask(t *testing.T) {
	requireCommand(t, "restart")
	ns := newNamespace(t)
	dc := newCassOpDC(t, ns, fixture.DatacenterOptions{Size: 3})
	kc := suite.clients.Kube
	uids := map[string]types.UID{}
	for _, p := range dc.Pods {
		pod, err := kc.CoreV1().Pods(ns).Get(context.Background(), p.Name, metav1.GetOptions{})
		require.NoError(t, err)
		uids[p.Name] = pod.UID
	}
	dry := cassandra(t, ns, time.Minute, "restart", dc.Name, "--dry-run")
	require.Equal(t, exitOK, dry.Code, "%s", dry)
	assert.Contains(t, dry.Stdout, "create CassandraTask", "the plan names the task:\n%s", dry)
	assert.Empty(t, pluginTasks(t, ns), "the dry run created nothing")

	p := startCassandra(t, ns, append([]string{"restart", dc.Name}, runFlags...)...)
	if !killAtLine(t, p, regexp.MustCompile(`wait until pod \S+ is back \(new UID\)`)) {
		t.Fatalf("the restart ended before waiting for a pod:\n%s", p.Wait(t, opTimeout))
	}
	summary.crash("cass-operator/wait-restarted")
	summary.resumed()
	r := cassandra(t, ns, opTimeout, cassOpResumeArgs(dc)...)
	require.Equal(t, exitOK, r.Code, "resume of the restart:\n%s", r)
	tasks := pluginTasks(t, ns)
	require.Len(t, tasks, 1, "one task, found again by the resume")
	done, _, _ := unstructured.NestedString(tasks[0].Object, "status", "completionTime")
	assert.NotEmpty(t, done, "the task finished")
	for _, pd := range dc.Pods {
		pod, err := kc.CoreV1().Pods(ns).Get(context.Background(), pd.Name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.NotEqual(t, uids[pd.Name], pod.UID, "pod %s re-created", pd.Name)
	}
	t.Logf("the stand-in waits: %s; last step error: %v", dc.Operator.Waiting(), dc.Operator.LastError())
	assertDCAt(t, dc, 3)
	require.NoError(t, dc.RunErr())
	summary.markConverged(t)
}

// testCassOpCleanupTask: `scale --nodes 3 --cleanup` from 2 asks the operator for the
// new node, then creates its own cleanup CassandraTask and verifies each pre-existing
// pod COMPLETED in the task's podStatuses.
func testCassOpCleanupTask(t *testing.T) {
	requireCommand(t, "scale")
	ns := newNamespace(t)
	dc := newCassOpDC(t, ns, fixture.DatacenterOptions{Size: 2})
	r := cassandra(t, ns, opTimeout, append(cassOpScaleArgs(dc, 3), "--cleanup")...)
	require.Equal(t, exitOK, r.Code, "scale up with --cleanup:\n%s\nthe stand-in waits: %s; actions %q; run error %v; last step error %v", r, dc.Operator.Waiting(), dc.Operator.Actions(), dc.RunErr(), dc.Operator.LastError())
	assertDCAt(t, dc, 3)
	tasks := pluginTasks(t, ns)
	require.Len(t, tasks, 1, "the plugin's cleanup task")
	statuses, _, _ := unstructured.NestedMap(tasks[0].Object, "status", "podStatuses")
	for _, pd := range dc.Pods {
		st, _ := statuses[pd.Name].(map[string]any)
		assert.Equal(t, "COMPLETED", st["status"], "pod %s cleaned up: %v", pd.Name, statuses)
	}
	require.NoError(t, dc.RunErr())
	summary.markConverged(t)
}
