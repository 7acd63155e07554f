package removedc

import (
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
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
