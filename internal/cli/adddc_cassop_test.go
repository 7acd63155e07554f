package cli

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// dc2TwoRacksYAML is dc2 of cluster demo over two racks of one node: their pods share
// the ordinal 0.
const dc2TwoRacksYAML = `apiVersion: cassandra.datastax.com/v1beta1
kind: CassandraDatacenter
metadata:
  name: dc2
spec:
  clusterName: demo
  serverVersion: "4.1.5"
  size: 2
  racks:
  - name: r1
  - name: r2
`

// On cass-operator each pod of the new datacenter is rebuilt by exactly one rebuild
// task naming it, from the source datacenter, even when pods of different racks share
// their ordinal; each node is rebuilt once and holds its share afterwards.
func TestAddDCCassOperatorTwoRacks(t *testing.T) {
	w := world.New(t, world.Opts{CassOperator: true, Nodes: 2, RF: 2})
	file := filepath.Join(t.TempDir(), "dc2.yaml")
	if err := os.WriteFile(file, []byte(dc2TwoRacksYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code, _ := drun(w, 0, "add-dc", "dc1", "-n", "cassandra", "-f", file, "--alter-keyspaces", "--yes", "--poll-interval", "10ms")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	pods := []string{"demo-dc2-r1-sts-0", "demo-dc2-r2-sts-0"}
	l, err := w.Dyn.Resource(standin.TaskGVR).Namespace(w.NS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, tk := range l.Items {
		jobs, _, _ := unstructured.NestedSlice(tk.Object, "spec", "jobs")
		if len(jobs) != 1 {
			continue
		}
		job, _ := jobs[0].(map[string]any)
		if job["command"] != "rebuild" {
			continue
		}
		pod, _, _ := unstructured.NestedString(job, "args", "pod_name")
		src, _, _ := unstructured.NestedString(job, "args", "source_datacenter")
		if src != "dc1" {
			t.Errorf("task %s: source %q, want dc1", tk.GetName(), src)
		}
		per[pod]++
	}
	if want := map[string]int{pods[0]: 1, pods[1]: 1}; !reflect.DeepEqual(per, want) {
		t.Fatalf("rebuild tasks per pod %v, want %v", per, want)
	}
	for _, p := range pods {
		n, err := w.Cass.Node(p)
		if err != nil || n.RebuildsStarted != 1 || n.Load == sim.EmptyNodeLoad || n.PeerCode != "UN" {
			t.Errorf("node %s: %+v %v, want UN, rebuilt once", p, n, err)
		}
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
}
