package cli

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaledown"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

func setAnnotation(t *testing.T, w *world.World, key, value string) {
	t.Helper()
	cr := w.CR().DeepCopy()
	ann := cr.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[key] = value
	cr.SetAnnotations(ann)
	if err := w.Dyn.Tracker().Update(world.CCGVR, cr, w.NS); err != nil {
		t.Fatal(err)
	}
}

func validCheckpoint(t *testing.T, w *world.World, mutate func(m map[string]any)) string {
	t.Helper()
	cp := &record.Checkpoint{
		SchemaVersion: 1, OperationID: "op-1", Kind: checkpoint.KindScaleDown, Operator: "casskop",
		Namespace: w.NS, Cluster: w.Name, ClusterUID: string(w.CR().GetUID()),
		Target: record.Target{DC: "dc1", Racks: []string{"rack1"}, Nodes: 1, From: map[string]int{"rack1": 2}},
		Nodes:  []record.Node{{Pod: "demo-dc1-rack1-1", PodUID: "pod-demo-dc1-rack1-1", Ordinal: 1, DC: "dc1", Rack: "rack1", StatefulSet: "demo-dc1-rack1", HostID: "x"}},
	}
	cp.Steps = scaledown.Steps(cp.Nodes, false)
	b, _ := json.Marshal(cp)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if mutate != nil {
		mutate(m)
	}
	out, _ := json.Marshal(m)
	return string(out)
}

