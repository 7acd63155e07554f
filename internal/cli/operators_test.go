package cli

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// other is a second operator of the build, served by the API server (it resolves like
// CassKop's resource). holds says whether its resource holds the fake world's cluster
// too (a twin) or none (a ghost).
type other struct {
	casskop.Plugin
	holds bool
}

func (o other) Name() string { return "other" }

func (o other) Connect(c operator.Clients) operator.Adapter {
	return otherAdapter{Adapter: o.Plugin.Connect(c), holds: o.holds}
}

type otherAdapter struct {
	operator.Adapter
	holds bool
}

func (a otherAdapter) Name() string { return "other" }
func (a otherAdapter) Kind() string { return "OtherCluster" }

func (a otherAdapter) Get(ctx context.Context, ns, name string) (topology.Cluster, *unstructured.Unstructured, error) {
	if a.holds {
		return a.Adapter.Get(ctx, ns, name)
	}
	return topology.Cluster{}, nil, apierrors.NewNotFound(schema.GroupResource{Group: "other.example", Resource: "otherclusters"}, name)
}

func (a otherAdapter) List(ctx context.Context, ns string) ([]topology.Cluster, error) {
	if a.holds {
		return a.Adapter.List(ctx, ns)
	}
	return nil, nil
}

// TestSeveralOperators: a build of several operators opens each cluster through the
// operator whose resource holds it, even when another comes first in main.go's order;
// a checkpoint written by a build of one operator is resumed by it; a namespace whose
// clusters belong to several operators needs the cluster named.
func TestSeveralOperators(t *testing.T) {
	exec := func(w *world.World, ops []operator.Operator, crashAt int, args ...string) (string, string, int) {
		stdout, stderr, code, crashed := runOperators(context.Background(), w, ops, w, crashAt, nil, args...)
		if crashed {
			code = -1
		}
		return stdout, stderr, code
	}
	ghostFirst := []operator.Operator{other{}, casskop.Plugin{}}

	w := world.New(t, world.Opts{Nodes: 3})
	if out, errOut, code := exec(w, ghostFirst, 0, "scale", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--dry-run"); code != 0 || !strings.Contains(out, "rack rack1: 3 -> 2 nodes") {
		t.Fatalf("unnamed dry-run (exit %d):\n%s\n%s", code, out, errOut)
	}
	// Crash a scale-down of a one-operator build after its first side effect, then
	// resume it with the build of two.
	if _, errOut, code := exec(w, []operator.Operator{casskop.Plugin{}}, 1, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--yes"); code != -1 {
		t.Fatalf("scale was to crash (exit %d):\n%s", code, errOut)
	}
	if out, errOut, code := exec(w, ghostFirst, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 {
		t.Fatalf("resume (exit %d):\n%s\n%s", code, out, errOut)
	}
	w.AssertConverged(2, "resumed by a build of two operators")
	if out, errOut, code := exec(w, ghostFirst, 0, "status", "demo", "-n", "cassandra"); code != 0 || !strings.Contains(out, "rack1") {
		t.Fatalf("status (exit %d):\n%s\n%s", code, out, errOut)
	}

	twins := []operator.Operator{casskop.Plugin{}, other{holds: true}}
	_, errOut, code := exec(w, twins, 0, "scale", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--dry-run")
	if code != 2 || !strings.Contains(errOut, "namespace cassandra has clusters of several operators (CassandraCluster, OtherCluster): name one") {
		t.Fatalf("ambiguous namespace (exit %d):\n%s", code, errOut)
	}
	if out, errOut, code := exec(w, twins, 0, "scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--dry-run"); code != 0 {
		t.Fatalf("named cluster of twins (exit %d):\n%s\n%s", code, out, errOut)
	}
}
