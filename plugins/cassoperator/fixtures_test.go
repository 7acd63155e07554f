package cassoperator

import (
	"os"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

var gvr = schema.GroupVersionResource{Group: Group, Version: Version, Resource: Resource}

// sample reads the three-node sample datacenter of test/testdata/cass-operator (racks
// rack1..rack3, clusterName development, size 3) into namespace ns.
func sample(t *testing.T, ns string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile("../../test/testdata/cass-operator/example-cassdc-three-nodes-single-rack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetNamespace(ns)
	u.SetResourceVersion("1")
	u.SetUID("uid-1")
	return u
}

// withStatus sets u's status.
func withStatus(u *unstructured.Unstructured, st map[string]any) *unstructured.Unstructured {
	u.Object["status"] = st
	return u
}

// dc builds a CassandraDatacenter from a spec.
func dc(ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": Group + "/" + Version, "kind": Kind,
		"metadata": map[string]any{"name": name, "namespace": ns, "resourceVersion": "1"},
		"spec":     spec,
	}}
	return u
}

// racks is spec.racks of names.
func racks(names ...string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = map[string]any{"name": n}
	}
	return out
}

// fakeAdapter is an adapter on fake clients holding objs (CassandraDatacenters) and
// kube (core and apps objects).
func fakeAdapter(objs []runtime.Object, kube ...runtime.Object) (*Adapter, *dynamicfake.FakeDynamicClient, *kubefake.Clientset) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: Kind + "List", TaskGVR: "CassandraTaskList"}, objs...)
	k := kubefake.NewSimpleClientset(kube...)
	a := &Adapter{Clients: operator.Clients{Dynamic: dyn, Kube: k, Discovery: k.Discovery()}}
	a.Assume()
	return a, dyn, k
}

// errTestFailedFromFake is the error client-go's fake tracker returns for a JSON patch
// whose test fails (it applies the patch with json-patch itself).
func errTestFailedFromFake() error {
	p, err := jsonpatch.DecodePatch([]byte(`[{"op":"test","path":"/a","value":1}]`))
	if err != nil {
		return err
	}
	_, err = p.Apply([]byte(`{"a":2}`))
	return err
}
