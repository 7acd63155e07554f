package sim

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const selectKeyspaces = "SELECT JSON keyspace_name, replication FROM system_schema.keyspaces"

// cql runs cqlsh in pod with stdin (nil: none).
func cql(t *testing.T, s *Store, pod string, stdin io.Reader, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := s.RunCQL(t.Context(), pod, args, stdin, &out, &errb)
	return result{out.String(), errb.String(), code}
}

func cqlshrc(user, password string) io.Reader {
	return strings.NewReader("[authentication]\nusername = " + user + "\npassword = " + password + "\n")
}

// The pods and addresses of twoDCs.
const (
	dc1a, dc1aIP = "dc1-r1-0", "10.244.1.12"
	dc2a         = "dc2-r1-0"
)

// TestCQLSelectKeyspacesGolden: the result set as cqlsh prints it (every version).
func TestCQLSelectKeyspacesGolden(t *testing.T) {
	for _, v := range allVersions {
		s := NewMemory(Options{Version: v}, twoDCs(), newClock().Now)
		r := cql(t, s, dc1a, nil, dc1aIP, "-e", selectKeyspaces)
		require.Equal(t, 0, r.code, r.stderr)
		require.Empty(t, r.stderr)
		requireSameText(t, fixture(t, "cqlsh_select_keyspaces.txt"), r.stdout)
	}
}

// goCQL runs cqlsh in the background (an ALTER blocks until schema agreement).
func goCQL(t *testing.T, s *Store, pod string, args ...string) <-chan result {
	ch := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := s.RunCQL(context.Background(), pod, args, nil, &out, &errb)
		ch <- result{out.String(), errb.String(), code}
	}()
	return ch
}

// TestCQLAlterThenAgreement: an ALTER replaces the replication at once on the node it
// ran on; describecluster lists that node under a new schema version and the others
// under the old one until SchemaAgreeTime has passed, a down node always under
// UNREACHABLE. cqlsh waits for the agreement 15 s at most (driver 10 s, then its own
// refresh 5 s), then warns and exits 2 although the ALTER was applied.
func TestCQLAlterThenAgreement(t *testing.T) {
	clk := newClock()
	s := NewMemory(Options{Version: V41, SchemaAgreeTime: 30 * time.Second}, twoDCs(), clk.Now)
	require.NoError(t, s.SetFault("dc2-r3-0", Fault{Down: true}))
	before := run(s, dc1a, "describecluster").stdout
	require.Contains(t, before, "\tSchema versions:\n\t\t"+schemaVersion+": [10.244.1.12, 10.244.2.17, 10.244.3.9, 10.245.1.20, 10.245.2.21]\n\n\t\tUNREACHABLE: [10.245.3.22]\n\n")

	ch := goCQL(t, s, dc1a, dc1aIP, "-e", "ALTER KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3'}")
	v1 := schemaUUID(1)
	require.NotEqual(t, schemaVersion, v1)
	waitFor(t, "the ALTER applied", func() bool { return strings.Contains(run(s, dc2a, "describecluster").stdout, v1) })
	require.Contains(t, keyspacesOf(t, s, dc1a), "\tapp -> Replication class: NetworkTopologyStrategy {dc1=3}\n")
	during := "\tSchema versions:\n" +
		"\t\t" + v1 + ": [10.244.1.12]\n\n" +
		"\t\t" + schemaVersion + ": [10.244.2.17, 10.244.3.9, 10.245.1.20, 10.245.2.21]\n\n" +
		"\t\tUNREACHABLE: [10.245.3.22]\n\nStats for all nodes:\n"
	require.Contains(t, run(s, dc2a, "describecluster").stdout, during)
	clk.Advance(14 * time.Second)
	notYet(t, ch)
	clk.Advance(time.Second)
	require.Equal(t, result{"", "<stdin>:1:Warning: schema version mismatch detected; check the schema versions of your nodes in system.local and system.peers.\n", 2}, receive(t, ch))
	require.Contains(t, run(s, dc2a, "describecluster").stdout, during)

	clk.Advance(15 * time.Second)
	after := run(s, dc2a, "describecluster").stdout
	require.Contains(t, after, "\tSchema versions:\n"+
		"\t\t"+v1+": [10.244.1.12, 10.244.2.17, 10.244.3.9, 10.245.1.20, 10.245.2.21]\n\n"+
		"\t\tUNREACHABLE: [10.245.3.22]\n\nStats for all nodes:\n")
}

