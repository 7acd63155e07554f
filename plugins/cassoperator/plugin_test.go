package cassoperator

import (
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// TestPlugin: the names the CLI shows, and an adapter that scales by itself (Scaler)
// and offers neither Seeds nor StatusRepair.
func TestPlugin(t *testing.T) {
	var p operator.Operator = Plugin{}
	if p.Name() != "cass-operator" || p.Words() != (operator.Words{Title: "cass-operator", Kind: "CassandraDatacenter", Count: "size"}) {
		t.Errorf("%s %+v", p.Name(), p.Words())
	}
	a := p.Connect(operator.Clients{})
	if _, ok := a.(operator.Scaler); !ok {
		t.Errorf("not a Scaler")
	}
	if _, ok := a.(operator.Seeds); ok {
		t.Errorf("offers Seeds")
	}
	if _, ok := a.(operator.StatusRepair); ok {
		t.Errorf("offers StatusRepair")
	}
	a.Assume()
	if a.GVR().String() != "cassandra.datastax.com/v1beta1, Resource=cassandradatacenters" || a.CountWords() != "size" || a.Container() != "cassandra" {
		t.Errorf("%v %s %s", a.GVR(), a.CountWords(), a.Container())
	}
}
