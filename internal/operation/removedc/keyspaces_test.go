package removedc

import (
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
)

func TestJudgeKeyspaces(t *testing.T) {
	list := []cql.Keyspace{
		{Name: "system", Class: "org.apache.cassandra.locator.LocalStrategy"},
		{Name: "system_auth", Class: cql.NTS, DCs: map[string]int{"dc1": 3, "dc2": 3}},
		{Name: "app", Class: cql.NTS, DCs: map[string]int{"dc1": 3}},
		{Name: "only2", Class: cql.NTS, DCs: map[string]int{"dc2": 3}},
		{Name: "legacy", Class: "org.apache.cassandra.locator.SimpleStrategy", Options: map[string]string{"replication_factor": "1"}},
	}
	r := judgeKeyspaces(list, "dc2")
	if len(r.alter) != 1 || r.alter[0].Statement != "ALTER KEYSPACE system_auth WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3'}" {
		t.Fatalf("alter %+v", r.alter)
	}
	if len(r.blocking) != 2 || !strings.Contains(r.blocking[0], "only2") || !strings.Contains(r.blocking[1], "SimpleStrategy") {
		t.Fatalf("blocking %q", r.blocking)
	}
	if r := judgeKeyspaces(list[:3], "dc1"); len(r.alter) != 1 || len(r.blocking) != 1 {
		t.Fatalf("dc1: %+v", r)
	}
	if r := judgeKeyspaces(list[:1], "dc2"); len(r.alter)+len(r.blocking) != 0 {
		t.Fatalf("local only: %+v", r)
	}
}

// On 5.0 system_auth's change waits for the nodes' removal, and a decommission may be
// forced only while system_auth is all that replicates to the datacenter.
func TestAuthDeferred(t *testing.T) {
	auth := cql.Keyspace{Name: "system_auth", Class: cql.NTS, DCs: map[string]int{"dc1": 3, "dc2": 3}}
	app := cql.Keyspace{Name: "app", Class: cql.NTS, DCs: map[string]int{"dc1": 3, "dc2": 3}}
	r := judgeKeyspaces([]cql.Keyspace{auth, app}, "dc2")
	if !authDeferred(r, true) || authDeferred(r, false) {
		t.Fatal("system_auth deferred on 5.0 only")
	}
	if r.onlyAuth() || len(r.without(systemAuth).alter) != 1 || r.without(systemAuth).alter[0].Keyspace != "app" {
		t.Fatalf("split: %+v", r)
	}
	if !judgeKeyspaces([]cql.Keyspace{auth}, "dc2").onlyAuth() {
		t.Fatal("system_auth alone: onlyAuth")
	}
	alone := cql.Keyspace{Name: "system_auth", Class: cql.NTS, DCs: map[string]int{"dc2": 3}}
	if judgeKeyspaces([]cql.Keyspace{alone}, "dc2").onlyAuth() {
		t.Fatal("system_auth only in dc2 blocks: never forced")
	}
	ring := func(states ...string) pubnodetool.Ring {
		r := pubnodetool.Ring{Nodes: []pubnodetool.Node{{DC: "dc1", Status: "U", State: "N"}}}
		for _, st := range states {
			r.Nodes = append(r.Nodes, pubnodetool.Node{DC: "dc2", Status: "U", State: st})
		}
		return r
	}
	for _, c := range []struct {
		ks    []cql.Keyspace
		ring  pubnodetool.Ring
		force bool
	}{
		{[]cql.Keyspace{auth}, ring("N", "N", "N", "N"), false}, // N=4 > RF 3
		{[]cql.Keyspace{auth}, ring("N", "N", "N", "L"), true},  // the leaving one is not counted
		{[]cql.Keyspace{auth}, ring("N"), true},
		{[]cql.Keyspace{auth, app}, ring("N"), false}, // app still replicates to dc2: no --force
		{[]cql.Keyspace{alone}, ring("N"), false},
	} {
		if got := forceNeeded(c.ks, c.ring, "dc2"); got != c.force {
			t.Errorf("forceNeeded(%v, %v) = %v, want %v", c.ks, c.ring.Nodes, got, c.force)
		}
	}
}
