package adddc

import (
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
)

func TestJudgeKeyspaces(t *testing.T) {
	list := []cql.Keyspace{
		{Name: "system", Class: "org.apache.cassandra.locator.LocalStrategy"},
		{Name: "system_auth", Class: cql.NTS, DCs: map[string]int{"dc1": 3}},
		{Name: "app", Class: cql.NTS, DCs: map[string]int{"dc1": 3, "dc2": 3}},
		{Name: "elsewhere", Class: cql.NTS, DCs: map[string]int{"dc3": 2}},
	}
	g := judgeKeyspaces(list, "dc1", "dc2", nil, 0)
	// app has its replicas in dc2 already; elsewhere does not replicate to the source.
	if len(g.alter) != 1 || g.alter[0].Statement != "ALTER KEYSPACE system_auth WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3', 'dc2': '3'}" {
		t.Fatalf("alter %+v", g.alter)
	}
	if g.wanted["app"] != 3 || g.wanted["system_auth"] != 3 || len(g.wanted) != 2 || len(g.blocking) != 0 {
		t.Fatalf("wanted %v blocking %q", g.wanted, g.blocking)
	}
	// --keyspaces and --rf: only those, with that count; a name that does not exist refuses.
	g = judgeKeyspaces(list, "dc1", "dc2", []string{"app", "nope"}, 2)
	if len(g.alter) != 1 || !strings.Contains(g.alter[0].Statement, "'dc2': '2'") || len(g.blocking) != 1 || !strings.Contains(g.blocking[0], "nope") {
		t.Fatalf("named: %+v", g)
	}
	// A keyspace named that has no replica in the source needs --rf.
	if g := judgeKeyspaces(list, "dc1", "dc2", []string{"elsewhere"}, 0); len(g.blocking) != 1 || !strings.Contains(g.blocking[0], "--rf") {
		t.Fatalf("elsewhere: %+v", g)
	}
	// SimpleStrategy would place replicas on the joining nodes without streaming.
	legacy := append(list, cql.Keyspace{Name: "legacy", Class: "org.apache.cassandra.locator.SimpleStrategy"})
	if g := judgeKeyspaces(legacy, "dc1", "dc2", nil, 0); len(g.blocking) != 1 || !strings.Contains(g.blocking[0], "SimpleStrategy") {
		t.Fatalf("legacy: %+v", g)
	}
	// pending: what resume verifies, any replica count the user chose is taken.
	if p := pending(list, "dc2", map[string]int{"app": 1, "system_auth": 3}); len(p) != 1 || p[0].Keyspace != "system_auth" {
		t.Fatalf("pending %+v", p)
	}
}

func TestAttemptOf(t *testing.T) {
	for name, want := range map[string]int{"add-dc-x-rebuild-demo-dc2-r1-sts-0-1": 1, "op-rebuild-p-10": 10, "op-rebuild": 0} {
		if got := attemptOf(name); got != want {
			t.Errorf("%s: %d, want %d", name, got, want)
		}
	}
}
