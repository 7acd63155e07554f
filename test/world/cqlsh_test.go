package world

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	utilexec "k8s.io/client-go/util/exec"
)

// TestCqlshRouting: an exec whose command word is cqlsh reaches the simulated cqlsh;
// reads are no side effect, an ALTER KEYSPACE is one (exec log, count, hook), and the
// credentials come on stdin, never on argv.
func TestCqlshRouting(t *testing.T) {
	w := New(t, Opts{Version: "4.1", DCs: []string{"dc1", "dc2"}, Nodes: 1, RF: 1,
		CQLAuth: &sim.JMXAuth{Username: "admin", Password: "pw"}})
	pods := w.PodNames()
	var dc1, dc2 string
	for _, p := range pods {
		switch {
		case strings.Contains(p, "-dc1-") && dc1 == "":
			dc1 = p
		case strings.Contains(p, "-dc2-") && dc2 == "":
			dc2 = p
		}
	}
	if dc1 == "" || dc2 == "" {
		t.Fatalf("pods %v: want one of dc1 and one of dc2", pods)
	}
	n, err := w.Cass.Node(dc1)
	if err != nil {
		t.Fatal(err)
	}
	hooked := 0
	w.OnSideEffect = func(int) { hooked++ }
	rc := func() *strings.Reader {
		return strings.NewReader("[authentication]\nusername = admin\npassword = pw\n")
	}
	stream := func(stmt string) (string, string, error) {
		var out, errb bytes.Buffer
		err := w.Stream(context.Background(), dc1, []string{"cqlsh", "--cqlshrc", sim.StdinPath, n.Address, "-e", stmt}, rc(), &out, &errb)
		return out.String(), errb.String(), err
	}

	out, _, err := stream("SELECT JSON keyspace_name, replication FROM system_schema.keyspaces")
	if err != nil || !strings.Contains(out, `"dc2": "1"`) {
		t.Fatalf("select: %v\n%s", err, out)
	}
	if len(w.ExecLog()) != 0 || hooked != 0 {
		t.Fatalf("a read is no side effect: %v, %d", w.ExecLog(), hooked)
	}
	alter := "ALTER KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '1'}"
	if _, stderr, err := stream(alter); err != nil {
		t.Fatalf("alter: %v %s", err, stderr)
	}
	if got := w.ExecLog(); len(got) != 1 || got[0] != dc1+" cqlsh "+alter || hooked != 1 {
		t.Fatalf("exec log %v, hook %d", got, hooked)
	}
	// A refused ALTER is still an attempt the plugin made: logged, exit 2 as cqlsh's.
	_, stderr, err := stream("ALTER KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc9': '1'}")
	var ce utilexec.CodeExitError
	if !errors.As(err, &ce) || ce.Code != 2 || !strings.Contains(stderr, "Unrecognized strategy option {dc9}") {
		t.Fatalf("refused alter: %v %q", err, stderr)
	}
	if len(w.ExecLog()) != 2 {
		t.Fatalf("exec log %v", w.ExecLog())
	}
	for _, argv := range w.StreamArgv() {
		if strings.Contains(strings.Join(argv, " "), "pw") {
			t.Fatalf("a secret on argv: %v", argv)
		}
	}
	// Exec (no stdin): without credentials the connection is refused (exit 1).
	if _, stderr, err := w.Exec(context.Background(), dc2, []string{"cqlsh", "-e", "DESCRIBE KEYSPACE app"}); err == nil || !strings.Contains(stderr, "AuthenticationFailed('Remote end requires authentication')") {
		t.Fatalf("exec without credentials: %v %q", err, stderr)
	}
}