// TestCQLAlterWaitsForAgreement: within the driver's wait cqlsh returns once the nodes
// agree, exit 0; with SchemaAgreeTime 0 at once.
func TestCQLAlterWaitsForAgreement(t *testing.T) {
	clk := newClock()
	s := NewMemory(Options{Version: V50, SchemaAgreeTime: 5 * time.Second}, twoDCs(), clk.Now)
	ch := goCQL(t, s, dc1a, "-e", "ALTER KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3'}")
	waitFor(t, "the ALTER applied", func() bool {
		return strings.Contains(keyspacesOf(t, s, dc1a), "app -> Replication class: NetworkTopologyStrategy {dc1=3}")
	})
	clk.Advance(4 * time.Second)
	notYet(t, ch)
	clk.Advance(time.Second)
	require.Equal(t, result{"", "", 0}, receive(t, ch))
	require.Contains(t, run(s, dc2a, "describecluster").stdout, "\tSchema versions:\n\t\t"+schemaUUID(1)+
		": [10.244.1.12, 10.244.2.17, 10.244.3.9, 10.245.1.20, 10.245.2.21, 10.245.3.22]\n\nStats for all nodes:\n")
}

// TestCQLAlterFormsAndDescribe: unquoted names fold to lower case, quoted ones are exact;
// the class may be given by its full name and values unquoted; DESCRIBE prints the
// resulting CREATE statement.
func TestCQLAlterFormsAndDescribe(t *testing.T) {
	s := NewMemory(Options{Version: V50, Keyspaces: []string{"app", "Orders"}}, twoDCs(), newClock().Now)
	r := cql(t, s, dc1a, nil, dc1aIP, "-e", `alter keyspace APP with REPLICATION = {'class':'org.apache.cassandra.locator.NetworkTopologyStrategy','dc1':2, 'dc2': '1'} AND durable_writes = true;`)
	require.Equal(t, result{"", "", 0}, r)
	r = cql(t, s, dc1a, nil, "-e", `ALTER KEYSPACE "Orders" WITH replication = {'class': 'NetworkTopologyStrategy', 'dc2': '3', 'dc1': '0'}`)
	require.Equal(t, result{"", "", 0}, r)

	r = cql(t, s, dc1a, nil, dc1aIP, "-e", "DESCRIBE KEYSPACE app")
	require.Equal(t, result{"\nCREATE KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '2', 'dc2': '1'}  AND durable_writes = true;\n", "", 0}, r)
	// 4.0+ drops the DCs given "0" replicas (NetworkTopologyStrategy.prepareOptions).
	r = cql(t, s, dc1a, nil, dc1aIP, "-e", `DESC KEYSPACE "Orders"`)
	require.Equal(t, "\nCREATE KEYSPACE \"Orders\" WITH replication = {'class': 'NetworkTopologyStrategy', 'dc2': '3'}  AND durable_writes = true;\n", r.stdout)
}

// TestCQLReplicationFactorExpands: 4.0+ expands replication_factor to every DC not
// named, keeping the ones an ALTER does not name; 3.11 refuses it for NTS.
func TestCQLReplicationFactorExpands(t *testing.T) {
	s := NewMemory(Options{Version: V41}, twoDCs(), newClock().Now)
	r := cql(t, s, dc1a, nil, "-e", "ALTER KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 2, 'dc1': 1}")
	require.Equal(t, result{"", "", 0}, r)
	require.Contains(t, keyspacesOf(t, s, dc1a), "\tapp -> Replication class: NetworkTopologyStrategy {dc1=1, dc2=3}\n")

	s = NewMemory(Options{Version: V311}, twoDCs(), newClock().Now)
	r = cql(t, s, dc1a, nil, "-e", "ALTER KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 2}")
	require.Equal(t, result{"", "<stdin>:1:ConfigurationException: replication_factor is an option for SimpleStrategy, not NetworkTopologyStrategy\n", 2}, r)
}