// TestBadInput runs bad inputs and refusals through the command line: each must exit
// with its documented code, say what is wrong, and change nothing (no API write, no
// decommission).
func TestBadInput(t *testing.T) {
	scale := func(extra ...string) []string {
		return append([]string{"scale", "demo", "-n", "cassandra", "--yes"}, extra...)
	}
	cases := []struct {
		name  string
		opts  world.Opts
		setup func(t *testing.T, w *world.World)
		args  []string
		code  int
		msg   string
	}{
		{name: "unknown cluster", args: []string{"scale", "nope", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--yes"}, code: exit.Usage, msg: `CassandraCluster "nope" not found in namespace cassandra (clusters there: demo)`},
		{name: "no cluster in namespace", args: []string{"scale", "-n", "other", "--rack", "rack1", "--nodes", "1", "--yes"}, code: exit.Usage, msg: "no CassandraCluster in namespace other"},
		{name: "unknown rack", args: scale("--rack", "r9", "--nodes", "1"), code: exit.Usage, msg: `has no rack "r9" (racks: rack1)`},
		{name: "unknown dc", args: scale("--dc", "dc9", "--rack", "rack1", "--nodes", "1"), code: exit.Usage, msg: `has no datacenter "dc9" (datacenters: dc1)`},
		{name: "ambiguous rack", opts: world.Opts{DCs: []string{"dc1", "dc2"}}, args: scale("--rack", "rack1", "--nodes", "1"), code: exit.Usage, msg: `rack "rack1" exists in several datacenters (dc1, dc2): add --dc`},
		{name: "nodes negative", args: scale("--rack", "rack1", "--nodes", "-1"), code: exit.Usage, msg: "--nodes must be a positive number, got -1"},
		{name: "nodes not an integer", args: scale("--rack", "rack1", "--nodes", "one"), code: exit.Usage, msg: `invalid argument "one" for "--nodes"`},
		{name: "nodes fractional", args: scale("--rack", "rack1", "--nodes", "1.5"), code: exit.Usage, msg: `invalid argument "1.5" for "--nodes"`},
		{name: "nodes zero", args: scale("--rack", "rack1", "--nodes", "0"), code: exit.Usage, msg: "rack removal is not what scale does"},
		{name: "nodes missing", args: scale("--rack", "rack1"), code: exit.Usage, msg: "--nodes is required"},
		{name: "no rack nor dc", args: scale("--nodes", "1"), code: exit.Usage, msg: "name the rack with --rack"},
		{name: "nodes equal", args: scale("--rack", "rack1", "--nodes", "2"), code: exit.OK, msg: ""},
		{name: "nodes larger is a scale-up (dry run)", args: scale("--rack", "rack1", "--nodes", "3", "--dry-run"), code: exit.OK, msg: ""},
		{name: "scale-up with --force", args: scale("--rack", "rack1", "--nodes", "3", "--force"), code: exit.Usage, msg: "a scale-up decommissions nothing"},
		{name: "scale-down with --cleanup", args: scale("--rack", "rack1", "--nodes", "1", "--cleanup"), code: exit.Usage, msg: "--cleanup is for a scale-up"},
		{name: "scale-up onto a leftover PVC", setup: func(t *testing.T, w *world.World) {
			_ = w.Kube.Tracker().Add(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-demo-dc1-rack1-2", Namespace: w.NS, UID: "old"}})
		}, args: scale("--rack", "rack1", "--nodes", "3"), code: operation.ExitRefused, msg: "PVC data-demo-dc1-rack1-2 already exists (left over from an earlier scale-down?)"},
		{name: "scale-up with a node down", setup: func(t *testing.T, w *world.World) {
			_ = w.Cass.SetFault("demo-dc1-rack1-1", sim.Fault{Down: true})
		}, args: scale("--rack", "rack1", "--nodes", "3"), code: operation.ExitRefused, msg: "is DN; wait until they are"},
		{name: "restart without rack nor dc", args: []string{"restart", "demo", "-n", "cassandra", "--yes"}, code: exit.Usage, msg: "name the rack with --rack"},
		{name: "restart unknown rack", args: []string{"restart", "demo", "-n", "cassandra", "--rack", "r9", "--yes"}, code: exit.Usage, msg: `has no rack "r9"`},
		{name: "restart with a node down", setup: func(t *testing.T, w *world.World) {
			_ = w.Cass.SetFault("demo-dc1-rack1-0", sim.Fault{Down: true})
		}, args: []string{"restart", "demo", "-n", "cassandra", "--rack", "rack1", "--yes"}, code: operation.ExitRefused, msg: "is DN; wait until they are"},
		{name: "restart while a scale-down is in flight", setup: func(t *testing.T, w *world.World) {
			setAnnotation(t, w, checkpoint.Annotation, validCheckpoint(t, w, nil))
		}, args: []string{"restart", "demo", "-n", "cassandra", "--rack", "rack1", "--yes"}, code: operation.ExitRefused, msg: "operation op-1 (scale-down, datacenter dc1 racks rack1 -> 1 nodes"},
		{name: "repair with nothing stuck", args: []string{"repair-operator-state", "demo", "-n", "cassandra", "--yes"}, code: exit.OK, msg: ""},
		{name: "too many args", args: []string{"scale", "a", "b", "--rack", "rack1", "--nodes", "1"}, code: exit.Usage, msg: "accepts at most 1 arg(s), received 2"},
		{name: "unknown flag", args: scale("--rack", "rack1", "--nodes", "1", "--bogus"), code: exit.Usage, msg: "unknown flag: --bogus"},
		{name: "bad output", args: scale("--rack", "rack1", "--nodes", "1", "-o", "xml"), code: exit.Usage, msg: `unknown output format "xml"`},
		{name: "unknown command", args: []string{"shrink"}, code: exit.Usage, msg: `unknown command "shrink"`},
		{name: "no tty without --yes", args: []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1"}, code: exit.Usage, msg: "stdin is not a terminal: pass --yes"},
		{name: "unequal racks", opts: world.Opts{Racks: []string{"r1", "r2"}, Topology: true}, args: scale("--rack", "r1", "--nodes", "1"), code: operation.ExitRefused, msg: "kubectl cassandra scale demo --dc dc1 --nodes 1"},
		{name: "statefulset missing", setup: func(t *testing.T, w *world.World) {
			_ = w.Kube.Tracker().Delete(appsv1.SchemeGroupVersion.WithResource("statefulsets"), w.NS, "demo-dc1-rack1")
		}, args: scale("--rack", "rack1", "--nodes", "1"), code: operation.ExitRefused, msg: "StatefulSet demo-dc1-rack1 of rack dc1/rack1 does not exist"},
		{name: "pod not ready", setup: func(t *testing.T, w *world.World) {
			obj, _ := w.Kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), w.NS, "demo-dc1-rack1-0")
			p := obj.(*corev1.Pod).DeepCopy()
			p.Status.Conditions[0].Status = corev1.ConditionFalse
			_ = w.Kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, w.NS)
		}, args: scale("--rack", "rack1", "--nodes", "1"), code: operation.ExitRefused, msg: "pod demo-dc1-rack1-0 is not Ready"},
		{name: "node down in ring", setup: func(t *testing.T, w *world.World) {
			_ = w.Cass.SetFault("demo-dc1-rack1-1", sim.Fault{Down: true})
		}, args: scale("--rack", "rack1", "--nodes", "1"), code: operation.ExitRefused, msg: "not every node of datacenter dc1 is Up/Normal"},
		{name: "ring unreadable", setup: func(t *testing.T, w *world.World) {
			_ = w.Cass.SetFault("demo-dc1-rack1-0", sim.Fault{EmptyRing: true})
		}, args: scale("--rack", "rack1", "--nodes", "1"), code: operation.ExitRefused, msg: "cannot read the ring from demo-dc1-rack1-0"},
		{name: "casskop running", setup: func(t *testing.T, w *world.World) {
			one := int32(1)
			_ = w.Kube.Tracker().Add(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "casskop", Namespace: w.NS, Labels: map[string]string{"app": "casskop"}}, Spec: appsv1.DeploymentSpec{Replicas: &one}})
		}, args: scale("--rack", "rack1", "--nodes", "1", "--pause-operator=false"), code: operation.ExitRefused, msg: "the CassKop operator cassandra/casskop is running"},
		{name: "operator malformed", args: scale("--rack", "rack1", "--nodes", "1", "--operator", "casskop"), code: exit.Usage, msg: `--operator must be NAMESPACE/NAME, got "casskop"`},
		{name: "operator not found", args: scale("--rack", "rack1", "--nodes", "1", "--operator", "ops/casskop"), code: exit.Usage, msg: "operator Deployment ops/casskop not found; nothing changed"},
		{name: "two operators", opts: world.Opts{Operator: true}, setup: func(t *testing.T, w *world.World) {
			one := int32(1)
			_ = w.Kube.Tracker().Add(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "casskop-2", Namespace: w.NS, Labels: map[string]string{"app": "casskop"}}, Spec: appsv1.DeploymentSpec{Replicas: &one}})
		}, args: scale("--rack", "rack1", "--nodes", "1"), code: operation.ExitRefused, msg: "name the one to pause with --operator NAMESPACE/NAME"},
		{name: "casskop busy", opts: world.Opts{Status: map[string]any{"phase": "Pending", "lastClusterAction": "ScaleUp", "lastClusterActionStatus": "Ongoing"}},
			args: scale("--rack", "rack1", "--nodes", "1"), code: operation.ExitRefused, msg: "status.lastClusterAction ScaleUp is Ongoing"},
		{name: "pod operation queued", setup: func(t *testing.T, w *world.World) {
			obj, _ := w.Kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), w.NS, "demo-dc1-rack1-0")
			p := obj.(*corev1.Pod).DeepCopy()
			p.Labels["operation-status"], p.Labels["operation-name"] = "ToDo", "cleanup"
			_ = w.Kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, w.NS)
		}, args: scale("--rack", "rack1", "--nodes", "1"), code: operation.ExitRefused, msg: "pod demo-dc1-rack1-0: operation cleanup is ToDo"},
		{name: "crd missing", setup: func(t *testing.T, w *world.World) { w.Kube.Resources = nil },
			args: scale("--rack", "rack1", "--nodes", "1"), code: operation.ExitRefused, msg: "has no cassandraclusters.db.orange.com resource"},
		{name: "checkpoint not json", setup: func(t *testing.T, w *world.World) { setAnnotation(t, w, checkpoint.Annotation, "{not json") },
			args: scale("--rack", "rack1", "--nodes", "1"), code: exit.Error, msg: "checkpoint is corrupt"},
		{name: "checkpoint truncated", setup: func(t *testing.T, w *world.World) {
			v := validCheckpoint(t, w, nil)
			setAnnotation(t, w, checkpoint.Annotation, v[:len(v)/2])
		}, args: []string{"resume", "demo", "-n", "cassandra", "--yes"}, code: exit.Error, msg: "checkpoint is corrupt"},
		{name: "checkpoint newer schema", setup: func(t *testing.T, w *world.World) {
			setAnnotation(t, w, checkpoint.Annotation, validCheckpoint(t, w, func(m map[string]any) { m["schemaVersion"] = 99; m["steps"] = "changed shape" }))
		}, args: []string{"resume", "demo", "-n", "cassandra", "--yes"}, code: operation.ExitRefused, msg: "written by a newer kubectl-cassandra (schema 99"},
		{name: "checkpoint other operator", setup: func(t *testing.T, w *world.World) {
			setAnnotation(t, w, checkpoint.Annotation, validCheckpoint(t, w, func(m map[string]any) { m["operator"] = "cass-operator" }))
		}, args: []string{"resume", "demo", "-n", "cassandra", "--yes"}, code: operation.ExitRefused, msg: "checkpoint was planned for another operator: operation op-1 was planned for cass-operator, and this cluster is read as a casskop cluster; nothing changed"},
		{name: "checkpoint other cluster", setup: func(t *testing.T, w *world.World) {
			setAnnotation(t, w, checkpoint.Annotation, validCheckpoint(t, w, func(m map[string]any) { m["clusterUID"] = "someone-else" }))
		}, args: []string{"resume", "demo", "-n", "cassandra", "--yes"}, code: exit.Error, msg: "checkpoint belongs to another cluster"},
		{name: "checkpoint unknown step", setup: func(t *testing.T, w *world.World) {
			setAnnotation(t, w, checkpoint.Annotation, validCheckpoint(t, w, func(m map[string]any) {
				m["steps"].([]any)[0].(map[string]any)["kind"] = "format-disk"
			}))
		}, args: []string{"resume", "demo", "-n", "cassandra", "--yes"}, code: exit.Error, msg: `unknown kind "format-disk"`},
		{name: "checkpoint without schema", setup: func(t *testing.T, w *world.World) {
			setAnnotation(t, w, checkpoint.Annotation, validCheckpoint(t, w, func(m map[string]any) { delete(m, "schemaVersion") }))
		}, args: []string{"resume", "demo", "-n", "cassandra", "--yes"}, code: exit.Error, msg: "no schemaVersion"},
		{name: "checkpoint empty", setup: func(t *testing.T, w *world.World) { setAnnotation(t, w, checkpoint.Annotation, "") },
			args: []string{"resume", "demo", "-n", "cassandra", "--yes"}, code: exit.Error, msg: "is empty"},
		{name: "other operation in flight", setup: func(t *testing.T, w *world.World) {
			setAnnotation(t, w, checkpoint.Annotation, validCheckpoint(t, w, nil))
		}, args: scale("--rack", "rack1", "--nodes", "2"), code: operation.ExitRefused, msg: "operation op-1 is in flight on demo"},
		{name: "rbac missing", setup: func(t *testing.T, w *world.World) {
			w.Deny = map[string]bool{"delete persistentvolumeclaims": true, "create pods/exec": true}
		}, args: scale("--rack", "rack1", "--nodes", "1"), code: operation.ExitRefused, msg: "you are not allowed to: create pods/exec in namespace cassandra (run nodetool); delete persistentvolumeclaims in namespace cassandra"},
		{name: "replication factor", opts: world.Opts{RF: 2}, args: scale("--rack", "rack1", "--nodes", "1"), code: operation.ExitRefused, msg: "has replication factor 2 in dc1 but only 1 nodes would remain"},
		{name: "free space", setup: func(t *testing.T, w *world.World) {
			obj, _ := w.Kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), w.NS, "data-demo-dc1-rack1-0")
			pvc := obj.(*corev1.PersistentVolumeClaim).DeepCopy()
			pvc.Status.Capacity[corev1.ResourceStorage] = resource.MustParse("2Gi")
			_ = w.Kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), pvc, w.NS)
		}, args: scale("--rack", "rack1", "--nodes", "1"), code: operation.ExitRefused, msg: "rack rack1: the leaving nodes hold 1.20 GiB but the remaining nodes have only 819.20 MiB free"},
		{name: "resume nothing", args: []string{"resume", "demo", "-n", "cassandra", "--yes"}, code: exit.OK, msg: ""},
		{name: "status bad output", args: []string{"status", "demo", "-n", "cassandra", "-o", "wide"}, code: exit.Usage, msg: `unknown output format "wide"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.Nodes == 0 {
				tc.opts.Nodes = 2
			}
			w := world.New(t, tc.opts)
			if tc.setup != nil {
				tc.setup(t, w)
			}
			before := snapshot(t, w)
			stdout, stderr, code, crashed := run(w, 0, tc.args...)
			if crashed {
				t.Fatal("crashed")
			}
			if code != tc.code {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if tc.msg != "" && !strings.Contains(stderr, tc.msg) {
				t.Fatalf("stderr does not say %q:\n%s", tc.msg, stderr)
			}
			if n := w.SideEffects(); n != 0 {
				t.Fatalf("%d writes or decommissions happened", n)
			}
			if after := snapshot(t, w); after != before {
				t.Fatalf("objects changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	if len(cases) < 30 {
		t.Fatalf("only %d bad inputs", len(cases))
	}
}

// snapshot serializes every object of the fake world.
func snapshot(t *testing.T, w *world.World) string {
	t.Helper()
	var parts []string
	for _, gvr := range []struct{ res, kind string }{{"pods", "Pod"}, {"persistentvolumeclaims", "PersistentVolumeClaim"}} {
		l, err := w.Kube.Tracker().List(corev1.SchemeGroupVersion.WithResource(gvr.res), corev1.SchemeGroupVersion.WithKind(gvr.kind), w.NS)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(l)
		parts = append(parts, string(b))
	}
	l, _ := w.Kube.Tracker().List(appsv1.SchemeGroupVersion.WithResource("statefulsets"), appsv1.SchemeGroupVersion.WithKind("StatefulSet"), w.NS)
	b, _ := json.Marshal(l)
	parts = append(parts, string(b))
	cr := w.CR()
	b, _ = json.Marshal(cr.Object)
	parts = append(parts, string(b))
	_ = unstructured.Unstructured{}
	return strings.Join(parts, "\n")
}