// TestCQLAlterErrors: the server's refusals as cqlsh prints them (stderr, exit 2), per
// version; nothing changes.
func TestCQLAlterErrors(t *testing.T) {
	alter := func(ks, repl string) string { return "ALTER KEYSPACE " + ks + " WITH replication = " + repl }
	cases := []struct {
		name, version, stmt, stderr string
	}{
		{"unknown keyspace 3.11", V311, alter("nope", "{'class': 'NetworkTopologyStrategy', 'dc1': '3'}"),
			`<stdin>:1:InvalidRequest: Error from server: code=2200 [Invalid query] message="Unknown keyspace nope"` + "\n"},
		{"unknown keyspace 4.0+", V40, alter("nope", "{'class': 'NetworkTopologyStrategy', 'dc1': '3'}"),
			`<stdin>:1:InvalidRequest: Error from server: code=2200 [Invalid query] message="Keyspace 'nope' doesn't exist"` + "\n"},
		{"system keyspace 4.0+", V41, alter("system", "{'class': 'NetworkTopologyStrategy', 'dc1': '3'}"),
			`<stdin>:1:InvalidRequest: Error from server: code=2200 [Invalid query] message="System keyspace 'system' is not user-modifiable"` + "\n"},
		{"unknown DC", V41, alter("app", "{'class': 'NetworkTopologyStrategy', 'dc1': '3', 'dc9': '3'}"),
			"<stdin>:1:ConfigurationException: Unrecognized strategy option {dc9} passed to NetworkTopologyStrategy for keyspace app\n"},
		{"no DC", V50, alter("app", "{'class': 'NetworkTopologyStrategy', 'dc1': '0'}"),
			"<stdin>:1:ConfigurationException: Configuration for at least one datacenter must be present\n"},
		{"rf not a number", V41, alter("app", "{'class': 'NetworkTopologyStrategy', 'dc1': 'three'}"),
			"<stdin>:1:ConfigurationException: For input string: \"three\"\n"},
		{"rf not a number 3.11", V311, alter("app", "{'class': 'NetworkTopologyStrategy', 'dc1': 'x'}"),
			"<stdin>:1:ConfigurationException: For input string: \"x\"\n"},
		{"unknown class", V41, alter("app", "{'class': 'FooStrategy', 'dc1': '3'}"),
			"<stdin>:1:ConfigurationException: Unable to find replication strategy class 'org.apache.cassandra.locator.FooStrategy'\n"},
		{"system_auth keeps every DC with nodes 5.0", V50, alter("system_auth", "{'class': 'NetworkTopologyStrategy', 'dc1': '3'}"),
			"<stdin>:1:ConfigurationException: Following datacenters have active nodes and must be present in replication options for keyspace system_auth: [dc2]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewMemory(Options{Version: c.version}, twoDCs(), newClock().Now)
			before := keyspacesOrEmpty(t, s)
			r := cql(t, s, dc1a, nil, dc1aIP, "-e", c.stmt)
			require.Equal(t, result{"", c.stderr, 2}, r)
			require.Equal(t, before, keyspacesOrEmpty(t, s))
		})
	}
	// 3.11 accepts any DC name (NetworkTopologyStrategy.recognizedOptions() is null), and
	// 4.x may drop a DC with nodes from system_auth.
	s := NewMemory(Options{Version: V311}, twoDCs(), newClock().Now)
	require.Equal(t, 0, cql(t, s, dc1a, nil, "-e", alter("app", "{'class': 'NetworkTopologyStrategy', 'dc1': '3', 'dc9': '1'}")).code)
	s = NewMemory(Options{Version: V41}, twoDCs(), newClock().Now)
	require.Equal(t, 0, cql(t, s, dc1a, nil, "-e", alter("system_auth", "{'class': 'NetworkTopologyStrategy', 'dc1': '3'}")).code)
}

// keyspacesOrEmpty is the replication state as SELECT JSON shows it.
func keyspacesOrEmpty(t *testing.T, s *Store) string {
	t.Helper()
	return cql(t, s, dc1a, nil, "-e", selectKeyspaces).stdout
}

// TestCQLConnection: a node whose native transport is not up refuses the connection
// (exit 1); PasswordAuthenticator (CQLAuth) refuses missing or wrong credentials and
// takes them from a cqlshrc on stdin.
func TestCQLConnection(t *testing.T) {
	s := NewMemory(Options{Version: V41}, twoDCs(), newClock().Now)
	require.NoError(t, s.SetFault(dc1a, Fault{Down: true}))
	r := cql(t, s, dc1a, nil, dc1aIP, "-e", selectKeyspaces)
	require.Equal(t, result{"", `Connection error: ('Unable to connect to any servers', {'10.244.1.12:9042': ConnectionRefusedError(111, "Tried connecting to [('10.244.1.12', 9042)]. Last error: Connection refused")})` + "\n", 1}, r)
	s = NewMemory(Options{Version: V311}, twoDCs(), newClock().Now)
	require.NoError(t, s.UpdateFault(dc1a, func(f *Fault) { f.Down = true }))
	r = cql(t, s, dc1a, nil, dc1aIP, "-e", selectKeyspaces)
	require.Equal(t, `Connection error: ('Unable to connect to any servers', {'10.244.1.12': error(111, "Tried connecting to [('10.244.1.12', 9042)]. Last error: Connection refused")})`+"\n", r.stderr)

	auth := &JMXAuth{Username: "cassandra-admin", Password: "s3cret"}
	s = NewMemory(Options{Version: V311, CQLAuth: auth}, twoDCs(), newClock().Now)
	r = cql(t, s, dc1a, cqlshrc("cassandra-admin", "wrong"), "--cqlshrc", StdinPath, dc1aIP, "-e", selectKeyspaces)
	require.Equal(t, result{"", `Connection error: ('Unable to connect to any servers', {'10.244.1.12': AuthenticationFailed('Failed to authenticate to 10.244.1.12: Error from server: code=0100 [Bad credentials] message="Username and/or password are incorrect"',)})` + "\n", 1}, r)
	for _, v := range []string{V40, V50} {
		s = NewMemory(Options{Version: v, CQLAuth: auth}, twoDCs(), newClock().Now)
		r = cql(t, s, dc1a, nil, dc1aIP, "-e", selectKeyspaces)
		require.Equal(t, result{"", "Connection error: ('Unable to connect to any servers', {'10.244.1.12:9042': AuthenticationFailed('Remote end requires authentication')})\n", 1}, r)
		r = cql(t, s, dc1a, cqlshrc("cassandra-admin", "wrong"), "--cqlshrc", StdinPath, dc1aIP, "-e", selectKeyspaces)
		require.Equal(t, result{"", `Connection error: ('Unable to connect to any servers', {'10.244.1.12:9042': AuthenticationFailed('Failed to authenticate to 10.244.1.12:9042: Error from server: code=0100 [Bad credentials] message="Provided username cassandra-admin and/or password are incorrect"')})` + "\n", 1}, r)
		r = cql(t, s, dc1a, cqlshrc("cassandra-admin", "s3cret"), "--cqlshrc", StdinPath, dc1aIP, "-e", selectKeyspaces)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "(6 rows)\n")
	}
	// A joining node does not serve CQL yet.
	s = NewMemory(Options{Version: V41, JoinTime: time.Minute}, twoDCs(), newClock().Now)
	require.NoError(t, s.AddNode(NodeSpec{Pod: "dc1-r1-1", Address: "10.244.1.14", DC: "dc1", Rack: "r1"}))
	require.Equal(t, 1, cql(t, s, "dc1-r1-1", nil, "10.244.1.14", "-e", selectKeyspaces).code)
	// Usage errors are optparse's (exit 2).
	r = cql(t, s, dc1a, nil, "--bogus", "-e", selectKeyspaces)
	require.Equal(t, result{"", "Usage: cqlsh.py [options] [host [port]]\n\ncqlsh.py: error: no such option: --bogus\n", 2}, r)
}

// TestCQLRemoveDCFlow is what remove-dc does: stop replicating to dc2 (ALTER on a dc1
// node), then decommission every dc2 node; the RF check passes down to the last one.
func TestCQLRemoveDCFlow(t *testing.T) {
	s := NewMemory(Options{Version: V41}, twoDCs(), newClock().Now)
	require.Contains(t, run(s, dc2a, "decommission").stdout, "Not enough live nodes")
	for _, ks := range []string{"system_auth", "system_distributed", "system_traces", "app"} {
		r := cql(t, s, dc1a, nil, dc1aIP, "-e", "ALTER KEYSPACE "+ks+" WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3'}")
		require.Equal(t, result{"", "", 0}, r, ks)
	}
	for _, pod := range []string{"dc2-r1-0", "dc2-r2-0", "dc2-r3-0"} {
		require.Equal(t, result{"", "", 0}, run(s, pod, "decommission"), pod)
	}
	require.NotContains(t, run(s, dc1a, "status").stdout, "dc2")
	require.Equal(t, []string{"dc1"}, validDCsOf(t, s))
	// The emptied DC is no valid option any more (4.0+).
	r := cql(t, s, dc1a, nil, "-e", "ALTER KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3', 'dc2': '3'}")
	require.Equal(t, result{"", "<stdin>:1:ConfigurationException: Unrecognized strategy option {dc2} passed to NetworkTopologyStrategy for keyspace app\n", 2}, r)
}

func validDCsOf(t *testing.T, s *Store) []string {
	t.Helper()
	var dcs []string
	require.NoError(t, s.read(func(st *state, _ time.Time) error {
		n, err := st.node(dc1a)
		if err != nil {
			return err
		}
		dcs = st.validDCs(n)
		return nil
	}))
	return dcs
}
